#!/usr/bin/env bash
# The core tests, golden records and perft counts against the COMPILED core
# (mypyc extension modules, built as `pip install .` builds them), while the
# main suite runs against the pure-Python source.  Usage: bash .ci/compiled.sh
# (from .ci/run: `bash .ci/compiled.sh & compiled=$!` before the main pytest,
# then `wait $compiled` after it).  Exits non-zero if the wheel did not
# compile (a pure fallback would test nothing new) or a test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tmp=$(mktemp -d /tmp/donutbox-compiled.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1
unset PYTHONPATH DONUTBOX_PURE
# mypy/mypyc and setuptools come from the [test] extra already installed.
python3 -m pip wheel -q --no-build-isolation --no-deps -w "$tmp/wheel" . >"$tmp/build.log" 2>&1 \
  || { cat "$tmp/build.log" >&2; exit 1; }
python3 -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --no-deps "$tmp"/wheel/donutbox-*.whl
cd "$tmp"  # not the source tree: `import donutbox` must find the wheel
"$tmp/venv/bin/python" -c '
import donutbox.core as c, donutbox.ai.mcts as m, sys
if not c.compiled:
    sys.exit("compiled.sh: the wheel holds the pure core (no C compiler?): " + c.game.__file__)
if m.__file__.endswith(".py"):
    sys.exit("compiled.sh: the wheel holds the pure search: " + m.__file__)
print("compiled core and search:", c.game.__file__, m.__file__)'
# Two tests read Game.__slots__ (the source's structure, the same file in
# both builds); mypyc's native classes have no __slots__ attribute.
"$tmp/venv/bin/python" -m pytest -p no:cacheprovider --rootdir "$root" \
  --deselect "tests/core/test_seams.py::test_no_code_outside_game_sets_or_reads_its_private_fields" \
  --deselect "tests/core/test_seams.py::test_state_lists_every_field_and_round_trips" \
  "$root/tests/core" "$root/tests/test_golden.py" "$root/tests/ai"
