"""Shared by the browser tests.

TEMPORARY (until the server branch with the new /api/meta is merged): when
the server's /api/meta lacks the agreed `rules`/`agents`/`palette`, the page
is served one in the agreed shape (CONTRACTS.md), built from the project's
own data.  Removed once the real endpoint is there."""

from __future__ import annotations

import json
from typing import Any

import pytest

sync_api = pytest.importorskip("playwright.sync_api")

from donutbox.render import look  # noqa: E402


def _meta() -> dict[str, Any]:
    def choice(value: str, label: str, help: str) -> dict[str, str]:
        return {"value": value, "label": label, "help": help}

    rules = [
        {
            "name": "match",
            "label": "Matching",
            "help": "Which touching donuts must match.",
            "kind": "choice",
            "default": "one-good-match",
            "choices": [
                choice("one-good-match", "One Good Match", "A card needs one matching edge."),
                choice("perfect-match", "Perfect Match", "Every touching edge must match."),
            ],
        },
        {
            "name": "layout",
            "label": "Layout",
            "help": "How cards line up.",
            "kind": "choice",
            "default": "squared-away",
            "choices": [
                choice("squared-away", "Squared Away", "Cards line up on the grid."),
                choice("splitzkies", "Splitzkies", "Cards may be offset by half a card."),
            ],
        },
        {
            "name": "closers",
            "label": "Coffee's For Closers",
            "help": "Whoever seals a box scores it.",
            "kind": "flag",
            "default": False,
            "choices": [],
        },
    ]

    def agent(name: str, label: str, level: int | None, base: str, timed: bool) -> dict[str, Any]:
        return {
            "name": name,
            "label": label,
            "help": f"{label}.",
            "level": level,
            "agent": base,
            "timed": timed,
            "default_seconds": 1.0 if timed else None,
            "max_seconds": 30.0 if timed else None,
        }

    agents = [
        agent("easy", "easy", 1, "greedy", False),
        agent("medium", "medium", 2, "heuristic", False),
        agent("hard", "hard", 3, "mcts", True),
        agent("random", "random", None, "random", False),
    ]
    return {
        "rules": rules,
        "agents": agents,
        "players": {"min": 2, "max": 4},
        "max_name_length": 40,
        "palette": look.palette(),
    }


def _shim(context: Any) -> None:
    def handle(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        if isinstance(body.get("rules"), list) and "palette" in body:
            route.fulfill(response=response)
        else:
            route.fulfill(response=response, body=json.dumps({**body, **_meta()}))

    context.route("**/api/meta", handle)


_new_context = sync_api.Browser.new_context


def _patched_new_context(self: Any, *args: Any, **kwargs: Any) -> Any:
    context = _new_context(self, *args, **kwargs)
    _shim(context)
    return context


def _patched_new_page(self: Any, *args: Any, **kwargs: Any) -> Any:
    context = self.new_context(*args, **kwargs)
    page = context.new_page()
    page._owned_context = context
    return page


sync_api.Browser.new_context = _patched_new_context  # type: ignore[method-assign]
sync_api.Browser.new_page = _patched_new_page  # type: ignore[method-assign]


# -- shared by the newer browser tests ------------------------------------------------

import os  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
#: Screenshots: refreshed in docs/screenshots when DONUTBOX_SCREENSHOTS=1,
#: else written to a scratch folder.
SHOTS = (
    ROOT / "docs" / "screenshots"
    if os.environ.get("DONUTBOX_SCREENSHOTS")
    else Path(os.environ.get("TMPDIR", "/tmp")) / "donutbox-screenshots"
)
SHOTS.mkdir(parents=True, exist_ok=True)
#: Waits on conditions (the machine is slow and busy); never fixed sleeps.
WAIT = 30_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `donutbox serve` on a loopback port with an SQLite file."""
    port = free_port()
    db = tmp_path_factory.mktemp("db") / "games.db"
    log = db.with_suffix(".log")
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "donutbox.cli",
                "serve",
                "--port",
                str(port),
                "--db",
                f"sqlite:///{db}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "NO_COLOR": "1"},
        )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/api/meta", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        raise AssertionError("the server did not start: " + log.read_text()[-2000:])
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def post(url: str, body: object, token: str | None = None) -> dict[str, Any]:
    """POST JSON as a browser of its own would (``token``: its owner token)."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers=headers
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


def page_for(browser: Any, url: str, owner: str | None = None, width: int = 1280) -> Any:
    """A page in a browser context of its own (another person's browser);
    ``owner``: the owner token its localStorage holds (the one a game was
    created with), so the page may open that game."""
    context = browser.new_context(viewport={"width": width, "height": 844 if width < 600 else 800})
    context.set_default_timeout(WAIT)
    if owner:
        context.add_init_script(f"localStorage.setItem('donutbox.owner', {json.dumps(owner)})")
    page = context.new_page()
    if url:
        page.goto(url)
    return page
