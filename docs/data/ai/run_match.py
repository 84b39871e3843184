"""Paired games for docs/ai.md "Strength", with each searching agent's CPU time.

The games are those of ``donutbox sim --players A,B --seconds S --clock cpu
--games N --seed SEED``: deal seeds from SEED up, each played with A in the
first seat and then in the second, the same deal and agent seeds
(``donutbox.lab.match.agent_seed``) and the same player names as
``donutbox.lab.match.play_game``.  Besides the result, each row records
every seat's CPU time (``time.thread_time`` around ``choose``), moves and,
for a search, iterations, which ``donutbox sim`` does not report.

    PYTHONPATH=src python3 docs/data/ai/run_match.py hard heuristic 1.0 70001 40 OUT.jsonl

Rows are appended as games finish.  A game (deal seed, seats) already in
OUT is skipped, so a stopped run can be restarted with the same command
(in a later session too), and two processes can split a seed range by
giving them disjoint ranges (SEED, N) and the same or different OUT files.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

from donutbox.ai import agent_info, make_agent
from donutbox.core import Game, Rules
from donutbox.lab.match import agent_seed


def play(seats: list[str], seed: int, seconds: float) -> dict[str, object]:
    agents = [
        make_agent(n, **({"seconds": seconds, "clock": "cpu"} if agent_info(n).timed else {}))
        for n in seats
    ]
    rngs = [random.Random(agent_seed(seed, i)) for i in range(len(seats))]
    names = [f"{name} ({i + 1})" for i, name in enumerate(seats)]
    game = Game.new(Rules(), names, seed)
    cpu = [0.0] * len(seats)
    moves = [0] * len(seats)
    iterations = [0] * len(seats)
    while not game.finished:
        p = game.to_move
        assert p is not None
        start = time.thread_time()
        move = agents[p].choose(game.view(p), rngs[p])
        cpu[p] += time.thread_time() - start
        moves[p] += 1
        iterations[p] += getattr(agents[p], "last_iterations", 0)
        game.play(move)
    return {
        "seed": seed,
        "seats": seats,
        "scores": game.scores,
        "winners": game.winners,
        "plies": game.ply,
        "cpu": [round(c, 3) for c in cpu],
        "moves": moves,
        "iterations": iterations,
    }


def played(out: Path) -> set[tuple[int, tuple[str, ...]]]:
    """The (deal seed, seats) of the games already in ``out``."""
    if not out.exists():
        return set()
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return {(r["seed"], tuple(r["seats"])) for r in rows}


def main() -> None:
    a, b, seconds, seed0, games, out = sys.argv[1:7]
    done = played(Path(out))
    with open(out, "a") as f:
        for i in range(int(games)):
            seed = int(seed0) + i // 2
            seats = [a, b] if i % 2 == 0 else [b, a]
            if (seed, tuple(seats)) in done:
                continue
            f.write(json.dumps(play(seats, seed, float(seconds))) + "\n")
            f.flush()


if __name__ == "__main__":
    main()
