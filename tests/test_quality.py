"""Lint and format are part of the test suite (pyproject.toml configures
both tools), so the README's one test command checks them too; strict typing
(mypy) is a step of its own in .ci/run, whose presence and coverage the
suite checks here."""

from __future__ import annotations

import ast
import re
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


#: mypy settings that would exempt code from the strict check.
_LOOSER = {
    "ignore_errors",
    "check_untyped_defs",
    "disallow_untyped_defs",
    "disallow_incomplete_defs",
    "disallow_untyped_calls",
    "disallow_any_generics",
    "disallow_subclassing_any",
    "disallow_untyped_decorators",
    "warn_return_any",
    "no_implicit_reexport",
    "strict_equality",
    "strict",
    "extra_checks",
    "disable_error_code",
    "follow_imports",
}


def test_mypy_checks_all_of_src_strictly() -> None:
    # mypy itself runs as a step of its own in .ci/run (a cold run takes
    # minutes: a type check, not a test); this checks that the step is there
    # and that what it checks is still all of src, strictly, with no module
    # of donutbox exempted.
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["mypy"]
    assert config["files"] == ["src/donutbox"] and config["strict"] is True
    assert not set(config) & (_LOOSER - {"strict"}), config
    for override in config.get("overrides", []):
        modules = override["module"]
        modules = [modules] if isinstance(modules, str) else modules
        assert not [m for m in modules if m.split(".")[0] == "donutbox"], override
        assert set(override) <= {"module", "ignore_missing_imports", "follow_untyped_imports"}, (
            override
        )
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    steps = [line.strip() for line in ci.splitlines() if not line.lstrip().startswith("#")]
    assert "set -euo pipefail" in steps  # a failing step fails CI
    assert "python3 -m mypy" in steps, "the strict type check is not a step of .ci/run"
    assert not (ROOT / "mypy.ini").exists() and not (ROOT / ".mypy.ini").exists()
    assert not (ROOT / "setup.cfg").exists() or "[mypy" not in (ROOT / "setup.cfg").read_text()


CORE = ROOT / "src" / "donutbox" / "core"


def _module_name(path: Path, core: Path) -> str:
    """``donutbox.core.x`` for ``core/x.py``, ``donutbox.core`` for ``core/__init__.py``."""
    parts = ["donutbox", "core", *path.relative_to(core).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def foreign_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """Every import in ``source`` (the text of ``module``) of something that
    is neither the standard library nor ``donutbox.core`` itself: plain and
    ``from`` imports at any depth (inside functions, ``if TYPE_CHECKING:``,
    ``try:``), relative ones resolved against ``module``, and ``__import__``
    / ``importlib.import_module`` calls (which could reach anything)."""
    allowed = set(sys.stdlib_module_names)
    package = module if is_package else module.rpartition(".")[0]

    def inside_core(name: str) -> bool:
        return name == "donutbox.core" or name.startswith("donutbox.core.")

    bad: list[str] = []
    for node in ast.walk(ast.parse(source)):
        where = f"{module} line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                if name.split(".")[0] not in allowed and not inside_core(name):
                    bad.append(f"{where}: import {name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level - 1 >= len(base):
                    bad.append(f"{where}: relative import above the top package")
                    continue
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
                # ``from .. import server`` names modules: each is an import.
                names = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
                for name in names:
                    if not inside_core(name):
                        bad.append(f"{where}: from {'.' * node.level}{node.module or ''} -> {name}")
            else:
                name = node.module or ""
                if name.split(".")[0] not in allowed and not inside_core(name):
                    bad.append(f"{where}: from {name} import ...")
                elif name == "donutbox":
                    bad.append(f"{where}: from donutbox import ...")
        elif isinstance(node, ast.Call):
            func = node.func
            called = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if called in ("__import__", "import_module"):
                bad.append(f"{where}: {called}(...)")
    return bad


def test_the_import_check_catches_what_it_should() -> None:
    # Worked by hand: which of these lines, in donutbox/core/game.py, reach
    # outside the standard library and the core?
    cases = {
        "import random, json": [],
        "from collections.abc import Iterable": [],
        "from __future__ import annotations": [],
        "from .rules import Rules": [],
        "from . import errors": [],
        "import donutbox.core.rules": [],
        "from donutbox.core import Rules": [],
        "import numpy": ["import numpy"],
        "import numpy.random as r": ["import numpy.random"],
        "from rich.console import Console": ["from rich.console"],
        "from ..server import app": ["donutbox.server"],
        "from .. import render": ["donutbox.render"],
        "from ... import x": ["above the top package"],
        "import donutbox.cli": ["import donutbox.cli"],
        "from donutbox import cli": ["from donutbox import"],
        "from donutbox.ai import make_agent": ["from donutbox.ai"],
        "def f():\n    import orjson": ["import orjson"],
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..ai import Agent": [
            "donutbox.ai"
        ],
        "try:\n    import yaml\nexcept ImportError:\n    pass": ["import yaml"],
        "__import__('os')": ["__import__"],
        "import importlib\nimportlib.import_module('json')": ["import_module"],
    }
    for source, expected in cases.items():
        found = foreign_imports(source, "donutbox.core.game")
        assert len(found) == len(expected), (source, found)
        for want, got in zip(expected, found, strict=True):
            assert want in got, (source, found)
    # In a package's __init__, "." is the package itself.
    assert foreign_imports("from .game import Game", "donutbox.core", is_package=True) == []
    assert foreign_imports("from .. import cli", "donutbox.core", is_package=True) != []


def test_core_uses_only_the_standard_library() -> None:
    # The rules core does no I/O and needs nothing outside the stdlib.
    paths = sorted(CORE.rglob("*.py"))
    assert len(paths) >= 10, "where is the core?"
    bad: list[str] = []
    for path in paths:
        bad += foreign_imports(
            path.read_text("utf-8"), _module_name(path, CORE), path.name == "__init__.py"
        )
    assert bad == []


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


STATIC = ROOT / "src" / "donutbox" / "server" / "static"

# A write to the page's store: `store.x = ...` (or `store.x.y`, `store["x"]`,
# `+=` and the like, `++`/`--`), `Object.assign(store, ...)`, `delete store.x`.
_STORE_WRITE = re.compile(
    r"\bstore(?:\.[A-Za-z_$][\w$]*|\[[^\]]*\])+\s*(?:\*\*|<<|>>>?|&&|\|\||\?\?|[-+*/%&|^])?=(?!=)"
    r"|(?:\+\+|--)\s*store\.|\bstore(?:\.[\w$]+)+\s*(?:\+\+|--)"
    r"|Object\.assign\(\s*store\b|\bdelete\s+store\."
)
_FETCH = re.compile(r"\bfetch\s*\(")


def _js_breaches(name: str, text: str) -> list[str]:
    """Lines of page script `name` that write the store behind its API (any
    module but store.js) or fetch beside api.js's wrapper (any but api.js)."""
    bad = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("//"):
            continue  # a comment may describe a write
        if name != "store.js" and _STORE_WRITE.search(line):
            bad.append(f"{name}:{number}: writes the store outside store.js: {line.strip()}")
        if name != "api.js" and _FETCH.search(line):
            bad.append(f"{name}:{number}: fetch outside api.js: {line.strip()}")
    return bad


def test_the_page_changes_its_store_only_through_store_js_and_fetches_only_in_api_js() -> None:
    # The store's subscribers (the page's redraw) hear of every change only
    # if every change goes through store.js's functions (set, setQuietly,
    # offer, open, close); api.js is the one place that speaks HTTP (owner
    # token, CSRF header, the server's one-line reasons).
    scripts = sorted(STATIC.glob("*.js"))
    assert {"store.js", "api.js", "tray.js"} <= {p.name for p in scripts}
    bad = [b for p in scripts for b in _js_breaches(p.name, p.read_text(encoding="utf-8"))]
    assert not bad, "\n".join(bad)


def test_the_store_write_check_catches_what_it_should() -> None:
    caught = [
        "store.selected = i;",
        "if (x) { store.selected = i; redraw(); }",
        "store.online.busy = true;",
        'store["meta"] = m;',
        "store.rotation += 90;",
        "store.tutorial.step++;",
        "++store.tutorial.step;",
        "Object.assign(store, changes);",
        "delete store.look;",
        "store.x ??= 1;",
    ]
    for line in caught:
        assert _js_breaches("tray.js", line), line
        assert not _js_breaches("store.js", line), line
    passed = [
        "if (store.selected === i) go();",
        "if (store.selected !== i) go();",
        "const n = store.rotation >= 180 ? 1 : 0;",
        "const m = store.rotation <= 90;",
        "const same = store.gameId == id;",
        "setQuietly({ selected: i });",
        "// store.selected = i would skip the subscribers",
        "const r = restore.x = 1;",
        "localStorage.x = 1;",
    ]
    for line in passed:
        assert not _js_breaches("tray.js", line), line
    assert _js_breaches("community.js", "const r = await fetch(path, opts);")
    assert not _js_breaches("api.js", "const r = await fetch(path, opts);")


DOCS = ROOT / "docs"
DATA = DOCS / "data"  # raw measurement logs: exempt from the history check


def test_architecture_names_every_module() -> None:
    # docs/architecture.md is the map for the next person to change donutbox:
    # a module it does not name is one that person cannot find.  Each is
    # named by its path under src/donutbox, in backquotes.
    page = (DOCS / "architecture.md").read_text("utf-8")
    package = ROOT / "src" / "donutbox"
    modules = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py"))
    assert len(modules) >= 100, "where is the package?"
    missing = [m for m in modules if f"`{m}`" not in page]
    assert missing == [], f"docs/architecture.md does not name {missing}"


#: Lines that tell who did the work or when: the docs are reference for a
#: reader of the project; raw logs of measurements live under docs/data/.
HISTORY = re.compile(
    r"\bsessions? [0-9]+|\bsession [0-9]+'s\b|\bthis session\b|\bstop [0-9]+\b|\bthe lead\b"
    r"|\bhelpers'|\bother helpers\b|\ba helper's\b|\btried this\b|\bissue #?[0-9]+, (session|round)"
    r"|\b20[0-9]{2}-[0-9]{2}-[0-9]{2}, [0-9]{1,2}:[0-9]{2}|\b[0-9]{1,2}:[0-9]{2}(-[0-9:]+)? UTC\b",
    re.IGNORECASE,
)


def history_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if HISTORY.search(line)]


def test_the_history_check_catches_what_it_should() -> None:
    # Worked by hand: lines of a log, and lines of reference that look alike.
    logs = [
        "### Session 28: Splitzkies, the collector",
        "Tried this session and dropped (counted the same way):",
        "loaded: the other helpers', the lead's and two long strength runs' jobs",
        "at the end of stop 3 the goal was not met",
        "**Session 8 (issue 18, third round), counted 2026-12-01, 19:22-20:45",
        "other, from 09:09 to 09:32 UTC (22 minutes of wall time)",
        "Code changes for speed, second round (issue 18, session 7; same",
        "session 9's figures",
        "on the 2 cores shared with a helper's callgrind runs",
    ]
    reference = [
        "A signed-in player's session lasts 30 days (`sessions` table).",
        "`GameSession`: the authority for one game",
        "a helper function of the hub",
        "Stop the server with Ctrl-C; the leader after 20 moves wins 60% of games.",
        "issue 34 asks for typed payloads",
    ]
    assert [history_lines(line) != [] for line in logs] == [True] * len(logs)
    assert [history_lines(line) for line in reference] == [[]] * len(reference)


def test_docs_tell_no_history() -> None:
    # As the project's before-stop hook greps them: README.md and every text
    # file under docs/ (the pictures are skipped).
    pages = [
        ROOT / "README.md",
        *sorted(p for p in DOCS.rglob("*") if p.suffix in (".md", ".json")),
    ]
    found = [
        f"{page.relative_to(ROOT)}: {line.strip()}"
        for page in pages
        if DATA not in page.parents
        for line in history_lines(page.read_text("utf-8"))
    ]
    assert len(pages) >= 10, "where are the docs?"
    assert found == [], "\n".join(found)


# -- the page reads the documented wire format --------------------------------------

#: The page's modules in which ``s`` is the game state (``const s =
#: store.state`` or a function of the state ``s``).
STATE_AS_S = ("analysis.js", "app.js", "board.js", "local.js", "log.js")


def page_reads(static: Path = STATIC) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The fields the page reads from a game state and from the lobby, per
    module: ``store.state.X`` anywhere, ``s.X`` in ``STATE_AS_S``,
    ``lobby.X`` anywhere."""
    state: dict[str, set[str]] = {}
    lobby: dict[str, set[str]] = {}
    for path in sorted(static.glob("*.js")):
        text = path.read_text("utf-8")
        names = set(re.findall(r"\bstore\.state\.([a-z_]+)", text))
        if path.name in STATE_AS_S:
            names |= set(re.findall(r"(?<![\w.$])s\.([a-z_]+)\b", text))
        state[path.name] = names
        lobby[path.name] = set(re.findall(r"(?<![\w.$])lobby\.([a-z_]+)\b", text))
    return state, lobby


def test_the_page_reads_only_documented_fields() -> None:
    # Every field the page's scripts read from a game state or the lobby is a
    # field of its wire model (server/wire): a script reading a field the
    # server does not document (or no longer sends) fails here.
    from donutbox.server.wire import GameState, LobbyState

    state, lobby = page_reads()
    assert sum(len(v) for v in state.values()) >= 30, "where did the reads go?"
    assert sum(len(v) for v in lobby.values()) >= 5, "where did the lobby reads go?"
    unknown = {f: sorted(v - set(GameState.model_fields)) for f, v in state.items()}
    assert {f: v for f, v in unknown.items() if v} == {}
    lobby_fields = set(LobbyState.model_fields)
    unknown = {f: sorted(v - lobby_fields) for f, v in lobby.items()}
    assert {f: v for f, v in unknown.items() if v} == {}


def test_the_page_reads_check_sees_an_undocumented_field(tmp_path: Path) -> None:
    # The same scan over made-up modules: ``s.trays`` in a module where ``s``
    # is the state, ``store.state.piles`` and ``lobby.secret`` anywhere.
    (tmp_path / "log.js").write_text("const s = store.state;\nshow(s.trays, s.scores);\n")
    (tmp_path / "other.js").write_text("f(s.nothing, store.state.piles, lobby.secret);\n")
    state, lobby = page_reads(tmp_path)
    assert state == {"log.js": {"trays", "scores"}, "other.js": {"piles"}}
    assert lobby == {"log.js": set(), "other.js": {"secret"}}
