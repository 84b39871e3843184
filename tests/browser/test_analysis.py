"""The Analyse button on a finished local game (static/analysis.js)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import page_for, post

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
