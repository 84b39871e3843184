"""The table of docs/ai.md "Screening for version 4" from screen_v4.py rows.

    python3 docs/data/ai/screen/summarize_v4.py docs/data/ai/screen/v4-vs-mcts-97001.jsonl \
        [BASE [VARIANT,VARIANT,...]]

Only the games (deal seed, seat) that every variant shown (default: every
variant in the file) has played count, so that every row is on the same
games.  For each variant: games, wins (a
shared win counts 1/2), the win rate with its 95% Wilson interval, the
rate from each seat, CPU and iterations a move (its own and the
opponent's); then, against BASE (default: the first variant in the file),
the games whose results differ, and a two-sided exact sign test of them;
and the mean paired difference of the variant's score margin (its score
minus the opponent's) with its standard error.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n), (centre + spread) / (1 + z * z / n)


def sign_test(better: int, worse: int) -> float:
    """Two-sided exact binomial p of ``better`` against ``worse`` (p = 1/2)."""
    n = better + worse
    if n == 0:
        return 1.0
    k = min(better, worse)
    tail: float = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return min(1.0, 2 * tail)


def margin(row: dict[str, Any]) -> float:
    """The variant's score minus the opponent's."""
    scores = row["scores"]
    return float(scores[row["seat_a"]] - scores[1 - row["seat_a"]])


def main() -> None:
    rows = [json.loads(x) for x in Path(sys.argv[1]).read_text().splitlines() if x.strip()]
    names: list[str] = []
    games: dict[str, dict[tuple[int, int], dict[str, Any]]] = {}
    for r in rows:
        if r["variant"] not in games:
            names.append(r["variant"])
            games[r["variant"]] = {}
        games[r["variant"]][(r["seed"], r["seat_a"])] = r
    base = sys.argv[2] if len(sys.argv) > 2 else names[0]
    if len(sys.argv) > 3:
        names = sys.argv[3].split(",")
        if base not in names or any(n not in games for n in names):
            raise SystemExit(f"unknown variant in {sys.argv[3]!r} (or BASE not among them)")
        games = {n: games[n] for n in names}
    common = set.intersection(*(set(g) for g in games.values()))
    seeds = sorted({s for s, _ in common})
    compiled = {r["compiled"] for r in rows}
    print(
        f"{len(common)} games on every variant, deals {seeds[0]}-{seeds[-1]} "
        f"({len(seeds)} deals), compiled core: {sorted(compiled)}"
    )
    print(
        "| variant | games | wins | win rate | 95% interval | first seat | second seat "
        "| mean margin | CPU a move | iterations a move | opponent's CPU a move |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        g = [games[name][k] for k in sorted(common)]
        n = len(g)
        wins = sum(float(r["win_a"]) for r in g)
        lo, hi = wilson(wins, n)
        seat = []
        for s in (0, 1):
            gs = [r for r in g if r["seat_a"] == s]
            seat.append(f"{sum(float(r['win_a']) for r in gs):g}/{len(gs)}")
        moves = sum(int(r["moves_a"]) for r in g)
        cpu = sum(float(r["cpu_a"]) for r in g) / moves
        its = sum(int(r["iter_a"]) for r in g) / moves
        moves_b = sum(int(r["moves_b"]) for r in g)
        cpu_b = sum(float(r["cpu_b"]) for r in g) / moves_b
        mean_margin = sum(margin(r) for r in g) / n
        print(
            f"| {name} | {n} | {wins:g} | {100 * wins / n:.1f}% | "
            f"{100 * lo:.1f}% - {100 * hi:.1f}% | {seat[0]} | {seat[1]} | "
            f"{mean_margin:+.1f} | {cpu:.3f} s | {its:.0f} | {cpu_b:.3f} s |"
        )
    print()
    for name in names:
        if name == base:
            continue
        better = worse = 0
        for k in common:
            a = float(games[name][k]["win_a"])
            b = float(games[base][k]["win_a"])
            better += a > b
            worse += a < b
        diffs = [margin(games[name][k]) - margin(games[base][k]) for k in common]
        mean = sum(diffs) / len(diffs)
        var = sum((d - mean) ** 2 for d in diffs) / max(1, len(diffs) - 1)
        print(
            f"{name} against {base}: won {better} that {base} lost (or shared), "
            f"lost {worse} that it won; sign test p = {sign_test(better, worse):.3f}; "
            f"margin {mean:+.1f} points a game (standard error "
            f"{math.sqrt(var / len(diffs)):.1f})"
        )


if __name__ == "__main__":
    main()
