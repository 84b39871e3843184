"""Shared by the browser tests: a live `donutbox serve` and Debian's Chromium
(the server once a module, Chromium once a worker), and pages that hold a
game's owner token."""

from __future__ import annotations

import json
import os
import shutil
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


@pytest.fixture
def live(shared_server: Any) -> str:
    """The URL of a real `donutbox serve` (loopback port, SQLite file): one
    server a module (tests/conftest.py's ``shared_server``; every test
    makes games of its own)."""
    return str(shared_server.url)


class _Chromium:
    """Debian's Chromium, launched once for a run of browser tests in this
    process and closed before the first other test (Playwright's sync API
    keeps an event loop running in this thread, in which ``asyncio.run``
    would fail)."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self.browser: Any = None

    def get(self) -> Any:
        if CHROMIUM is None:
            pytest.skip("Chromium is not installed (apt-get install chromium)")
        if self.browser is None:
            self._playwright = sync_api.sync_playwright().start()
            self.browser = self._playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        return self.browser

    def close(self) -> None:
        if self.browser is not None:
            self.browser.close()
            self._playwright.stop()
        self.browser = self._playwright = None


_CHROMIUM = _Chromium()


@pytest.fixture
def chromium() -> Iterator[Any]:
    """Debian's Chromium, shared by this worker's browser tests (one launch,
    not one a module); each test opens browser contexts of its own
    (``fresh_page``, ``page_for``: a context is a fresh profile, its own
    storage and cookies), and every context a test leaves open is closed
    after it, so no page of an earlier test keeps running (or holding
    sockets) in a later one."""
    browser = _CHROMIUM.get()
    yield browser
    for context in list(browser.contexts):
        context.close()


@pytest.hookimpl(trylast=True)  # after the test's fixtures are torn down
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if nextitem is None or nextitem.get_closest_marker("browser") is None:
        _CHROMIUM.close()


def get(url: str, token: str) -> dict[str, Any]:
    """GET JSON with a bearer token (a seat's, or an owner's)."""
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


def play_to_the_end(live: str, game_id: str, tokens: list[str]) -> dict[str, Any]:
    """An online game played to its end over HTTP, each seat (``tokens``)
    making its first legal move; the final state."""
    state = get(f"{live}/api/online/{game_id}", tokens[0])
    for _ in range(2000):
        if state["finished"]:
            return state
        seat = state["to_move"]
        mine = get(f"{live}/api/online/{game_id}", tokens[seat])
        state = post(
            f"{live}/api/online/{game_id}/moves",
            {"move": mine["legal"][0], "version": mine["version"]},
            tokens[seat],
        )
    raise AssertionError("the game did not end")


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


def fresh_page(
    browser: Any,
    url: str = "",
    *,
    init: str | None = None,
    owner: str | None = None,
    motion: bool = False,
    **options: Any,
) -> Any:
    """A page in a browser context of its own (another person's browser:
    its own storage, cookies and cache), made with the ``new_context``
    ``options``; ``init``: a script run before the page's own at every
    load; ``owner``: the owner token its localStorage holds (the one a game
    was created with), so the page may open that game; ``url``: loaded.

    The page asks for reduced motion (``prefers-reduced-motion: reduce``:
    the board's cards and marks appear at rest instead of animating in, 0.7
    s apart, which costs Chromium CPU for every move and makes Playwright
    wait for the element to be still before a click) unless ``motion``: the
    tests of the animations themselves."""
    context = browser.new_context(**options)
    context.set_default_timeout(WAIT)
    page = context.new_page()
    if not motion:
        page.emulate_media(reduced_motion="reduce")
    if init is not None:
        page.add_init_script(init)
    if owner:
        page.add_init_script(f"localStorage.setItem('donutbox.owner', {json.dumps(owner)})")
    if url:
        page.goto(url)
    return page


def wait_until_set_up(page: Any) -> None:
    """Wait until the app has its server's catalogue and has wired its
    buttons (``setup()`` in app.js runs after ``/api/meta`` answers; a click
    before that does nothing).  ``setup()`` fills the opponent list and adds
    the buttons' listeners in one task, so a filled list means both.

    A function, not an expression: Playwright polls an expression string
    with eval in the page, which the page's CSP (no 'unsafe-eval') refuses
    whenever the first look finds the app not yet set up (a busy machine)."""
    page.wait_for_function(
        "() => document.querySelector('#new-game select[name=opponent]').options.length > 0"
    )


def donuts_drawn(page: Any) -> None:
    """Wait until every donut image the page shows has been fetched and
    decoded (the board draws each donut as an SVG image the server draws,
    GET /api/look/donut/...; a screenshot taken before they arrive shows
    empty cells)."""
    page.evaluate(
        """async () => {
          const hrefs = new Set([...document.querySelectorAll('svg image')]
            .map((i) => i.getAttribute('href')));
          await Promise.all([...hrefs].map((href) => {
            const image = new Image();
            image.src = href;
            return image.decode().catch(() => {});
          }));
          await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
        }"""
    )


def sign_up(page: Any, name: str, password: str = "a long enough password") -> None:
    """A new account ``name``, signed up through the Community page of
    ``page`` (which then shows it signed in)."""
    page.click("#btn-community")
    page.fill("#sign-in input[name=name]", name)
    page.fill("#sign-in input[name=password]", password)
    page.click("#btn-sign-up")
    page.wait_for_selector("#me-name")
    assert page.text_content("#me-name") == name


def page_for(
    browser: Any, url: str, owner: str | None = None, width: int = 1280, motion: bool = False
) -> Any:
    """A page in a browser context of its own (``fresh_page``) of ``width``
    (a phone's height below 600 px, else 800); ``owner``: the owner token its
    localStorage holds, so the page may open that game; ``motion``: the
    board animates (else reduced motion)."""
    height = 844 if width < 600 else 800
    viewport = {"width": width, "height": height}
    return fresh_page(browser, url, owner=owner, motion=motion, viewport=viewport)


def contested_box_record() -> dict[str, Any]:
    """A finished record, tests/test_analyse.py's contested box: player 0
    may box a 12-point run (box@3,0) but swaps instead (a mistake or a blunder: the search values
    it about tanh(12/40) = 0.29 lower), player 1 boxes it; then nothing fits
    and both swap until the piles are spent (14 moves in all)."""
    import donutbox
    from donutbox.core import dump

    decks = [
        ["BCRC", "HHHH", "HHHH", "HHHH", "BBBB", "HHHH", "HHHH"],
        ["CCCB", "HHHH", "HHHH", "HHHH", "HHHH", "HHHH"],
    ]
    game = donutbox.Game.deal(decks)
    for move in ["BCRC@2,0/0=C", "CCCB@2,2/0", "swap HHHH", "box@3,0"] + ["swap HHHH"] * 10:
        game.play(move)
    assert game.finished
    return dump(game)  # type: ignore[no-any-return]
