"""Iterations a move of ``mcts`` at 1 CPU-second, by ply, in games against
``heuristic`` (docs/ai.md, "The search compiled, and the previous hard as
it was").  Run from an export of the commit measured::

    cd /tmp/prev && PYTHONPATH=src python3 .../prev_iterations.py 98001 first >> OUT.jsonl

(deal seeds 98001 and 98002, ``first`` and ``second``: rows in
``prev-iterations-5529963.jsonl`` and ``prev-iterations-99369c7.jsonl``).
"""

import json
import random
import sys
import time

from donutbox.ai import make_agent
from donutbox.core import Game, Rules
from donutbox.lab.match import agent_seed

seed = int(sys.argv[1])
first = sys.argv[2] == "first"
seats = ["mcts", "heuristic"] if first else ["heuristic", "mcts"]
agents = [make_agent(n, **({"seconds": 1.0, "clock": "cpu"} if n == "mcts" else {})) for n in seats]
rngs = [random.Random(agent_seed(seed, i)) for i in range(2)]
g = Game.new(Rules(), [f"{n} ({i + 1})" for i, n in enumerate(seats)], seed)
rows = []
while not g.finished:
    p = g.to_move
    t = time.thread_time()
    mv = agents[p].choose(g.view(p), rngs[p])
    if seats[p] == "mcts":
        rows.append(
            {
                "ply": g.ply,
                "iterations": agents[p].last_iterations,
                "cpu": round(time.thread_time() - t, 3),
            }
        )
    g.play(mv)
print(json.dumps({"seed": seed, "seats": seats, "rows": rows}))
