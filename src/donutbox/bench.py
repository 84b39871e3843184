"""Speed measurements behind ``donutbox bench`` (figures in docs/performance.md).

Three measures, for Squared Away and Splitzkies under One Good Match, all on
one core (the process is single-threaded):

1. legal-move generation: one ``legal_moves()`` call on each position at
   ply 30 of seeded random games, timed on its first call in that position
   (as a player meets it), median and p99 over the positions;
2. random full games per second, with the full legal-move list made at every
   ply and a uniformly random choice from it;
3. playouts per second with ``sample_move`` (draw a candidate, check it).

Times are CPU time of this process (``time.process_time``), so other busy
processes on the machine disturb the figures less than wall-clock time would.

Which core runs is printed first: ``compiled`` (mypyc extension modules,
what ``pip install .`` builds where a C compiler exists) or ``pure Python``
(the source; editable installs, ``DONUTBOX_PURE=1`` builds, no compiler).
``compare=True`` (``donutbox bench --compare``) also measures MCTS
iterations per CPU-second (``lab.mcts_speed``, 300 iterations in each of
its nine positions), then runs the same measures again in a child process
that imports the core and the search from their ``.py`` files (a wheel keeps them beside the
extension modules; ``_PREFER_SOURCE`` puts a finder for them first on
``sys.meta_path`` of the child) and prints the compiled / pure ratio of each figure.

Memo tables (fits per face and requirement, moves per place) fill during the
first games of a process; a short warm-up of 20 games runs first so that the
figures describe a process that has been playing, like a server or an AI.
"""

from __future__ import annotations

import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from . import core
from .core import Game, Rules
from .core.sampling import sample_move

LAYOUTS = ("squared-away", "splitzkies")
PLY = 30


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.system()}"
    )


def search_compiled() -> bool:
    """True when the search (``ai/mcts.py``) is a compiled module too."""
    from .ai import mcts

    return not (mcts.__file__ or "").endswith(".py")


#: How to get the compiled core back, said wherever the pure one runs: an
#: editable install (``pip install -e``, the test install of the README)
#: always runs the source.
PURE_HINT = (
    "an editable install (pip install -e) runs the source: 'pip install .' builds the "
    "compiled core where a C compiler exists, and 'bash .ci/compiled.sh' tests it "
    "without touching this install"
)


def core_name() -> str:
    if not core.compiled:
        return f"pure Python; {PURE_HINT}"
    return "compiled (mypyc)" + ("" if search_compiled() else "; the search is pure Python")


#: The ``--compare`` child's first lines, run before anything imports
#: donutbox: a finder, first on ``sys.meta_path``, that loads each
#: ``donutbox.*`` module (the core and the compiled search modules) from
#: its ``.py`` file even where a compiled extension module sits beside it.
_PREFER_SOURCE = """
import importlib.util, os, sys
spec = importlib.util.find_spec("donutbox")
where = list(spec.submodule_search_locations)[0]
class SourceFinder:
    def find_spec(self, name, path, target=None):
        parts = name.split(".")
        if parts[0] != "donutbox" or len(parts) < 2:
            return None
        file = os.path.join(where, *parts[1:]) + ".py"
        return importlib.util.spec_from_file_location(name, file) if os.path.exists(file) else None
sys.meta_path.insert(0, SourceFinder())
"""


def mcts_rate() -> float:
    """Median MCTS iterations per CPU-second (``lab.mcts_speed``: plies 8,
    16 and 24 of three seeded games, 300 iterations a search)."""
    from .lab.mcts_speed import measure

    return float(measure(iterations=300, runs=1)["median"])


def _random_game(rules: Rules, seed: int) -> int:
    game = Game.new(rules, 2, seed)
    rng = random.Random(seed)
    plies = 0
    while not game.finished:
        moves = game.legal_moves()
        game.play(moves[rng.randrange(len(moves))])
        plies += 1
    return plies


def movegen(rules: Rules, positions: int, seed: int) -> list[float]:
    """Seconds of the first legal_moves() call at ply 30, one per position."""
    times: list[float] = []
    s = seed
    while len(times) < positions:
        game = Game.new(rules, 2, s)
        rng = random.Random(s)
        s += 1
        while not game.finished and game.ply < PLY:
            moves = game.legal_moves()
            game.play(moves[rng.randrange(len(moves))])
        if game.finished:
            continue
        t0 = time.process_time()
        game.legal_moves()
        times.append(time.process_time() - t0)
    return times


def games_per_second(rules: Rules, games: int, seed: int) -> tuple[float, float]:
    t0 = time.process_time()
    plies = 0
    for s in range(seed, seed + games):
        plies += _random_game(rules, s)
    dt = time.process_time() - t0
    return games / dt, plies / games


def playouts_per_second(rules: Rules, playouts: int, seed: int) -> float:
    t0 = time.process_time()
    for s in range(seed, seed + playouts):
        game = Game.new(rules, 2, s)
        rng = random.Random(s)
        while not game.finished:
            game.play(sample_move(game, rng))
    return playouts / (time.process_time() - t0)


def run_bench(
    positions: int = 400,
    games: int = 200,
    playouts: int = 400,
    seed: int = 1,
    out: Callable[[str], None] = print,
    step: Callable[[str], None] | None = None,
) -> dict[str, dict[str, float]]:
    """Measure and ``out`` one line of figures per layout; ``step`` (if
    given) hears of each step as it starts, e.g. to show progress."""

    def say(text: str) -> None:
        if step is not None:
            step(text)

    out(f"machine: {machine()}; core: {core_name()}")
    results: dict[str, dict[str, float]] = {}
    for n, layout in enumerate(LAYOUTS, 1):
        rules = Rules(layout=layout)
        where = f"{rules.label()} ({n} of {len(LAYOUTS)})"
        say(f"{where}: warming up (20 games)")
        for s in range(10_000, 10_020):  # warm-up, other seeds than the measured ones
            _random_game(rules, s)
        say(f"{where}: legal moves in {positions} positions")
        times = sorted(movegen(rules, positions, seed))
        median = statistics.median(times) * 1e6
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1e6
        say(f"{where}: {games} random games")
        gps, length = games_per_second(rules, games, seed)
        say(f"{where}: {playouts} sampling playouts")
        pps = playouts_per_second(rules, playouts, seed)
        results[layout] = {
            "movegen_median_us": median,
            "movegen_p99_us": p99,
            "games_per_s": gps,
            "plies_per_game": length,
            "playouts_per_s": pps,
        }
        out(
            f"{rules.label()}: legal moves at ply {PLY}: median {median:.0f} µs, "
            f"p99 {p99:.0f} µs ({positions} positions); random games {gps:.0f}/s "
            f"({games} games, {length:.1f} plies each); sampling playouts {pps:.0f}/s "
            f"({playouts} games)"
        )
    return results


def run_compare(
    positions: int = 400,
    games: int = 200,
    playouts: int = 400,
    seed: int = 1,
    out: Callable[[str], None] = print,
    step: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """``run_bench`` and ``mcts_rate`` with this process's core, then the
    same in a child process on the pure-Python source, and the ratios.  A
    pure process has nothing to compare with: it says so in one line."""
    results = run_bench(positions, games, playouts, seed, out, step)
    if step is not None:
        step("MCTS iterations per CPU-second (9 searches of 300 iterations)")
    mine = mcts_rate()
    out(f"MCTS: {mine:.0f} iterations/CPU-second (median of 9 middle-game searches)")
    if not core.compiled:
        out(f"compare: this is the pure-Python core, nothing to compare with: {PURE_HINT}")
        return {"this": results, "mcts": mine}
    if step is not None:
        step("the same again on the pure-Python core, in a child process")
    args = json.dumps([positions, games, playouts, seed])
    code = f"{_PREFER_SOURCE}\nfrom donutbox.bench import _child\n_child({args!r})"
    child = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
    )
    if child.returncode != 0:
        tail = (child.stderr.strip().splitlines() or ["no output"])[-1]
        out(f"compare: the pure-Python run failed: {tail}")
        return {"this": results, "mcts": mine}
    pure = json.loads(child.stdout.strip().splitlines()[-1])
    for layout, figures in results.items():
        other = pure["bench"][layout]
        out(
            f"compiled / pure, {Rules(layout=layout).label()}: random games "
            f"{figures['games_per_s'] / other['games_per_s']:.2f}x "
            f"({figures['games_per_s']:.0f} vs {other['games_per_s']:.0f}/s), "
            f"playouts {figures['playouts_per_s'] / other['playouts_per_s']:.2f}x, "
            f"legal moves median {other['movegen_median_us'] / figures['movegen_median_us']:.2f}x"
        )
    out(
        f"compiled / pure, MCTS: {mine / pure['mcts']:.2f}x "
        f"({mine:.0f} vs {pure['mcts']:.0f} iterations/CPU-second)"
    )
    return {"this": results, "mcts": mine, "pure": pure}


def _child(args: str) -> None:
    """The ``--compare`` child: pure-Python core, figures as one JSON line."""
    positions, games, playouts, seed = json.loads(args)
    if core.compiled or search_compiled():
        raise SystemExit("the child imported a compiled module")
    results = run_bench(positions, games, playouts, seed, out=lambda _line: None)
    print(json.dumps({"bench": results, "mcts": mcts_rate()}))
