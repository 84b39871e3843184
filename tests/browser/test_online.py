"""Online play in real browsers: Playwright driving Debian's Chromium, one
browser context per seat and one for a spectator, against a real `donutbox
serve` (uvicorn) on a loopback port with an SQLite file, which the test kills
(SIGKILL) and starts again mid-game (the server and the browser are the
worker's, shared with the other browser tests)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import donuts_drawn, fresh_page

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
# Screenshots of an online game: refreshed in docs/screenshots when
# DONUTBOX_SCREENSHOTS=1, else written to a scratch folder.
SHOTS = (
    ROOT / "docs" / "screenshots"
    if os.environ.get("DONUTBOX_SCREENSHOTS")
    else Path(os.environ.get("TMPDIR", "/tmp")) / "donutbox-screenshots"
)
SHOTS.mkdir(parents=True, exist_ok=True)
#: A player name that would run script if a page ever set it as HTML.
EVIL = "<img src=x onerror=alert(1)>"
#: Waits on conditions (the machine may be slow and busy); never fixed sleeps.
WAIT = 30_000
PLACE_RE = re.compile(r"^([A-Z]{4})@(-?\d+),(-?\d+)/(\d+)(?:=([CSHB]))?$")


@pytest.fixture
def server(shared_server: Any) -> Any:
    """The worker's `donutbox serve` (tests/conftest.py's ``shared_server``),
    which a test here kills and starts again on its port and database."""
    return shared_server


@pytest.fixture
def browser(chromium: Any) -> Any:
    """The worker's Chromium (tests/browser/conftest.py)."""
    return chromium


def _post(url: str, body: object) -> dict[str, Any]:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


#: Every dialog any page opened (an alert would mean a name ran as HTML).
DIALOGS: list[str] = []
#: A browser whose tab is hidden and whose notifications are recorded.
HIDDEN_TAB = """
window.notes = [];
class FakeNotification {
  constructor(title, options) { window.notes.push([title, options.body]); }
  static requestPermission() {
    FakeNotification.permission = "granted";
    return Promise.resolve("granted");
  }
}
FakeNotification.permission = "default";
window.Notification = FakeNotification;
Object.defineProperty(document, "hidden", { get: () => true });
"""


def _page(browser: Any, url: str, width: int = 1280, init: str | None = None) -> Any:
    """A page in a browser context of its own (its own storage: another
    person's browser)."""
    page = fresh_page(browser, init=init, viewport={"width": width, "height": 900})

    def dialog(d: Any) -> None:
        DIALOGS.append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    page.goto(url)
    return page


def _state(page: Any) -> dict[str, Any]:
    return page.evaluate("() => window.donutbox.state")  # type: ignore[no-any-return]


def _version(page: Any) -> int:
    return int(page.evaluate("() => window.donutbox.state ? window.donutbox.state.version : -1"))


def _wait_version(page: Any, version: int) -> None:
    page.wait_for_function(
        "v => window.donutbox.state && window.donutbox.state.version >= v", arg=version
    )


def _wait_connected(page: Any) -> None:
    page.wait_for_function("() => window.donutbox.connected === true && window.donutbox.state")
    sync_api.expect(page.locator("#conn")).to_be_hidden()


def _play_one(page: Any, rng: random.Random) -> str:
    """Make one move through the page's own controls, chosen from the legal
    moves the page was sent; return it once the server has acknowledged it
    (the page shows a newer version)."""
    s = _state(page)
    legal, version = s["legal"], s["version"]
    assert legal, "the page to move has no legal moves"
    boxes = [m for m in legal if m.startswith("box@")]
    places = [m for m in legal if PLACE_RE.match(m)]
    if boxes:
        move = boxes[0]  # the page lists its Box it buttons in the legal moves' order
        page.click("#boxes button >> nth=0")
    elif places:
        move = rng.choice(places)
        p = PLACE_RE.match(move)
        assert p is not None
        face, x, y, rot, lock = p.group(1), p.group(2), p.group(3), int(p.group(4)), p.group(5)
        page.click(f"#tray .card >> nth={s['tray'].index(face)}")
        turns = ((rot - page.evaluate("() => window.donutbox.rotation")) // 90) % 4
        for _ in range(turns):
            page.click("#btn-rotate")
        # The place's outline may lie under a box's outline or off the shown
        # part of the counter: send the click to it directly.
        page.locator(f"#board .ghost[data-place='{face}@{x},{y}']").dispatch_event("click")
        if len([m for m in places if m.split("=")[0] == move.split("=")[0]]) > 1:
            page.click(f"#extra button[data-lock='{lock}']")
    else:
        move = legal[0]
        label = "Pass" if move == "pass" else f"Swap {move[5:]}"
        page.click(f"#extra button:text-is('{label}')")
    _wait_version(page, version + 1)
    return move


def _scores(page: Any) -> list[str]:
    """The score table's rows, as shown, without their clocks."""
    return page.evaluate(  # type: ignore[no-any-return]
        """() => [...document.querySelectorAll('#scores tbody tr')].map((tr) =>
             [tr.querySelector('.name').textContent,
              ...[...tr.cells].slice(1).map((td) => td.textContent)].join(' '))"""
    )


def _same_game(seat: Any, spectator: Any) -> None:
    """The spectator sees the same counter, moves and scores, and no tray."""
    _wait_version(spectator, _version(seat))
    a, b = _state(seat), _state(spectator)
    assert a["version"] == b["version"]
    assert a["cells"] == b["cells"] and a["history"] == b["history"]
    assert a["scores"] == b["scores"]
    assert _scores(seat) == _scores(spectator)
    assert b["tray"] == [] and b["legal"] == []
    assert spectator.locator("#tray .card").count() == 0
    sync_api.expect(spectator.locator("#tray")).to_be_hidden()
    sync_api.expect(spectator.locator("#role")).to_have_text("Spectating")


def _check_turn(pages: list[Any], to_move: int) -> None:
    """The seat to move is told so (status and tab title); the others wait."""
    for p, page in enumerate(pages):
        if p == to_move:
            sync_api.expect(page.locator("#status")).to_contain_text("Your turn")
            sync_api.expect(page).to_have_title(re.compile("Your turn"))
        else:
            sync_api.expect(page.locator("#status")).to_contain_text("Waiting for")
            sync_api.expect(page).not_to_have_title(re.compile("Your turn"))


def test_two_friends_and_a_spectator_play_to_the_end_through_a_restart(
    server: Any, browser: Any
) -> None:
    rng = random.Random(5)
    # Ann creates the game in the page: two friends, one with a hostile name.
    ann = _page(browser, server.url + "/")
    ann.click("#btn-new")
    ann.get_by_text("Invite friends with links").click()  # the first screen's disclosure
    form = ann.locator("#new-online")
    form.locator("input[aria-label='seat 1: name']").fill("Ann")
    form.locator("input[aria-label='seat 2: name']").fill(EVIL)
    form.locator("input[name=clock]").check()
    form.locator("input[name=minutes]").fill("10")
    form.locator("input[name=increment]").fill("15")
    form.locator("input[name=takebacks]").check()
    form.locator("button[type=submit]").click()
    links = ann.locator("#link-list")
    sync_api.expect(links).to_contain_text(f"Seat 2: {EVIL}")
    assert ann.locator("img[src=x]").count() == 0
    bob_link = ann.locator("#link-list input >> nth=1").input_value()
    watch_link = ann.locator("#link-list input >> nth=2").input_value()
    assert bob_link.startswith(server.url + "/#/online/")
    assert watch_link.startswith(server.url + "/#/online/") and watch_link != bob_link
    ann.click("#link-list button.play-seat >> nth=0")
    sync_api.expect(ann.locator("#role")).to_have_text("Seat 1: Ann")

    bob = _page(browser, bob_link)
    watcher = _page(browser, watch_link, width=1000)
    pages = [ann, bob]
    for page in (ann, bob, watcher):
        _wait_connected(page)
        # The names, the hostile one literally; both seats connected; one spectator.
        sync_api.expect(page.locator("#scores tbody tr >> nth=1 >> .name")).to_have_text(EVIL)
        sync_api.expect(page.locator("#scores .dot.on")).to_have_count(2)
        sync_api.expect(page.locator("#watchers")).to_have_text("1 spectator watching")
        assert page.locator("img[src=x]").count() == 0
    sync_api.expect(bob.locator("#role")).to_have_text(f"Seat 2: {EVIL}")
    sync_api.expect(bob.locator("#btn-notify")).to_be_visible()
    sync_api.expect(watcher.locator("#btn-notify")).to_be_hidden()
    sync_api.expect(watcher.locator("#takeback button")).to_have_count(0)
    # Clocks: both humans have joined, so the clock of the seat to move runs.
    to_move = _state(ann)["to_move"]
    running = ann.locator("#scores .clock.running")
    sync_api.expect(running).to_have_count(1)
    sync_api.expect(ann.locator(f"#scores tbody tr >> nth={to_move} >> .clock")).to_have_class(
        re.compile("running")
    )
    ann.wait_for_function(
        "() => { const t = document.querySelector('#scores .clock.running').textContent;"
        " return t !== '10:00' && t.startsWith('9:'); }"
    )
    _check_turn(pages, to_move)
    _same_game(ann, watcher)

    moves = 0
    restarted = False
    while not _state(ann)["finished"]:
        to_move = _state(ann)["to_move"]
        mover = pages[to_move]
        _play_one(mover, rng)
        moves += 1
        version = _version(mover)
        for page in pages:
            _wait_version(page, version)
        if moves == 6:
            _check_turn(pages, _state(ann)["to_move"])
            donuts_drawn(ann)
            ann.screenshot(animations="disabled", path=str(SHOTS / "online-seat.png"))
            _same_game(ann, watcher)
            donuts_drawn(watcher)
            watcher.screenshot(animations="disabled", path=str(SHOTS / "online-spectator.png"))
        if moves % 10 == 0:
            _same_game(ann, watcher)
        if moves == 12 and not _state(ann)["finished"]:
            # The server dies between moves; every acknowledged move survives
            # and the pages reconnect by themselves.
            acknowledged = _state(ann)["history"]
            server.kill()
            for page in (ann, bob, watcher):
                sync_api.expect(page.locator("#conn")).to_have_text("Reconnecting…")
            server.start()
            for page in (ann, bob, watcher):
                _wait_connected(page)
                assert _state(page)["history"] == acknowledged
                sync_api.expect(page.locator("#log li")).to_have_count(len(acknowledged))
            sync_api.expect(ann.locator("#scores .dot.on")).to_have_count(2)
            sync_api.expect(ann.locator("#watchers")).to_have_text("1 spectator watching")
            restarted = True
        assert moves < 400, "the game does not end"
    assert restarted

    final = _state(ann)
    assert final["finished"] and len(final["history"]) == moves
    for page in (ann, bob, watcher):
        sync_api.expect(page.locator("#status")).to_have_text("Game over.")
        sync_api.expect(page.locator("#summary h3")).to_contain_text("Game over")
        assert _state(page)["scores"] == final["scores"]
        assert page.locator("img[src=x]").count() == 0
    assert _scores(ann) == _scores(bob) == _scores(watcher)
    assert all(f"{final['scores'][p]} pts" in _scores(watcher)[p] for p in range(2))
    assert watcher.locator("#tray .card").count() == 0
    # The finished game's replay opens with the link's token.
    watcher.click("#btn-replay")
    sync_api.expect(watcher.locator("#rp-ply")).to_have_text(f"move 0 of {moves}")
    assert not DIALOGS
    for page in (ann, bob, watcher):
        page.context.close()


def test_a_takeback_asked_on_one_page_and_answered_on_the_other(server: Any, browser: Any) -> None:
    game = _post(
        server.url + "/api/online",
        {
            "seats": [{"kind": "human", "name": "Cy"}, {"kind": "human", "name": "Di"}],
            "takebacks": True,
        },
    )
    cy = _page(browser, server.url + game["seats"][0]["link"])
    di = _page(browser, server.url + game["seats"][1]["link"], init=HIDDEN_TAB)
    for page in (cy, di):
        _wait_connected(page)
    take_back = cy.locator("#takeback button:text-is('Take back')")
    sync_api.expect(take_back).to_have_count(0)  # no move yet
    # Di, whose tab is hidden, allows notifications and is told of the turn.
    di.click("#btn-notify")
    sync_api.expect(di.locator("#btn-notify")).to_be_hidden()
    first = _play_one(cy, random.Random(1))
    sync_api.expect(di.locator("#log li")).to_have_count(1)
    sync_api.expect(di).to_have_title(re.compile("Your turn"))
    di.wait_for_function("() => window.notes.length === 1")
    assert di.evaluate("() => window.notes") == [["donutbox: your turn", "Di, it is your move."]]
    # Cy asks; Di declines: nothing changes.
    cy.click("#takeback button:text-is('Take back')")
    sync_api.expect(cy.locator("#takeback")).to_contain_text("waiting for an answer")
    sync_api.expect(di.locator("#takeback")).to_contain_text("Cy asks to take back")
    di.click("#takeback button:text-is('Decline')")
    sync_api.expect(cy.locator("#takeback button:text-is('Take back')")).to_be_visible()
    sync_api.expect(di.locator("#takeback")).not_to_contain_text("asks")
    assert _state(cy)["history"] == [first]
    # Cy asks again; Di accepts: the move is gone, and it is Cy's turn again.
    cy.click("#takeback button:text-is('Take back')")
    di.click("#takeback button:text-is('Accept')")
    for page in (cy, di):
        sync_api.expect(page.locator("#log li")).to_have_count(0)
    assert _state(cy)["history"] == [] and _state(di)["history"] == []
    _check_turn([cy, di], 0)
    # Presence: Di leaves, and Cy sees it.
    sync_api.expect(cy.locator("#scores .dot.on")).to_have_count(2)
    di.context.close()
    sync_api.expect(cy.locator("#scores .dot.on")).to_have_count(1)
    sync_api.expect(cy.locator("#scores tbody tr >> nth=1 >> .dot")).to_have_class(
        re.compile("off")
    )
    # A wrong link: one line saying so (no "Connecting…" for ever, no
    # second line in the error area), nothing to act on, and no retrying.
    bad = _page(browser, f"{server.url}/#/online/{game['id']}/not-a-token")
    sync_api.expect(bad.locator("#status")).to_have_text(
        "No such game: the link is wrong, or the game was deleted."
    )
    sync_api.expect(bad.locator("#error")).to_be_hidden()
    sync_api.expect(bad.locator("#conn")).to_be_hidden()
    for control in ("#btn-rotate", "#btn-undo"):
        sync_api.expect(bad.locator(control)).to_be_hidden()
    assert not bad.evaluate("() => window.donutbox.connected")
    # The links this browser opened are remembered, to reopen them.
    cy.click("#btn-games")
    sync_api.expect(cy.locator("#online-list li")).to_have_count(1)
    sync_api.expect(cy.locator("#online-list button:text-is('Play as Cy')")).to_be_visible()
    cy.click("#online-list button:text-is('Play as Cy')")
    _wait_connected(cy)
    sync_api.expect(cy.locator("#role")).to_have_text("Seat 1: Cy")
    assert not DIALOGS
    for page in (cy, bad):
        page.context.close()


def test_a_clock_that_runs_out_lets_the_ai_move_and_the_pages_show_it(
    server: Any, browser: Any
) -> None:
    game = _post(
        server.url + "/api/online",
        {
            "seats": [{"kind": "human", "name": "Ed"}, {"kind": "human", "name": "Flo"}],
            "clock": {"minutes": 0.03, "increment": 20},
        },
    )
    ed = _page(browser, server.url + game["seats"][0]["link"])
    flo = _page(browser, server.url + game["seats"][1]["link"])
    for page in (ed, flo):
        _wait_connected(page)
    # Ed lets 1.8 seconds run out: the server's AI moves for him, his clock
    # is flagged and he plays on with the increment; now Flo's clock runs.
    for page in (ed, flo):
        sync_api.expect(page.locator("#log li")).to_have_count(1)
        sync_api.expect(page.locator("#scores tbody tr >> nth=0 >> .clock")).to_contain_text(
            "⚑ 0:20"
        )
        sync_api.expect(page.locator("#scores tbody tr >> nth=1 >> .clock")).to_have_class(
            re.compile("running")
        )
    _check_turn([ed, flo], 1)
    # Ed himself is told what happened; Flo, whose clock did not run out, is not.
    sync_api.expect(ed.locator("#takeback")).to_contain_text(
        "Your clock ran out: the server's AI made that move for you"
    )
    sync_api.expect(flo.locator("#takeback")).not_to_contain_text("Your clock ran out")
    for page in (ed, flo):
        page.context.close()


def test_resign_asks_for_confirmation_then_ends_the_game_on_both_pages(
    server: Any, browser: Any
) -> None:
    """Resign is a button and a confirmation in place: Cancel changes
    nothing; "Yes, resign" ends a game of two at once, and both pages show
    who resigned and who won, the resigner ranked last."""
    game = _post(
        server.url + "/api/online",
        {"seats": [{"kind": "human", "name": "Em"}, {"kind": "human", "name": "Flo"}]},
    )
    em = _page(browser, server.url + game["seats"][0]["link"])
    flo = _page(browser, server.url + game["seats"][1]["link"])
    for page in (em, flo):
        _wait_connected(page)
    _play_one(em, random.Random(3))  # a move first: the resigner may be ahead
    flo.click("#takeback button:text-is('Resign')")
    sync_api.expect(flo.locator("#takeback")).to_contain_text("Resign this game?")
    sync_api.expect(flo.locator("#btn-resign-yes")).to_be_focused()
    flo.click("#takeback button:text-is('Cancel')")
    sync_api.expect(flo.locator("#takeback button:text-is('Resign')")).to_be_visible()
    assert not _state(flo)["finished"]
    flo.click("#takeback button:text-is('Resign')")
    flo.keyboard.press("Enter")  # the focused "Yes, resign"
    for page in (em, flo):
        sync_api.expect(page.locator("#summary-head")).to_have_text(
            "Game over — Flo resigned; winner: Em"
        )
        sync_api.expect(page.locator("#summary .ranking tr.winner")).to_contain_text("Em")
        sync_api.expect(page.locator("#summary .ranking tr >> nth=2")).to_contain_text("2.Flo")
        sync_api.expect(page.locator("#takeback button")).to_have_count(0)
    assert _state(em)["ended_by"] == "resign" and _state(em)["winners"] == [0]
    assert not DIALOGS
    for page in (em, flo):
        page.context.close()
