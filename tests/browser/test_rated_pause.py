"""A player whose rated play is paused after repeated no-shows
(server/ratings/no_shows.py) is told so in the lobby before trying: the
notice says until when and why, the Rated box and Quick match (always
rated) are off, and a casual table still opens.  The no-shows are written
as the server records them for aborted games (tests/server/test_no_shows.py
plays that part through)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from conftest import SHOTS, page_for
from donutbox.server.accounts import UserRow
from donutbox.server.ratings.service import CommunityGameRow, CommunitySeatRow


def _no_shows(db_url: str, name: str, minutes_ago: list[int]) -> None:
    engine = create_engine(db_url)
    try:
        with Session(engine) as db:
            uid = db.scalar(select(UserRow.id).where(UserRow.name == name))
            assert uid is not None
            for k, ago in enumerate(minutes_ago):
                when = datetime.now(UTC) - timedelta(minutes=ago)
                game = f"ns{secrets.token_hex(6)}{k}"
                db.add(
                    CommunityGameRow(
                        game_id=game,
                        rules_key="standard",
                        rules_label="Standard",
                        rated=True,
                        settled=True,
                        created=when - timedelta(minutes=2),
                        ended=when,
                    )
                )
                db.add(
                    CommunitySeatRow(
                        game_id=game, seat=1, user_id=uid, token=secrets.token_hex(8), no_show=True
                    )
                )
            db.commit()
    finally:
        engine.dispose()


def test_the_lobby_says_rated_play_is_paused_before_the_player_tries(
    shared_server: Any, chromium: Any
) -> None:
    name = f"pia{secrets.token_hex(3)}"
    page = page_for(chromium, shared_server.url)
    page.click("#btn-community")
    page.fill("#sign-in input[name=name]", name)
    page.fill("#sign-in input[name=password]", "a long enough password")
    page.click("#btn-sign-up")
    page.wait_for_selector("#new-table")
    # Not paused: no notice, Rated ticked, Quick match on.
    assert page.query_selector("#rated-pause") is None
    assert page.is_checked("#new-table input[name=rated]")
    assert page.is_enabled("#btn-quick-match")
    # Two no-shows, 3 and 60 minutes ago: the second pauses rated play for
    # 15 minutes from the last one, so for 12 more minutes.  (The server
    # holds its SQLite file exclusively: they are written while it is down.)
    shared_server.kill()
    _no_shows(shared_server.db_url, name, [60, 3])
    shared_server.start()
    page.reload()
    page.click("#btn-community")
    notice = page.wait_for_selector("#rated-pause")
    text = notice.text_content()
    assert text.startswith("Rated play is paused until ")
    assert "You did not arrive for 2 rated games you were paired for" in text
    assert "opens again in 12 minutes" in text and "Casual tables stay open." in text
    rated = "#new-table input[name=rated]"
    assert page.is_disabled(rated) and not page.is_checked(rated)
    assert page.is_disabled("#btn-quick-match")
    page.screenshot(path=str(SHOTS / "lobby-paused.png"), full_page=True)
    page.emulate_media(color_scheme="dark")
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SHOTS / "lobby-paused-phone-dark.png"))
    page.set_viewport_size({"width": 1280, "height": 800})
    # A casual table opens (the form sends rated: false).
    page.click("#btn-open-table")
    page.wait_for_selector(f"li.lobby-table[data-host='{name}']")
    assert "unrated" in page.text_content(f"li.lobby-table[data-host='{name}']")
