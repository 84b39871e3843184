"""Win rates (95% Wilson intervals) and CPU per move of the rows in docs/data/ai.

    PYTHONPATH=src python3 docs/data/ai/summarize.py docs/data/ai/*.jsonl

A ``run_match.py`` row counts for agent A (the first seat of the file's
first game); a screening row (``screen.py``) for variant A.  A
shared win counts a half.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from donutbox.lab.stats import wilson


def summarize(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if "seed" in r]
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
        a = r["seats"].index(rows[0]["seats"][0])
        if a in r["winners"]:
            wins += 1 / len(r["winners"])
        cpu += r["cpu"][a]
        moves += r["moves"][a]
        iterations += r["iterations"][a]
    n = len(rows)
    if not n:
        return f"{path.name}: no games"
    lo, hi = wilson(wins, n)
    text = f"{path.name}: {wins:g}/{n} = {wins / n:.1%} ({lo:.1%} - {hi:.1%}), "
    text += f"CPU {cpu / moves:.3f} s a move"
    if iterations:
        text += f", {iterations / moves:.0f} iterations a move"
    return text


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(summarize(Path(name)))
