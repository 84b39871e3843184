"""The review of a finished game laid out as lichess lays out its analysis
(issue 33, "a review worth opening"): on a 1280x800 screen the page itself
never scrolls, the board takes the height there is, and the side column
keeps the graph, the marked move's text, the step buttons and the move list
on screen, the list scrolling inside its own box to the move shown; on a
390x844 phone the board, then the marked move and the step controls, then
the graph, then the moves.  A 50-move game (test_board_scale's), analysed
at the server's smallest budget, in real Chromium against a real
`donutbox serve`."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import SHOTS, donuts_drawn, get, page_for, post
from donutbox.core import dump

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

#: The dark theme's pictures, to look at (not kept in docs/screenshots).
SCRATCH = Path(os.environ.get("TMPDIR", "/tmp")) / "donutbox-screenshots"
SCRATCH.mkdir(parents=True, exist_ok=True)

#: What is measured on the page: the page's own scroll height, the viewport
#: and the on-screen boxes of the parts of the review.
MEASURE = """() => {
  const box = (sel) => {
    const n = document.querySelector(sel);
    if (!n || !n.getClientRects().length) return null;
    const r = n.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height};
  };
  return {
    scroll: document.scrollingElement.scrollHeight, inner: innerHeight,
    board: box('#board'), graph: box('#analysis-graph'), best: box('#analysis-best'),
    prev: box('#rp-prev'), next: box('#rp-next'), nextMark: box('#rp-next-mark'),
    slider: box('#rp-slider'), log: box('#log'), current: box('#log li.current'),
    logTop: document.querySelector('#log').scrollTop,
  };
}"""


def _analysed_long_game(live: str) -> tuple[dict[str, Any], list[int], int]:
    """The 50-move game imported and analysed (0.05 CPU s a move: the
    smallest budget the server takes); its import answer, its marked moves
    (1-based, as the replay counts them) and its length."""
    from test_board_scale import fifty_move_game

    game = fifty_move_game()
    assert game.finished
    done = post(live + "/api/games/import", dump(game))
    token = done["owner_token"]
    url = f"{live}/api/games/{done['id']}/analysis"
    post(url, {"seconds": 0.05}, token)
    deadline = time.monotonic() + 300
    while True:
        r = get(url, token)
        if r["state"] == "done":
            break
        assert r["state"] in ("queued", "running"), r
        assert time.monotonic() < deadline, r
        time.sleep(0.5)
    marked = [m["ply"] + 1 for m in r["moves"] if m["mark"]]
    return done, marked, len(r["moves"])


def _measure(page: Any) -> dict[str, Any]:
    """MEASURE once the page has settled: a marked move's text in words (it
    follows the position asked of the server, and the list's box shrinks
    when it comes) and two frames drawn after it."""
    best = page.locator("#analysis-best")
    if best.count():
        expect(best).to_contain_text("; outlined on the counter")
    page.evaluate(
        "() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))"
    )
    return page.evaluate(MEASURE)  # type: ignore[no-any-return]


def _inside(b: dict[str, float] | None, top: float, bottom: float) -> bool:
    return b is not None and b["top"] >= top - 1 and b["bottom"] <= bottom + 1


def test_review_fits_the_desktop_screen_and_the_moves_scroll_in_their_own_box(
    live: str, chromium: Any
) -> None:
    done, marked, n = _analysed_long_game(live)
    assert len(marked) >= 3, marked
    page = page_for(chromium, f"{live}/#game={done['id']}", done["owner_token"])
    expect(page.locator("#analysis-graph")).to_be_visible()
    # The end screen, before Replay, keeps to the screen too: the result,
    # its buttons, the graph and the board's bottom all in the viewport.
    expect(page.locator("#btn-replay")).to_be_visible()
    m = _measure(page)
    assert m["scroll"] <= m["inner"] + 1, m
    assert _inside(m["graph"], 0, m["inner"]), m
    assert m["board"]["bottom"] >= m["inner"] - 24, m
    replay = page.locator("#btn-replay").bounding_box()
    assert replay is not None and replay["y"] + replay["height"] <= m["inner"]
    page.click("#btn-replay")
    expect(page.locator("#rp-ply")).to_have_text(f"move 0 of {n}")
    page.locator("#rp-next").focus()
    scrolled = []
    for ply in marked[:3]:
        before = _measure(page)
        # Where the move's entry lies in the list before the step: outside
        # the list's box, the list must scroll to it.
        entry = page.locator("#log li").nth(ply - 1).bounding_box()
        assert entry is not None
        hidden = not _inside(
            {"top": entry["y"], "bottom": entry["y"] + entry["height"]},
            before["log"]["top"],
            before["log"]["bottom"],
        )
        page.keyboard.press("n")
        expect(page.locator("#rp-ply")).to_have_text(f"move {ply} of {n}")
        expect(page.locator("#analysis-best")).to_be_visible()
        expect(page.locator("#log li").nth(ply - 1)).to_have_class("current")
        m = _measure(page)
        assert m["inner"] == 800
        # The page itself does not scroll: everything is in the viewport.
        assert m["scroll"] <= m["inner"] + 1, m
        for part in ("graph", "best", "prev", "next", "nextMark", "slider", "current"):
            assert _inside(m[part], 0, m["inner"]), (part, m)
        # the current move within the list's own (scrolling) box
        assert _inside(m["current"], m["log"]["top"], m["log"]["bottom"]), m
        if hidden:
            assert m["logTop"] != before["logTop"], (ply, before, m)
            scrolled.append(ply)
        # The board takes the height there is (to the viewport's bottom,
        # less the page's margin).
        assert m["board"]["bottom"] >= m["inner"] - 24, m
    # At least one step had its move out of view (the list starts at the end).
    assert scrolled, marked[:3]
    # A dot on the graph and the arrow keys keep the move in view too.
    last = marked[-1]
    page.locator(f'#analysis-graph .marked[data-ply="{last - 1}"]').click()
    expect(page.locator("#rp-ply")).to_have_text(f"move {last} of {n}")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#rp-ply")).to_have_text(f"move {last - 1} of {n}")
    m = _measure(page)
    assert m["scroll"] <= m["inner"] + 1, m
    assert _inside(m["current"], m["log"]["top"], m["log"]["bottom"]), m
    assert _inside(m["current"], 0, m["inner"]), m
    # P: back to the marked move before, its text beside the board.
    page.keyboard.press("p")
    back = max(p for p in marked if p < last - 1)
    expect(page.locator("#rp-ply")).to_have_text(f"move {back} of {n}")
    expect(page.locator("#analysis-best")).to_contain_text("Best: ")
    m = _measure(page)
    assert m["scroll"] <= m["inner"] + 1, m
    for part in ("graph", "best", "next", "current"):
        assert _inside(m[part], 0, m["inner"]), (part, m)
    # The open boxes are folded under their heading; the toggle shows them,
    # and the page still does not scroll (the side column does, if need be).
    toggle = page.locator("#open-boxes-toggle")
    expect(page.locator("#open-boxes")).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#open-boxes li").first).to_be_visible()
    assert _measure(page)["scroll"] <= 801
    toggle.click()
    expect(page.locator("#open-boxes")).to_be_hidden()
    donuts_drawn(page)
    page.screenshot(animations="disabled", path=str(SHOTS / "review-long.png"))
    page.emulate_media(color_scheme="dark")
    page.screenshot(animations="disabled", path=str(SCRATCH / "review-long-dark.png"))
    page.context.close()


def test_review_on_a_phone_board_then_the_mark_and_steps_then_graph_then_moves(
    live: str, chromium: Any
) -> None:
    done, marked, n = _analysed_long_game(live)
    page = page_for(chromium, f"{live}/#game={done['id']}", done["owner_token"], width=390)
    expect(page.locator("#analysis-graph")).to_be_attached()
    page.click("#btn-replay")
    page.locator("#rp-next").focus()
    page.keyboard.press("n")
    expect(page.locator("#rp-ply")).to_have_text(f"move {marked[0]} of {n}")
    expect(page.locator("#analysis-best")).to_be_visible()
    # The counter of the move shown is in the board's view (its few cards,
    # not where the end's view was).
    out = page.evaluate(
        """() => {
          const b = document.querySelector('#board').getBoundingClientRect();
          const cards = [...document.querySelectorAll('#board g.card-on')];
          return [cards.length, cards.filter((g) => { const r = g.getBoundingClientRect();
            return r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1
              || r.bottom > b.bottom + 1; }).length];
        }"""
    )
    assert out[0] >= 2 and out[1] == 0, out
    # Positions in the page (the page scrolls on a phone): the order.
    at = page.evaluate(
        """() => Object.fromEntries(['#board', '#analysis-best', '#rp-next', '#rp-next-mark',
             '#analysis-graph', '#log'].map((s) => [s,
             document.querySelector(s).getBoundingClientRect().top + scrollY]))"""
    )
    order = ["#board", "#analysis-best", "#rp-next", "#analysis-graph", "#log"]
    assert [at[s] for s in order] == sorted(at[s] for s in order), at
    # the step controls come before the move list, not after it
    assert at["#rp-next-mark"] < at["#log"], at
    # nothing wider than the phone
    assert page.evaluate("() => document.scrollingElement.scrollWidth") <= 390
    # (the picture from the board's top: the board, the move and the controls)
    page.evaluate(
        "() => scrollTo(0, document.querySelector('#status').getBoundingClientRect().top + scrollY)"
    )
    donuts_drawn(page)
    page.screenshot(animations="disabled", path=str(SHOTS / "review-phone.png"))
    page.emulate_media(color_scheme="dark")
    page.screenshot(animations="disabled", path=str(SCRATCH / "review-phone-dark.png"))
    page.context.close()


def test_review_on_a_tablet_board_beside_the_mark_steps_graph_and_moves(
    live: str, chromium: Any
) -> None:
    # 820x800: a tablet held upright, between the phone's one column
    # (720 px and less) and the review that keeps to the screen (900 and
    # up): the table's two columns, the page scrolling.
    done, marked, n = _analysed_long_game(live)
    page = page_for(chromium, f"{live}/#game={done['id']}", done["owner_token"], width=820)
    expect(page.locator("#analysis-graph")).to_be_attached()
    page.click("#btn-replay")
    page.locator("#rp-next").focus()
    page.keyboard.press("n")
    expect(page.locator("#rp-ply")).to_have_text(f"move {marked[0]} of {n}")
    m = _measure(page)
    board = m["board"]
    assert board is not None and board["right"] <= 820
    # the side column beside the board, in the order of the phone's column
    for part in ("best", "next", "graph", "log"):
        assert m[part] is not None and m[part]["left"] >= board["right"] - 1, (part, m)
    tops = [m[p]["top"] for p in ("best", "next", "graph", "log")]
    assert tops == sorted(tops), m
    # the marked move's text and the step buttons on the first screen
    assert _inside(m["best"], 0, m["inner"]) and _inside(m["next"], 0, m["inner"]), m
    assert _inside(m["nextMark"], 0, m["inner"]), m
    # nothing wider than the screen
    assert page.evaluate("() => document.scrollingElement.scrollWidth") <= 820
    donuts_drawn(page)
    page.screenshot(animations="disabled", path=str(SCRATCH / "review-820.png"))
    page.emulate_media(color_scheme="dark")
    page.screenshot(animations="disabled", path=str(SCRATCH / "review-820-dark.png"))
    page.context.close()
