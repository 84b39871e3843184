"""Early stopping for docs/ai.md "Strength": does a stopped search choose what
the full search chooses?

Positions: every other ply (from ply 1) of games between two ``heuristic``
agents, deal seeds SEED.., each agent's generator seeded as in
``donutbox.lab.match``; positions with one legal move are left out.  In
each, three searches of the MCTS variant OPTIONS (JSON) with a budget of
ITERATIONS: the full search with generator seed 1, the same with ``stop_z``
Z (a prefix of the same search, stopped when the rule fires), and the full
search with generator seed 2 (how often two full searches agree: the
search's own noise).  One row per position; CPU time is
``time.process_time``.

    PYTHONPATH=src python3 docs/data/ai/screen/stop.py \\
        '{"playout_depth":0,"expand_samples":10,"full_replies":1}' 2000 3.0 64000 4 OUT.jsonl
"""

from __future__ import annotations

import json
import random
import sys
import time
from typing import Any

from donutbox.ai import make_agent
from donutbox.ai.mcts import MctsAgent
from donutbox.core import Game, Move, PlayerView, Rules
from donutbox.lab.match import agent_seed


def timed(agent: MctsAgent, view: PlayerView, seed: int) -> tuple[Move, float, dict[str, float]]:
    """The search's choice, its CPU time and its value of every candidate."""
    start = time.process_time()
    ranked = agent.search(view, random.Random(seed))
    spent = time.process_time() - start
    return ranked[0][0], spent, {str(m): v for m, _, v in ranked}


def main() -> None:
    options: dict[str, Any] = json.loads(sys.argv[1])
    iterations, z, delta = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    seed0, deals, out = int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
    heuristic = make_agent("heuristic")
    with open(out, "a") as f:
        for seed in range(seed0, seed0 + deals):
            game = Game.new(Rules(), ["a", "b"], seed)
            rngs = [random.Random(agent_seed(seed, i)) for i in range(2)]
            while not game.finished:
                p = game.to_move
                assert p is not None
                view = game.view(p)
                if game.ply % 2 == 1 and len(view.legal_moves()) > 1:
                    full = MctsAgent(iterations=iterations, seconds=None, **options)
                    early = MctsAgent(
                        iterations=iterations, seconds=None, stop_z=z, stop_delta=delta, **options
                    )
                    other = MctsAgent(iterations=iterations, seconds=None, **options)
                    m_full, t_full, values = timed(full, view, 1)
                    m_early, t_early, _ = timed(early, view, 1)
                    m_other, _, _ = timed(other, view, 2)
                    early2 = MctsAgent(
                        iterations=iterations, seconds=None, stop_z=z, stop_delta=delta, **options
                    )
                    m_early2, _, _ = timed(early2, view, 2)
                    best = values[str(m_full)]
                    row = {
                        "seed": seed,
                        "ply": game.ply,
                        "full": str(m_full),
                        "early": str(m_early),
                        "other": str(m_other),
                        "early2": str(m_early2),
                        "early_iterations": early.last_iterations,
                        "loss_early": round(best - values.get(str(m_early), 0.0), 4),
                        "loss_other": round(best - values.get(str(m_other), 0.0), 4),
                        "loss_early2": round(best - values.get(str(m_early2), 0.0), 4),
                        "early2_iterations": early2.last_iterations,
                        "cpu_full": round(t_full, 3),
                        "cpu_early": round(t_early, 3),
                    }
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                game.play(heuristic.choose(view, rngs[p]))


if __name__ == "__main__":
    main()
