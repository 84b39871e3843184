"""How much the leaf values spread within one search (docs/ai.md "The
fitted evaluation"): for each of the 5 searches of ``bench.searches`` (the
hard level's search, 300 iterations, plies 8-40 of deal 400010), the mean
and standard deviation over its 300 leaves of the searching player's value
by the fitted leaf and by today's.  UCB's exploration term is weighed
against differences of these values, so a leaf whose values spread less
explores more at the same exploration constant.

    PYTHONPATH=src python3 docs/data/ai/value/spread.py
"""

from __future__ import annotations

import statistics

from bench import searches, today

from donutbox.ai.value import turns_left, win_values


def main() -> None:
    print("| ply | turns left | fitted: mean | fitted: sd | today: mean | today: sd |")
    print("| --- | --- | --- | --- | --- | --- |")
    for ply, (me, group) in zip((8, 16, 24, 32, 40), searches(), strict=True):
        fit = [win_values(w)[me] for w in group]
        old = [today(w)[me] for w in group]
        print(
            f"| {ply} | {turns_left(group[0]):.1f} | {statistics.mean(fit):.3f} | "
            f"{statistics.pstdev(fit):.3f} | {statistics.mean(old):.3f} | "
            f"{statistics.pstdev(old):.3f} |"
        )


if __name__ == "__main__":
    main()
