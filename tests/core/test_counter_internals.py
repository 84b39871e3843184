"""The counter's internal grid agrees with its public mapping ``cells``.

``Counter`` reads cells from a grid (one int per cell of a window that grows
as cards go down) in its hot paths and keeps ``cells`` (cell -> code) for
readers.  Random games in both layouts, including long snakes that make the
window grow, must leave the two in agreement everywhere near the cards, and
a copy must be independent of its source.
"""

from __future__ import annotations

import os
import pickle
import random
import subprocess
import sys
from pathlib import Path

import donutbox
from donutbox.core import Game, Rules
from donutbox.core.counter import (
    DELIVERED_BIT,
    FLAVOUR_BITS,
    PID_LIMIT,
    Counter,
    numbering,
    place_id,
    reset_place_ids,
)
from donutbox.core.geometry import OUTSIDE, cell


def _check(game: Game) -> None:
    counter = game.counter
    xs = [x for x, _y in (d[:2] for d in counter.donuts())]
    ys = [y for _x, y in (d[:2] for d in counter.donuts())]
    for y in range(min(ys) - 6, max(ys) + 7):
        for x in range(min(xs) - 6, max(xs) + 7):
            c = cell(x, y)
            assert counter.code_at(c) == counter.cells.get(c, -1), (x, y)


def test_grid_matches_cells_through_random_games() -> None:
    for layout in ("squared-away", "splitzkies"):
        for seed in range(6):
            game = Game.new(Rules(layout=layout), 2, seed)
            rng = random.Random(seed)
            while not game.finished:
                moves = game.legal_moves()
                game.play(moves[rng.randrange(len(moves))])
                if game.ply % 7 == 0:
                    _check(game)
            _check(game)


def test_grid_grows_far_from_the_start_card_and_copies_are_independent() -> None:
    # A free game: a line of cards walking east, far beyond the first window.
    game = Game.free_game("CCCC")
    for i in range(1, 40):
        game.play(f"CCCC@{2 * i},0/0")
    copy = game.copy()
    copy.play("CCCC@80,0/0")
    assert copy.counter.code_at(cell(80, 0)) >= 0
    assert game.counter.code_at(cell(80, 0)) == -1
    assert game.counter.is_empty(cell(80, 0))
    assert not copy.counter.is_empty(cell(80, 0))
    _check(game)
    _check(copy)
    # far outside the window: empty, no error
    assert game.counter.code_at(cell(-1000, 1000)) == -1


def _runs_snapshot(game: Game) -> dict[int, tuple[list[int], int, int, list[int], int]]:
    return {
        rid: (list(r.cells), r.open, r.rolls, list(r.held), r.first)
        for rid, r in game.counter.runs.items()
    }


def test_runs_changed_in_place_never_change_under_a_copy() -> None:
    # Runs are updated in place by the counter that owns them; a copy and
    # its source share the rest.  Playing on either must leave the other's
    # runs (the very objects it holds) exactly as they were.
    for seed in range(4):
        game = Game.new(Rules(), 2, seed)
        rng = random.Random(seed)
        for _ in range(12):
            moves = game.legal_moves()
            game.play(moves[rng.randrange(len(moves))])
        before = _runs_snapshot(game)
        held = dict(game.counter.runs)
        copy = game.copy()
        for _ in range(10):  # the copy plays on
            if copy.finished:
                break
            moves = copy.legal_moves()
            copy.play(moves[rng.randrange(len(moves))])
        assert _runs_snapshot(game) == before
        copy_before = _runs_snapshot(copy)
        for _ in range(10):  # and the source plays on, differently
            if game.finished:
                break
            moves = game.legal_moves()
            game.play(moves[-1 - rng.randrange(len(moves))])
        assert _runs_snapshot(copy) == copy_before
        # the run objects held before the copy were never changed either
        for rid, (cells, opens, rolls, hd, first) in before.items():
            r = held[rid]
            assert (list(r.cells), r.open, r.rolls, list(r.held), r.first) == (
                cells,
                opens,
                rolls,
                hd,
                first,
            )


def _requirement(counter: Counter, p: int) -> int:
    # From the public mapping ``cells``: per quadrant, the flavours of the
    # not-delivered donuts beside it (docs/spec.md, 'Matching').
    key = 0
    for q, pair in enumerate(OUTSIDE):
        for off in pair:
            code = counter.cells.get(p + off)
            if code is not None and not code & DELIVERED_BIT:
                key |= 1 << (4 * q + (code & FLAVOUR_BITS))
    return key


def _lines(layout: str, seed: int, reset_every: int) -> list[list[str]]:
    """The move lists of a seeded random game; place ids renumbered every
    ``reset_every`` plies (0: never), with an older copy listed after each."""
    game = Game.new(Rules(layout=layout), 2, seed)
    rng = random.Random(seed)
    lines: list[list[str]] = []
    older = game.copy()
    while not game.finished:
        if reset_every and game.ply % reset_every == 0:
            before = numbering()
            reset_place_ids()
            assert numbering() is not before and not numbering().place_of
            if lines:
                # a copy numbered before (the position before the last
                # move): renumbered when listed, the same moves as then
                assert [str(m) for m in older.legal_moves()] == lines[-1]
        moves = game.legal_moves()
        nb = numbering()
        for p, pk in game.counter.places.items():
            assert pk & 0xFFFF == _requirement(game.counter, p)
            assert nb.place_of[pk >> 16] == p
            # the place id's position and requirement ids (move generation's
            # tables by position and by requirement are indexed by them)
            assert nb.pos_of[pk >> 16] == nb.pos_ids[p]
            assert nb.req_of[pk >> 16] == nb.req_ids[pk & 0xFFFF]
        lines.append([str(m) for m in moves])
        older = game.copy()
        game.play(moves[rng.randrange(len(moves))])
    return lines


def test_place_ids_renumbered_give_the_same_moves() -> None:
    # Move generation indexes its memo lists by place id (``Counter.places``:
    # ``(pid << 16) | requirement``); renumbering them (as past PID_LIMIT)
    # mid-game, with copies numbered before still in use, changes no move.
    for layout in ("squared-away", "splitzkies"):
        for seed in (3, 4):
            plain = _lines(layout, seed, 0)
            assert _lines(layout, seed, 5) == plain
            assert _lines(layout, seed, 1) == plain


def test_a_numbering_that_runs_out_starts_again_between_calls() -> None:
    # Past PID_LIMIT ids the thread's numbering starts again, at the next
    # call that fetches it: never part way through a counter's renumbering
    # (whose places would then hold ids of two numberings).  A counter
    # numbered before lists the same moves under both.
    game = Game.new(Rules(), 2, 8)
    rng = random.Random(8)
    for _ in range(12):
        game.play(rng.choice(game.legal_moves()))
    expected = [str(m) for m in game.legal_moves()]
    places = len(game.counter.places)
    assert places > 4
    reset_place_ids()
    # Ids of places far from this game, until two ids are left: renumbering
    # the counter's places takes the numbering past the limit.
    far = cell(500_000, 500_000)
    nb = numbering()
    while len(nb.place_of) < PID_LIMIT - 2:
        place_id(((far + len(nb.place_of)) << 16) | 1)
    assert [str(m) for m in game.legal_moves()] == expected
    assert numbering() is not nb  # this call starts a new one
    assert len(nb.place_of) == PID_LIMIT - 2 + places
    assert [str(m) for m in game.legal_moves()] == expected
    assert len(numbering().place_of) == places
    for p, pk in game.counter.places.items():
        assert numbering().place_of[pk >> 16] == p
    reset_place_ids()


_OTHER_PROCESS = """
import pickle, sys
view = pickle.loads(sys.stdin.buffer.read())
print("\\n".join(sorted(str(m) for m in view.legal_moves())))
"""


def test_a_view_pickled_to_a_fresh_process_lists_the_same_moves() -> None:
    # The place ids are numbered per process.  A view pickled to another
    # process (the server's AI workers) carries ids that mean nothing, or
    # other places, there: it must renumber them, not index by them.  (It
    # once raised IndexError there: every AI seat of the server stopped.)
    game = Game.new(Rules(), ["a", "b"], 12)
    rng = random.Random(5)
    for _ in range(9):
        game.play(rng.choice(game.legal_moves()))
    view = game.view(game.to_move or 0)
    here = sorted(str(m) for m in view.legal_moves())
    src = str(Path(donutbox.__file__).parent.parent)
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    there = (
        subprocess.run(
            [sys.executable, "-c", _OTHER_PROCESS],
            input=pickle.dumps(view),
            capture_output=True,
            env=env,
            check=True,
            timeout=120,
        )
        .stdout.decode()
        .split()
    )
    assert len(here) > 20
    assert there == here
