"""The 40 positions of ``prev-positions.jsonl`` (plies 4, 14, 26 and 38 of
ten games between two ``greedy`` agents, deal seeds 5001-5010), as deal
seed and moves in the record notation, so that any version of the engine
can replay them.  ``PYTHONPATH=src python3 prev_positions.py`` (writes
/tmp/s9/positions.jsonl).
"""

import json
import random

from donutbox.ai import make_agent
from donutbox.core import Game, Rules

rows = []
for seed in range(5001, 5011):
    g = Game.new(Rules(), ["a (1)", "b (2)"], seed)
    agent = make_agent("greedy")
    rng = random.Random(seed)
    moves = []
    for ply in range(40):
        if g.finished:
            break
        if ply in (4, 14, 26, 38):
            rows.append({"seed": seed, "moves": list(moves)})
        mv = g.play(agent.choose(g.view(g.to_move), rng))
        moves.append(str(mv))
with open("/tmp/s9/positions.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
print(len(rows))
