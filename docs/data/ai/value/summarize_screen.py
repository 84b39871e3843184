"""The strength table of docs/ai.md "The fitted evaluation" from the rows
of ``screen_value.py``: per arm (the fitted leaf, the current one) the
wins against ``heuristic`` (a shared win counts a half) with a 95% Wilson
interval and CPU a move; then each arm against ``current`` on the (deal,
seat) games both played: games won by one and lost by the other, and a
two-sided sign test on those.  A game found twice (a run restarted
mid-deal plays it again, the same game) counts once.

    cd docs/data/ai/value && PYTHONPATH=../../../../src python3 summarize_screen.py screen-400.jsonl
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from donutbox.lab.stats import wilson


def main() -> None:
    rows = []
    seen: set[tuple[str, int, int]] = set()
    for path in sys.argv[1:]:
        for line in Path(path).read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            key = (row["arm"], row["seed"], row["seat_a"])
            if key in seen:  # a game played again after a restart: the same game
                continue
            seen.add(key)
            rows.append(row)
    by: dict[tuple[int, int], dict[str, float]] = {}
    print("| leaf | games | wins | win rate | 95% interval | CPU a move |")
    print("| --- | --- | --- | --- | --- | --- |")
    arms = list(dict.fromkeys(r["arm"] for r in rows))
    for arm in arms:
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
    print()
    for arm in arms:
        if arm == "current":
            continue
        pairs = [v for v in by.values() if arm in v and "current" in v]
        better = sum(1 for v in pairs if v[arm] > v["current"])
        worse = sum(1 for v in pairs if v[arm] < v["current"])
        n = better + worse
        # two-sided sign test: P(a split at least this uneven | p = 1/2)
        k = max(better, worse)
        p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k, n + 1)) / 2**n) if n else 1.0
        a = sum(v[arm] for v in pairs) / len(pairs) if pairs else 0.0
        c = sum(v["current"] for v in pairs) / len(pairs) if pairs else 0.0
        print(
            f"- {arm} vs current on the same {len(pairs)} (deal, seat) games: {a:.1%} vs {c:.1%}; "
            f"won {better} that current lost, lost {worse} that it won "
            f"(two-sided sign test p = {p:.3f})"
        )


if __name__ == "__main__":
    main()
