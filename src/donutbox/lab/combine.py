"""Combine the games of several ``donutbox sim --out`` runs into one win rate.

    python -m donutbox.lab.combine results/mcts-vs-heuristic-*/

Reads each folder's ``progress.jsonl`` (one line per finished game, written
as games finish, so an unfinished run counts the games it did finish) and
prints, per agent, the games, wins (a shared win counts 1/k for k winners)
and the 95% Wilson interval over all the games together.  Only complete
deals (both seatings of a deal seed) are counted with ``--paired``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from .stats import wilson


def load(folders: list[Path]) -> list[dict[str, Any]]:
    games = []
    for folder in folders:
        path = folder / "progress.jsonl"
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                games.append(json.loads(line))
    return games


def paired_only(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The games whose deal seed was played from every seating."""
    by_seed: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for g in games:
        by_seed[g["seed"]].append(g)
    out = []
    for group in by_seed.values():
        if len({tuple(g["seats"]) for g in group}) == len(group[0]["seats"]):
            out.extend(group)
    return out


def win_rates(games: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    played: dict[str, int] = defaultdict(int)
    wins: dict[str, float] = defaultdict(float)
    for g in games:
        for seat, name in enumerate(g["seats"]):
            played[name] += 1
            if seat in g["winners"]:
                wins[name] += 1.0 / len(g["winners"])
    out = {}
    for name in sorted(played):
        lo, hi = wilson(wins[name], played[name])
        out[name] = {
            "games": played[name],
            "wins": wins[name],
            "win_rate": wins[name] / played[name],
            "ci95": [lo, hi],
        }
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--paired", action="store_true", help="count complete deals only")
    args = ap.parse_args(argv)
    games = load(args.folders)
    if args.paired:
        games = paired_only(games)
    print(f"{len(games)} games")
    for name, r in win_rates(games).items():
        lo, hi = r["ci95"]
        print(
            f"  {name}: {r['wins']:g}/{r['games']} = {r['win_rate']:.1%} "
            f"(95% Wilson interval {lo:.1%} - {hi:.1%})"
        )


if __name__ == "__main__":
    main()
