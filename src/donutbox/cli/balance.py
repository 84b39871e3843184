"""``donutbox balance``: every rule combination, or a ``--sweep`` of deck
kinds and rule options, and the report."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core import DonutboxError
from ..core.rules import RULE_OPTIONS
from ..usage import UsageError, check_seed, printable
from .common import _deck_arg, _rules_from
from .lab import (
    _agent_list,
    _agent_options,
    _budget_text,
    _check_counts,
    _interrupted,
    _open_cluster,
    _out_folder,
    _progress_log,
    _progress_runner,
    _warn_small_sample,
)


def cmd_balance(args: argparse.Namespace) -> int:
    if args.sweep:
        return _cmd_sweep(args)
    if args.skill:
        raise UsageError("--skill goes with --sweep")
    from ..lab.balance import run_balance, write_report
    from ..lab.sim import Interrupted

    agents = _agent_list(args.players)
    _check_counts(args)
    deck = _deck_arg(args.deck)
    _out_folder(args.out)
    _warn_small_sample("balance", args.games)
    from ..core import Rules as _Rules

    options = _agent_options(args)
    log = None
    try:
        with _open_cluster("balance", args, options, agents) as cluster:
            progress, update = _progress_runner(args.games * len(_Rules.all()), "games")
            log, on_result = _progress_log(args.out)
            with progress:
                grid = run_balance(
                    agents,
                    args.games,
                    args.seed,
                    args.jobs,
                    options,
                    update,
                    on_result,
                    deck=deck,
                    cluster=cluster,
                )
    except Interrupted as stopped:
        return _interrupted("balance", stopped, args.out)
    finally:
        if log is not None:
            log.close()
    # The games first (records.jsonl, games.csv): a long run keeps them
    # whatever happens next.
    from ..lab.sim import write_games

    played = [r for results in grid.values() for r in results]
    write_games(list(enumerate(played)), Path(args.out))
    path = write_report(
        grid, agents, Path(args.out), args.seed, _budget_text(args, agents), args.deck or ""
    )
    print(f"wrote {printable(str(path))}")
    return 0


def _skill_pairs(texts: list[str] | None) -> list[tuple[str, str]]:
    """``--skill STRONG,WEAK`` (repeatable; ``none`` for no skill games)."""
    if texts is None:
        return [("heuristic", "greedy")]
    pairs: list[tuple[str, str]] = []
    for text in texts:
        if text.strip().lower() == "none":
            continue
        from ..ai import agent_info

        names = [a.strip() for a in text.split(",")]
        if len(names) != 2 or names[0] == names[1]:
            raise UsageError(
                f"--skill {printable(text)}: name two different agents, STRONG,WEAK "
                "(e.g. heuristic,greedy)"
            )
        for a in names:
            try:
                agent_info(a)
            except DonutboxError as err:
                raise UsageError(f"--skill: {err}") from None
        pairs.append((names[0], names[1]))
    return pairs


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ..lab.sim import Interrupted
    from ..lab.sweep import (
        SweepError,
        parse_axis,
        points,
        run_sweep,
        total_games,
        write_sweep_report,
    )

    agents = _agent_list(args.players)
    games = args.games
    if not 0 <= games <= 1_000_000:
        raise UsageError("--games must be from 0 to 1000000")
    args.games = max(games, 1)
    _check_counts(args)
    skill = _skill_pairs(args.skill)
    skill_games = games if args.skill_games is None else args.skill_games
    if not 0 <= skill_games <= 1_000_000:
        raise UsageError("--skill-games must be from 0 to 1000000")
    check_seed(args.seed, max(args.games, skill_games))
    if not skill_games:
        skill = []
    if not games and not skill:
        raise UsageError("--games 0 leaves only the --skill games, and there are none")
    deck = _deck_arg(args.deck)
    try:
        pts = points([parse_axis(t) for t in args.sweep], deck, _rules_from(args))
    except SweepError as err:
        raise UsageError(str(err)) from None
    _out_folder(args.out)
    fewest = min(n for n in (games, skill_games if skill else 0) if n)
    total = total_games(len(pts), games, skill, skill_games)
    options = _agent_options(args)
    log = None
    everyone = [*agents, *(a for pair in skill for a in pair)]
    try:
        with _open_cluster("balance", args, options, everyone) as cluster:
            _warn_small_sample("balance", fewest, " per point", "the sweep's figures")
            progress, update = _progress_runner(total, "games")
            log, on_result = _progress_log(args.out)
            with progress:
                res = run_sweep(
                    pts,
                    agents,
                    games,
                    skill,
                    skill_games,
                    args.seed,
                    args.jobs,
                    options,
                    update,
                    on_result,
                    cluster,
                )
    except Interrupted as stopped:
        return _interrupted("balance", stopped, args.out)
    finally:
        if log is not None:
            log.close()
    # The games first: a long sweep keeps its records whatever happens next.
    from ..lab.sim import write_games

    played = [r for point in res.games for match in point.values() for r in match]
    write_games(list(enumerate(played)), Path(args.out))
    command = _sweep_command(args, games, skill, skill_games)
    budget = _budget_text(args, agents + [a for pair in skill for a in pair])
    for path in write_sweep_report(res, Path(args.out), command, budget):
        print(f"wrote {printable(str(path))}")
    return 0


def _sweep_command(
    args: argparse.Namespace, games: int, skill: list[tuple[str, str]], skill_games: int
) -> str:
    """The command line that makes this sweep (for its report)."""
    parts = ["donutbox balance"]
    parts += [f"--sweep {t}" for t in args.sweep]
    parts.append(f"--players {args.players}")
    parts.append(f"--games {games}")
    parts += [f"--skill {a},{b}" for a, b in skill] or ["--skill none"]
    if skill and skill_games != games:
        parts.append(f"--skill-games {skill_games}")
    parts.append(f"--seed {args.seed}")
    for option in RULE_OPTIONS:
        value = getattr(args, option.name)
        if value != option.default:
            flag = "--" + option.name.replace("_", "-")
            parts.append(flag if value is True else f"{flag} {value}")
    if args.deck:
        parts.append(f"--deck {args.deck}")
    all_agents = [*_agent_list(args.players), *(a for pair in skill for a in pair)]
    budget = _budget_text(args, all_agents)
    if budget:
        parts.append(budget)
    return " ".join(parts)
