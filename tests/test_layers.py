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
    "botclient": {"core", "ai", "usage"},
    "cli": {
        "botclient",
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


# -- import circles ------------------------------------------------------------

#: Known circles, each a sorted tuple of the modules of one strongly connected
#: part of the graph: none.  (The hub and the parts it wires, ``ai_runner``,
#: ``broker`` and ``clocks``, meet through the narrow interfaces of
#: ``server/ports.py``, not one another's modules.)  Any circle fails the test.
KNOWN_CIRCLES: set[tuple[str, ...]] = set()


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the modules of the package it imports, anywhere in its source
    (inside functions and under ``if TYPE_CHECKING:`` too).

    ``from P import name`` is an edge to the module ``P.name`` when there is
    one, else to ``P`` itself.  Importing ``P.sub`` also runs ``P``'s
    ``__init__`` first; that implicit edge is not counted (every module of
    a package would otherwise be in a circle with an ``__init__`` that
    gathers the package's names).
    """
    modules = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - (node.level - 1)]
                    target = ".".join(base + (node.module.split(".") if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    if f"{target}.{alias.name}" in modules:
                        found.add(f"{target}.{alias.name}")
                    elif target in modules:
                        found.add(target)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in modules)
        graph[name] = found - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected parts of more than one module (Tarjan's
    algorithm, without recursion), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    part.append(top)
                    if top == node:
                        break
                if len(part) > 1:
                    found.append(tuple(sorted(part)))
    return sorted(found)


def _describe(graph: dict[str, set[str]], part: tuple[str, ...]) -> str:
    inside = set(part)
    return "\n".join(f"  {m} -> {', '.join(sorted(graph[m] & inside))}" for m in part)


def test_no_import_circles() -> None:
    """0 import circles in src, lazy and ``TYPE_CHECKING`` imports included
    (besides the named server ones of ``KNOWN_CIRCLES``)."""
    graph = import_graph()
    found = circles(graph)
    for part in found:
        print(f"circle of {len(part)} modules:\n{_describe(graph, part)}")
    new = [p for p in found if p not in KNOWN_CIRCLES]
    assert not new, "import circles:\n" + "\n".join(_describe(graph, p) for p in new)
    gone = KNOWN_CIRCLES - set(found)
    assert not gone, f"no longer circles, drop them from KNOWN_CIRCLES: {sorted(gone)}"


def test_the_circle_check_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    """Worked out by hand on a made-up package: a -> b at the top, b -> a
    under TYPE_CHECKING (one circle); c -> d inside a function, d -> c via
    ``from . import c`` (another); e imports a, and nothing imports e back."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .a import A\n", encoding="utf-8")
    (pkg / "a.py").write_text("from .b import B\nA = 1\n", encoding="utf-8")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\nB = 2\n",
        encoding="utf-8",
    )
    (pkg / "c.py").write_text("def f():\n    from .d import g\n", encoding="utf-8")
    (pkg / "d.py").write_text("from . import c\ndef g(): ...\n", encoding="utf-8")
    (pkg / "e.py").write_text("import pkg.a\n", encoding="utf-8")
    graph = import_graph(pkg)
    assert graph["pkg"] == {"pkg.a"} and graph["pkg.e"] == {"pkg.a"}
    assert circles(graph) == [("pkg.a", "pkg.b"), ("pkg.c", "pkg.d")]
