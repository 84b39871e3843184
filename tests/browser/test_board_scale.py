"""A board that scales (issue 33, item 1): a 50-move game's counter at fit on
a 1280x800 screen and on a 390x844 phone, in real Chromium against a real
`donutbox serve`.  The position is built from a record through the page's
own route (POST /api/games/import); what the page must show is worked out
here from the game itself (the rules engine), not read back from the page."""

from __future__ import annotations

import random
import re
import urllib.request
import xml.etree.ElementTree as ET
from typing import Any, NamedTuple

import pytest

import donutbox
from conftest import SHOTS, donuts_drawn, page_for, post
from donutbox.core import dump
from donutbox.core.geometry import xy

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

NAMES = {
    "C": "Chocolate Cruller",
    "S": "Strawberry Sprinkles",
    "H": "Donut Holes",
    "B": "Blueberry Glaze",
}
PLACE_RE = re.compile(r"^([A-Z]{4})@(-?\d+),(-?\d+)/(\d+)(?:=([CSHB]))?$")


def fifty_move_game(plies: int = 50) -> donutbox.Game:
    """A standard two-player game (seed 7) of 50 moves, a card placed
    whenever one fits (the counter grows as far as a long game's does);
    ``plies``: cut after that many moves."""
    game = donutbox.Game.new(donutbox.Rules(), ["Ann", "Bob"], seed=7)
    rng = random.Random(7)
    while not game.finished and game.ply < plies:
        moves = [str(m) for m in game.legal_moves()]
        places = [m for m in moves if PLACE_RE.match(m)]
        game.play(rng.choice(places or moves))
    return game


def _text_sizes(page: Any) -> list[tuple[str, float]]:
    """Every text drawn in the counter and its mini-map: its content and its
    size on screen in CSS pixels (font size times the drawing's scale)."""
    return page.evaluate(  # type: ignore[no-any-return]
        """() => [...document.querySelectorAll('#board text, #minimap text')]
          .filter((t) => t.getClientRects().length)
          .map((t) => [t.textContent,
                       parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a])"""
    )


def _visible(page: Any, selector: str) -> list[dict[str, float]]:
    """The on-screen boxes of the elements, and whether each lies inside the
    board's own box (what the player can see of the counter)."""
    return page.evaluate(  # type: ignore[no-any-return]
        """(sel) => {
          const b = document.querySelector('#board').getBoundingClientRect();
          return [...document.querySelectorAll(sel)].map((n) => {
            const r = n.getBoundingClientRect();
            return {x: r.x, y: r.y, w: r.width, h: r.height,
                    inside: r.left >= b.left - 1 && r.right <= b.right + 1
                         && r.top >= b.top - 1 && r.bottom <= b.bottom + 1};
          });
        }""",
        selector,
    )


class Served(NamedTuple):
    """A donut image as the server draws it, in fractions of the drawing's
    width (its viewBox): the letter's font size and baseline, the hole it
    sits in (the circle drawn just before it)."""

    size: float
    baseline: float
    hole_x: float
    hole_y: float
    hole_r: float


def _served_letter(url: str) -> Served:
    with urllib.request.urlopen(url, timeout=30) as r:
        root = ET.fromstring(r.read())
    ns = "{http://www.w3.org/2000/svg}"
    _, _, width, height = (float(v) for v in (root.get("viewBox") or "").split())
    assert width == height, f"{url}: a square tile"
    shapes = list(root)
    texts = [i for i, e in enumerate(shapes) if e.tag == f"{ns}text"]
    assert len(texts) == 1, f"{url}: one letter"
    letter = shapes[texts[0]]
    hole = shapes[texts[0] - 1]
    assert hole.tag == f"{ns}circle", f"{url}: the letter sits in a hole"
    assert letter.get("text-anchor") == "middle" and letter.get("x") == hole.get("cx")
    return Served(
        *(float(v or "nan") / width for v in (letter.get("font-size"), letter.get("y"))),
        *(float(hole.get(a) or "nan") / width for a in ("cx", "cy", "r")),
    )


def _drawn_letters(page: Any, live: str, selector: str) -> list[tuple[str, float]]:
    """Each donut image the selector finds on screen: its href and its
    letter's size in CSS pixels (the image's width on screen times the
    letter's font size as a fraction of the served drawing's width)."""
    images = page.evaluate(
        """(sel) => [...document.querySelectorAll(sel)]
          .filter((i) => i.getClientRects().length)
          .map((i) => [i.getAttribute('href'), i.getBoundingClientRect().width])""",
        selector,
    )
    served = {href: _served_letter(live + href) for href in {h for h, _ in images}}
    return [(href, width * served[href].size) for href, width in images]


def _spot_cells(page: Any) -> set[tuple[int, int]]:
    xs = page.locator("#board .spot rect").evaluate_all(
        "rs => rs.map((r) => [Math.round(+r.getAttribute('x') - 0.04),"
        " Math.round(+r.getAttribute('y') - 0.04)])"
    )
    return {(x, y) for x, y in xs}


@pytest.mark.parametrize("width", [1280, 390])
def test_a_50_move_board_is_readable_at_fit(live: str, chromium: Any, width: int) -> None:
    done = fifty_move_game()
    assert done.ply == 50
    # The position after 48 of its 50 moves, imported as a hotseat game:
    # Ann to move, Bob's last card the last move, the counter at its largest
    # but two cards.
    record = dump(done)
    record["moves"] = record["moves"][:48]
    game = fifty_move_game(48)
    state = post(live + "/api/games/import", record)
    page = page_for(chromium, f"{live}/#game={state['id']}", state["owner_token"], width=width)
    expect(page.locator("#status")).to_contain_text("Ann")
    page.get_by_role("button", name="fit").click()

    # 1. No drawn text under 12 CSS px (the open boxes' values) at fit.
    sizes = _text_sizes(page)
    assert sizes, "the open boxes' values are drawn"
    small = [(t, round(px, 1)) for t, px in sizes if px < 12 - 1e-6]
    assert not small, f"text under 12 px: {small}"
    # Nor after zooming out as far as the page goes.
    for _ in range(8):
        page.get_by_role("button", name="zoom out").click()
    small = [(t, round(px, 1)) for t, px in _text_sizes(page) if px < 12 - 1e-6]
    assert not small, f"text under 12 px zoomed out: {small}"
    # The donuts stay at least 40 px across; the counter does not fit, so
    # the mini-map shows the whole of it.
    donuts = page.locator("#board g.card-on image").evaluate_all(
        "is => is.map((i) => i.getBoundingClientRect().width)"
    )
    assert min(donuts) >= 40 - 0.5, min(donuts)
    expect(page.locator("#minimap")).to_be_visible()
    page.get_by_role("button", name="fit").click()

    # 1b. Nor the letter drawn in each donut (an image the server draws):
    # on the counter, in the tray, and in the picked card's preview where
    # it would go.
    letters = _drawn_letters(page, live, "#board image, #tray image")
    assert len([h for h, _ in letters]) >= 4 * 3, "the counter and the tray's donuts"
    ghosts = _visible(page, "#board .ghost")
    seen = [i for i, g in enumerate(ghosts) if g["inside"]]
    assert seen, "a place for the picked card is in view"
    page.locator("#board .ghost").nth(seen[0]).hover()
    preview = _drawn_letters(page, live, "#board .phantom image")
    assert len(preview) == 4, "the picked card's donuts where it would go"
    small = sorted({(h, round(px, 1)) for h, px in letters + preview if px < 12 - 1e-6})
    assert not small, f"letters under 12 px: {small}"
    page.mouse.move(0, 0)

    # 2. Owner marks never cover a donut's letter: a mark's box stays clear
    # of the hole the letter is drawn in (read from the served drawing).
    marks = page.evaluate(
        """() => [...document.querySelectorAll('#board .owner-mark')].map((m) => {
            const image = m.parentNode.querySelector('image');
            const cell = image.getBoundingClientRect(), r = m.getBoundingClientRect();
            return [image.getAttribute('href'), cell.x, cell.y, cell.width,
                    r.left, r.top, r.right, r.bottom];
          })"""
    )
    assert marks, "owner marks are drawn"
    holes = {href: _served_letter(live + href) for href in {m[0] for m in marks}}
    covered = []
    for href, cx, cy, cw, left, top, right, bottom in marks:
        d = holes[href]
        hx, hy, hr = cx + cw * d.hole_x, cy + cw * d.hole_y, cw * d.hole_r
        nx, ny = min(max(hx, left), right), min(max(hy, top), bottom)
        if (nx - hx) ** 2 + (ny - hy) ** 2 < hr**2:
            covered.append(href)
    assert not covered, f"owner marks over the letter's hole: {covered}"
    # Nor an open box's value: its badge stays clear of the letter's box (a
    # capital of Helvetica: 0.72 of its size wide and high, on its baseline).
    badges = page.evaluate(
        """() => [...document.querySelectorAll('#board .badge rect')].map((b) => {
            const r = b.getBoundingClientRect();
            return [r.left, r.top, r.right, r.bottom];
          })"""
    )
    assert badges, "open boxes' values are drawn"
    cells = page.evaluate(
        """() => [...document.querySelectorAll('#board g.card-on image')].map((i) => {
            const r = i.getBoundingClientRect();
            return [i.getAttribute('href'), r.x, r.y, r.width];
          })"""
    )
    served = {href: _served_letter(live + href) for href in {c[0] for c in cells}}
    under = []
    for href, cx, cy, cw in cells:
        d = served[href]
        half = cw * d.size * 0.36
        bottom = cy + cw * d.baseline
        box = (cx + cw * d.hole_x - half, bottom - cw * d.size * 0.72, cx + cw * d.hole_x + half)
        for left, top, right, b in badges:
            if left < box[2] and right > box[0] and top < bottom and b > box[1]:
                under.append((href, round(b - box[1], 1)))
    assert not under, f"badges over letters (px): {under}"

    # 3. Every open box: named with its size, flavour and value, and found
    # from its description (pointing at it picks out its donuts, in view).
    table = {(c["x"], c["y"]): c["flavour"] for c in game.view(0).table_cells()}
    scoring = game.rules.scoring_rule
    expected = {
        frozenset(xy(c) for c in run.cells): scoring.run_points(run) for run in game.counter.boxes()
    }
    open_boxes = page.locator("#open-boxes li:not(.more) button")
    more = page.locator("#open-boxes li.more button")
    if more.count():
        more.click()
    assert open_boxes.count() == len(expected) > 0
    found = set()
    for i in range(open_boxes.count()):
        button = open_boxes.nth(i)
        text = button.inner_text()
        button.hover()
        spot = frozenset(_spot_cells(page))
        assert spot in expected, f"{text!r} picked out {sorted(spot)}"
        found.add(spot)
        flavours = {table[c] for c in spot} - {"R"}
        assert len(flavours) == 1
        assert f"{len(spot)} {NAMES[flavours.pop()]}, {expected[spot]} pts" in text
        assert all(r["inside"] for r in _visible(page, "#board .spot rect")), text
    assert found == set(expected)
    page.mouse.move(0, 0)

    # 4. The last move (Bob's 48th-move card): found from its description.
    last = PLACE_RE.match(str(game.history[-1]))
    assert last is not None, "the last move is a placement"
    x, y = int(last.group(2)), int(last.group(3))
    told = page.locator("#last-move button")
    expect(told).to_have_count(1)
    expect(told).to_contain_text("Bob placed a card")
    assert f"({x},{y})" in told.inner_text()
    assert re.search(r"(at the (top|bottom|left|right)|in the middle)", told.inner_text())
    # From elsewhere on the counter: the view moves to it.
    page.focus("#board")
    for _ in range(12):
        page.keyboard.press("ArrowLeft")
    told.hover()
    assert _spot_cells(page) == {(x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1)}
    assert all(r["inside"] for r in _visible(page, "#board .spot rect"))
    page.mouse.move(0, 0)
    # 5. A move of the log (Ann's first card, far from the last move): its
    # card is picked out, the view moved to it.
    first = PLACE_RE.match(str(game.history[0]))
    assert first is not None
    fx, fy = int(first.group(2)), int(first.group(3))
    entry = page.locator("#log li button.say").first
    assert f"({fx},{fy})" in entry.inner_text()
    entry.hover()
    assert _spot_cells(page) == {(fx, fy), (fx + 1, fy), (fx, fy + 1), (fx + 1, fy + 1)}
    assert all(r["inside"] for r in _visible(page, "#board .spot rect"))
    page.mouse.move(0, 0)
    page.get_by_role("button", name="fit").click()
    donuts_drawn(page)
    page.screenshot(
        animations="disabled",
        path=str(SHOTS / f"board-50-{'phone' if width < 600 else 'desktop'}.png"),
    )
    if width > 600:
        page.emulate_media(color_scheme="dark", reduced_motion="reduce")
        page.locator("#open-boxes button").first.hover()
        donuts_drawn(page)
        page.screenshot(animations="disabled", path=str(SHOTS / "board-50-dark.png"))
    page.context.close()


def test_every_menu_item_is_on_a_phone_screen(live: str, chromium: Any) -> None:
    # Issue 33, item 6: at 390 px the header hid Community, How to play and
    # Sound behind a sideways scroll.  Now Tutorial and Community are in
    # the header's row and "More" opens every other item, each wholly on
    # the screen; choosing one closes the menu.
    page = page_for(chromium, live + "/", width=390)
    expect(page.locator("#setup")).to_be_visible()
    items = ["Tutorial", "New game", "Saved games", "How to play", "Community", "♪ Sound off"]

    def on_screen(name: str) -> bool:
        box = page.get_by_role("button", name=name, exact=True).bounding_box()
        return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390

    assert on_screen("Tutorial") and on_screen("Community")
    more = page.get_by_role("button", name="☰ More")
    expect(more).to_have_attribute("aria-expanded", "false")
    more.click()
    expect(more).to_have_attribute("aria-expanded", "true")
    for name in items:
        expect(page.get_by_role("button", name=name, exact=True)).to_be_visible()
        assert on_screen(name), name
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    page.get_by_role("button", name="How to play", exact=True).click()
    expect(page.locator("#rules")).to_be_visible()
    expect(more).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("button", name="Saved games", exact=True)).to_be_hidden()
    page.context.close()


def test_a_move_that_starts_the_final_lap_is_announced_before_it(live: str, chromium: Any) -> None:
    # Issue 33, item 8.  Ann's deck of 7: the start card, a tray of 4 and 2
    # in her pile; after her first card she has drawn one (pile 1).  Bob
    # cannot place (CCCC only, no C on the counter's edge he could reach
    # after Ann's BBBB... he swaps).  Now Ann's next card draws her last:
    # RULES.md section 8, that starts the Final Lap.
    record = {
        "format": "donutbox/1",
        "players": ["Ann", "Bob"],
        "decks": [["CCCC", "CCCC", "BBBB", "BBBB", "BBBB", "CCCC", "CCCC"], ["CCCC"] * 6],
        "moves": ["BBBB@0,-2/0", "swap CCCC"],
    }
    state = post(live + "/api/games/import", record)
    page = page_for(chromium, f"{live}/#game={state['id']}", state["owner_token"])
    expect(page.locator("#status")).to_contain_text("Your turn, Ann")
    warning = page.locator("#lap-warning")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("starts the Final Lap")
    expect(page.locator("#banner")).to_be_hidden()
    # (a card that fits somewhere: the first tray card with a place shown)
    cards = page.locator("#tray .card")
    for i in range(cards.count()):
        cards.nth(i).click()
        if page.locator("#board .ghost").count():
            break
    page.locator("#board .ghost").first.dispatch_event("click")
    expect(page.locator("#banner")).to_contain_text("Final Lap")
    expect(warning).to_be_hidden()
    page.context.close()
