"""Win rates (95% Wilson intervals) and CPU per move of the rows in docs/data/ai.

    PYTHONPATH=src python3 docs/data/ai/summarize.py docs/data/ai/*.jsonl
    PYTHONPATH=src python3 docs/data/ai/summarize.py --together FILE...

``--together``: the files' rows as one set (a run split between processes),
with the games of A in the first seat and in the second counted apart too; a
(deal seed, seats) game found twice is an error, not counted twice.
A ``run_match.py`` row counts for agent A (the first seat of the file's
first game); a screening row (``screen.py``) for variant A.  A
shared win counts a half.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from donutbox.lab.stats import wilson


def read(path: Path) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if "seed" in r]


def summarize(path: Path) -> str:
    return line(path.name, read(path))


def together(paths: list[Path]) -> list[str]:
    rows = [r for p in paths for r in read(p)]
    seen: set[tuple[object, ...]] = set()
    for r in rows:
        key = (r["seed"], tuple(r["seats"]))  # type: ignore[arg-type]
        if key in seen:
            raise SystemExit(f"game {key} is in the rows twice")
        seen.add(key)
    a = rows[0]["seats"][0]  # type: ignore[index]
    first = [r for r in rows if r["seats"][0] == a]  # type: ignore[index]
    second = [r for r in rows if r["seats"][0] != a]  # type: ignore[index]
    return [
        line("all", rows),
        line(f"{a} moving first", first, a),
        line(f"{a} moving second", second, a),
    ]


def line(name: str, rows: list[dict[str, object]], agent: object = None) -> str:
    wins = cpu = 0.0
    moves = iterations = 0
    for r in rows:
        if "seat_a" in r:  # a screening row
            a = r["seat_a"]
            wins += r["win_a"]
            cpu += r["cpu_a"]
            moves += r["moves_a"]
            iterations += r.get("iter_a", 0)
            continue
        a = r["seats"].index(agent if agent is not None else rows[0]["seats"][0])
        if a in r["winners"]:
            wins += 1 / len(r["winners"])
        cpu += r["cpu"][a]
        moves += r["moves"][a]
        iterations += r["iterations"][a]
    n = len(rows)
    if not n:
        return f"{name}: no games"
    lo, hi = wilson(wins, n)
    text = f"{name}: {wins:g}/{n} = {wins / n:.1%} ({lo:.1%} - {hi:.1%}), "
    text += f"CPU {cpu / moves:.3f} s a move"
    if iterations:
        text += f", {iterations / moves:.0f} iterations a move"
    return text


if __name__ == "__main__":
    if sys.argv[1:2] == ["--together"]:
        print("\n".join(together([Path(n) for n in sys.argv[2:]])))
    else:
        for name in sys.argv[1:]:
            print(summarize(Path(name)))
