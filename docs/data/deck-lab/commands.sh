#!/bin/bash
# The deck lab's real sweep (docs/deck-lab.md); run from /work/wt/decks-run.
export PYTHONPATH=/work/wt/decks/src
set -x
date -u
time donutbox balance --sweep rolls=0..10:2 --games 36 --skill heuristic,greedy --jobs 2 --seed 1 --out rolls
date -u
time donutbox sim --players heuristic,heuristic --games 10 --seed 1 --jobs 1 --out speed-sim
time donutbox balance --sweep rolls=8 --games 10 --skill none --seed 1 --jobs 1 --out speed-sweep
date -u
time donutbox balance --sweep rolls=6 --sweep rainbows=0,6,12 --games 16 --skill heuristic,greedy --jobs 2 --seed 1 --out mix
date -u
time donutbox balance --sweep rolls=4,8 --sweep closers=on --games 16 --skill none --jobs 2 --seed 1 --out closers
date -u
time donutbox balance --sweep rolls=0,8 --games 0 --skill mcts,heuristic --skill-games 4 --iterations 300 --jobs 2 --seed 1 --out mcts
date -u
#!/bin/bash
# The last part of the real sweep (docs/deck-lab.md), after run.sh.
export PYTHONPATH=/work/wt/decks/src
set -x
date -u
time donutbox balance --sweep rolls=1 --games 36 --skill none --jobs 2 --seed 1 --out rolls1
date -u
time donutbox balance --sweep rolls=0,8 --games 0 --skill mcts,heuristic --skill-games 6 --iterations 300 --jobs 2 --seed 101 --out mcts6
date -u
