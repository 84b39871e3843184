"""The core used from many threads at once.

The server replays, imports and loads records on a thread pool while its
event loop plays moves, and AI searches may run on threads too: each thread
with its own ``Game`` objects, and a game built in one thread may be played
on in another.  Random full games played on four threads at once (the
interpreter made to switch threads often, so that they interleave inside
move generation) must end exactly as the same games played one after
another on one thread: the same moves, the same scores, and no error.
"""

from __future__ import annotations

import queue
import random
import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from donutbox.core import Game, Rules
from donutbox.core.counter import reset_place_ids

THREADS = 4
GAMES = 150  # per thread
#: How many plies a game built in one thread is played there before another
#: thread plays it to the end.
HANDOFF_PLY = 20
#: Games per thread while one thread renumbers.
RENUMBERING_GAMES = 30

#: (moves in notation, final scores) of one game.
Outcome = tuple[list[str], list[int]]


def _rules(seed: int) -> Rules:
    return Rules(layout="splitzkies" if seed % 2 else "squared-away")


def _new(seed: int) -> tuple[Game, random.Random]:
    """A seeded game (2 to 4 players, either layout) and its move chooser."""
    return Game.new(_rules(seed), 2 + seed % 3, seed), random.Random(seed)


def _play(game: Game, rng: random.Random, until: int | None = None, reset_every: int = 0) -> None:
    """Random legal moves until the game ends (or reaches ply ``until``);
    the thread's place ids numbered again every ``reset_every`` plies."""
    while not game.finished and (until is None or game.ply < until):
        if reset_every and game.ply % reset_every == 0:
            reset_place_ids()
        moves = game.legal_moves()
        game.play(moves[rng.randrange(len(moves))])


def _outcome(game: Game) -> Outcome:
    return [str(m) for m in game.history], list(game.scores)


def _alone(seed: int) -> Outcome:
    game, rng = _new(seed)
    _play(game, rng)
    return _outcome(game)


def _seeds(thread: int) -> range:
    return range(1000 * thread + 1, 1000 * thread + 1 + GAMES)


@pytest.fixture(scope="module")
def expected() -> dict[int, Outcome]:
    """Every seed's game played on this thread alone, one after another."""
    return {s: _alone(s) for t in range(THREADS) for s in _seeds(t)}


@pytest.fixture(autouse=True)
def _switch_often() -> Iterator[None]:
    # The interpreter's default is to switch threads every 5 ms, about one
    # random game: switching every 100 us interleaves the threads within
    # single calls of move generation, as a busy server's would be.
    # Each test starts from fresh place ids (the games to compare with were
    # played first, numbering most places they meet).
    reset_place_ids()
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    yield
    sys.setswitchinterval(before)


def _run(workers: list[Callable[[list[str]], None]]) -> list[str]:
    """Run the workers on threads started together, each given the list to
    note its errors in (one per game, with its type); all errors noted."""
    errors: list[str] = []
    start = threading.Barrier(len(workers))

    def body(work: Callable[[list[str]], None]) -> None:
        start.wait()
        work(errors)

    threads = [threading.Thread(target=body, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _play_noting(
    errors: list[str],
    seed: int,
    game: Game,
    rng: random.Random,
    until: int | None = None,
    reset_every: int = 0,
) -> None:
    """``_play``, an error noted in ``errors`` (the thread then goes on to
    its next game)."""
    try:
        _play(game, rng, until, reset_every)
    except Exception as exc:
        errors.append(f"seed {seed}: {type(exc).__name__}: {exc}")


def test_threads_each_playing_their_own_games_end_as_they_do_alone(
    expected: dict[int, Outcome],
) -> None:
    got: dict[int, Outcome] = {}

    def worker(thread: int) -> Callable[[list[str]], None]:
        def work(errors: list[str]) -> None:
            for s in _seeds(thread):
                game, rng = _new(s)
                _play_noting(errors, s, game, rng)
                got[s] = _outcome(game) if game.finished else ([], [])

        return work

    errors = _run([worker(t) for t in range(THREADS)])
    assert errors == []
    assert got == expected


def test_games_built_in_one_thread_end_alike_played_on_in_another(
    expected: dict[int, Outcome],
) -> None:
    # Two threads build games and play their first plies, and hand each
    # game (or, every other game, a copy of it) to two other threads that
    # play it to the end; all four run at once (200 games).
    handed: queue.Queue[tuple[int, Game, random.Random] | None] = queue.Queue()
    got: dict[int, Outcome] = {}
    seeds = [*_seeds(0)[:100], *_seeds(1)[:100]]

    def builder(part: list[int]) -> Callable[[list[str]], None]:
        def work(errors: list[str]) -> None:
            for s in part:
                game, rng = _new(s)
                _play_noting(errors, s, game, rng, until=HANDOFF_PLY)
                handed.put((s, game.copy() if s % 2 else game, rng))
            handed.put(None)  # one finisher stops

        return work

    def finisher(errors: list[str]) -> None:
        while (item := handed.get()) is not None:
            s, game, rng = item
            _play_noting(errors, s, game, rng)
            got[s] = _outcome(game) if game.finished else ([], [])

    errors = _run([builder(seeds[0::2]), builder(seeds[1::2]), finisher, finisher])
    assert errors == []
    assert got == {s: expected[s] for s in seeds}


def test_place_ids_numbered_again_in_one_thread_while_others_play(
    expected: dict[int, Outcome],
) -> None:
    # One thread numbers its place ids again every 5 plies (as past
    # ``PID_LIMIT``) while three others play their games (30 each: the
    # first thread renumbers about 300 times).
    got: dict[int, Outcome] = {}

    def worker(thread: int, reset_every: int) -> Callable[[list[str]], None]:
        def work(errors: list[str]) -> None:
            for s in _seeds(thread)[:RENUMBERING_GAMES]:
                game, rng = _new(s)
                _play_noting(errors, s, game, rng, reset_every=reset_every)
                got[s] = _outcome(game) if game.finished else ([], [])

        return work

    errors = _run([worker(t, 5 if t == 0 else 0) for t in range(THREADS)])
    assert errors == []
    assert len(got) == THREADS * (RENUMBERING_GAMES)
    assert got == {s: expected[s] for s in got}
