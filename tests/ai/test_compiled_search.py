"""The search is compiled with the core (``setup.py``'s ``COMPILED``), and
``bench --compare``'s child still runs all of it from source.

In the pure test run both builds' checks hold trivially; ``.ci/compiled.sh``
runs this file against the wheel, where they are the real checks."""

from __future__ import annotations

import subprocess
import sys

from donutbox import core
from donutbox.bench import _PREFER_SOURCE, search_compiled


def test_the_search_is_compiled_exactly_when_the_core_is() -> None:
    # A wheel with a compiled core and a pure search (or the reverse) would
    # mean setup.py's list lost a module: the search would run at the pure
    # speed that docs/performance.md's figures do not describe.
    assert search_compiled() == core.compiled


def test_the_compare_child_loads_every_donutbox_module_from_source() -> None:
    code = (
        _PREFER_SOURCE
        + "\nimport donutbox.core.game as g, donutbox.ai.mcts as m, donutbox.ai.fasteval as f"
        + "\nprint(g.__file__, m.__file__, f.__file__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    assert len(out) == 3 and all(path.endswith(".py") for path in out), out
