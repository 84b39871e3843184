"""The strength table of docs/ai.md "The fitted evaluation" from the rows
of ``screen_value.py``: per arm (the fitted leaf, the current one) the
wins against ``heuristic`` (a shared win counts a half) with a 95% Wilson
interval and CPU a move; then the paired comparison on the (deal, seat)
pairs both arms played: games won by one arm and lost by the other, and
a two-sided sign test on those.

    PYTHONPATH=src python3 docs/data/ai/value/summarize_screen.py docs/data/ai/value/screen-400.jsonl
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from donutbox.lab.stats import wilson


def main() -> None:
    rows = []
    for path in sys.argv[1:]:
        rows += [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    by: dict[tuple[int, int], dict[str, float]] = {}
    print("| leaf | games | wins | win rate | 95% interval | CPU a move |")
    print("| --- | --- | --- | --- | --- | --- |")
    for arm in ("fitted", "current"):
        mine = [r for r in rows if r["arm"] == arm]
        if not mine:
            continue
        wins = sum(r["win_a"] for r in mine)
        cpu = sum(r["cpu_a"] for r in mine) / sum(r["moves_a"] for r in mine)
        lo, hi = wilson(wins, len(mine))
        print(
            f"| {arm} | {len(mine)} | {wins:g} | {wins / len(mine):.1%} | "
            f"{lo:.1%} - {hi:.1%} | {cpu:.3f} s |"
        )
        for r in mine:
            by.setdefault((r["seed"], r["seat_a"]), {})[arm] = r["win_a"]
    pairs = [v for v in by.values() if len(v) == 2]
    better = sum(1 for v in pairs if v["fitted"] > v["current"])
    worse = sum(1 for v in pairs if v["fitted"] < v["current"])
    n = better + worse
    # two-sided sign test: P(a split at least this uneven | p = 1/2)
    k = max(better, worse)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k, n + 1)) / 2**n) if n else 1.0
    print()
    print(
        f"{len(pairs)} paired games: the fitted leaf won {better} that the current one lost, "
        f"lost {worse} that it won (sign test p = {p:.3f})"
    )


if __name__ == "__main__":
    main()
