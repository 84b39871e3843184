"""An axe-core scan (axe-playwright-python) of the page's screens in real
Chromium against a real `donutbox serve`: no serious or critical violation
on any of them."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import contested_box_record, page_for, post

sync_api = pytest.importorskip("playwright.sync_api")
axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright")
expect = sync_api.expect
ROOT = Path(__file__).resolve().parents[2]
AXE = axe_sync.Axe()


def _serious(page: Any) -> list[str]:
    results = AXE.run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(n["target"][0] for n in v["nodes"][:3])
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def test_every_screen_passes_an_axe_scan(live: str, chromium: Any) -> None:
    found: dict[str, list[str]] = {}
    page = page_for(chromium, live + "/")
    expect(page.locator("#setup")).to_be_visible()
    expect(page.locator("#new-game select[name=match]")).to_be_attached()
    found["new game"] = _serious(page)
    page.click("#btn-rules")
    expect(page.locator("#rules-card h3").first).to_be_visible()
    found["how to play"] = _serious(page)
    # The tutorial, and on its deal the Cinnamon Roll's lock to choose.
    page.get_by_role("button", name="Tutorial", exact=True).click()
    expect(page.locator("#tutorial")).to_contain_text("Welcome")
    found["tutorial"] = _serious(page)
    page.click("#tut-next")
    page.keyboard.press("1")
    page.click("#btn-rotate")
    page.locator("#board .ghost[data-place='BBSC@2,0']").dispatch_event("click")
    expect(page.locator("#tutorial")).to_contain_text("Runs, boxes", timeout=20_000)
    page.click("#tut-next")
    page.keyboard.press("1")
    page.locator("#board .ghost[data-place='RBCC@2,2']").dispatch_event("click")
    expect(page.locator("#extra .lock")).to_have_count(2)
    found["lock choice"] = _serious(page)
    # Playing (hotseat, a chosen deal), then Box it (the record of test_web's box test).
    game = post(live + "/api/games", {"opponent": "hotseat", "seed": 21})
    token = game["owner_token"]
    page.close()
    page = page_for(chromium, f"{live}/#game={game['id']}", token)
    expect(page.locator("#status")).to_contain_text("Your turn")
    found["playing"] = _serious(page)
    box = {
        "format": "donutbox/1",
        "players": ["Ann", "Bob"],
        "decks": [["CCCC", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB", "BBBB"], ["BBBB"] * 6],
        "moves": ["CCCC@2,0/0", "swap BBBB"],
    }
    boxed = post(live + "/api/games/import", box, token)
    page.goto(f"{live}/#game={boxed['id']}")
    expect(page.locator("#boxes button")).to_have_count(1)
    found["box it"] = _serious(page)
    lap = {
        "format": "donutbox/1",
        "players": ["Ann", "Bob"],
        "decks": [["CCCC", "CCCC", "BBBB", "BBBB", "BBBB", "CCCC"], ["CCCC"] * 5],
        "moves": ["BBBB@0,-2/0"],
    }
    final = post(live + "/api/games/import", lap, token)
    page.goto(f"{live}/#game={final['id']}")
    expect(page.locator("#banner")).to_be_visible()
    found["final lap"] = _serious(page)
    record = json.loads((ROOT / "tests" / "data" / "deadlock.json").read_text())
    done = post(live + "/api/games/import", record, token)
    page.goto(f"{live}/#game={done['id']}")
    expect(page.locator("#summary")).to_be_visible()
    found["end"] = _serious(page)
    page.click("#btn-replay")
    expect(page.locator("#replay")).to_be_visible()
    found["replay"] = _serious(page)
    page.context.close()
    online = post(
        live + "/api/online",
        {"seats": [{"kind": "human", "name": "Eve"}, {"kind": "random", "name": ""}]},
    )
    seat = page_for(chromium, live + online["seats"][0]["link"])
    expect(seat.locator("#role")).to_have_text(re.compile("^Seat 1"))
    found["online seat"] = _serious(seat)
    seat.context.close()
    watcher = page_for(chromium, live + online["spectator"]["link"])
    expect(watcher.locator("#role")).to_have_text("Spectating")
    found["spectator"] = _serious(watcher)
    watcher.context.close()
    bad = {k: v for k, v in found.items() if v}
    assert not bad, json.dumps(bad, indent=1)


@pytest.mark.parametrize(
    ("scheme", "width"), [("light", 1280), ("dark", 1280), ("light", 390), ("dark", 390)]
)
def test_every_screen_in_light_and_dark_on_desktop_and_phone(
    live: str, chromium: Any, scheme: str, width: int
) -> None:
    """The first screen, How to play, the tutorial, the table of a 48-move
    game, Saved games, the replay, the analysis (and a marked move in it),
    sign-in, the lobby and the community's pages, an online game's seat,
    spectator and end screens: no serious or critical
    violation in the system's light or dark setting, on a desktop or a
    phone."""
    from test_board_scale import fifty_move_game

    from donutbox.core import dump

    found: dict[str, list[str]] = {}
    page = page_for(chromium, "about:blank", width=width)
    page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
    page.goto(live + "/")
    expect(page.locator("#new-game select[name=match]")).to_be_attached()
    found["first screen"] = _serious(page)
    # Its disclosures open: the rules, the table, the invite form.
    for summary in page.locator("#setup details.choice > summary").all():
        summary.click()
    expect(page.locator("#new-online button[type=submit]")).to_be_visible()
    found["first screen, every option shown"] = _serious(page)
    menu = page.locator("#btn-menu")

    def nav(name: str) -> None:
        if menu.is_visible():
            menu.click()
        page.get_by_role("button", name=name, exact=True).click()

    nav("How to play")
    expect(page.locator("#rules-card h3").first).to_be_visible()
    found["how to play"] = _serious(page)
    nav("Tutorial")
    expect(page.locator("#tutorial")).to_contain_text("Welcome")
    found["tutorial"] = _serious(page)
    record = dump(fifty_move_game())
    token = page.evaluate("() => localStorage.getItem('donutbox.owner')")
    cut = {**record, "moves": record["moves"][:48]}
    playing = post(live + "/api/games/import", cut, token)
    page.goto(f"{live}/#game={playing['id']}")
    expect(page.locator("#status")).to_contain_text("Ann")
    found["table"] = _serious(page)
    nav("Saved games")
    expect(page.locator("#saved-list li").first).to_be_visible()
    found["saved games"] = _serious(page)
    done = post(live + "/api/games/import", record, token)
    page.goto(f"{live}/#game={done['id']}")
    expect(page.locator("#summary")).to_be_visible()
    found["end"] = _serious(page)
    page.click("#btn-replay")
    page.get_by_role("slider", name="Move").fill("30")
    expect(page.locator("#rp-ply")).to_have_text("move 30 of 50")
    found["replay"] = _serious(page)
    contested = post(live + "/api/games/import", contested_box_record(), token)
    page.goto(f"{live}/#game={contested['id']}")
    page.get_by_role("button", name="Analyse", exact=True).click()
    expect(page.locator("#analysis-progress")).to_have_text(
        "Analysis done: 14 of 14 moves", timeout=60_000
    )
    found["analysis"] = _serious(page)
    page.click("#btn-replay")
    page.keyboard.press("n")
    expect(page.locator("#analysis-best")).to_be_visible()
    found["analysis, a marked move"] = _serious(page)
    nav("Community")
    expect(page.locator("#sign-in")).to_be_visible()
    found["sign-in"] = _serious(page)
    name = f"axe{scheme[0]}{width}{token[:6]}".replace("-", "_")[:20]
    page.fill("#sign-in input[name=name]", name)
    page.fill("#sign-in input[name=password]", "a long enough password")
    page.click("#btn-sign-up")
    expect(page.locator("#community [data-tab=lobby]")).to_be_visible()
    expect(page.locator("#community")).not_to_contain_text("Loading the lobby")
    found["lobby"] = _serious(page)
    page.click("#community [data-tab=leaderboard]")
    found["leaderboard"] = _serious(page)
    page.click("#community [data-tab=profile]")
    found["my games"] = _serious(page)
    page.context.close()
    # An online game with a clock: a seat's screen, a spectator's, and the
    # end screen once the seat resigns (the forfeit said on it).
    online = post(
        live + "/api/online",
        {
            "seats": [{"kind": "human", "name": "Eve"}, {"kind": "random", "name": ""}],
            "clock": {"minutes": 5, "increment": 3},
        },
    )

    def themed(url: str) -> Any:
        p = page_for(chromium, "about:blank", width=width)
        p.emulate_media(color_scheme=scheme, reduced_motion="reduce")
        p.goto(url)
        return p

    seat = themed(live + online["seats"][0]["link"])
    expect(seat.locator("#role")).to_have_text(re.compile("^Seat 1"))
    found["online seat"] = _serious(seat)
    watcher = themed(live + online["spectator"]["link"])
    expect(watcher.locator("#role")).to_have_text("Spectating")
    found["spectator"] = _serious(watcher)
    watcher.context.close()
    mine = online["seats"][0]["token"]
    with urllib.request.urlopen(
        urllib.request.Request(
            live + f"/api/online/{online['id']}", headers={"Authorization": f"Bearer {mine}"}
        ),
        timeout=30,
    ) as r:
        version = json.loads(r.read())["version"]
    state = post(live + f"/api/online/{online['id']}/resign", {"version": version}, mine)
    assert state["finished"] and state["ended_by"] == "resign"
    expect(seat.locator("#summary")).to_be_visible()
    expect(seat.locator(".forfeit-note").first).to_contain_text("You resigned")
    found["online end"] = _serious(seat)
    seat.context.close()
    bad = {k: v for k, v in found.items() if v}
    assert not bad, json.dumps(bad, indent=1)
