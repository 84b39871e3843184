"""``donutbox sim`` and what every lab command shares: its options (games,
jobs, cluster, seeds, search budget, --out), progress, Ctrl-C and the cluster."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import DonutboxError
from ..usage import UsageError, check_seed, plural, printable
from .common import _console_err, _deck_arg, _rules_from, warn

if TYPE_CHECKING:
    from ..lab.match import GameResult
    from ..lab.sim import GameSpec


def _agent_list(text: str) -> list[str]:
    from ..ai import agent_info

    names = [a.strip() for a in text.split(",") if a.strip()]
    if not 2 <= len(names) <= 4:
        raise UsageError("--players must name 2 to 4 agents, e.g. --players mcts,heuristic")
    for a in names:
        try:
            agent_info(a)
        except DonutboxError as err:
            raise UsageError(f"--players: {err}") from None
    return names


def _progress_runner(total: int, label: str) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    console = _console_err()
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("left"),  # the estimate says what it is: "0:01:20 left"
        console=console,
        transient=True,
        disable=not console.is_terminal,  # no bar in a log file or a pipe
    )
    task = progress.add_task(label, total=total)
    return progress, lambda done, _total: progress.update(task, completed=done)


def _agent_options(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    # The lab measures MCTS's time budget in CPU seconds by default, so that
    # results do not depend on the machine's load (docs/ai.md).
    search: dict[str, Any] = {"clock": args.clock}
    if args.seconds is not None:
        if not 0 < args.seconds <= 600:
            raise UsageError("--seconds must be more than 0 and at most 600")
        search = {"seconds": args.seconds, "clock": args.clock}
    if args.iterations is not None:
        if not 0 < args.iterations <= 10_000_000:
            raise UsageError("--iterations must be from 1 to 10000000")
        search = {"iterations": args.iterations, "clock": args.clock}
    from ..ai import catalogue

    # Every agent that takes a time budget (the catalogue says which) gets it.
    return {a.name: dict(search) for a in catalogue() if a.timed}


def _budget_text(args: argparse.Namespace, agents: list[str]) -> str:
    """The search options as typed, when a searching agent plays (for reports)."""
    from ..ai import agent_info

    if not any(agent_info(a).timed for a in agents):
        return ""
    if args.iterations is not None:
        return f"--iterations {args.iterations}"
    if args.seconds is not None:
        return f"--seconds {args.seconds:g} --clock {args.clock}"
    return ""


def _check_counts(args: argparse.Namespace) -> None:
    if not 1 <= args.games <= 1_000_000:
        raise UsageError("--games must be from 1 to 1000000")
    check_seed(args.seed, args.games)
    if args.jobs is not None and args.cluster is not None:
        raise UsageError("--jobs and --cluster: give one (the cluster's workers play the games)")
    if args.jobs is None:
        args.jobs = 1
    if not 1 <= args.jobs <= 64:
        raise UsageError("--jobs must be from 1 to 64")
    if not 0 < args.cluster_timeout <= 3600:
        raise UsageError("--cluster-timeout must be more than 0 and at most 3600 seconds")


def _out_folder(out: str | None) -> None:
    """Make the --out folder before any game is played (a long run must not
    fail at its end for want of a place to write)."""
    if out is None:
        return
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageError(f"--out {out}: it is a file, and --out names a folder") from None
    except OSError as err:
        raise UsageError(f"--out {out}: {err.strerror or err}") from None


def _progress_log(out: str | None) -> tuple[Any, Any]:
    """``progress.jsonl`` in ``out``, one line per game as it finishes (so
    that a long run that is stopped still leaves its results), and the
    callback that writes it; (None, None) without ``--out``."""
    from ..lab.sim import result_line

    if out is None:
        return None, None
    log = (Path(out) / "progress.jsonl").open("w", encoding="utf-8")

    def on_result(index: int, result: Any) -> None:
        log.write(result_line(index, result) + "\n")
        log.flush()

    return log, on_result


def _open_cluster(
    command: str, args: argparse.Namespace, options: dict[str, dict[str, Any]], agents: list[str]
) -> Any:
    """The Dask cluster of ``--cluster`` (started or connected to, and
    checked), or a null context without it."""
    import contextlib

    if args.cluster is None:
        return contextlib.nullcontext(None)
    from ..ai import agent_info
    from ..lab.cluster import check_budget, open_cluster, parse_target

    target = parse_target(args.cluster)  # a ClusterError is a one-line DonutboxError
    cluster = open_cluster(target, args.cluster_timeout)
    try:
        timed = any(agent_info(a).timed and "iterations" not in options.get(a, {}) for a in agents)
        check_budget(cluster, timed)
        warn(command, f"playing on {cluster.describe()}")
    except BaseException:
        cluster.close()
        raise
    return cluster


def _interrupted(command: str, stopped: Any, out: str | None) -> int:
    """Ctrl-C: keep the games that finished, say so in one line, exit 130."""
    from ..lab.sim import write_games

    done, total = len(stopped.results), stopped.total
    if out is None:
        where = "none kept (give --out DIR to keep finished games)"
    else:
        write_games(list(stopped.results.items()), Path(out))
        where = f"kept in {out}"
    warn(command, f"interrupted: {done} of {plural(total, 'game')} finished, {where}")
    return 130


def _warn_small_sample(command: str, games: int, *what: str) -> None:
    """balance's small-sample warning (``lab/balance.py``), for any run."""
    from ..lab.balance import small_sample_warning

    warning = small_sample_warning(games, *what)
    if warning:
        warn(command, f"warning: {warning}")


def _add_sim_options(
    p: argparse.ArgumentParser, games: int, out: str | None, per: str, players: bool = True
) -> None:
    if players:
        p.add_argument(
            "--players",
            default="heuristic,heuristic",
            help="agents in seat order, comma-separated (default heuristic,heuristic)",
        )
    p.add_argument(
        "--games", type=int, default=games, help=f"games to play {per} (default {games})"
    )
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default 1)")
    p.add_argument(
        "--cluster",
        metavar="WHERE",
        help="play the games on a Dask cluster instead: local (one worker per core), "
        "local:N (N workers on this machine) or a scheduler's address tcp://HOST:PORT; "
        "the same results as --jobs (needs pip install '.[cluster]')",
    )
    p.add_argument(
        "--cluster-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for the --cluster scheduler and its workers (default 10)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        help="first deal seed, 0 to 2**64-1 (default 1); the games use the seeds from it up",
    )
    from ..ai import catalogue

    timed = ", ".join(a.name for a in catalogue() if a.timed)
    p.add_argument(
        "--seconds", type=float, help=f"thinking time per move of the searching agents ({timed})"
    )
    p.add_argument(
        "--iterations",
        type=int,
        help=f"search iterations per move of the searching agents ({timed}), instead of time",
    )
    p.add_argument(
        "--clock",
        choices=["cpu", "wall"],
        default="cpu",
        help="how --seconds is measured: cpu (default; CPU time of the searching "
        "process, independent of the machine's load) or wall (elapsed time)",
    )
    p.add_argument(
        "--out",
        default=out,
        help="folder for records, CSV and plots" + (f" (default {out})" if out else ""),
    )


def _play_games(
    command: str,
    args: argparse.Namespace,
    todo: list[GameSpec],
    options: dict[str, dict[str, Any]],
    agents: list[str],
    what: str,
) -> list[GameResult]:
    """Play ``todo`` (game specs) on ``--jobs`` processes or the cluster,
    with the progress bar and the ``--out`` log, for ``sim`` and
    ``tournament``; ``lab.sim.Interrupted`` propagates (``_interrupted``)."""
    from ..lab.sim import run_specs

    log = None
    try:
        with _open_cluster(command, args, options, agents) as cluster:
            # Once the games can start: a command line that cannot run
            # says only why (one line).
            _warn_small_sample(command, args.games, "", what)
            progress, update = _progress_runner(len(todo), "games")
            log, on_result = _progress_log(args.out)
            with progress:
                return run_specs(todo, args.jobs, update, on_result, cluster)
    finally:
        if log is not None:
            log.close()


def cmd_sim(args: argparse.Namespace) -> int:
    from ..lab.sim import Interrupted, specs, summarize, summary_lines, write_outputs

    agents = _agent_list(args.players)
    _check_counts(args)
    deck = _deck_arg(args.deck)
    options = _agent_options(args)
    todo = specs(agents, args.games, _rules_from(args), args.seed, options, deck)
    _out_folder(args.out)
    try:
        results = _play_games("sim", args, todo, options, agents, "the win rates")
    except Interrupted as stopped:
        return _interrupted("sim", stopped, args.out)
    summary = summarize(results)
    for line in summary_lines(summary):
        print(line)
    if args.out:
        for path in write_outputs(results, summary, Path(args.out), " vs ".join(agents)):
            print(f"wrote {printable(str(path))}", file=sys.stderr)
    return 0
