"""Instructions per search iteration, for callgrind (docs/performance.md,
"The search compiled too").

One search of N iterations in each of ``lab.mcts_speed``'s nine positions
(plies 8, 16 and 24 of three seeded games between two ``heuristic``
agents), generator seed 0, by ``mcts`` (its defaults) or ``hard`` (its
options without the confidence stop), with no time budget, so that every
search runs all N iterations; then it leaves without the interpreter's shutdown. Count it
twice and subtract::

    for n in 0 300; do
      valgrind --tool=callgrind --callgrind-out-file=cg.$n.out \\
        python benchmarks/callgrind_search.py mcts $n
    done
    # (instructions of cg.300.out - those of cg.0.out) / (9 * 300)

``PYTHONPATH=src`` counts the pure build; ``python setup.py build_ext
--inplace`` in a copy of the tree, then the same there, the compiled one.
The chosen moves are printed, so both builds can be seen to agree.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

from donutbox.ai import make_agent
from donutbox.lab.mcts_speed import positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("agent", choices=["mcts", "hard"])
    parser.add_argument("iterations", type=int)
    args = parser.parse_args()
    views = [view for _seed, _ply, view in positions()]
    chosen = []
    if args.iterations > 0:
        for view in views:
            # seconds=None: the level's own 1-second budget would end a
            # search under callgrind (tens of times slower) before N.
            options: dict[str, object] = {"iterations": args.iterations, "seconds": None}
            if args.agent == "hard":
                options["stop_z"] = None
            agent = make_agent(args.agent, **options)
            chosen.append(str(agent.choose(view, random.Random(0))))
    print(" ".join(chosen))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
