"""CPU microseconds a call of the evaluations MCTS and the heuristic agent
call per position or move (``ai/fasteval.py``, ``ai/value.py``): what a box
is worth and who scores it are read from the rules' scoring rule there, so
this is the measure of that reading's cost (docs/performance.md, "Scoring").

Positions: a world sampled from the mover's view before every move of 6
games between two ``heuristic`` agents (deal seeds 500000-500005, standard
rules).  Per function, the best and the median of 9 rounds (the functions
taking turns round by round) of 3 passes over the positions:

- ``fast_scores``, ``win_values``: one call a position;
- ``PlaceEvaluator``: made once a position, then ``estimate`` of every
  legal placement (a call = one placement);
- ``place margin``: ``margin`` of every legal placement (a new counter each);
- ``box_margin``: every legal box-it (a call = one box-it).

    python benchmarks/eval_speed.py            # the donutbox on sys.path
    PYTHONPATH=src python benchmarks/eval_speed.py
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

import donutbox.core
from donutbox.ai import make_agent
from donutbox.ai.fasteval import PlaceEvaluator, box_margin, fast_scores
from donutbox.ai.value import win_values
from donutbox.core import Game, Move, Rules
from donutbox.core.worlds import sample_world

ROUNDS = 9
PASSES = 3


def positions() -> list[tuple[Game, int, list[Move], list[Move]]]:
    """(world, mover, its placements, its box-its) before every move."""
    out = []
    for seed in range(500000, 500006):
        game = Game.new(Rules(), 2, seed=seed)
        agent = make_agent("heuristic")
        rng = random.Random(seed)
        while not game.finished:
            p = game.to_move
            assert p is not None
            world = sample_world(game.view(p), rng)
            moves = world.legal_moves()
            out.append(
                (
                    world,
                    p,
                    [m for m in moves if m.kind == "place"],
                    [m for m in moves if m.kind == "box"],
                )
            )
            game.play(agent.choose(game.view(p), rng))
    return out


def main() -> None:
    found = positions()
    win_values(found[0][0])  # load the weights before timing
    places = sum(len(pl) for _, _, pl, _ in found)
    boxes = sum(len(bx) for _, _, _, bx in found)

    def scores() -> None:
        for w, _, _, _ in found:
            fast_scores(w)

    def values() -> None:
        for w, _, _, _ in found:
            win_values(w)

    def estimates() -> None:
        for w, p, pl, _ in found:
            ev = PlaceEvaluator(w, p)
            if ev.applies:
                for m in pl:
                    ev.estimate(m)

    def margins() -> None:
        for w, p, pl, _ in found:
            ev = PlaceEvaluator(w, p)
            if ev.applies:
                for m in pl:
                    ev.margin(m)

    def box_its() -> None:
        for w, p, _, bx in found:
            for m in bx:
                box_margin(w, m, p)

    funcs: dict[str, tuple[Callable[[], None], int]] = {
        "fast_scores": (scores, len(found)),
        "win_values": (values, len(found)),
        "PlaceEvaluator.estimate": (estimates, places),
        "PlaceEvaluator.margin": (margins, places),
        "box_margin": (box_its, boxes),
    }
    rounds: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(ROUNDS):
        for name, (f, calls) in funcs.items():
            t = time.process_time()
            for _ in range(PASSES):
                f()
            rounds[name].append((time.process_time() - t) / (PASSES * calls) * 1e6)
    build = "compiled" if donutbox.core.compiled else "pure"
    print(
        f"core: {build}; {len(found)} positions, {places} placements, {boxes} box-its; "
        f"CPU microseconds a call, best and median of {ROUNDS} rounds"
    )
    print("| function | best | median |")
    print("| --- | --- | --- |")
    for name, r in rounds.items():
        print(f"| {name} | {min(r):.2f} | {statistics.median(r):.2f} |")


if __name__ == "__main__":
    main()
