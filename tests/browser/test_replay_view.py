"""The replay of a finished game: each move's own scores, open boxes and
their badges (a module of its own, so its own server: the per-address rate
limit test_table.py's many pages come near)."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import contested_box_record, page_for, post

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect


def test_the_replay_shows_each_moves_own_if_ended_now_and_open_boxes(
    live: str, chromium: Any
) -> None:
    # The contested box (conftest.contested_box_record), by hand from
    # RULES.md sections 5, 6 and 8: after move 2 the start card's B run has
    # grown to 5 (value 5, one donut player 0's: 0 leads it) and the C run
    # is 6 with an R (value 12, 3 each: both lead), so if the game ended
    # there player 0 would have 5 + 12 and player 1 12; after move 4 (player
    # 1 boxed the C run: 12 points) 5 and 12.  The end's open boxes are not
    # these: at the end only the B run of 5 is open.
    done = post(live + "/api/games/import", contested_box_record())
    page = page_for(chromium, f"{live}/#game={done['id']}", done.get("owner_token"))
    expect(page.locator("#status")).to_have_text("Game over.")
    page.click("#btn-replay")
    slider = page.get_by_role("slider", name="Move")
    slider.fill("2")
    expect(page.locator("#rp-ply")).to_have_text("move 2 of 14")
    expect(page.locator("#scores td.ifnow")).to_have_text(["→ 17", "→ 12"])
    boxes = page.locator("#open-boxes li")
    expect(boxes).to_have_count(2)
    expect(boxes.nth(0)).to_contain_text("6 Chocolate Cruller, 12 pts, ")
    expect(boxes.nth(1)).to_contain_text("5 Blueberry Glaze, 5 pts, ")
    # and on the counter, each open box's value at its first donut
    expect(page.locator("#board g.badge text")).to_have_text(["5", "12", "="])
    slider.fill("4")
    expect(page.locator("#rp-ply")).to_have_text("move 4 of 14")
    expect(page.locator("#scores td.ifnow")).to_have_text(["→ 5", "→ 12"])
    expect(boxes).to_have_count(1)
    expect(page.locator("#board g.badge text")).to_have_text(["5"])
    page.context.close()
