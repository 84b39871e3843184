"""A ceiling, not an agent: hard's search *seeing every hidden card*
against the previous hard (docs/ai.md, "The search compiled, and the
previous hard as it was").

How much can any agent that must guess the hidden cards hope to win
against the previous hard?  This plays hard's search without its stop
(``make_agent("hard", stop_z=None)``), but every iteration searches the
true game (a copy of it) instead of a world sampled from its view: perfect
information, which no real agent has.  It cheats on purpose and exists
only here, in the lab's data folder; no level or agent of the package can
do it (their ``choose`` gets a ``PlayerView``).  The opponent is the
previous hard from the export of its commit, in its own process, as in
``run_match_prev.py``:

    git archive 5529963 | tar -x -C /tmp/prev
    PYTHONPATH=src python3 docs/data/ai/screen/oracle.py /tmp/prev 1.0 99601 40 OUT.jsonl

Runs on the pure-Python search (the sampler is replaced by rebinding
``donutbox.ai.mcts.sample_world``, which a compiled module would not
see): the script stops if ``donutbox.ai.mcts`` is compiled.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from run_match_prev import PREV, Previous, done_games, row

from donutbox.ai import (
    make_agent,
    mcts,
)
from donutbox.core import Game, Rules
from donutbox.lab.match import agent_seed

ORACLE = "oracle"


def play(prev: Previous, seats: list[str], seed: int, seconds: float) -> dict[str, object]:
    names = [f"{name} ({i + 1})" for i, name in enumerate(seats)]
    game = Game.new(Rules(), names, seed)
    mine = seats.index(PREV)
    me = 1 - mine
    prev.ask({"op": "new", "names": names, "seed": seed, "seat": mine, "seconds": seconds})
    agent = make_agent("hard", seconds=seconds, clock="cpu", stop_z=None)
    rng = random.Random(agent_seed(seed, me))
    # Every "sampled" world is the true game: the search sees all the cards.
    mcts.sample_world = lambda view, rng: game.copy()  # type: ignore[assignment]
    cpu = [0.0, 0.0]
    moves = [0, 0]
    iterations = [0, 0]
    played: list[str] = []
    while not game.finished:
        p = game.to_move
        assert p is not None
        if p == mine:
            answer = prev.ask({"op": "move", "moves": played})
            if answer["tray"] != sorted(game.view(p).tray) or answer["ply"] != game.ply:
                raise SystemExit(f"deal {seed}: the copies of the game differ at ply {game.ply}")
            cpu[p] += float(answer["cpu"])  # type: ignore[arg-type]
            iterations[p] += int(answer["iterations"])  # type: ignore[call-overload]
            move = game.play(str(answer["move"]))
        else:
            start = time.thread_time()
            choice = agent.choose(game.view(p), rng)
            cpu[p] += time.thread_time() - start
            iterations[p] += agent.last_iterations
            move = game.play(choice)
        moves[p] += 1
        played.append(str(move))
    return row(game, seats, seed, cpu, moves, iterations)


def main() -> None:
    if not (mcts.__file__ or "").endswith(".py"):
        raise SystemExit("oracle.py: needs the pure-Python search (its sampler is rebound)")
    root, seconds, seed0, games, out = sys.argv[1:6]
    done = done_games(Path(out))
    prev = Previous(root)
    with open(out, "a") as f:
        for i in range(int(games)):
            seed = int(seed0) + i // 2
            seats = [ORACLE, PREV] if i % 2 == 0 else [PREV, ORACLE]
            if (seed, tuple(seats)) in done:
                continue
            f.write(json.dumps(play(prev, seats, seed, float(seconds))) + "\n")
            f.flush()


if __name__ == "__main__":
    main()
