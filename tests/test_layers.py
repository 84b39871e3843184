"""Nothing depends upward: each part of the package imports only the parts
below it (docs/architecture.md, "The module map").  Read from the source
with ast, so a lazy import inside a function counts as much as one at the
top of a module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "donutbox"

#: part -> the parts it may import (besides itself and ``__version__``).
#: The order of docs/architecture.md: core at the bottom, cli at the top.
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "ai": {"core"},
    "summary": {"core"},
    "usage": {"core"},
    "bench": {"core", "ai", "usage", "lab"},
    "render": {"core", "usage"},
    "lab": {"core", "ai", "usage", "render"},
    "envs": {"core", "ai", "render"},
    "analyse_cmd": {"core", "ai", "usage", "render", "lab"},
    "play": {"core", "ai", "render", "summary", "usage"},
    "server": {"core", "ai", "render", "summary", "usage"},
    "cli": {
        "core",
        "ai",
        "bench",
        "lab",
        "play",
        "render",
        "server",
        "summary",
        "usage",
        "envs",
        "analyse_cmd",
    },
    "__main__": {"cli"},
    "__init__": {"core"},
}


def _part(parts: tuple[str, ...]) -> str:
    return parts[0].removesuffix(".py")


def _imports(path: Path, package: Path = PACKAGE) -> set[str]:
    """The top-level parts of donutbox that ``path`` (inside ``package``) imports."""
    parts = path.relative_to(package).with_suffix("").parts
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(parts[: len(parts) - node.level])
                target = base + (node.module.split(".") if node.module else [])
                if not target:
                    target = [alias.name for alias in node.names]
                found.update(target[:1])
            elif node.module and node.module.split(".")[0] == "donutbox":
                names = node.module.split(".")
                found.add(names[1] if len(names) > 1 else "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "donutbox":
                    found.add(names[1] if len(names) > 1 else "__init__")
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_upward(path: Path) -> None:
    me = _part(path.relative_to(PACKAGE).parts)
    assert me in ALLOWED, f"{me} is a new part: place it in ALLOWED and docs/architecture.md"
    upward = _imports(path) - ALLOWED[me] - {me, "__version__"}
    assert not upward, f"{path.relative_to(PACKAGE)} imports {sorted(upward)} from above it"


def test_the_check_sees_relative_and_absolute_imports(tmp_path: Path) -> None:
    """The reader itself: worked out by hand on a made-up module."""
    (tmp_path / "core").mkdir()
    fake = tmp_path / "core" / "probe.py"
    source = (
        "from ..server import app\n"
        "from . import cards\n"
        "import donutbox.lab.sim\n"
        "def f():\n    from donutbox.ai import make_agent\n"
    )
    fake.write_text(source, encoding="utf-8")
    assert _imports(fake, tmp_path) == {"server", "core", "lab", "ai"}
