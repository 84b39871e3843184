"""CPU cost per search iteration of MCTS variants, for docs/ai.md "Screening
for version 4": the iteration budget that matches 1 CPU-second for a variant
is v3's (1,144 iterations) times v3's cost per iteration over the variant's.

Positions: plies 8, 16, 24 and 32 of games between two ``heuristic`` agents,
deal seeds SEED.. (generators seeded as in ``donutbox.lab.match``).  In each,
every variant (a JSON object name -> ``MctsAgent`` options, searched with a
fixed ``iterations`` budget) searches with generator seed 1, the variants
taking turns position by position, ROUNDS times; CPU time is
``time.process_time``.  Prints each variant's CPU per iteration (total CPU
over total iterations) and its ratio to the first variant's.

    PYTHONPATH=src python3 docs/data/ai/screen/cost.py VARIANTS.json 2 3
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import donutbox.core as core
from donutbox.ai import make_agent
from donutbox.ai.mcts import MctsAgent
from donutbox.core import Game, PlayerView, Rules
from donutbox.lab.match import agent_seed

PLIES = (8, 16, 24, 32)


def positions(seed0: int, deals: int) -> list[PlayerView]:
    heuristic = make_agent("heuristic")
    out = []
    for seed in range(seed0, seed0 + deals):
        game = Game.new(Rules(), ["a", "b"], seed)
        rngs = [random.Random(agent_seed(seed, i)) for i in range(2)]
        while not game.finished:
            p = game.to_move
            assert p is not None
            view = game.view(p)
            if game.ply in PLIES and len(view.legal_moves()) > 1:
                out.append(view)
            game.play(heuristic.choose(view, rngs[p]))
    return out


def main() -> None:
    variants = json.loads(Path(sys.argv[1]).read_text())
    deals, rounds = int(sys.argv[2]), int(sys.argv[3])
    seed0 = int(sys.argv[4]) if len(sys.argv) > 4 else 97901
    views = positions(seed0, deals)
    cpu = dict.fromkeys(variants, 0.0)
    its = dict.fromkeys(variants, 0)
    for _ in range(rounds):
        for view in views:
            for name, options in variants.items():
                agent = MctsAgent(seconds=None, **options)
                start = time.process_time()
                agent.choose(view, random.Random(1))
                cpu[name] += time.process_time() - start
                its[name] += agent.last_iterations
    first = next(iter(variants))
    base = cpu[first] / its[first]
    print(f"compiled={core.compiled} positions={len(views)} rounds={rounds} seeds={seed0}..")
    for name in variants:
        per = cpu[name] / its[name]
        print(
            f"{name}: {its[name] / len(views) / rounds:.0f} iterations a search, "
            f"{per * 1e6:.0f} us an iteration, {per / base:.3f}x {first}, "
            f"budget {1144 * base / per:.0f}"
        )


if __name__ == "__main__":
    main()
