"""The Analyse button on a finished local game (static/analysis.js)."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import SHOTS, contested_box_record, donuts_drawn, page_for, post

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

ROOT = Path(__file__).resolve().parents[2]


def test_analyse_a_finished_game_shows_progress_then_the_graph(live: str, chromium: Any) -> None:
    # deadlock.json: ten swaps, then the game is over (nobody can place).
    record = json.loads((ROOT / "tests" / "data" / "deadlock.json").read_text())
    done = post(live + "/api/games/import", record)
    page = page_for(chromium, f"{live}/#game={done['id']}", done["owner_token"])
    expect(page.get_by_role("region", name=re.compile("Game over"))).to_be_visible()
    button = page.get_by_role("button", name="Analyse", exact=True)
    expect(button).to_be_visible()
    button.click()
    expect(button).to_be_hidden()
    progress = page.locator("#analysis-progress")
    expect(progress).to_contain_text(re.compile(r"of 10"))
    expect(progress).to_have_text("Analysis done: 10 of 10 moves", timeout=60_000)
    graph = page.locator("#analysis-graph")
    expect(graph).to_be_visible()
    # one line per player, in the palette's colours
    lines = graph.locator("polyline.chance")
    expect(lines).to_have_count(2)
    strokes = [lines.nth(i).get_attribute("stroke") for i in range(2)]
    meta = json.loads(page.evaluate("() => fetch('/api/meta').then(r => r.text())"))
    assert strokes == [meta["palette"]["players"][i]["colour"] for i in range(2)]
    # Opened again (another load of the page): the analysis is still there.
    page.reload()
    expect(page.locator("#analysis-graph")).to_be_visible()
    expect(page.get_by_role("button", name="Analyse", exact=True)).to_be_hidden()


def test_a_marked_move_in_the_log_and_its_best_alternative_on_the_board(
    live: str, chromium: Any
) -> None:
    done = post(live + "/api/games/import", contested_box_record())
    page = page_for(chromium, f"{live}/#game={done['id']}", done["owner_token"])
    page.get_by_role("button", name="Analyse", exact=True).click()
    expect(page.locator("#analysis-progress")).to_have_text(
        "Analysis done: 14 of 14 moves", timeout=60_000
    )
    third = page.locator("#log li").nth(2)
    expect(third.locator(".flag")).to_have_text(re.compile("^(mistake|blunder)$"))
    # from the box on, every move is the only one (or the best): none marked
    expect(page.locator("#log li:nth-child(n+4) .flag")).to_have_count(0)
    third.locator("button.say").click()
    expect(page.locator("#rp-ply")).to_have_text("move 3 of 14")
    # The best alternative in words, from the position before the move:
    # boxing the 6 Chocolate Cruller (a Cinnamon Roll among them) for 12.
    expect(page.locator("#analysis-best")).to_contain_text(
        re.compile(
            r"Best: box the 6 Chocolate Cruller (at the [a-z ]+|in the middle)"
            r" \(3,0\) for 12 instead"
        )
    )
    # seen beside the replay's controls (the end's summary is hidden now)
    expect(page.locator("#analysis-best")).to_be_visible()
    best = page.locator("#board rect.best-move")
    expect(best).to_have_count(1)
    assert best.get_attribute("x") == "3.02" and best.get_attribute("y") == "0.02"
    # another move: no alternative shown
    page.locator("#rp-next").click()
    expect(page.locator("#rp-ply")).to_have_text("move 4 of 14")
    expect(page.locator("#board rect.best-move")).to_have_count(0)
    expect(page.locator("#analysis-best")).to_have_count(0)


def test_the_graph_opens_the_replay_at_a_move(live: str, chromium: Any) -> None:
    # The contested box again: move 3 (player 0's swap instead of the box)
    # is marked (the test above), so the graph has a dot for it, a button;
    # a click on the graph's right edge opens the last move.
    done = post(live + "/api/games/import", contested_box_record())
    page = page_for(chromium, f"{live}/#game={done['id']}", done["owner_token"])
    page.get_by_role("button", name="Analyse", exact=True).click()
    expect(page.locator("#analysis-progress")).to_have_text(
        "Analysis done: 14 of 14 moves", timeout=60_000
    )
    donuts_drawn(page)
    page.screenshot(animations="disabled", path=str(SHOTS / "analysis.png"))
    dot = page.locator('#analysis-graph .marked[data-ply="2"]')
    expect(dot).to_have_count(1)
    dot.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#rp-ply")).to_have_text("move 3 of 14")
    expect(page.locator("#analysis-best")).to_be_visible()
    donuts_drawn(page)
    page.screenshot(animations="disabled", path=str(SHOTS / "analysis-best.png"))
    page.click("#rp-close")
    expect(page.locator("#replay")).to_be_hidden()
    graph = page.locator("#analysis-graph")
    box = graph.bounding_box()
    assert box is not None
    graph.click(position={"x": box["width"] - 2, "y": box["height"] / 2})
    expect(page.locator("#rp-ply")).to_have_text("move 14 of 14")
    page.context.close()


def test_review_keeps_the_graph_and_moves_while_stepping_from_mark_to_mark(
    live: str, chromium: Any
) -> None:
    # The contested box (conftest): move 3, player 0's swap, is the one
    # marked move (the test above); the graph, the per-player figures and
    # the move list stay on screen while the replay steps, by keyboard too;
    # the address names the move and opens it again.
    done = post(live + "/api/games/import", contested_box_record())
    page = page_for(chromium, f"{live}/#game={done['id']}", done["owner_token"])
    page.get_by_role("button", name="Analyse", exact=True).click()
    expect(page.locator("#analysis-progress")).to_have_text(
        "Analysis done: 14 of 14 moves", timeout=60_000
    )
    legend = page.locator(".analysis-legend li")
    expect(legend).to_have_count(2)
    expect(legend.nth(0)).to_contain_text(re.compile(r"Player 1: \d+(\.\d)? points lost"))
    # The marked moves, as the server's analysis has them (1-based).
    req = urllib.request.Request(
        f"{live}/api/games/{done['id']}/analysis",
        headers={"Authorization": f"Bearer {done['owner_token']}"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        marked = [m["ply"] + 1 for m in json.loads(r.read())["moves"] if m["mark"]]
    assert 3 in marked
    page.click("#btn-replay")
    graph = page.locator("#analysis-graph")
    log = page.locator("#log")
    # N steps through the marked moves, from the start, and no further.
    page.locator("#rp-next").focus()
    for ply in marked:
        page.keyboard.press("n")
        expect(page.locator("#rp-ply")).to_have_text(f"move {ply} of 14")
        expect(page.locator("#analysis-best")).to_be_visible()
        expect(graph).to_be_in_viewport()
        expect(log).to_be_visible()
    page.keyboard.press("n")
    expect(page.locator("#rp-ply")).to_have_text(f"move {marked[-1]} of 14")
    # An arrow steps one move; P goes back to the marked one before.
    if marked[-1] < 14:
        page.keyboard.press("ArrowRight")
        expect(page.locator("#rp-ply")).to_have_text(f"move {marked[-1] + 1} of 14")
        expect(graph).to_be_in_viewport()
        expect(log).to_be_visible()
        page.keyboard.press("p")
        expect(page.locator("#rp-ply")).to_have_text(f"move {marked[-1]} of 14")
    page.get_by_role("slider", name="Move").fill("3")
    expect(page.locator("#rp-ply")).to_have_text("move 3 of 14")
    donuts_drawn(page)
    page.screenshot(animations="disabled", path=str(SHOTS / "review.png"))
    # A link to the move: the address names it, and opens it in a new page.
    link = page.get_by_role("link", name="Link to this move")
    href = link.get_attribute("href")
    assert href == f"#game={done['id']}&ply=3"
    other = page_for(chromium, f"{live}/{href}", done["owner_token"])
    expect(other.locator("#rp-ply")).to_have_text("move 3 of 14")
    expect(other.locator("#analysis-graph")).to_be_visible()
    other.context.close()
    # Play it out from the position before the mistake (after move 2): a
    # new practice game against the AI, Player 1 to move with the box to
    # take (the contested box, conftest).
    page.get_by_role("slider", name="Move").fill("2")
    expect(page.locator("#rp-ply")).to_have_text("move 2 of 14")
    page.get_by_role("button", name="Play it out from here").click()
    expect(page.locator("#status")).to_contain_text("Your turn, Player 1")
    expect(page.locator("#notes")).to_contain_text("Practice game")
    expect(page.locator("#boxes button")).to_have_count(1)
    expect(page.locator("#boxes button")).to_contain_text("Box it: 6 Chocolate Cruller, 12 pts")
    page.context.close()
