"""docs/spec.md, 'Runs and boxes' (runs, boxes, value, holding, majority), worked by hand.

Runs are observed through end scoring of free games ('The end'): every open
box scores its full value to each majority holder, in reading order of its
first cell.
"""

from __future__ import annotations

import donutbox


def ended(start: str, *moves: str, players: int = 2, **rules: object) -> donutbox.Game:
    game = donutbox.Game.free_game(start, donutbox.Rules(**rules), players)  # type: ignore[arg-type]
    for move in moves:
        game.play(move)
    game.end()
    return game


def scored(game: donutbox.Game) -> list[tuple[str, int, int, list[int]]]:
    return [(d.how, d.size, d.points, sorted(d.to)) for d in game.deliveries]


def test_runs_under_three_are_no_boxes() -> None:
    # CCSS alone: a C run of 2 and an S run of 2.
    game = ended("CCSS")
    assert scored(game) == []
    assert game.scores == [0, 0]
    assert game.finished and sorted(game.winners) == [0, 1]


def test_run_spans_cards() -> None:
    # CCSS at (2,0): C run (0,0),(1,0),(2,0),(3,0) and S run (0,1)..(3,1):
    # each 4 donuts, A 2, start 2 -> A; C first in reading order (y 0).
    game = ended("CCSS", "CCSS@2,0/0")
    assert scored(game) == [("end", 4, 4, [0]), ("end", 4, 4, [0])]
    assert game.scores == [8, 0]


def test_diagonal_donuts_are_not_connected() -> None:
    # Start CSCS: C at (0,0) and (1,1), diagonal.  CCCC at (2,0) touches (1,1)
    # C with its SW.  C run: (1,1),(2,1),(2,0),(3,0),(3,1) = 5 (A 4); (0,0)
    # stays alone.
    game = ended("CSCS", "CCCC@2,0/0")
    assert scored(game) == [("end", 5, 5, [0])]


def test_one_flavour_per_run() -> None:
    # HCCC at (2,0) beside HHHH: the H (2,0) joins the 4 H's (5, A 1), the
    # C's (3,0),(3,1),(2,1) are a separate run of 3 (A 3), first cell (3,0).
    game = ended("HHHH", "HCCC@2,0/0")
    assert scored(game) == [("end", 5, 5, [0]), ("end", 3, 3, [0])]
    assert game.scores == [8, 0]


def test_roll_doubles_once_however_many() -> None:
    # Start RCSH: (0,0) R->C, (1,0) C, (1,1) S, (0,1) H.  RCSS at (2,0): its R
    # (2,0) touches (1,0) C -> C.  C run (0,0),(1,0),(2,0),(3,0): 4 donuts,
    # two R: 8 (doubled once, not 16); A 2, start 2 -> A.  S run (1,1),(2,1),
    # (3,1): 3, no R: 3 to A.  The R locked C is no S although it touches S.
    game = ended("RCSH", "RCSS@2,0/0")
    assert scored(game) == [("end", 4, 8, [0]), ("end", 3, 3, [0])]
    assert game.scores == [11, 0]


def test_start_card_is_neutral_and_nobody_holds() -> None:
    # CCCS: a C run of 3 on the start card alone: a box nobody holds.
    game = ended("CCCS")
    assert scored(game) == [("end", 3, 3, [])]
    assert game.scores == [0, 0]
    assert sorted(game.winners) == [0, 1]


def test_majority_ignores_the_neutral_start_card() -> None:
    # Start CCCS + CSSS at (2,0): C run (0,0),(1,0),(1,1),(2,0) has 3 neutral
    # donuts and 1 of A's: A is the only holder, so the majority holder -> 4.
    # S run (2,1),(3,0),(3,1) of A -> 3.  (0,1) S is alone.
    game = ended("CCCS", "CSSS@2,0/0")
    assert scored(game) == [("end", 4, 4, [0]), ("end", 3, 3, [0])]
    assert game.scores == [7, 0]


def test_tied_majority_each_scores_full_value() -> None:
    # Start CCSS; A CCSS at (2,0); B HHCC at (0,-2): NW H, NE H, SE C (1,-1),
    # SW C (0,-1), against (1,0) C and (0,0) C.  C run = 4 + 2 = 6: start 2,
    # A 2, B 2 -> A and B both score 6 (first cell (0,-1)).  S run of 4 (A 2)
    # -> A 4.
    game = ended("CCSS", "CCSS@2,0/0", "HHCC@0,-2/0")
    assert scored(game) == [("end", 6, 6, [0, 1]), ("end", 4, 4, [0])]
    assert game.scores == [10, 6]
    assert game.winners == [0]
    assert game.boxes_delivered == [0, 0]  # end scoring is no delivery


def test_majority_with_three_players() -> None:
    # Start CCCC; P0 CCCC at (2,0), P1 CCCC at (-2,0), P2 CCHH at (0,2) adds
    # C (0,2),(1,2): C run of 14: P0 4, P1 4, P2 2, start 4 -> P0 and P1.
    game = ended("CCCC", "CCCC@2,0/0", "CCCC@-2,0/0", "CCHH@0,2/0", players=3)
    assert scored(game) == [("end", 14, 14, [0, 1])]
    assert game.scores == [14, 14, 0]
    assert sorted(game.winners) == [0, 1]


def test_a_player_holds_only_donuts_on_their_cards() -> None:
    # B plays the bigger share of the S run: start CCSS, A CCSS at (2,0)
    # (S run 4: A 2), B SSSS at (0,2): S run of 8, A 2, B 4 -> B 8.
    # C run (0,0)..(3,0): A 2 -> A 4.
    game = ended("CCSS", "CCSS@2,0/0", "SSSS@0,2/0")
    assert scored(game) == [("end", 4, 4, [0]), ("end", 8, 8, [1])]
    assert game.scores == [4, 8]
    assert game.winners == [1]


def test_owners_of_cells() -> None:
    game = donutbox.Game.free_game("CCSS", donutbox.Rules(), 2)
    game.play("CCSS@2,0/0")
    game.play("SSSS@0,2/0")
    owners = {(d.x, d.y): d.owner for d in game.counter.donuts()}
    assert owners[(0, 0)] is None and owners[(1, 1)] is None
    assert owners[(2, 0)] == 0 and owners[(3, 1)] == 0
    assert owners[(0, 2)] == 1 and owners[(1, 3)] == 1


def test_new_card_joins_two_runs() -> None:
    # Start CSCS: C (0,0) and C (1,1) are diagonal, two runs.
    # 0 A CCCC at (2,0): SW (2,1) C joins (1,1): run of 5.
    # 1 B SSCC at (0,-2): SW C (0,-1) joins (0,0), SE C (1,-1): run of 3.
    # 2 A CCCC at (2,-2): SW (2,-1) touches (1,-1) C and (2,0) C: one run of
    #   3 + 5 + 4 = 12: A 8, B 2, start 2 -> 12 to A (first cell (2,-2)).
    game = ended("CSCS", "CCCC@2,0/0", "SSCC@0,-2/0", "CCCC@2,-2/0")
    assert scored(game) == [("end", 12, 12, [0])]
