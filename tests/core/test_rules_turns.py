"""docs/spec.md, 'A turn' and 'The end', worked by hand with
short hand-made decks (top card first; player 0's 5th card is the start card)."""

from __future__ import annotations

import pytest

import donutbox
from donutbox.core.record import dump

B5 = ["BBBB"] * 5


def deal(*decks: list[str], **rules: object) -> donutbox.Game:
    return donutbox.Game.deal(list(decks), donutbox.Rules(**rules), len(decks))  # type: ignore[arg-type]


def scored(game: donutbox.Game) -> list[tuple[int | None, str, int, int, list[int]]]:
    return [(d.ply, d.how, d.size, d.points, sorted(d.to)) for d in game.deliveries]


# -- play and draw -------------------------------------------------------------------


def test_play_then_draw_back_to_four() -> None:
    game = deal(["CCSS", "HHBB", "SSBB", "CCBB", "CCCC", "SSHH", "HHHH"], B5)
    assert game.piles[0] == ["HHHH", "SSHH"]  # top last
    game.play("CCSS@2,0/0")
    assert sorted(game.trays[0]) == sorted(["HHBB", "SSBB", "CCBB", "SSHH"])
    assert game.piles[0] == ["HHHH"]
    assert game.to_move == 1


def test_play_only_cards_from_your_tray() -> None:
    game = deal(["CCSS", "HHBB", "SSBB", "CCBB", "CCCC", "SSHH"], B5)
    with pytest.raises(donutbox.IllegalMove):
        game.play("CCCC@2,0/0")  # a legal place, but no CCCC in the tray
    with pytest.raises(donutbox.IllegalMove):
        game.play("SSHH@2,0/0")  # the pile's top card is not in the tray yet


def test_legal_moves_are_the_trays_placements() -> None:
    # Tray BBBB x3 + CBBB against CCCC: only CBBB, its C facing the start card:
    # at (2,0) C at NW (rot 0) or SW (rot 270); at (-2,0) NE (90) or SE (180);
    # at (0,-2) SE (180) or SW (270); at (0,2) NW (0) or NE (90).
    game = deal(["BBBB", "BBBB", "BBBB", "CBBB", "CCCC", "BBBB"], B5)
    assert {str(m) for m in game.legal_moves()} == {
        "CBBB@2,0/0",
        "CBBB@2,0/270",
        "CBBB@-2,0/90",
        "CBBB@-2,0/180",
        "CBBB@0,-2/180",
        "CBBB@0,-2/270",
        "CBBB@0,2/0",
        "CBBB@0,2/90",
    }


# -- swap and pass ------------------------------------------------------------------


def test_swap_only_when_stuck() -> None:
    game = deal(["CCSS", "BBBB", "BBBB", "BBBB", "CCCC", "HHHH"], B5)
    with pytest.raises(donutbox.IllegalMove, match="swap"):
        game.play("swap BBBB")  # CCSS can be placed
    with pytest.raises(donutbox.IllegalMove, match="pass"):
        game.play("pass")


def test_swap_puts_the_card_under_the_pile_and_draws_the_top() -> None:
    game = deal(["BBBB", "HHHH", "BBBB", "BBBB", "CCCC", "SSSS", "CCSS"], B5)
    # Nothing agrees with C: stuck.  Swaps are listed once per distinct face.
    assert sorted(str(m) for m in game.legal_moves()) == ["swap BBBB", "swap HHHH"]
    game.play("swap HHHH")
    assert game.piles[0] == ["HHHH", "CCSS"]  # HHHH at the bottom; SSSS drawn
    assert sorted(game.trays[0]) == sorted(["BBBB", "BBBB", "BBBB", "SSSS"])
    assert game.to_move == 1
    with pytest.raises(donutbox.IllegalMove, match="swap"):
        deal(["BBBB"] * 4 + ["CCCC", "BBBB"], B5).play("swap CCSS")  # not in tray


def test_pass_refused_while_the_pile_has_cards() -> None:
    game = deal(["BBBB"] * 4 + ["CCCC", "BBBB"], B5)
    with pytest.raises(donutbox.IllegalMove, match="pass"):
        game.play("pass")


def test_pass_when_stuck_with_an_empty_pile() -> None:
    # A player's pile empties only by their own draw, which starts the Final
    # Lap that they never move in again, so a record cannot reach this; the
    # rule is checked on a position whose pile is emptied by hand.
    game = deal(["BBBB"] * 4 + ["CCCC", "BBBB"], B5)
    game.piles[0].clear()
    assert [str(m) for m in game.legal_moves()] == ["pass"]
    with pytest.raises(donutbox.IllegalMove, match="swap"):
        game.copy().play("swap BBBB")
    game.play("pass")
    assert game.to_move == 1
    can_place = deal(["CCSS", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB"], B5)
    can_place.piles[0].clear()
    with pytest.raises(donutbox.IllegalMove, match="pass"):
        can_place.play("pass")


def test_box_it_allowed_instead_of_playing() -> None:
    decks = (["CCCC", "BBBB", "BBBB", "CCCC", "CCCC", "BBBB", "BBBB"], B5)
    game = deal(*decks)
    game.play("CCCC@2,0/0")  # C run of 8: A 4
    game.play("swap BBBB")
    # A could also place CCCC; box it is allowed all the same.
    moves = {str(m) for m in game.legal_moves()}
    assert "box@0,0" in moves and "CCCC@4,0/0" in moves
    assert not any(m.startswith(("swap", "pass")) for m in moves)
    game.play("box@2,1")
    assert game.scores == [8, 0]


def test_no_swap_or_pass_in_a_free_game() -> None:
    game = donutbox.Game.free_game("CCCC", donutbox.Rules(), 2)
    for move in ("swap BBBB", "pass"):
        with pytest.raises(donutbox.IllegalMove):
            game.play(move)
    assert game.legal_moves(cards=["BBBB"]) == []


# -- Final Lap ----------------------------------------------------------------------


def test_final_lap_two_players_triggered_by_player_0() -> None:
    # Player 0's pile holds 1 card: the draw after ply 0 empties it; player 1
    # gets one more turn, then the game ends.
    game = deal(["CCSS", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB"], ["CCHH", *["BBBB"] * 5])
    game.play("CCSS@2,0/0")
    assert game.piles[0] == [] and len(game.trays[0]) == 4
    assert not game.finished and game.to_move == 1
    game.play("CCHH@-2,0/0")
    assert game.finished and game.to_move is None
    with pytest.raises(donutbox.IllegalMove, match="the game is over"):
        game.play("CCCC@0,2/0")
    assert game.legal_moves() == []


def test_final_lap_two_players_triggered_by_player_1() -> None:
    # Player 0 has 2 cards in the pile, player 1 one: player 1's draw after
    # ply 1 empties it; player 0 gets ply 2; then the end.
    game = deal(
        ["CCCC", "CCCC", "BBBB", "BBBB", "CCCC", "BBBB", "BBBB"],
        ["CCCC", "BBBB", "BBBB", "BBBB", "BBBB"],
    )
    game.play("CCCC@2,0/0")
    game.play("CCCC@-2,0/0")
    assert not game.finished and game.to_move == 0
    game.play("CCCC@0,2/0")
    assert game.finished
    # One C run of 16: A 8, B 4, start 4: 16 to A.
    assert scored(game) == [(None, "end", 16, 16, [0])]
    assert game.scores == [16, 0] and game.winners == [0]


def test_final_lap_three_players() -> None:
    # Player 1 empties its pile at ply 1: players 2 and 0 get one turn each.
    game = deal(
        ["CCCC", "CCCC", "BBBB", "BBBB", "CCCC", "BBBB", "BBBB"],
        ["CCCC", "BBBB", "BBBB", "BBBB", "BBBB"],
        ["CCCC", "BBBB", "BBBB", "BBBB", "BBBB", "BBBB"],
    )
    for move in ("CCCC@2,0/0", "CCCC@-2,0/0", "CCCC@0,2/0"):
        game.play(move)
        assert not game.finished
    game.play("CCCC@0,-2/0")  # player 0's last turn
    assert game.finished
    # C run of 20: P0 8, P1 4, P2 4, start 4 -> P0.
    assert game.scores == [20, 0, 0]


def test_final_lap_four_players() -> None:
    # Player 2 empties its pile at ply 2: players 3, 0, 1 get one turn each.
    game = deal(
        ["CCCC", "CCCC", "BBBB", "BBBB", "CCCC", "BBBB", "BBBB"],
        ["CCCC", "CCCC", "BBBB", "BBBB", "BBBB", "BBBB"],
        ["CCCC", "CCCC", "BBBB", "BBBB", "BBBB"],
        ["CCCC", "BBBB", "BBBB", "BBBB", "BBBB", "BBBB"],
    )
    moves = ["CCCC@2,0/0", "CCCC@-2,0/0", "CCCC@0,2/0", "CCCC@0,-2/0", "CCCC@4,0/0"]
    for move in moves:
        game.play(move)
        assert not game.finished
    game.play("CCCC@-4,0/0")
    assert game.finished
    # C run of 28: P0 8, P1 8, P2 4, P3 4: P0 and P1 share.
    assert game.scores == [28, 28, 0, 0]
    assert sorted(game.winners) == [0, 1]
    with pytest.raises(donutbox.IllegalMove, match="the game is over"):
        game.play("CCCC@2,2/0")


def test_final_lap_turn_may_be_a_swap() -> None:
    # Player 0 empties its pile at ply 0; player 1 is stuck and swaps: that is
    # its one more turn.
    game = deal(["CCSS", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB"], B5)
    game.play("CCSS@2,0/0")
    game.play("swap BBBB")
    assert game.finished


# -- deadlock guard ---------------------------------------------------------------


def test_deadlock_guard_ends_after_as_many_swaps_as_cards_left() -> None:
    # Trays 4 + 4 and piles 1 + 1: 10 cards; nothing agrees with C.
    game = deal(["BBBB"] * 4 + ["CCCC", "BBBB"], B5)
    for _ in range(9):
        game.play("swap BBBB")
        assert not game.finished
    game.play("swap BBBB")
    assert game.finished and game.to_move is None
    # The neutral C box of 4 scores for nobody: 0-0, shared.
    assert scored(game) == [(None, "end", 4, 4, [])]
    assert game.scores == [0, 0] and sorted(game.winners) == [0, 1]


def test_deadlock_streak_is_broken_by_a_placement() -> None:
    # Player 0 swaps BBBB and draws CCSS; player 1 swaps; player 0 places
    # CCSS and draws: the streak of swaps restarts from zero.
    game = deal(["BBBB"] * 4 + ["CCCC", "CCSS", "BBBB"], B5)
    game.play("swap BBBB")
    game.play("swap BBBB")
    game.play("CCSS@2,0/0")
    # Cards left now: tray 4 + pile 1 (player 0), tray 4 + pile 1: 10.
    for _ in range(9):
        game.play("swap BBBB")
        assert not game.finished
    game.play("swap BBBB")
    assert game.finished


# -- end scoring and winners -------------------------------------------------------


def test_winner_tie_broken_by_boxes_delivered() -> None:
    # Start HHHH.  A HCCC at (2,0): C run (3,0),(3,1),(2,1) of A; B CHCC at
    # (-2,0): C run (-2,0),(-2,1),(-1,1) of B; A boxes its C run: 3.  End:
    # B's C run 3 to B; H run of 6 (start 4, A 1, B 1) 6 to both: 9-9; A
    # delivered 1 box (end scoring is no delivery): A wins.
    game = donutbox.Game.free_game("HHHH", donutbox.Rules(), 2)
    for move in ("HCCC@2,0/0", "CHCC@-2,0/0", "box@2,1"):
        game.play(move)
    assert game.winners == []  # empty until finished
    game.end()
    assert game.scores == [9, 9]
    assert game.boxes_delivered == [1, 0]
    assert game.winners == [0]


def test_tie_on_both_is_shared() -> None:
    game = donutbox.Game.free_game("CSHR", donutbox.Rules(), 2)
    game.play("HCCH@-2,0/0")
    game.play("CCHH@0,2/0")
    game.end()
    # C run of 6 with the start card's R (start 2, A 2, B 2): 12 each.
    assert game.scores == [12, 12] and sorted(game.winners) == [0, 1]


def test_free_game_ends_only_by_hand() -> None:
    game = donutbox.Game.free_game("CCCS", donutbox.Rules(), 2)
    game.play("CCCC@2,0/0")
    assert not game.finished and game.to_move == 1
    game.end()
    assert game.finished and game.to_move is None
    with pytest.raises(donutbox.IllegalMove, match="the game is over"):
        game.end()


def test_end_scoring_every_remaining_box() -> None:
    # Start CCCS + CCCC at (2,0): C run of 7 (start 3, A 4) -> A 7; (0,1) S
    # alone is no box.
    game = donutbox.Game.free_game("CCCS", donutbox.Rules(), 2)
    game.play("CCCC@2,0/0")
    game.end()
    assert scored(game) == [(None, "end", 7, 7, [0])]
    assert game.boxes_delivered == [0, 0]


def test_record_round_trip_of_a_finished_dealt_game() -> None:
    game = deal(["CCSS", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB"], ["CCHH", *["BBBB"] * 4])
    game.play("CCSS@2,0/0")
    game.play("CCHH@-2,0/0")
    again = donutbox.load(dump(game))
    assert again.finished and again.scores == game.scores == [8, 8]
    assert sorted(again.winners) == [0, 1]
