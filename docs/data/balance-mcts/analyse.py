"""The pooled figures of docs/balance.md, "The grid with MCTS players".

Run from the repository's root, after the run and its report:

    python docs/data/balance-mcts/analyse.py

It reads this folder's games.csv and records.jsonl (the MCTS self-play
grid) and ../balance/*.jsonl (the earlier MCTS self-play games on three
variants, each deal played twice: counted once here), and prints Markdown.
"""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

from donutbox.core import Rules
from donutbox.lab.balance import result_from_record
from donutbox.lab.stats import wilson

HERE = Path(__file__).resolve().parent


def rate(wins: float, n: int) -> str:
    lo, hi = wilson(wins, n)
    return f"{wins / n:.1%} ({lo:.1%}-{hi:.1%}) of {n}"


def first_wins(winners: list[list[int]]) -> float:
    return sum(1.0 / len(w) for w in winners if 0 in w)


def main() -> None:
    with (HERE / "games.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    records = [json.loads(line) for line in (HERE / "records.jsonl").open()]
    results = [result_from_record(rec) for rec in records]
    assert len(rows) == len(results)
    wall = [float(r["seconds"]) for r in rows]
    print(f"games: {len(results)}; wall seconds a game: {statistics.fmean(wall):.1f}")
    groups = {
        "without Coffee's For Closers": [r for r in results if not r.rules.closers],
        "with Coffee's For Closers": [r for r in results if r.rules.closers],
        "One Good Match": [r for r in results if r.rules.match == "one-good-match"],
        "Perfect Match": [r for r in results if r.rules.match == "perfect-match"],
        "all eight": results,
    }
    print("\n| games pooled | first player wins (95% CI) | boxed early a game | plies |")
    print("| --- | --- | --- | --- |")
    for name, res in groups.items():
        fw = first_wins([r.winners for r in res])
        boxed = statistics.fmean(r.boxes["boxed"] for r in res)
        plies = statistics.fmean(r.plies for r in res)
        print(f"| {name} | {rate(fw, len(res))} | {boxed:.2f} | {plies:.1f} |")
    # The earlier 300-iteration games (docs/data/balance): one game per deal.
    earlier = {
        "ogm-sa": "mcts300-selfplay-ogm-sa.jsonl",
        "ogm-sa-closers": "mcts300-selfplay-ogm-sa-closers.jsonl",
        "pm-spl": "mcts300-selfplay-pm-spl.jsonl",
    }
    print("\n| variant | this grid | earlier games (one per deal) | both |")
    print("| --- | --- | --- | --- |")
    for key, name in earlier.items():
        lines = [json.loads(x) for x in (HERE.parent / "balance" / name).open()]
        by_seed = {}
        for g in lines:
            by_seed.setdefault(g["seed"], g)
        old = [g["winners"] for g in by_seed.values()]
        new = [r.winners for r in results if r.rules.key() == key]
        label = next(r for r in Rules.all() if r.key() == key).label()
        print(
            f"| {label} | {rate(first_wins(new), len(new))} | "
            f"{rate(first_wins(old), len(old))} | "
            f"{rate(first_wins(new) + first_wins(old), len(new) + len(old))} |"
        )


if __name__ == "__main__":
    main()
