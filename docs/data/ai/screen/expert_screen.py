"""Is a longer search clearly stronger?  ``hard``'s options without the
confidence stop at SECONDS CPU-seconds a move (the ``expert`` candidate)
against ``hard`` as it is at 1 CPU-second, paired games (docs/ai.md, "The
search compiled, and the previous hard as it was"):

    PYTHONPATH=src python3 docs/data/ai/screen/expert_screen.py 5.0 99701 20 OUT.jsonl

Deal seeds from SEED, each from both seats; the agents' generators and the
player names as in ``donutbox.lab.match``.  Rows as ``run_match.py``'s (the
candidate's seat is named ``expert``); a game already in OUT is skipped.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from run_match_prev import done_games, row

from donutbox.ai import make_agent
from donutbox.core import Game, Rules
from donutbox.lab.match import agent_seed


def play(seats: list[str], seed: int, seconds: float) -> dict[str, object]:
    options = {
        "expert": {"seconds": seconds, "clock": "cpu", "stop_z": None},
        "hard": {"seconds": 1.0, "clock": "cpu"},
    }
    agents = [make_agent("hard", **options[n]) for n in seats]
    rngs = [random.Random(agent_seed(seed, i)) for i in range(len(seats))]
    game = Game.new(Rules(), [f"{n} ({i + 1})" for i, n in enumerate(seats)], seed)
    cpu = [0.0, 0.0]
    moves = [0, 0]
    iterations = [0, 0]
    while not game.finished:
        p = game.to_move
        assert p is not None
        start = time.thread_time()
        move = agents[p].choose(game.view(p), rngs[p])
        cpu[p] += time.thread_time() - start
        moves[p] += 1
        iterations[p] += agents[p].last_iterations  # type: ignore[attr-defined]
        game.play(move)
    return row(game, seats, seed, cpu, moves, iterations)


def main() -> None:
    seconds, seed0, games, out = sys.argv[1:5]
    path = Path(out)
    done = done_games(path)
    with path.open("a") as f:
        for i in range(int(games)):
            seed = int(seed0) + i // 2
            seats = ["expert", "hard"] if i % 2 == 0 else ["hard", "expert"]
            if (seed, tuple(seats)) not in done:
                f.write(json.dumps(play(seats, seed, float(seconds))) + "\n")
                f.flush()


if __name__ == "__main__":
    main()
