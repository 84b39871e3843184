"""Build the compiled core where possible, the pure-Python one otherwise.

``pip install .`` (or ``python -m build``) compiles the rules core
(``src/donutbox/core``) and the AI's hot loop with mypyc, as black does: the
same source, type-checked by mypy --strict, turned into C extension modules.
Anything that goes wrong on the way (no mypy/mypyc at build time, no C
compiler, a mypyc error) falls back to the pure-Python package, which is the
same code.  Set ``DONUTBOX_PURE=1`` at build time to skip compiling.
Editable installs (``pip install -e .``) are always pure Python.

``donutbox bench`` says which core is running (``donutbox.core.compiled``).
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

#: The modules compiled.  ``policy.py`` and ``scoring.py`` stay pure: their
#: rule classes are meant to be subclassed (a new matching or scoring rule,
#: tests' own rules), which mypyc's native classes refuse from interpreted
#: code.  ``perft.py`` stays pure so that a bad ``depth`` (e.g. 1.5) is
#: still its InputError: compiled functions check their declared argument
#: types first (TypeError).  The
#: rest takes ints/strs where declared (the CLI and server check input
#: before it reaches the core).
COMPILED = [
    "src/donutbox/core/cards.py",
    "src/donutbox/core/counter.py",
    "src/donutbox/core/game.py",
    "src/donutbox/core/geometry.py",
    "src/donutbox/core/matching.py",
    "src/donutbox/core/movegen.py",
    "src/donutbox/core/moves.py",
    "src/donutbox/core/rng.py",
    "src/donutbox/core/sampling.py",
    "src/donutbox/core/state.py",
    "src/donutbox/core/view.py",
    "src/donutbox/core/worlds.py",
    # The search and the evaluations it calls for every iteration: MCTS and
    # the hard level spend most of their time here, not in the core.  Their
    # agents' options are checked in Python before use (``mcts.py`` types
    # them ``object``), so a bad one is still an InputError naming it.
    "src/donutbox/ai/fasteval.py",
    "src/donutbox/ai/mcts.py",
    "src/donutbox/ai/simple.py",
    "src/donutbox/ai/value.py",
]


def _compiling() -> bool:
    """Only a build compiles: not an editable install (``editable_wheel``,
    ``develop``), nor the metadata steps (``egg_info``, ``dist_info``)."""
    commands = set(sys.argv[1:])
    if commands & {"editable_wheel", "develop"}:
        return False
    return bool(commands & {"bdist_wheel", "build", "build_ext", "install", "bdist"})


def _ext_modules() -> list[object]:
    if os.environ.get("DONUTBOX_PURE", "") not in ("", "0") or not _compiling():
        return []
    try:
        from mypyc.build import mypycify

        return list(mypycify(COMPILED, opt_level="3"))
    except BaseException as exc:  # no mypyc, a mypyc error: build pure
        print(f"donutbox: building the pure-Python core ({exc!r})", file=sys.stderr)
        return []


class BuildExtOrPure(build_ext):
    """Compile the extensions; if the C compiler is missing or fails, remove
    whatever was built and carry on: the wheel then holds the pure core."""

    def run(self) -> None:
        self._remove_stale()
        try:
            super().run()
        except Exception as exc:
            print(
                f"donutbox: C build failed, installing the pure-Python core ({exc!r})",
                file=sys.stderr,
            )
            for ext in self.extensions:
                for path in (self.get_ext_fullpath(ext.name),):
                    if os.path.exists(path):
                        os.remove(path)

    def _remove_stale(self) -> None:
        # An earlier build's extension modules in build/lib (another module
        # list, another mypyc group) would be packed into the wheel too, and
        # two groups cannot share the core's modules: remove them first.
        expected = {os.path.abspath(self.get_ext_fullpath(e.name)) for e in self.extensions}
        for folder in (self.build_lib, os.path.join(self.build_lib, "donutbox", "core")):
            if not os.path.isdir(folder):
                continue
            for name in os.listdir(folder):
                path = os.path.abspath(os.path.join(folder, name))
                if name.endswith((".so", ".pyd")) and path not in expected:
                    os.remove(path)


setup(ext_modules=_ext_modules(), cmdclass={"build_ext": BuildExtOrPure})
