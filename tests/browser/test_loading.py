"""The page before and after its script: a placeholder (and, without
JavaScript, what to do) instead of a blank page; gone once the table is set up."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

sync_api = pytest.importorskip("playwright.sync_api")
if (shutil.which("chromium") or shutil.which("chromium-browser")) is None:
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)

WAIT = 30_000


def test_before_its_script_runs_the_page_says_it_is_loading(live: str, chromium: Any) -> None:
    # (Playwright turns script execution off but not the parser's scripting
    # flag, so <noscript> stays unrendered here: tests/server/test_page.py
    # reads it from the HTML.)
    context = chromium.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(live + "/")
        expect = sync_api.expect
        expect(page.locator("#loading")).to_have_text("Loading the table…")
        expect(page.locator("#loading")).to_be_visible()
        expect(page.locator("#setup")).to_be_hidden()
    finally:
        context.close()


def test_the_placeholder_goes_once_the_table_is_set_up(live: str, chromium: Any) -> None:
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.goto(live + "/")
        expect = sync_api.expect
        expect(page.locator("#setup")).to_be_visible(timeout=WAIT)
        expect(page.locator("#loading")).to_be_hidden()
    finally:
        context.close()
