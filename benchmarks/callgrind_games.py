"""Instructions per random full game, for callgrind (docs/performance.md,
"Measured: compiled against pure").

Plays the 20 warm-up games of ``donutbox bench`` and then N random full
games (``bench._random_game``, seeds 1..N), and leaves without the
interpreter's shutdown (its final collections walk the memo tables, which
grow with the games played: no part of the games).  Count it twice and
subtract::

    for n in 0 30; do
      valgrind --tool=callgrind --callgrind-out-file=cg.$n.out \\
        python benchmarks/callgrind_games.py squared-away $n
    done
    # (instructions of cg.30.out - those of cg.0.out) / 30

``PYTHONPATH=src`` counts the pure core; the compiled one is the wheel
``pip wheel .`` builds, unpacked and put first on ``PYTHONPATH``.
``--shutdown`` keeps the shutdown (the session-7 way of counting);
``--no-gc`` disables the cyclic collector after the imports.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

from donutbox import core
from donutbox.bench import _random_game
from donutbox.core import Rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("layout", choices=["squared-away", "splitzkies"])
    parser.add_argument("games", type=int)
    parser.add_argument("--shutdown", action="store_true")
    parser.add_argument("--no-gc", action="store_true")
    args = parser.parse_args()
    rules = Rules(layout=args.layout)
    if args.no_gc:
        gc.disable()
    for s in range(10_000, 10_020):
        _random_game(rules, s)
    for s in range(1, args.games + 1):
        _random_game(rules, s)
    print("compiled" if core.compiled else "pure", file=sys.stderr)
    if not args.shutdown:
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
