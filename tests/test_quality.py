"""Lint, format and strict typing are part of the test suite (pyproject.toml
configures both tools), so the README's one test command checks them too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_ruff_lint_is_clean() -> None:
    result = _run("ruff", "check", "src", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_ruff_format_is_clean() -> None:
    result = _run("ruff", "format", "--check", "src", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_core_is_strictly_typed() -> None:
    pytest.importorskip("mypy")
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_core_uses_only_the_standard_library() -> None:
    # The rules core does no I/O and needs nothing outside the stdlib.
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    for path in (ROOT / "src" / "donutbox" / "core").glob("*.py"):
        for line in path.read_text().splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] in ("import", "from") and not words[1].startswith("."):
                top = words[1].split(".")[0]
                assert top in allowed, f"{path.name} imports {top}"


def test_core_does_no_io() -> None:
    for path in (ROOT / "src" / "donutbox" / "core").glob("*.py"):
        text = path.read_text()
        for call in ("open(", "print(", "input(", "sys.stdout", "sys.stdin"):
            assert call not in text, f"{path.name} uses {call}"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("name", ["app.js", "online.js"])
def test_web_client_script_parses(name: str) -> None:
    script = ROOT / "src" / "donutbox" / "server" / "static" / name
    result = _run("node", "--check", str(script))
    assert result.returncode == 0, result.stderr
