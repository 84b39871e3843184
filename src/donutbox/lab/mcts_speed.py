"""MCTS iterations per CPU-second on typical positions.

    python -m donutbox.lab.mcts_speed [--iterations N] [--runs R]

Positions: plies 8, 16 and 24 (early, middle and late middlegame) of games
between two ``heuristic`` agents, deal seeds 1 to 3 (nine positions, One
Good Match, Squared Away).  In each, a fresh ``MctsAgent`` searches a fixed
number of iterations ``runs`` times (different generators); the time is the
process's CPU time (``time.process_time``), so other work on the machine
does not change the figure much.  Prints the median, minimum and maximum
rate over all searches, and the median per ply.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from ..ai import make_agent
from ..core import Game, PlayerView

PLIES = (8, 16, 24)
SEEDS = (1, 2, 3)


def positions() -> list[tuple[int, int, PlayerView]]:
    """(seed, ply, view of the player to move) for every seed and ply."""
    out = []
    for seed in SEEDS:
        game = Game.new(seed=seed)
        agent = make_agent("heuristic")
        rng = random.Random(seed)
        while not game.finished and game.ply <= max(PLIES):
            p = game.to_move
            assert p is not None
            if game.ply in PLIES:
                out.append((seed, game.ply, game.view(p)))
            game.play(agent.choose(game.view(p), rng))
    return out


def measure(iterations: int = 1000, runs: int = 3, **options: Any) -> dict[str, Any]:
    rates: list[float] = []
    by_ply: dict[int, list[float]] = {}
    for _seed, ply, view in positions():
        for run in range(runs):
            agent = make_agent("mcts", iterations=iterations, **options)
            start = time.process_time()
            agent.choose(view, random.Random(run))
            rate = iterations / (time.process_time() - start)
            rates.append(rate)
            by_ply.setdefault(ply, []).append(rate)
    return {
        "searches": len(rates),
        "median": statistics.median(rates),
        "min": min(rates),
        "max": max(rates),
        "by_ply": {ply: statistics.median(r) for ply, r in sorted(by_ply.items())},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    m = measure(args.iterations, args.runs)
    print(
        f"{m['searches']} searches of {args.iterations} iterations: median "
        f"{m['median']:.0f} iterations/CPU-second (min {m['min']:.0f}, max {m['max']:.0f})"
    )
    for ply, rate in m["by_ply"].items():
        print(f"  ply {ply}: median {rate:.0f}")


if __name__ == "__main__":
    main()
