"""A custom deck from the new-game form, in a real browser against a real
``donutbox serve``: the composition typed (or loaded from a file) deals its
cards; a bad one is refused with the loader's one-line reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import page_for

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect


def _state(page: Any) -> dict[str, Any]:
    return page.evaluate("window.donutbox.state")  # type: ignore[no-any-return]


def test_a_custom_deck_typed_in_the_form_deals_its_cards(live: str, chromium: Any) -> None:
    page = page_for(chromium, live + "/")
    expect(page.locator("#setup")).to_be_visible()
    page.locator("#new-game select[name=opponent]").select_option("hotseat")
    page.click("#new-game details.rules-choice > summary")  # Rules: Standard — change
    page.click("#new-game details.deck summary")
    # Every card of this deck is RCSH: the tray can only hold RCSH.
    page.fill(
        "#new-game textarea[name=deck]",
        json.dumps({"name": "all rolls", "deck": {"cards": {"RCSH": 30}}}),
    )
    page.click("#new-game button[type=submit]")
    page.wait_for_function("() => window.donutbox.state && window.donutbox.state.tray")
    assert _state(page)["tray"] == ["RCSH"] * 4
    expect(page.locator("#tray .card")).to_have_count(4)
    page.context.close()


def test_a_deck_file_fills_the_form(live: str, chromium: Any, tmp_path: Path) -> None:
    deck = tmp_path / "halves.toml"
    deck.write_text('name = "halves only"\n[deck.cards]\nCCSS = 30\n')
    page = page_for(chromium, live + "/")
    expect(page.locator("#setup")).to_be_visible()
    page.locator("#new-game select[name=opponent]").select_option("hotseat")
    page.click("#new-game details.rules-choice > summary")  # Rules: Standard — change
    page.click("#new-game details.deck summary")
    page.set_input_files("#new-game input[name=deck_file]", str(deck))
    expect(page.locator("#new-game textarea[name=deck]")).to_have_value(deck.read_text())
    page.click("#new-game button[type=submit]")
    page.wait_for_function("() => window.donutbox.state && window.donutbox.state.tray")
    assert _state(page)["tray"] == ["CCSS"] * 4
    page.context.close()


def test_a_bad_deck_is_refused_with_the_field_named(live: str, chromium: Any) -> None:
    page = page_for(chromium, live + "/")
    expect(page.locator("#setup")).to_be_visible()
    page.locator("#new-game select[name=opponent]").select_option("hotseat")
    page.click("#new-game details.rules-choice > summary")  # Rules: Standard — change
    page.click("#new-game details.deck summary")
    page.fill("#new-game textarea[name=deck]", '{"deck": {"rolls": 31}}')
    page.click("#new-game button[type=submit]")
    expect(page.locator("#error")).to_contain_text(
        "deck: composition.deck.rolls must be from 0 to 30, not 31"
    )
    assert page.evaluate("window.donutbox.state") in (None, {})
    expect(page.locator("#setup")).to_be_visible()
    page.context.close()
