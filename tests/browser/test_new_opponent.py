"""A rated game aborted because the opponent never arrived offers *Find a
new opponent* on its end screen (docs/community.md, "No-shows"): quick
match again with the same rules, players and clock, and the lobby takes
the page to the next game once paired.  In real Chromium against a real
`donutbox serve`: Bob queues through the API with his session and never
opens the game; the game's start is moved 10 minutes back in the database
(the server holds its SQLite file exclusively: while it is down), so that
it is aborted as soon as the server loads it again."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import create_engine, update
from sqlalchemy.orm import Session

from conftest import SHOTS, page_for, sign_up
from donutbox.server.storage import GameRow

A_GAME_SHOWN = (
    "() => location.hash.startsWith('#/online/') && !document.querySelector('#play').hidden"
    " && window.donutbox.state !== null"
)


def _queue_without_a_page(page: Any, url: str) -> None:
    """Quick match for the page's account through the API, the page itself
    gone (so that its lobby socket never takes it to the game)."""
    csrf = page.evaluate("() => fetch('/api/account').then((r) => r.json()).then((a) => a.csrf)")
    page.goto("about:blank")
    r = page.context.request.post(
        f"{url}/api/lobby/queue", data={"players": 2}, headers={"X-CSRF-Token": csrf}
    )
    assert r.ok, r.text()


def _started_10_minutes_ago(db_url: str, game_id: str) -> None:
    engine = create_engine(db_url)
    try:
        with Session(engine) as db:
            when = datetime.now(UTC) - timedelta(minutes=10)
            db.execute(update(GameRow).where(GameRow.id == game_id).values(created=when))
            db.commit()
    finally:
        engine.dispose()


def test_an_aborted_game_finds_a_new_opponent_with_the_same_settings(
    shared_server: Any, chromium: Any
) -> None:
    tag = secrets.token_hex(3)
    ann = page_for(chromium, shared_server.url)
    bob = page_for(chromium, shared_server.url)
    cat = page_for(chromium, shared_server.url, width=390)
    sign_up(ann, f"nan{tag}")
    sign_up(bob, f"nbo{tag}")
    sign_up(cat, f"nca{tag}")
    _queue_without_a_page(bob, shared_server.url)
    ann.click("#btn-quick-match")
    ann.wait_for_function(A_GAME_SHOWN)  # paired with Bob: Ann arrives, Bob never
    first = ann.evaluate("() => window.donutbox.state.id")
    shared_server.kill()
    _started_10_minutes_ago(shared_server.db_url, first)
    shared_server.start()
    ann.reload()
    ann.wait_for_function(
        "() => document.querySelector('#summary-head').textContent.startsWith('Game aborted')"
    )
    ann.wait_for_selector("#btn-new-opponent")
    assert ann.query_selector("#online-end .rematch-offer") is None  # no rematch with Bob
    ann.wait_for_selector("#summary-body .rating-after")
    assert ann.text_content("#summary-body .rating-after") == (
        "Your rating: unchanged (an aborted game is not rated)."
    )
    # nothing to replay or analyse before the first move; the record exports
    assert ann.is_hidden("#btn-replay") and ann.is_hidden("#btn-analyse")
    assert ann.is_visible("#btn-export")
    assert "Every box that scored" not in ann.text_content("#summary-body")  # none did
    ann.screenshot(path=str(SHOTS / "aborted-new-opponent.png"))
    ann.click("#btn-new-opponent")  # (the end screen is drawn anew on each change)
    ann.wait_for_function(
        "() => document.querySelector('#notice').textContent.includes('Waiting for a quick match')"
    )
    # Cat asks for the same (2 players, the standard rules, the default
    # clock): the queue pairs her with Ann, and Ann's page goes to the game.
    cat.click("#btn-quick-match")
    cat.wait_for_function(A_GAME_SHOWN)
    ann.wait_for_function(
        "(first) => location.hash.startsWith('#/online/')"
        " && window.donutbox.state && window.donutbox.state.id !== first"
        " && !window.donutbox.state.finished",
        arg=first,
    )
    second = ann.evaluate("() => window.donutbox.state")
    assert second["id"] == cat.evaluate("() => window.donutbox.state.id")
    assert second["rated"] is True
    assert sorted(second["players"]) == sorted([f"nan{tag}", f"nca{tag}"])
    for page in (ann, bob, cat):
        page.context.close()
