"""Paired games of an agent of this tree against the previous hard, run from its own code.

The previous hard is the ``mcts`` agent of commit 5529963 (30 November, the
agent of the issue #3 measurement, ``hard`` when issue #18 was filed) at 1
CPU-second a move, on that commit's own engine.  It runs in a second Python
process from an export of that commit, so that nothing of this tree (its
faster engine, its search options) reaches it:

    git archive 5529963 | tar -x -C /tmp/prev
    PYTHONPATH=src python3 docs/data/ai/run_match_prev.py /tmp/prev hard 1.0 99001 200 OUT.jsonl
    ... run_match_prev.py /tmp/prev hard 1.0 99301 200 OUT.jsonl '{"stop_z": null}'

An optional last argument gives AGENT's options as JSON, over its own
(the second line: ``hard`` without its confidence stop).

The games are those of ``run_match.py`` (deal seeds from SEED up, each
played with AGENT first and then second; the same deal and agent seeds and
player names as ``donutbox sim``), with the previous hard's seat named
``mcts``.  The other process replays every move on its own copy of the game
(from the same deal seed), chooses from its own player's view only, and
sends back its move in the record notation, its CPU time and iterations.
Both copies must agree: a move either side finds illegal, or a tray that
differs between them, stops the run with the reason.  Rows are appended as
games finish; a game already in OUT is skipped, so a stopped run resumes.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from donutbox.ai import agent_info, make_agent
from donutbox.core import Game, Rules
from donutbox.lab.match import agent_seed

PREV = "mcts"

#: The program run by the previous code's process: one JSON request a line,
#: one JSON answer a line.  It uses only the API of 5529963 (Game.new, play,
#: view, make_agent, Move.parse) and the notation of spec section 9.
SERVER = r"""
import json, random, sys, time
from donutbox.ai import make_agent
from donutbox.core import Game, Rules
from donutbox.core.moves import Move
from donutbox.lab.match import agent_seed

game = agent = rng = None
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "new":
        game = Game.new(Rules(), req["names"], req["seed"])
        agent = make_agent("mcts", seconds=req["seconds"], clock="cpu")
        rng = random.Random(agent_seed(req["seed"], req["seat"]))
        answer = {"ok": True}
    else:
        for text in req["moves"][game.ply:]:
            game.play(Move.parse(text))
        p = game.to_move
        view = game.view(p)
        start = time.thread_time()
        move = agent.choose(view, rng)
        cpu = time.thread_time() - start
        answer = {"move": str(move), "cpu": cpu, "iterations": agent.last_iterations,
                  "tray": sorted(view.tray), "ply": game.ply}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
"""


class Previous:
    """The previous hard in its own process (its code at ``root``/src)."""

    def __init__(self, root: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(Path(root) / "src"))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=root,
        )

    def ask(self, request: dict[str, object]) -> dict[str, object]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("the previous hard's process stopped")
        answer: dict[str, object] = json.loads(line)
        return answer


def play(
    prev: Previous, seats: list[str], seed: int, seconds: float, options: dict[str, object]
) -> dict[str, object]:
    names = [f"{name} ({i + 1})" for i, name in enumerate(seats)]
    game = Game.new(Rules(), names, seed)
    mine = seats.index(PREV)
    prev.ask({"op": "new", "names": names, "seed": seed, "seat": mine, "seconds": seconds})
    timed = {"seconds": seconds, "clock": "cpu"}
    agents = {
        i: make_agent(n, **({**timed, **options} if agent_info(n).timed else options))
        for i, n in enumerate(seats)
        if i != mine
    }
    rngs = {i: random.Random(agent_seed(seed, i)) for i in agents}
    cpu = [0.0] * len(seats)
    moves = [0] * len(seats)
    iterations = [0] * len(seats)
    played: list[str] = []
    while not game.finished:
        p = game.to_move
        assert p is not None
        if p == mine:
            answer = prev.ask({"op": "move", "moves": played})
            if answer["tray"] != sorted(game.view(p).tray) or answer["ply"] != game.ply:
                raise SystemExit(
                    f"deal {seed}: the two copies of the game differ at ply {game.ply}"
                )
            text = str(answer["move"])
            cpu[p] += float(answer["cpu"])  # type: ignore[arg-type]
            iterations[p] += int(answer["iterations"])  # type: ignore[call-overload]
            move = game.play(text)
        else:
            start = time.thread_time()
            choice = agents[p].choose(game.view(p), rngs[p])
            cpu[p] += time.thread_time() - start
            iterations[p] += getattr(agents[p], "last_iterations", 0)
            move = game.play(choice)
        moves[p] += 1
        played.append(str(move))
    return row(game, seats, seed, cpu, moves, iterations)


def row(
    game: Game,
    seats: list[str],
    seed: int,
    cpu: list[float],
    moves: list[int],
    iterations: list[int],
) -> dict[str, object]:
    """A finished game's row, as ``run_match.py`` writes them."""
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


def done_games(out: Path) -> set[tuple[int, tuple[str, ...]]]:
    if not out.exists():
        return set()
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return {(r["seed"], tuple(r["seats"])) for r in rows}


def main() -> None:
    root, a, seconds, seed0, games, out = sys.argv[1:7]
    options = json.loads(sys.argv[7]) if len(sys.argv) > 7 else {}
    done = done_games(Path(out))
    prev = Previous(root)
    with open(out, "a") as f:
        for i in range(int(games)):
            seed = int(seed0) + i // 2
            seats = [a, PREV] if i % 2 == 0 else [PREV, a]
            if (seed, tuple(seats)) in done:
                continue
            f.write(json.dumps(play(prev, seats, seed, float(seconds), options)) + "\n")
            f.flush()


if __name__ == "__main__":
    main()
