"""replay(record, ply) and cut(game, ply): positions compared with games built
move by move, and a free game worked by hand.

Start CCSS: (0,0) C, (1,0) C, (1,1) S, (0,1) S.
0 A CCCC@2,0/0 covers (2,0) (3,0) (3,1) (2,1), all C; (2,0) touches the C at
  (1,0).  C run: (0,0) (1,0) start, four of A's: 6 donuts, A holds 4.
1 B SSSS@0,2/0 covers (0,2) (1,2) (1,3) (0,3), all S, under the S at (0,1)
  and (1,1).  S run: 6 donuts, B holds 4.
2 A box@3,0: A holds 4 of 6 (2 x 4 >= 6): 6 points to A.
3 B box@1,3: the same for B: 6 points to B.
end: no open box is left; 6-6, one box each: a shared win.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from donutbox.core import (
    DonutboxError,
    Game,
    IllegalMove,
    InputError,
    RecordError,
    Rules,
    cut,
    replay,
)
from donutbox.core.record import dump

MOVES = ["CCCC@2,0/0", "SSSS@0,2/0", "box@3,0", "box@1,3"]


def hand_record(**extra: Any) -> dict[str, Any]:
    record = {"format": "donutbox/1", "players": ["A", "B"], "start": "CCSS", "moves": MOVES}
    record.update(extra)
    return record


def played(moves: list[str], seed: int = 11, rules: Rules | None = None) -> Game:
    game = Game.new(rules or Rules(), 2, seed)
    for move in moves:
        game.play(move)
    return game


def same(a: Game, b: Game) -> None:
    assert dump(a) == dump(b)
    assert a.legal_moves() == b.legal_moves()
    assert (a.scores, a.boxes_delivered, a.to_move, a.finished, a.winners) == (
        b.scores,
        b.boxes_delivered,
        b.to_move,
        b.finished,
        b.winners,
    )
    for p in range(a.players):
        assert a.view(p).to_dict() == b.view(p).to_dict()
    assert (a.trays, a.piles) == (b.trays, b.piles)


def a_dealt_game(plies: int, seed: int = 11, rules: Rules | None = None) -> tuple[Game, list[str]]:
    game = Game.new(rules or Rules(), 2, seed)
    rng = random.Random(seed)
    moves = []
    for _ in range(plies):
        legal = game.legal_moves()
        move = legal[rng.randrange(len(legal))]
        game.play(move)
        moves.append(str(move))
    return game, moves


# -- replay -----------------------------------------------------------------------


def test_replay_to_each_ply_of_the_hand_worked_game() -> None:
    record = hand_record(end=True)
    expected = [  # (scores, boxes delivered, to move) after each ply, by hand
        ([0, 0], [0, 0], 0),
        ([0, 0], [0, 0], 1),
        ([0, 0], [0, 0], 0),
        ([6, 0], [1, 0], 1),
        ([6, 6], [1, 1], None),  # all moves played: the record's end applies
    ]
    for ply, (scores, delivered, to_move) in enumerate(expected):
        game = replay(record, ply)
        assert game.ply == ply
        assert (game.scores, game.boxes_delivered, game.to_move) == (scores, delivered, to_move)
        by_hand = Game.free_game("CCSS", Rules(), ["A", "B"])
        for move in MOVES[:ply]:
            by_hand.play(move)
        if ply == len(MOVES):
            by_hand.end()
        assert dump(game) == dump(by_hand)
    final = replay(record)
    assert final.finished and final.ended_by == "record" and final.winners == [0, 1]


def test_replay_without_end_leaves_a_free_game_open() -> None:
    game = replay(hand_record())
    assert not game.finished and game.to_move == 0 and game.scores == [6, 6]


def test_replay_of_a_dealt_record_equals_the_game_played_move_by_move() -> None:
    game, moves = a_dealt_game(12, seed=5, rules=Rules("perfect-match", "splitzkies", True))
    record = dump(game)
    for ply in (0, 1, 7, 12):
        same(
            replay(record, ply), played(moves[:ply], 5, Rules("perfect-match", "splitzkies", True))
        )
    same(replay(record), game)


def test_replay_plays_only_the_first_ply_moves() -> None:
    record = hand_record(moves=["CCCC@2,0/0", "box@0,0"])  # B holds none of the C run
    assert replay(record, 1).ply == 1
    # Counted from 1 with the 0-based ply, as every command names a move.
    with pytest.raises(IllegalMove, match=r"^move 2 \(ply 1, box@0,0\) is illegal: box it"):
        replay(record)


def test_replay_refuses_a_bad_record_naming_the_field() -> None:
    with pytest.raises(RecordError, match=r"rules\.match"):
        replay(hand_record(rules={"match": "best-match"}))
    # A malformed move is counted the same way as an illegal one.
    with pytest.raises(RecordError, match=r"^move 2 \(ply 1\): bad move 'CCCC@2,0'"):
        replay(hand_record(moves=["CCCC@2,0/0", "CCCC@2,0"]))


@pytest.mark.parametrize("ply", [-1, 5, True, "2", 2.0])
def test_replay_refuses_a_ply_out_of_range(ply: object) -> None:
    with pytest.raises(InputError, match="ply"):
        replay(hand_record(), ply)  # type: ignore[arg-type]


# -- cut --------------------------------------------------------------------------


def test_cut_equals_the_game_built_by_playing_the_same_moves() -> None:
    game, moves = a_dealt_game(9)
    before = dump(game)
    three = cut(game, 3)
    same(three, played(moves[:3]))
    assert dump(game) == before  # the game cut from is unchanged
    # ... and the cut game goes on like the original.
    for move in moves[3:]:
        three.play(move)
    same(three, game)


def test_cut_to_zero_and_to_the_end() -> None:
    game, _ = a_dealt_game(6)
    same(cut(game, 0), Game.new(Rules(), 2, 11))
    same(cut(game, game.ply), game)
    assert cut(game, game.ply) is not game


def test_cut_takes_back_the_last_move_and_keeps_the_metadata() -> None:
    game = replay(hand_record(takebacks=2))
    back = cut(game, game.ply - 1)
    assert back.scores == [6, 0] and back.to_move == 1
    assert back.meta == {"takebacks": 2}
    assert dump(back)["moves"] == MOVES[:3]


def test_cut_of_a_finished_game_ended_by_hand() -> None:
    game = replay(hand_record(end=True))
    assert cut(game, 4).finished
    assert not cut(game, 3).finished


def test_cut_of_a_game_that_ended_by_the_rules() -> None:
    game = Game.new(Rules(), 2, 3)
    rng = random.Random(3)
    while not game.finished:
        legal = game.legal_moves()
        game.play(legal[rng.randrange(len(legal))])
    same(cut(game, game.ply), game)
    earlier = cut(game, game.ply - 1)
    assert not earlier.finished
    earlier.play(game.history[-1])
    same(earlier, game)


@pytest.mark.parametrize("ply", [-1, 7, True, None])
def test_cut_refuses_a_ply_out_of_range(ply: object) -> None:
    game, _ = a_dealt_game(6)
    with pytest.raises(InputError, match="ply") as info:
        cut(game, ply)  # type: ignore[arg-type]
    assert isinstance(info.value, DonutboxError) and isinstance(info.value, ValueError)


def test_cut_refuses_a_sampled_world() -> None:
    from donutbox.core.worlds import sample_world

    game, _ = a_dealt_game(4)
    world = sample_world(game.view(0), random.Random(1))
    with pytest.raises(InputError, match="sampled world"):
        cut(world, 0)
