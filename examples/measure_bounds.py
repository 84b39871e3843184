"""How far do games stretch the ``places`` encoding's bounds?  (docs/research.md)

For each rule set and player count, plays games three ways and records the
most seen at any turn: open places, places where a card of the mover's tray
fits (``K`` must hold them: the encoding keeps those first), open boxes
(``B``), the spread of occupied cells (the board width ``W``), legal moves,
and the game's length in actions.

- ``random``: uniformly random legal moves;
- ``east``: adversarial, always a placement with the largest ``x`` (the
  counter grows in one direction as fast as the rules allow);
- ``diagonal``: always a placement with the largest ``x + y``.

    python examples/measure_bounds.py --random 50 --adversarial 10 [--layout splitzkies]
"""

from __future__ import annotations

import argparse
import random

from donutbox.core import Game, Rules
from donutbox.envs.encoding import DEFAULT_PLACES, default_board, default_boxes


def play(rules: Rules, players: int, seed: int, mode: str) -> dict[str, int]:
    game = Game.new(rules, players, seed=seed)
    rng = random.Random(seed)
    most = {"places": 0, "fitting": 0, "boxes": 0, "spread": 0, "legal": 0, "length": 0}
    while not game.finished:
        counter = game.counter
        moves = game.legal_moves()
        rows = [c >> 22 for c in counter.cells]
        cols = [c & ((1 << 22) - 1) for c in counter.cells]
        most["places"] = max(most["places"], len(counter.places))
        most["boxes"] = max(most["boxes"], len(counter.box_ids))
        spread = max(max(rows) - min(rows), max(cols) - min(cols)) + 1
        most["spread"] = max(most["spread"], spread)
        most["legal"] = max(most["legal"], len(moves))
        places = [m for m in moves if m.kind == "place"]
        most["fitting"] = max(most["fitting"], len({(m.x, m.y) for m in places}))
        if mode == "random" or not places:
            move = moves[rng.randrange(len(moves))]
        else:
            key = (lambda m: m.x) if mode == "east" else (lambda m: m.x + m.y)
            far = max(map(key, places))
            move = rng.choice([m for m in places if key(m) == far])
        game.play(move)
    most["length"] = game.ply
    return most


def main(argv: list[str] | None = None) -> list[dict[str, object]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=50)
    ap.add_argument("--adversarial", type=int, default=10)
    ap.add_argument("--layout", default="", help="only this layout (squared-away, splitzkies)")
    args = ap.parse_args(argv)
    rows = []
    print(
        "rules players mode games | places | fitting (K) | boxes (B) | spread (W) | legal | length"
    )
    for rules in [r for r in Rules.all() if not r.closers and args.layout in r.layout]:
        for players in (2, 3, 4):
            for mode, games in (
                ("random", args.random),
                ("east", args.adversarial),
                ("diagonal", args.adversarial),
            ):
                most: dict[str, int] = {}
                for seed in range(games):
                    for k, v in play(rules, players, seed, mode).items():
                        most[k] = max(most.get(k, 0), v)
                k_bound = DEFAULT_PLACES[(not rules.squared, players)]
                row = {"rules": rules.key(), "players": players, "mode": mode, "games": games}
                row.update(most)
                rows.append(row)
                print(
                    f"{rules.key()} {players} {mode} {games} | {most['places']} | "
                    f"{most['fitting']} ({k_bound}) | "
                    f"{most['boxes']} ({default_boxes(players)}) | "
                    f"{most['spread']} ({default_board(players)}) | "
                    f"{most['legal']} | {most['length']}",
                    flush=True,
                )
    return rows


if __name__ == "__main__":
    main()
