"""Shared by the browser tests: a live `donutbox serve`, Debian's Chromium,
and pages that hold a game's owner token."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sync_api = pytest.importorskip("playwright.sync_api")

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
