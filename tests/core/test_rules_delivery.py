"""docs/spec.md, 'Delivery' (sealing, Coffee's For Closers, box it, frozen donuts),
worked by hand on free games (and one dealt game for "no card is drawn")."""

from __future__ import annotations

import pytest

import donutbox

CLOSERS = {"closers": True}


def free(start: str, *moves: str, **rules: object) -> donutbox.Game:
    game = donutbox.Game.free_game(start, donutbox.Rules(**rules), 2)  # type: ignore[arg-type]
    for move in moves:
        game.play(move)
    return game


def scored(game: donutbox.Game) -> list[tuple[int | None, str, int, int, list[int]]]:
    return [(d.ply, d.how, d.size, d.points, sorted(d.to)) for d in game.deliveries]


def delivered_cells(game: donutbox.Game) -> set[tuple[int, int]]:
    return {(d.x, d.y) for d in game.counter.donuts() if d.delivered}


# -- sealing ---------------------------------------------------------------------

# Start SHHS: (0,0) S, (1,0) H, (1,1) H, (0,1) S.
# 0 A HBBH@2,0: H run (1,0),(1,1),(2,0),(2,1): start 2, A 2.
# 1 B BSSB@4,0: B run (3,0),(3,1),(4,0),(4,1): A 2, B 2.
# 2..6 close every other empty neighbour of both runs: (1,2),(2,2) below the H
# run, (3,2),(4,2) below the B run, (1,-1) above H, (4,-1) above B.
# 7 B CCCC@2,-2 covers (2,-1) and (3,-1), the last empty cell beside each run:
# both seal at once.  Reading order of first cells: H (1,0), then B (3,0).
SEAL_TWO = (
    "SHHS",
    "HBBH@2,0/0",
    "BSSB@4,0/0",
    "SSSS@0,2/0",
    "SSSS@2,2/0",
    "CCCS@0,-2/0",
    "CCSC@4,-2/0",
    "SSSS@4,2/0",
    "CCCC@2,-2/0",
)
SEALED_TWO = {(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1), (4, 0), (4, 1)}


def test_nothing_seals_while_an_empty_cell_is_beside() -> None:
    game = free(*SEAL_TWO[:-1])
    assert game.deliveries == []
    assert delivered_cells(game) == set()


def test_two_runs_seal_at_once_in_reading_order() -> None:
    game = free(*SEAL_TWO)
    # H: start 2, A 2 -> A.  B: A 2, B 2 -> both.
    assert scored(game) == [(7, "sealed", 4, 4, [0]), (7, "sealed", 4, 4, [0, 1])]
    assert game.scores == [8, 4]
    assert game.boxes_delivered == [2, 1]
    assert delivered_cells(game) == SEALED_TWO


def test_coffees_for_closers_scores_the_sealer() -> None:
    game = free(*SEAL_TWO, **CLOSERS)
    assert scored(game) == [(7, "sealed", 4, 4, [1]), (7, "sealed", 4, 4, [1])]
    assert game.scores == [0, 8]
    assert game.boxes_delivered == [0, 2]


def test_sealed_box_with_a_roll_scores_double() -> None:
    # The seal-majority example with RHCC instead of HHCC: turned 270 it is
    # HCCR (abcd -> bcda): its R at SW (2,1) touches (1,1) H only -> H.  The H
    # run of 4 sealed at ply 5 now holds an R: 8 points to A.
    game = free(
        "SHHS",
        "RHCC@2,0/270",
        "SSSS@0,2/0",
        "SSSS@0,-2/0",
        "CCCC@2,2/0",
        "SSSS@-2,0/0",
        "CCCC@2,-2/0",
    )
    assert scored(game) == [(5, "sealed", 4, 8, [0])]
    assert game.scores == [8, 0]


def test_sealed_run_under_three_scores_nothing_and_stays_live() -> None:
    # Start HSSS: H alone at (0,0).  CCSC at (-2,0) (SE S against (0,1) S)
    # covers (-1,0); CCSC at (0,-2) (SE S against (1,0) S) covers (0,-1):
    # the H has no empty neighbour left, but a run of 1 is no box.
    game = free("HSSS", "CCSC@-2,0/0", "CCSC@0,-2/0")
    assert game.deliveries == []
    assert delivered_cells(game) == set()


# Start CCCS: C run (0,0),(1,0),(1,1) on the start card (nobody holds it).
# Six cards close it in with non-C donuts; B's SHHH@0,2 fills (1,2), its last
# empty neighbour, at ply 5.
SEAL_NOBODY = (
    "CCCS",
    "HHSH@-2,0/0",
    "BBHB@-2,-2/0",
    "BBHH@0,-2/0",
    "BSSS@2,-2/0",
    "SSSS@2,0/0",
    "SHHH@0,2/0",
)


def test_sealed_box_nobody_holds_scores_for_nobody() -> None:
    game = free(*SEAL_NOBODY)
    assert scored(game) == [(5, "sealed", 3, 3, [])]
    assert game.scores == [0, 0]
    assert game.boxes_delivered == [0, 0]
    assert delivered_cells(game) == {(0, 0), (1, 0), (1, 1)}


def test_closers_sealer_scores_even_a_neutral_box() -> None:
    game = free(*SEAL_NOBODY, **CLOSERS)
    assert scored(game) == [(5, "sealed", 3, 3, [1])]
    assert game.scores == [0, 3]
    assert game.boxes_delivered == [0, 1]


# -- box it ------------------------------------------------------------------------


def test_box_it_at_exactly_half_with_neutral_donuts() -> None:
    # CCSS + CCSS at (2,0): C run of 4, A 2, start 2: 2 x 2 >= 4.
    game = free("CCSS", "CCSS@2,0/0", "HSSH@-2,0/0")
    assert [str(m) for m in game.legal_moves()] == ["box@0,0"]  # first cell named
    game.play("box@3,0")  # any cell of the run will do
    assert scored(game) == [(2, "boxed", 4, 4, [0])]
    assert game.scores == [4, 0]
    assert game.boxes_delivered == [1, 0]
    assert delivered_cells(game) == {(0, 0), (1, 0), (2, 0), (3, 0)}
    assert game.to_move == 1


def test_box_it_neutral_donuts_count_in_the_size() -> None:
    # CCSS + CSSS at (2,0): C run (0,0),(1,0),(2,0): A holds 1, 2 x 1 < 3.
    # S run (0,1),(1,1),(2,1),(3,1),(3,0): A holds 3 of 5: 6 >= 5.
    # B's HCCH at (-2,0) (C (-1,0) against (0,0) C) grows the C run to 5 with
    # A still holding 1.
    game = free("CCSS", "CSSS@2,0/0", "HCCH@-2,0/0")
    with pytest.raises(donutbox.IllegalMove, match="box it"):
        game.copy().play("box@0,0")
    assert [str(m) for m in game.legal_moves()] == ["box@3,0"]
    game.play("box@1,1")
    assert scored(game) == [(2, "boxed", 5, 5, [0])]


def test_box_it_two_of_three() -> None:
    # Start HCHH: C only at (1,0).  CCHH at (2,0): C run (1,0),(2,0),(3,0),
    # A 2 of 3: 4 >= 3.  H run (0,0),(0,1),(1,1),(2,1),(3,1): A 2 of 5: no.
    # B's HHHH at (0,2) only grows the H run (to 9, A 2).
    game = free("HCHH", "CCHH@2,0/0", "HHHH@0,2/0")
    assert [str(m) for m in game.legal_moves()] == ["box@1,0"]
    game.play("box@2,0")
    assert scored(game) == [(2, "boxed", 3, 3, [0])]


def test_box_it_other_player_cannot() -> None:
    # After CCSS at (2,0) it is B's turn: B holds none of either run.
    game = free("CCSS", "CCSS@2,0/0")
    assert game.legal_moves() == []
    with pytest.raises(donutbox.IllegalMove, match="box it"):
        game.copy().play("box@0,0")


@pytest.mark.parametrize(
    "move",
    [
        "box@0,1",  # S run (0,1),(1,1) of 2: no box
        "box@5,5",  # empty cell
        "box@-3,0",  # empty cell
    ],
)
def test_box_it_needs_a_live_box(move: str) -> None:
    game = free("CCSS")
    with pytest.raises(donutbox.IllegalMove, match="box it"):
        game.play(move)


def test_box_it_not_twice() -> None:
    game = free("CCSS", "CCSS@2,0/0", "HSSH@-2,0/0", "box@0,0", "SCCS@4,0/0")
    with pytest.raises(donutbox.IllegalMove, match="box it"):
        game.play("box@1,0")


def test_box_it_scores_to_the_boxer_alone_even_under_closers() -> None:
    # Start BBBB; A BCCB at (2,0) (C's (3,0),(3,1)); B CCBB at (4,0) (C's
    # (4,0),(5,0)): C run of 4, A 2, B 2.  A boxes: 4 to A only.
    for rules in ({}, CLOSERS):
        game = free("BBBB", "BCCB@2,0/0", "CCBB@4,0/0", **rules)
        game.play("box@5,0")
        assert scored(game) == [(2, "boxed", 4, 4, [0])]
        assert game.scores == [4, 0]


def test_box_it_with_a_roll_scores_double() -> None:
    # Start RCSH + RCSS at (2,0): C run of 4 with two R (A 2 of 4): 8.
    game = free("RCSH", "RCSS@2,0/0", "HHHH@-2,0/0")
    game.play("box@0,0")
    assert scored(game) == [(2, "boxed", 4, 8, [0])]
    assert game.scores == [8, 0]


def test_box_it_draws_no_card() -> None:
    decks = [["CCCC", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB", "BBBB"], ["BBBB"] * 5]
    game = donutbox.Game.deal(decks, donutbox.Rules(), 2)
    game.play("CCCC@2,0/0")  # C run of 8: A 4, start 4
    game.play("swap BBBB")  # B is stuck
    tray, pile = list(game.trays[0]), list(game.piles[0])
    assert len(tray) == 4 and len(pile) == 1
    game.play("box@0,0")
    assert game.trays[0] == tray and game.piles[0] == pile
    assert game.scores == [8, 0] and game.boxes_delivered == [1, 0]
    assert game.to_move == 1


# -- frozen donuts -------------------------------------------------------------------


def test_frozen_run_never_grows_and_new_run_starts_beside() -> None:
    # After A boxes C (0,0)..(3,0), B's CCCS at (4,0) puts C (4,0) beside the
    # delivered (3,0): its only agreeing pair is S (4,1)-(3,1) S.  The C's
    # (4,0),(5,0),(5,1) are a new run of 3 (B), not 7.
    game = free("CCSS", "CCSS@2,0/0", "HSSH@-2,0/0", "box@0,0", "CCCS@4,0/0")
    assert delivered_cells(game) == {(0, 0), (1, 0), (2, 0), (3, 0)}
    game.end()
    # S run (-1,0),(-1,1),(0,1),(1,1),(2,1),(3,1),(4,1): start 2, A 2, B 3 ->
    # B 7 (first cell (-1,0)); C run (4,0),(5,0),(5,1) -> B 3.
    assert scored(game) == [
        (2, "boxed", 4, 4, [0]),
        (None, "end", 7, 7, [1]),
        (None, "end", 3, 3, [1]),
    ]
    assert game.scores == [4, 10]


def test_frozen_donuts_form_no_pairs() -> None:
    game = free("CCSS", "CCSS@2,0/0", "HSSH@-2,0/0", "box@0,0")
    with pytest.raises(donutbox.IllegalMove):
        game.copy().play("CCCC@4,0/0")  # C beside frozen C, C beside live S
    with pytest.raises(donutbox.IllegalMove):
        game.copy().play("CCCC@0,-2/0")  # touches only frozen donuts


def test_frozen_donuts_are_no_empty_cells() -> None:
    # SEAL_TWO, but A boxes the B run (A 2 of 4) at ply 6 before it seals; B
    # then fills (4,2) (S beside (3,2) S; (4,1) is frozen) and A's CCCC at
    # (2,-2) covers (2,-1), the H run's last empty neighbour: the frozen
    # (3,0),(3,1) beside it are occupied, not empty, so the H run seals.
    game = free(*SEAL_TWO[:7], "box@3,0", "SSSS@4,2/0", "CCCC@2,-2/0")
    assert scored(game) == [(6, "boxed", 4, 4, [0]), (8, "sealed", 4, 4, [0])]
    assert game.scores == [8, 0]
    assert game.boxes_delivered == [2, 0]
    assert delivered_cells(game) == SEALED_TWO


# -- Splitzkies: a one-cell hole keeps runs open ----------------------------------

# Start CHHC: (0,0) C, (1,0) H, (1,1) H, (0,1) C.  Four offset cards leave
# (2,0) empty with all four neighbours (1,0), (3,0), (2,-1), (2,1) occupied.
HOLE = ("CHHC", "HSSS@2,1/0", "CCCS@3,-1/0", "BBCB@1,-2/0", "CSSC@0,2/0")


def test_one_cell_hole_keeps_its_runs_open() -> None:
    game = free(*HOLE, layout="splitzkies")
    cells = {(d.x, d.y) for d in game.counter.donuts()}
    hole = (2, 0)
    assert hole not in cells
    assert {(1, 0), (3, 0), (2, -1), (2, 1)} <= cells
    # H run (1,0),(1,1),(2,1): every neighbour but the hole is occupied, yet it
    # is not sealed: nothing delivered.
    assert game.deliveries == []
    assert delivered_cells(game) == set()
    # No card can fill the hole.
    for face in ("HHHH", "CCCC", "SSSS", "BBBB", "RHHH"):
        moves = game.legal_moves(cards=[face])
        assert not any(m.kind == "place" and (m.x, m.y) in _covering(hole) for m in moves)
    game.end()
    # H run of 3 (start 2, A 1) is still a box at the end: 3 to A.
    assert (None, "end", 3, 3, [0]) in scored(game)


def _covering(c: tuple[int, int]) -> set[tuple[int, int]]:
    x, y = c
    return {(x, y), (x - 1, y), (x, y - 1), (x - 1, y - 1)}


def test_splitzkies_contact_is_edge_contact() -> None:
    game = free("CCCC", layout="splitzkies")
    # (2,1) hangs half off: (2,1) touches (1,1).  (2,2) touches only (1,1)'s
    # corner.
    game.copy().play("CCCC@2,1/0")
    game.copy().play("CCCC@1,2/0")
    game.copy().play("CCCC@-2,-1/0")
    with pytest.raises(donutbox.IllegalMove):
        game.copy().play("CCCC@2,2/0")
    with pytest.raises(donutbox.IllegalMove):
        game.copy().play("CCCC@-2,-2/0")


def test_the_new_cards_own_run_seals() -> None:
    # Start SHHS.  Six cards ring the 2x2 pocket at (2,0) and the start card's
    # H column with non-H donuts (each agreeing elsewhere); then A's HHHH fills
    # the pocket: H run (1,0),(1,1),(2,0),(3,0),(3,1),(2,1) with every
    # neighbour occupied seals at once: 6 donuts, start 2, A 4 -> 6 to A.
    game = free(
        "SHHS",
        "CCBS@0,-2/0",  # SW S-S
        "SBCC@0,2/0",  # NW S-S
        "CCBB@2,-2/0",  # NW C-C, SW B-B
        "BBCC@2,2/0",  # NW B-B, SW C-C
        "CCCB@4,-2/0",  # NW C-C, SW B-B
        "BCCB@4,0/0",  # NW B-B, NE C-C
    )
    assert game.deliveries == []
    game.play("HHHH@2,0/0")
    assert scored(game) == [(6, "sealed", 6, 6, [0])]
    assert delivered_cells(game) == {(1, 0), (1, 1), (2, 0), (3, 0), (3, 1), (2, 1)}
