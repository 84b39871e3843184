"""What ``donutbox bot`` spends rebuilding its seat's view from a game
stream's state (``botclient.view.view_of``: the counter replayed on a free
game from the public history) before its agent thinks, by ply.

    python benchmarks/bot_view.py --games 20

Plays ``--games`` random two-player games (seeds 0..N-1), takes the JSON
state of the player to move at every ply (``PlayerView.to_dict``, as the
server sends it) and times ``view_of`` on it (``time.perf_counter``, one
call each); prints the median and 90th percentile per ply range.  The
replay grows with the game, so the late plies cost most.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from donutbox.botclient.view import view_of
from donutbox.core import Game, Rules


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--games", type=int, default=20)
    args = ap.parse_args()
    by_range: dict[int, list[float]] = {}
    for seed in range(args.games):
        game = Game.new(Rules(), 2, seed=seed)
        rng = random.Random(seed)
        while not game.finished:
            assert game.to_move is not None
            state = game.view(game.to_move).to_dict()
            start = time.perf_counter()
            view_of(state)
            by_range.setdefault(game.ply // 20, []).append(time.perf_counter() - start)
            game.play(rng.choice(game.legal_moves()))
    print("plies      calls  median ms  p90 ms")
    for k in sorted(by_range):
        t = sorted(by_range[k])
        p90 = t[int(0.9 * (len(t) - 1))]
        print(
            f"{20 * k:3}-{20 * k + 19:<3}  {len(t):7}  "
            f"{statistics.median(t) * 1e3:9.2f}  {p90 * 1e3:6.2f}"
        )


if __name__ == "__main__":
    main()
