"""``donutbox tournament``: a round robin, or new agents placed on an earlier
ladder (``--extend``), and its rating table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import DonutboxError, Rules
from ..usage import UsageError, printable
from .common import _rules_from
from .lab import (
    _agent_options,
    _check_counts,
    _interrupted,
    _out_folder,
    _play_games,
)

if TYPE_CHECKING:
    from ..lab.match import GameResult
    from ..lab.sim import GameSpec


def _ladder_agents(text: str, least: int = 2, flag: str = "--agents") -> list[str]:
    from ..ai import agent_info
    from ..ai.catalogue import OPTIONAL, split_budget

    names = [a.strip() for a in text.split(",") if a.strip()]
    if not least <= len(names) <= 16:
        raise UsageError(
            f"{flag} must name {least} to 16 agents, e.g. {flag} random,greedy,mcts:200"
        )
    if len(set(names)) != len(names):
        raise UsageError(f"{flag}: each agent once")
    for a in names:
        if a in OPTIONAL:
            continue
        try:
            split_budget(a) if ":" in a else agent_info(a)
        except DonutboxError as err:
            raise UsageError(f"{flag}: {err}") from None
    return names


def _extension(
    args: argparse.Namespace, rules: Rules, options: dict[str, dict[str, Any]]
) -> tuple[list[str], list[GameResult], list[GameSpec]]:
    """``tournament --extend DIR``: the earlier ladder's agents and games,
    and the games that place the new agents on it (lab/tournament.py)."""
    from ..lab.tournament import LadderFileError, agents_of, extension, read_games

    try:
        earlier = read_games(Path(args.extend) / "games.csv")
    except LadderFileError as err:
        raise UsageError(f"--extend: {err}") from None
    played = {r.rules.key() for r in earlier}
    if played != {rules.key()}:
        raise UsageError(
            f"--extend: that ladder was played with rules {', '.join(sorted(played))}, "
            f"not {rules.key()}: give the same rule options"
        )
    old = agents_of(earlier)
    new = [a for a in _ladder_agents(args.agents, 1) if a not in old]
    if not new:
        raise UsageError("--agents: every agent named is on that ladder already")
    against = None
    if args.against is not None:
        against = _ladder_agents(args.against, 1, "--against")
        stray = [a for a in against if a not in old]
        if stray:
            raise UsageError(f"--against: {', '.join(stray)} not on that ladder ({', '.join(old)})")
    todo = extension(old, new, args.games, rules, args.seed, options, against)
    return old + new, earlier, todo


def cmd_tournament(args: argparse.Namespace) -> int:
    from ..ai.catalogue import OPTIONAL
    from ..lab.sim import Interrupted, write_games
    from ..lab.tournament import ladder, ladder_lines, pair_table, round_robin

    _check_counts(args)
    options = _agent_options(args)
    rules = _rules_from(args)
    earlier: list[GameResult] = []
    if args.extend is None:
        if args.against is not None:
            raise UsageError("--against: only with --extend")
        agents = _ladder_agents(args.agents)
        todo = round_robin(agents, args.games, rules, args.seed, options)
    else:
        agents, earlier, todo = _extension(args, rules, options)
    _out_folder(args.out)
    listed = [a.split(":")[0] for a in agents if a not in OPTIONAL]
    try:
        results = _play_games("tournament", args, todo, options, listed, "the ratings")
    except Interrupted as stopped:
        return _interrupted("tournament", stopped, args.out)
    results = earlier + results
    rows = ladder(results, agents)
    lines = list(ladder_lines(rows, pair_table(results, agents)))
    for line in lines:
        print(line)
    if args.out:
        out = Path(args.out)
        written = write_games(list(enumerate(results)), out)
        path = out / "ladder.md"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(path)
        path = out / "ladder.json"
        path.write_text(json.dumps([r.__dict__ for r in rows], indent=1) + "\n", encoding="utf-8")
        written.append(path)
        for path in written:
            print(f"wrote {printable(str(path))}", file=sys.stderr)
    return 0
