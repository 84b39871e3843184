"""Strength screen for docs/ai.md "The fitted evaluation": paired games of
``mcts`` (fixed iterations, the hard level's options except the leaf)
against ``heuristic``, with the fitted leaf (``ai/value.win_values``) or
the current one (``_squash(fast margin, 20)``), on the same deals: for each
deal seed from SEED up, both arms play it from both seats, interleaved, so
that a run stopped early still has paired rows.  The agents' generators are
seeded as in ``donutbox.lab.match``; CPU time is ``time.process_time``.

    PYTHONPATH=src nice -n 10 python3 docs/data/ai/value/screen_value.py \
        400 61500 50 docs/data/ai/value/screen-400.jsonl

The fitted leaf is plugged in by subclassing ``MctsAgent`` and overriding
``_playout`` (``ai/mcts.py`` is not edited).
"""

from __future__ import annotations

import json
import random
import sys
import time

from donutbox.ai import Agent, make_agent
from donutbox.ai.mcts import MctsAgent
from donutbox.ai.value import win_values
from donutbox.core import Game, Rules
from donutbox.lab.match import agent_seed


class FittedLeafMcts(MctsAgent):
    """``MctsAgent`` whose leaves are scored by ``win_values`` (after the
    playout moves, if any)."""

    def _playout(self, world: Game, rng: random.Random) -> list[float]:
        if self.playout_depth:
            super()._playout(world, rng)  # plays the moves; its values are dropped
        return win_values(world)


def build(arm: str, iterations: int) -> Agent:
    kind = FittedLeafMcts if arm == "fitted" else MctsAgent
    return kind(iterations=iterations, playout_depth=0, expand_samples=10)


def play(agents: list[Agent], seed: int) -> tuple[list[int], list[int], list[float], list[int]]:
    rngs = [random.Random(agent_seed(seed, i)) for i in range(2)]
    game = Game.new(Rules(), ["a", "b"], seed)
    cpu = [0.0, 0.0]
    moves = [0, 0]
    while not game.finished:
        p = game.to_move
        assert p is not None
        t = time.process_time()
        m = agents[p].choose(game.view(p), rngs[p])
        cpu[p] += time.process_time() - t
        moves[p] += 1
        game.play(m)
    return game.scores, game.winners, cpu, moves


def main() -> None:
    out = sys.argv[4]
    iterations, seed0, deals = (int(a) for a in sys.argv[1:4])
    with open(out, "a") as f:
        for d in range(deals):
            seed = seed0 + d
            for arm in ("fitted", "current"):
                for seat_a in (0, 1):
                    a = build(arm, iterations)
                    b = make_agent("heuristic")
                    scores, winners, cpu, moves = play([a, b] if seat_a == 0 else [b, a], seed)
                    w = 1.0 / len(winners) if seat_a in winners else 0.0
                    row = {
                        "arm": arm,
                        "iterations": iterations,
                        "seed": seed,
                        "seat_a": seat_a,
                        "scores": scores,
                        "winners": winners,
                        "win_a": w,
                        "cpu_a": round(cpu[seat_a], 3),
                        "moves_a": moves[seat_a],
                        "cpu_b": round(cpu[1 - seat_a], 3),
                    }
                    f.write(json.dumps(row) + "\n")
                    f.flush()


if __name__ == "__main__":
    main()
