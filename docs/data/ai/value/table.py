"""The held-out table of docs/ai.md "The fitted evaluation": log-loss and
Brier score of the shipped fitted leaf (``ai/value.win_values``) and of
today's MCTS leaf (``_squash(fast margin, 20)``, ``ai/mcts.py``) on every
position of the held-out games (before each move, for the player to move,
against that player's final result), overall and by turns left.

    PYTHONPATH=src python3 docs/data/ai/value/table.py docs/data/ai/value/games.jsonl.gz

Only rows marked ``held_out`` are read (the fit never saw those games).
"""

from __future__ import annotations

import math
import sys

from donutbox.ai.fasteval import fast_scores
from donutbox.ai.mcts import MARGIN_SCALE, _squash
from donutbox.ai.value import turns_left, win_values
from donutbox.core import Game, Rules
from donutbox.lab.fit_value import read_games

BUCKETS = ("Final Lap", "late (turns left <= 10)", "middle (10-20)", "opening (> 20)")


def bucket(game: Game) -> str:
    """Which part of the game: the Final Lap, else by turns left per player
    (``value.turns_left``: about 29 at the start, 4 when the Final Lap nears)."""
    if game.final_lap_turns is not None:
        return BUCKETS[0]
    t = turns_left(game)
    return BUCKETS[1] if t <= 10 else BUCKETS[2] if t <= 20 else BUCKETS[3]


def main() -> None:
    rows = [r for r in read_games(sys.argv[1:]) if r["held_out"]]
    stats: dict[str, list[float]] = {}  # name -> [n, ll_fit, br_fit, ll_base, br_base]
    for row in rows:
        game = Game.new(Rules(), ["a", "b"], seed=row["seed"])
        winners = row["winners"]
        for text in row["moves"]:
            me = game.to_move
            assert me is not None
            y = 1.0 / len(winners) if me in winners else 0.0
            fit = win_values(game)[me]
            est = fast_scores(game)
            base = _squash(est[me] - est[1 - me], MARGIN_SCALE)
            for key in ("all", bucket(game)):
                s = stats.setdefault(key, [0.0] * 5)
                s[0] += 1
                for i, p in ((1, fit), (3, base)):
                    p = min(max(p, 1e-12), 1 - 1e-12)
                    s[i] -= y * math.log(p) + (1 - y) * math.log(1 - p)
                    s[i + 1] += (p - y) ** 2
            game.play(text)
    print(f"{len(rows)} held-out games")
    print("| positions | n | fitted log-loss | squash-20 log-loss | fitted Brier | squash-20 Brier |")
    print("| --- | --- | --- | --- | --- | --- |")
    for key in ("all", *BUCKETS):
        if key not in stats:
            continue
        n, lf, bf, lb, bb = stats[key]
        print(f"| {key} | {int(n):,} | {lf / n:.4f} | {lb / n:.4f} | {bf / n:.4f} | {bb / n:.4f} |")


if __name__ == "__main__":
    main()
