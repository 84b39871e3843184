"""The cost of the fitted leaf (docs/ai.md "The fitted evaluation"): CPU
microseconds a call (``time.process_time``) of ``fast_scores`` (what MCTS
calls at a leaf today), of today's whole leaf (``fast_scores`` and the
squashing of each player's margin, as ``MctsAgent._playout`` does with no
playout moves) and of ``win_values``, on the same positions: a world
sampled from the mover's view before every move of 6 games between two
``heuristic`` agents (deal seeds 400000-400005), plus the finished games.
Each figure is the best and the median of 5 rounds of 20 passes.

    PYTHONPATH=src nice -n 10 python3 docs/data/ai/value/bench.py
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from donutbox.ai import make_agent
from donutbox.ai.fasteval import fast_scores
from donutbox.ai.mcts import MARGIN_SCALE, _squash
from donutbox.ai.value import win_values
from donutbox.core import Game, Rules
from donutbox.core.worlds import sample_world


def positions() -> list[Game]:
    out = []
    for seed in range(400000, 400006):
        game = Game.new(Rules(), 2, seed=seed)
        agent = make_agent("heuristic")
        rng = random.Random(seed)
        while not game.finished:
            p = game.to_move
            assert p is not None
            out.append(sample_world(game.view(p), rng))
            game.play(agent.choose(game.view(p), rng))
        out.append(game.copy())
    return out


def today(world: Game) -> list[float]:
    est = fast_scores(world)
    out = []
    for p in range(len(est)):
        other = max(e for q, e in enumerate(est) if q != p)
        out.append(_squash(est[p] - other, MARGIN_SCALE))
    return out


def cost(f: Callable[[Game], object], worlds: list[Game]) -> tuple[float, float]:
    rounds = []
    for _ in range(5):
        t = time.process_time()
        for _ in range(20):
            for w in worlds:
                f(w)
        rounds.append((time.process_time() - t) / (20 * len(worlds)) * 1e6)
    return min(rounds), statistics.median(rounds)


def main() -> None:
    worlds = positions()
    win_values(worlds[0])  # load the weights before timing
    print(f"{len(worlds)} positions; CPU microseconds a call (best, median of 5 rounds)")
    for name, f in (
        ("fast_scores", fast_scores),
        ("today's leaf", today),
        ("win_values", win_values),
    ):
        best, median = cost(f, worlds)
        print(f"| {name} | {best:.2f} | {median:.2f} |")


if __name__ == "__main__":
    main()
