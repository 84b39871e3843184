"""Perft: the engine's move-path counts against the naive reference engine.

``tests/data/perft/positions.json`` holds positions (``donutbox/1`` records) and their
perft counts made by ``tests/reference/perft_gen.py`` with the naive engine
only; ``donutbox.core.perft`` must give the same counts, and the same count
under every first move at the top depth.  A few small positions are counted by
hand from docs/spec.md as well.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from donutbox.core import Game, Rules
from donutbox.core.perft import divide, perft

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from donutbox.core.record import dump, load
from reference.perft_gen import POSITIONS, naive_divide, naive_game, naive_perft

DATA = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "perft" / "positions.json").read_text("utf-8")
)
ENTRIES: list[dict[str, Any]] = DATA["positions"]
NAMES = [entry["name"] for entry in ENTRIES]


def game_of(entry: dict[str, Any]) -> Game:
    return load(entry["record"])


# ------------------------------------------------------------ naive counts


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_perft_matches_the_naive_engine(entry: dict[str, Any]) -> None:
    game = game_of(entry)
    top = entry["divide"]["depth"]
    assert sorted(int(d) for d in entry["perft"]) == list(range(1, top + 1))
    for depth in range(1, top):
        assert perft(game, depth) == entry["perft"][str(depth)], f"depth {depth}"
    # The top depth through divide, so that a difference names the first move
    # under which the engine and the naive engine part (then divide again
    # from the record plus that move to go one move deeper).
    mine = divide(game, top)
    theirs = entry["divide"]["counts"]
    differ = {
        move: {"engine": mine.get(move), "naive": theirs.get(move)}
        for move in sorted(set(mine) | set(theirs))
        if mine.get(move) != theirs.get(move)
    }
    assert not differ, f"divide at depth {top} differs: {differ}"
    assert sum(mine.values()) == entry["perft"][str(top)]


def test_the_data_is_what_the_generator_makes() -> None:
    """Same positions, in the same order, as perft_gen.py lists (so that
    regenerating changes only counts), and the seed deals the stored decks."""
    assert [p.name for p in POSITIONS] == NAMES
    for entry, position in zip(ENTRIES, POSITIONS, strict=True):
        record = entry["record"]
        assert record == position.record()
        assert entry["divide"]["depth"] == position.depth
        rules = Rules(**record["rules"])
        dealt = Game.new(rules, record["players"], record["seed"])
        assert dealt.decks == tuple(tuple(deck) for deck in record["decks"])


def test_the_positions_cover_what_they_should() -> None:
    games = [game_of(entry) for entry in ENTRIES]
    combos = {(g.rules.match, g.rules.layout) for g in games}
    assert len(combos) == 4
    assert {g.rules.closers for g in games} == {False, True}
    assert any(g.ply == 0 for g in games)
    assert any(10 <= g.ply <= 20 for g in games)
    assert any(g.players >= 3 for g in games)
    assert any(g.final_lap for g in games)
    assert any(any(m.kind == "box" for m in g.legal_moves()) for g in games)
    lock_choices = [
        g
        for g in games
        if len({(m.face, m.x, m.y, m.rot) for m in g.legal_moves() if m.lock})
        < len([m for m in g.legal_moves() if m.lock])
    ]
    assert lock_choices  # the same place and rotation listed with two locks
    assert sum(entry["divide"]["depth"] >= 3 for entry in ENTRIES) >= 2


# ------------------------------------------------------------- by hand


def tiny(rules: dict[str, Any]) -> dict[str, Any]:
    """A: four CCCC in the tray, a CCCC start card and one CCCC in the pile.
    B: four CCSS in the tray and one CCSS in the pile."""
    return {
        "format": "donutbox/1",
        "rules": rules,
        "players": ["A", "B"],
        "decks": [["CCCC"] * 6, ["CCSS"] * 5],
    }


ONE_GOOD = {"match": "one-good-match", "layout": "squared-away", "closers": False}
PERFECT = {"match": "perfect-match", "layout": "squared-away", "closers": False}
SPLITZKIES = {"match": "one-good-match", "layout": "splitzkies", "closers": False}

# Worked out from docs/spec.md (cells (x, y); the start card covers (0,0)-(1,1)):
#
# Depth 1 (A).  Squared Away: the places touching the start card edge to edge
# are (2,0), (-2,0), (0,2), (0,-2) (the diagonal ones touch at a corner only).
# A's tray holds one distinct face, CCCC, which agrees with the C's at every
# place in all 4 rotations (notation lists each rotation: 'Game records and notation'), and the
# start card's run holds no donut of A's, so A cannot box it: 4 x 4 = 16,
# under either matching rule.
#
# Depth 2 (B).  Whichever A played, the counter is a 4x2 block of C's (a
# domino of two cards) with 6 places along its edges, each touching exactly
# one edge of the block, i.e. two C's.  Turning CCSS puts each of its four
# edges (CC, CS, SS, SC) against the block once.  One Good Match: 3 rotations
# put a C against it, so 6 x 3 = 18; Perfect Match: only the CC edge, so that
# both touching donuts agree: 6 x 1 = 6.  B holds none of the C run, so no
# box-it.  Depth 2 = 16 x 18 = 288, or 16 x 6 = 96.
#
# Depth 3.  A's placement drew A's last pile card, which starts the Final Lap
# ('The end'): B's turn is the last, and the game is over after it, so there
# is no third move: 0.
#
# Splitzkies, depth 1: a card at (x, y) covers x..x+1, y..y+1; it must not
# overlap the start card (|x| <= 1 and |y| <= 1 overlap) and must touch it
# edge to edge: x = 2 or x = -2 with y in {-1, 0, 1}, and y = 2 or y = -2 with
# x in {-1, 0, 1}: 12 places, 4 rotations each: 48.
HAND = [
    ("one-good-match", ONE_GOOD, {0: 1, 1: 16, 2: 288, 3: 0}),
    ("perfect-match", PERFECT, {0: 1, 1: 16, 2: 96, 3: 0}),
    ("splitzkies", SPLITZKIES, {0: 1, 1: 48}),
]


@pytest.mark.parametrize(("rules", "counts"), [h[1:] for h in HAND], ids=[h[0] for h in HAND])
def test_counts_worked_out_by_hand(rules: dict[str, Any], counts: dict[int, int]) -> None:
    record = tiny(rules)
    game = load(record)
    ref = naive_game(record)
    for depth, expected in counts.items():
        assert perft(game, depth) == expected, f"engine, depth {depth}"
        assert naive_perft(ref, depth) == expected, f"naive engine, depth {depth}"


def test_divide_by_hand() -> None:
    game = load(tiny(ONE_GOOD))
    expected = {
        f"CCCC@{x},{y}/{rot}": 18
        for x, y in ((2, 0), (-2, 0), (0, 2), (0, -2))
        for rot in (0, 90, 180, 270)
    }
    assert divide(game, 2) == expected
    assert naive_divide(naive_game(tiny(ONE_GOOD)), 2) == expected
    assert divide(game, 3) == dict.fromkeys(expected, 0)


# ------------------------------------------------------------- conventions


def test_depth_zero_and_finished_games() -> None:
    game = load(tiny(ONE_GOOD))
    assert perft(game, 0) == 1
    game.play("CCCC@2,0/0")
    game.play("CCSS@4,0/0")
    assert game.finished
    assert perft(game, 0) == 1
    assert perft(game, 1) == perft(game, 2) == 0
    assert divide(game, 1) == {}


def test_the_last_turn_of_the_final_lap_ends_every_line() -> None:
    """perft stops at a position whose next move ends the Final Lap without
    playing its moves: check that every such move does end the game."""
    seen = 0
    for entry in ENTRIES:
        game = game_of(entry)
        checked = 0
        for move in game.legal_moves():
            child = game.copy()
            child.play(move)
            if child.final_lap_turns != 1 or checked == 5:
                continue
            checked += 1
            for last in child.legal_moves():
                after = child.copy()
                after.play(last)
                assert after.finished, (entry["name"], str(move), str(last))
        seen += checked
    assert seen


def test_perft_leaves_the_game_alone() -> None:
    entry = ENTRIES[NAMES.index("final-lap-one-good-squared")]
    game = game_of(entry)
    before = dump(game)
    divide(game, 2)
    perft(game, 2)
    assert dump(game) == before
    assert game.legal_moves() == game_of(entry).legal_moves()


def test_bad_arguments() -> None:
    game = load(tiny(ONE_GOOD))
    for depth in (-1, 1.0, True, "2"):
        with pytest.raises(ValueError, match="depth"):
            perft(game, depth)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="depth"):
        divide(game, 0)
    free = Game.free_game("CCCC")
    with pytest.raises(ValueError, match="dealt game"):
        perft(free, 1)
