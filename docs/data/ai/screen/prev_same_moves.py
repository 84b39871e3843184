"""The move ``mcts`` (its defaults) chooses at a fixed number of
iterations in each position of a positions file, generator seed
``7 x deal seed + ply``, as a JSON list.  Run it from two trees (this one
and an export of 5529963) and compare the lists::

    PYTHONPATH=src python3 prev_same_moves.py prev-positions.jsonl 400
"""

import json
import random
import sys

from donutbox.ai import make_agent
from donutbox.core import Game, Rules
from donutbox.core.moves import Move

iters = int(sys.argv[2])
out = []
with open(sys.argv[1]) as f:
    lines = f.read().splitlines()
for line in lines:
    pos = json.loads(line)
    g = Game.new(Rules(), ["a (1)", "b (2)"], pos["seed"])
    for m in pos["moves"]:
        g.play(Move.parse(m))
    agent = make_agent("mcts", iterations=iters)
    mv = agent.choose(g.view(g.to_move), random.Random(pos["seed"] * 7 + len(pos["moves"])))
    out.append(str(mv))
print(json.dumps(out))
