"""``donutbox sim``: many games between agents, in parallel, with a report.

Games are paired: for every deal seed, the agents play every rotation of
the seats, so each agent meets the same cards from every seat (one agent in
every seat: every game has a deal of its own).  A game is a
pure function of (seats, rules, deal seed): results are the same whatever
``--jobs`` is, and are collected in game order.
"""

from __future__ import annotations

import csv
import json
import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import Rules
from ..core.decks import Composition
from ..usage import plural
from .match import GameResult, play_game
from .stats import describe, wilson

if TYPE_CHECKING:
    from .cluster import Cluster


@dataclass(frozen=True)
class GameSpec:
    index: int
    seats: tuple[str, ...]
    rules: Rules
    seed: int
    options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    deck: Composition | None = None  # None: the standard deck


def specs(
    agents: list[str],
    games: int,
    rules: Rules,
    seed: int,
    options: dict[str, dict[str, Any]] | None = None,
    deck: Composition | None = None,
) -> list[GameSpec]:
    """``games`` games: deal seeds from ``seed`` up, each with every seat
    rotation; with one agent in every seat, every game a deal of its own
    (seeds ``seed`` to ``seed + games - 1``): a seat rotation would replay
    the very same game, since each seat's generator comes from the deal seed
    and the seat."""
    n = len(agents)
    opts = tuple(sorted((k, tuple(sorted(v.items()))) for k, v in (options or {}).items()))
    out: list[GameSpec] = []
    if len(set(agents)) == 1:
        seats = tuple(agents)
        return [GameSpec(k, seats, rules, seed + k, opts, deck) for k in range(games)]
    deal = seed
    while len(out) < games:
        for shift in range(n):
            if len(out) >= games:
                break
            seats = tuple(agents[(i + shift) % n] for i in range(n))
            out.append(GameSpec(len(out), seats, rules, deal, opts, deck))
        deal += 1
    return out


def _run(spec: GameSpec) -> tuple[int, GameResult]:
    options = {k: dict(v) for k, v in spec.options}
    return spec.index, play_game(list(spec.seats), spec.rules, spec.seed, options, deck=spec.deck)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during ``run_specs``: every worker has been stopped.

    ``results`` holds the games that finished (index -> result), ``total``
    how many were asked for.  A ``KeyboardInterrupt``, so that a caller that
    does not look at it still stops as on any Ctrl-C.
    """

    def __init__(self, results: dict[int, GameResult], total: int) -> None:
        super().__init__(f"interrupted: {len(results)} of {total} games finished")
        self.results = dict(sorted(results.items()))
        self.total = total


def _ignore_sigint() -> None:
    # Workers leave Ctrl-C to the parent, which stops them all at once; a
    # worker that got it too would print a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_pool(jobs: int) -> Any:
    """A pool of ``jobs`` fresh worker processes that ignore SIGINT.

    SIGINT is ignored in this process while they start, so that a Ctrl-C
    that reaches the whole process group during their start-up does not
    reach them either (a process that starts with SIGINT ignored keeps it
    ignored); it is restored at once.
    """
    ctx = multiprocessing.get_context("spawn")
    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        return ctx.Pool(jobs, initializer=_ignore_sigint)
    finally:
        if main:
            signal.signal(signal.SIGINT, old)


def run_specs(
    todo: list[GameSpec],
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    on_result: Callable[[int, GameResult], None] | None = None,
    cluster: Cluster | None = None,
) -> list[GameResult]:
    """Play the games (in ``jobs`` processes, or on the workers of
    ``cluster``: lab/cluster.py), results in game order.

    ``todo`` may come in any order (the order they are handed out); their
    indices must be 0 to len(todo) - 1.  ``on_result(index, result)`` is
    called as each game finishes (in the order they finish), e.g. to save
    results of a long run as they come.  Ctrl-C (KeyboardInterrupt) stops
    every worker at once and raises ``Interrupted`` with the games that
    finished.
    """
    results: dict[int, GameResult] = {}

    def done(pair: tuple[int, GameResult]) -> None:
        results[pair[0]] = pair[1]
        if on_result:
            on_result(*pair)
        if progress:
            progress(len(results), len(todo))

    if cluster is not None:
        from .cluster import run_on_cluster

        try:
            run_on_cluster(cluster, todo, _run, done)
        except KeyboardInterrupt:
            raise Interrupted(results, len(todo)) from None
    elif jobs <= 1:
        try:
            for spec in todo:
                done(_run(spec))
        except KeyboardInterrupt:
            raise Interrupted(results, len(todo)) from None
    else:
        pool = _start_pool(min(jobs, max(1, len(todo))))
        try:
            for pair in pool.imap_unordered(_run, todo):
                done(pair)
        except KeyboardInterrupt:
            pool.terminate()  # every worker stops now, mid-game
            pool.join()
            raise Interrupted(results, len(todo)) from None
        except BaseException:
            pool.terminate()
            pool.join()
            raise
        pool.close()
        pool.join()
    return [results[i] for i in range(len(todo))]


def result_line(index: int, r: GameResult) -> str:
    """One finished game as a JSON line (for ``progress.jsonl``)."""
    return json.dumps(
        {
            "game": index,
            "seed": r.seed,
            "rules": r.rules.key(),
            "seats": r.seats,
            "scores": r.scores,
            "winners": r.winners,
            "plies": r.plies,
            "seconds": round(r.seconds, 3),
        }
    )


def summarize(results: list[GameResult]) -> dict[str, Any]:
    """Win rates per agent and per seat (95% Wilson intervals), scores, sources, lengths."""
    agents = sorted({a for r in results for a in r.seats})
    n_seats = len(results[0].seats) if results else 0
    per_agent: dict[str, dict[str, Any]] = {}
    for a in agents:
        wins = 0.0
        played = 0
        scores: list[float] = []
        for r in results:
            for seat, name in enumerate(r.seats):
                if name == a:
                    played += 1
                    scores.append(r.scores[seat])
                    if seat in r.winners:
                        wins += 1.0 / len(r.winners)
        lo, hi = wilson(wins, played)
        per_agent[a] = {
            "games": played,
            "wins": wins,
            "win_rate": wins / played if played else 0,
            "ci95": [lo, hi],
            "score": describe(scores),
        }
    per_seat = []
    for seat in range(n_seats):
        wins = sum(1.0 / len(r.winners) for r in results if seat in r.winners)
        lo, hi = wilson(wins, len(results))
        per_seat.append(
            {"seat": seat, "wins": wins, "win_rate": wins / len(results), "ci95": [lo, hi]}
        )
    sources = {
        k: sum(sum(r.points_by_source[k]) for r in results) / len(results)
        for k in ("sealed", "boxed", "end")
    }
    boxes = {k: sum(r.boxes[k] for r in results) / len(results) for k in ("sealed", "boxed", "end")}
    return {
        "games": len(results),
        "agents": per_agent,
        "seats": per_seat,
        "points_by_source_per_game": sources,
        "boxes_per_game": boxes,
        "plies": describe([r.plies for r in results]),
        "swaps_per_game": sum(r.swaps for r in results) / len(results),
        "passes_per_game": sum(r.passes for r in results) / len(results),
        "ties": sum(1 for r in results if len(r.winners) > 1),
    }


def write_games(pairs: list[tuple[int, GameResult]], out: Path) -> list[Path]:
    """``records.jsonl`` (one record a line) and ``games.csv`` (one row a
    game) of the games ``pairs`` (game index, result), in that order; a
    result without its record (one read back from a ``games.csv``:
    ``tournament.read_games``) has a row but no record."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    path = out / "records.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for _, r in pairs:
            if r.record:
                fh.write(json.dumps(r.record) + "\n")
    written.append(path)
    path = out / "games.csv"
    n = max((len(r.seats) for _, r in pairs), default=2)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "game",
                "seed",
                *[f"seat{i}" for i in range(n)],
                *[f"score{i}" for i in range(n)],
                "winners",
                "plies",
                "swaps",
                "passes",
                "sealed_boxes",
                "boxed_boxes",
                "end_boxes",
                "seconds",
                "rules",
            ]
        )
        for i, r in pairs:
            pad = [""] * (n - len(r.seats))
            w.writerow(
                [
                    i,
                    r.seed,
                    *r.seats,
                    *pad,
                    *r.scores,
                    *pad,
                    " ".join(map(str, r.winners)),
                    r.plies,
                    r.swaps,
                    r.passes,
                    r.boxes["sealed"],
                    r.boxes["boxed"],
                    r.boxes["end"],
                    f"{r.seconds:.3f}",
                    r.rules.key(),
                ]
            )
    written.append(path)
    return written


def write_outputs(
    results: list[GameResult],
    summary: dict[str, Any],
    out: Path,
    title: str = "donutbox simulation",
) -> list[Path]:
    """Records (JSON lines), per-game CSV, summary JSON, and PNG plots."""
    written = write_games(list(enumerate(results)), out)
    path = out / "summary.json"
    path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    written.append(path)
    from .plots import plot_points_by_source, plot_scores, plot_seats

    written.append(plot_scores(results, out / "scores.png", title))
    written.append(plot_seats(summary, out / "win_rate_by_seat.png", title))
    written.append(plot_points_by_source(results, out / "points_by_source.png", title))
    return written


def summary_lines(summary: dict[str, Any]) -> Iterator[str]:
    yield plural(summary["games"], "game")
    for name, a in summary["agents"].items():
        lo, hi = a["ci95"]
        yield (
            f"  {name}: win rate {a['win_rate']:.1%} (95% CI {lo:.1%}-{hi:.1%}), "
            f"mean score {a['score']['mean']:.1f} ± {a['score']['sd']:.1f}"
        )
    for s in summary["seats"]:
        lo, hi = s["ci95"]
        yield f"  seat {s['seat'] + 1}: win rate {s['win_rate']:.1%} (95% CI {lo:.1%}-{hi:.1%})"
    src = summary["points_by_source_per_game"]
    yield (
        f"  points per game: sealed {src['sealed']:.1f}, boxed {src['boxed']:.1f}, "
        f"end {src['end']:.1f}"
    )
    bx = summary["boxes_per_game"]
    yield (
        f"  boxes per game: sealed {bx['sealed']:.1f}, boxed {bx['boxed']:.1f}, end {bx['end']:.1f}"
    )
    pl = summary["plies"]
    yield (
        f"  game length: {pl['mean']:.1f} plies (min {pl['min']:.0f}, max {pl['max']:.0f}); "
        f"swaps {summary['swaps_per_game']:.2f}/game, passes {summary['passes_per_game']:.2f}/game"
    )
