"""How far from the start card do real games reach?  (Sizes the action window.)

For each rule combination and player count, plays games with cheap random
moves (``sample_move``: a random open place, tray card and fitting rotation)
and records, per game, the smallest window half-width ``W / 2`` that holds
every card position that was legal at any point and every occupied cell:
a card at (x, y) fits in the window when ``-W/2 <= x`` and ``x + 1 <= W/2 - 1``.

    python examples/measure_window.py --games 1000
"""

from __future__ import annotations

import argparse
import random
import time

from donutbox.core import Game, Rules
from donutbox.core.geometry import xy
from donutbox.core.sampling import sample_move
from donutbox.envs import DEFAULT_WINDOW


def needed_half_width(rules: Rules, players: int, seed: int) -> int:
    """The smallest W/2 whose window holds every legal place of one game."""
    game = Game.new(rules, players, seed=seed)
    rng = random.Random(seed)
    need = 0
    while not game.finished:
        for p in game.counter.places:
            x, y = xy(p)
            need = max(need, -x, -y, x + 2, y + 2)
        game.play(sample_move(game, rng))
    for d in game.counter.donuts():
        need = max(need, -d.x, -d.y, d.x + 1, d.y + 1)
    return need


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--players", type=int, nargs="*", default=[2, 3, 4])
    args = parser.parse_args()
    print("players  rules                                median  p99   max  default W/2")
    for players in args.players:
        for rules in Rules.all():
            if rules.closers:  # Coffee's For Closers changes scoring, not placement
                continue
            start = time.perf_counter()
            needs = sorted(needed_half_width(rules, players, s) for s in range(args.games))
            p99 = needs[min(len(needs) - 1, int(0.99 * len(needs)))]
            print(
                f"{players:>7}  {rules.label():<36} {needs[len(needs) // 2]:>6} {p99:>4} "
                f"{needs[-1]:>5}  {DEFAULT_WINDOW[players] // 2:>11}"
                f"   ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
