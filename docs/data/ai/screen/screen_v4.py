"""Paired screen for docs/ai.md "Screening for version 4": MCTS variants
against one opponent, every variant on the same deals, each deal from both
seats, at fixed iteration budgets (so that neither the machine's load nor
the build, pure or compiled, changes a move).

    PYTHONPATH=src python3 docs/data/ai/screen/screen_v4.py \\
        docs/data/ai/screen/v4-variants.json '{"iterations":2240}' 97001 60 OUT.jsonl

VARIANTS is a JSON file: variant name -> ``MctsAgent`` options (with their
``iterations``); the opponent is ``MctsAgent`` options (JSON) or an agent
name (a JSON string).  The loop runs deal by deal, seat by seat, variant by
variant, so that a run stopped at any time leaves the variants with (nearly)
the same games.  The agents' generators are seeded as in
``donutbox.lab.match``.  Rows are appended as games finish; a game
(variant, deal seed, seat of the variant) already in OUT is skipped, so a
stopped run is continued with the same command.  ``cpu_*`` is
``time.process_time`` around each ``choose``, summed over the game;
``iter_*`` the search iterations summed over the moves; ``compiled`` says
which core played (``donutbox.core.compiled``: the same moves either way).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import donutbox.core as core
from donutbox.ai import Agent, make_agent
from donutbox.ai.mcts import MctsAgent
from donutbox.core import Game, Rules
from donutbox.lab.match import agent_seed


def build(spec: Any) -> Agent:
    return make_agent(spec) if isinstance(spec, str) else MctsAgent(seconds=None, **spec)


def play(specs: list[Any], seed: int) -> dict[str, Any]:
    agents = [build(s) for s in specs]
    rngs = [random.Random(agent_seed(seed, i)) for i in range(2)]
    game = Game.new(Rules(), ["a", "b"], seed)
    cpu = [0.0, 0.0]
    moves = [0, 0]
    iterations = [0, 0]
    while not game.finished:
        p = game.to_move
        assert p is not None
        start = time.process_time()
        move = agents[p].choose(game.view(p), rngs[p])
        cpu[p] += time.process_time() - start
        moves[p] += 1
        iterations[p] += getattr(agents[p], "last_iterations", 0)
        game.play(move)
    return {
        "scores": game.scores,
        "winners": game.winners,
        "cpu": cpu,
        "moves": moves,
        "iterations": iterations,
    }


def main() -> None:
    variants: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text())
    opponent = json.loads(sys.argv[2])
    seed0, deals, out = int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
    done: set[tuple[str, int, int]] = set()
    if out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done.add((r["variant"], r["seed"], r["seat_a"]))
    with out.open("a") as f:
        for seed in range(seed0, seed0 + deals):
            for seat in (0, 1):
                for name, spec in variants.items():
                    if (name, seed, seat) in done:
                        continue
                    game = play([spec, opponent] if seat == 0 else [opponent, spec], seed)
                    b = 1 - seat
                    row = {
                        "variant": name,
                        "seed": seed,
                        "seat_a": seat,
                        "scores": game["scores"],
                        "winners": game["winners"],
                        "win_a": 1.0 / len(game["winners"]) if seat in game["winners"] else 0.0,
                        "cpu_a": round(game["cpu"][seat], 3),
                        "moves_a": game["moves"][seat],
                        "iter_a": game["iterations"][seat],
                        "cpu_b": round(game["cpu"][b], 3),
                        "moves_b": game["moves"][b],
                        "iter_b": game["iterations"][b],
                        "compiled": core.compiled,
                    }
                    f.write(json.dumps(row) + "\n")
                    f.flush()


if __name__ == "__main__":
    main()
