"""The cost of the fitted leaf (docs/ai.md "The fitted evaluation"): CPU
microseconds a call (``time.process_time``) of ``fast_scores`` (what MCTS
calls at a leaf today), of today's whole leaf (``fast_scores`` and the
squashing of each player's margin, as ``MctsAgent._playout`` does with no
playout moves) and of ``win_values``, on the same positions: (1) a world
sampled from the mover's view before every move of 6 games between two
``heuristic`` agents (deal seeds 400000-400005), plus the finished games;
(2) the leaves that the hard level's search (300 iterations, no playout
moves, 10 sampled replies) scores in 5 positions of another game.
Each figure is the best and the median of 9 rounds of 20 passes over
the positions, the three functions taking turns round by round.

    PYTHONPATH=src nice -n 10 python3 docs/data/ai/value/bench.py
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from donutbox.ai import make_agent
from donutbox.ai.fasteval import fast_scores
from donutbox.ai.mcts import MARGIN_SCALE, MctsAgent, _squash
from donutbox.ai.value import win_values
from donutbox.core import Game, Rules
from donutbox.core.worlds import sample_world

ROUNDS = 9
PASSES = 20


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


class Recorder(MctsAgent):
    """The hard level's search (fixed iterations) keeping a copy of every leaf."""

    def __init__(self) -> None:
        super().__init__(iterations=300, playout_depth=0, expand_samples=10)
        self.leaves: list[Game] = []

    def _playout(self, world: Game, rng: random.Random) -> list[float]:
        self.leaves.append(world.copy())
        return super()._playout(world, rng)


def searches() -> list[tuple[int, list[Game]]]:
    """The searching player and the leaves of 300-iteration searches at
    plies 8, 16, 24, 32 and 40 of a game between two ``heuristic`` agents
    (deal seed 400010)."""
    game = Game.new(Rules(), 2, seed=400010)
    agent = make_agent("heuristic")
    rng = random.Random(1)
    out = []
    while not game.finished:
        p = game.to_move
        assert p is not None
        if game.ply in (8, 16, 24, 32, 40):
            search = Recorder()
            search.choose(game.view(p), random.Random(game.ply))
            out.append((p, search.leaves))
        game.play(agent.choose(game.view(p), rng))
    return out


def leaves() -> list[Game]:
    return [w for _, found in searches() for w in found]


def today(world: Game) -> list[float]:
    est = fast_scores(world)
    out = []
    for p in range(len(est)):
        other = max(e for q, e in enumerate(est) if q != p)
        out.append(_squash(est[p] - other, MARGIN_SCALE))
    return out


def main() -> None:
    win_values(positions()[0])  # load the weights before timing
    for label, worlds in (("game positions", positions()), ("MCTS leaves", leaves())):
        run(label, worlds)


def run(label: str, worlds: list[Game]) -> None:
    funcs: dict[str, Callable[[Game], object]] = {
        "fast_scores": fast_scores,
        "today's leaf": today,
        "win_values": win_values,
    }
    rounds: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(ROUNDS):  # the functions take turns, round by round
        for name, f in funcs.items():
            t = time.process_time()
            for _ in range(PASSES):
                for w in worlds:
                    f(w)
            rounds[name].append((time.process_time() - t) / (PASSES * len(worlds)) * 1e6)
    print(f"{label}: {len(worlds)}; CPU microseconds a call, best and median of {ROUNDS} rounds")
    print("| function | best | median | median / fast_scores |")
    print("| --- | --- | --- | --- |")
    base = statistics.median(rounds["fast_scores"])
    for name, r in rounds.items():
        m = statistics.median(r)
        print(f"| {name} | {min(r):.2f} | {m:.2f} | {m / base:.2f} |")


if __name__ == "__main__":
    main()
