"""Screening matches for docs/ai.md "Strength": paired games of an MCTS variant A
(``MctsAgent`` options as JSON) against B (an agent name as a JSON string, or
options), deal seeds from SEED up, each deal played with A in both seats; the
agents' generators are seeded as in ``donutbox.lab.match``.

    PYTHONPATH=src python3 docs/data/ai/screen/screen.py \
        '{"iterations":500}' '"heuristic"' 60000 20 OUT.jsonl

Rows are appended as games finish; a game (seed, seat of A) already in OUT
is skipped, so a stopped run can be restarted with the same command.
``iter_a`` is A's search iterations summed over its moves.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from donutbox.ai import Agent, make_agent
from donutbox.ai.mcts import MctsAgent
from donutbox.core import Game, Rules
from donutbox.lab.match import agent_seed


def build(spec: Any) -> Agent:
    return make_agent(spec) if isinstance(spec, str) else MctsAgent(**spec)


def play(
    specs: list[Any], seed: int
) -> tuple[list[int], list[int], list[float], list[int], list[int]]:
    agents = [build(s) for s in specs]
    rngs = [random.Random(agent_seed(seed, i)) for i in range(2)]
    game = Game.new(Rules(), ["a", "b"], seed)
    cpu = [0.0, 0.0]
    moves = [0, 0]
    iterations = [0, 0]
    while not game.finished:
        p = game.to_move
        assert p is not None
        t = time.process_time()
        m = agents[p].choose(game.view(p), rngs[p])
        cpu[p] += time.process_time() - t
        moves[p] += 1
        iterations[p] += getattr(agents[p], "last_iterations", 0)
        game.play(m)
    return game.scores, game.winners, cpu, moves, iterations


def main() -> None:
    a = json.loads(sys.argv[1])
    b = json.loads(sys.argv[2])
    seed0, deals, out = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    done: set[tuple[int, int]] = set()
    if Path(out).exists():
        for line in Path(out).read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done.add((r["seed"], r["seat_a"]))
    with open(out, "a") as f:
        for d in range(deals):
            seed = seed0 + d
            for seat_a in (0, 1):
                if (seed, seat_a) in done:
                    continue
                specs = [a, b] if seat_a == 0 else [b, a]
                scores, winners, cpu, moves, iterations = play(specs, seed)
                w = 1.0 / len(winners) if seat_a in winners else 0.0
                row = {
                    "seed": seed,
                    "seat_a": seat_a,
                    "scores": scores,
                    "winners": winners,
                    "win_a": w,
                    "cpu_a": round(cpu[seat_a], 3),
                    "moves_a": moves[seat_a],
                    "iter_a": iterations[seat_a],
                    "cpu_b": round(cpu[1 - seat_a], 3),
                }
                f.write(json.dumps(row) + "\n")
                f.flush()


if __name__ == "__main__":
    main()
