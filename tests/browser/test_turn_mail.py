"""Turn-based play by email in real Chromium (docs/online.md, "Turn-based
games"; docs/community.md, "Email"), against a real `donutbox serve --smtp`
and a real local SMTP server (aiosmtpd) whose mail the test reads.

Two strangers sign up and confirm their addresses from the emails' links;
Ann opens a turn-based table (1 day a move) and invites Bob, who is told by
email and joins; each move (through the API with the seat links the pages
were given, as the other online browser tests may) emails the other player;
the link in an email opens the game in that player's page, on their seat;
Bob's one-click unsubscribe, from a browser that is not signed in, stops
his mail.  Then a rated turn-based game whose player to move misses the
deadline (a "day" of a few seconds, ``DONUTBOX_DAY_SECONDS``) ends on time
in the page.  Screenshots: the lobby with the games waiting for a move and
the email settings, desktop and phone, light and dark.
"""

from __future__ import annotations

import json
import re
import secrets
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from conftest import SHOTS, fresh_page, page_for, post, sign_up

pytest.importorskip("aiosmtpd")
from mail_helpers import Mailbox, link, smtp_server, unsubscribe_url

PASSWORD = "a long enough password"


def _get(url: str, token: str) -> dict[str, Any]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


def _open_email_settings(page: Any) -> None:
    """Open the email settings (they stay open across the lobby's redraws)."""
    page.wait_for_selector("#email-settings summary")
    if not page.locator("#email-settings").evaluate("(d) => d.open"):
        page.click("#email-settings summary")


def _confirm_email(page: Any, box: Mailbox, address: str) -> None:
    _open_email_settings(page)
    page.fill("#email-settings input[type=email]", address)
    page.click("#btn-email")
    (msg,) = box.wait_for(address, 1)
    page.goto(link(msg, r"http://\S+/api/email/confirm\?t=\S+"))
    assert "Address confirmed" in page.inner_text("h1")
    page.go_back()
    page.wait_for_selector("#btn-community")
    page.click("#btn-community")
    _open_email_settings(page)
    page.wait_for_selector("#btn-reminders")  # offered once confirmed
    assert "confirmed" in page.inner_text("#email-state")


def _move(live: str, game: str, token: str) -> int:
    """The seat's first legal move; the version it made."""
    mine = _get(f"{live}/api/online/{game}", token)
    state = post(
        f"{live}/api/online/{game}/moves",
        {"move": mine["legal"][0], "version": mine["version"]},
        token,
    )
    return int(state["version"])


def _server(
    serve: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, url: str, **env: str
) -> Any:
    monkeypatch.setenv("DONUTBOX_MAIL_POLL_SECONDS", "0.3")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return serve("--smtp", url)


def test_a_turn_based_invitation_game_by_email(
    serve: Callable[..., Any], chromium: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    tag = secrets.token_hex(3)
    names = [f"ann{tag}", f"bob{tag}"]
    addresses = [f"ann{tag}@example.org", f"bob{tag}@example.org"]
    with smtp_server() as (box, url):
        live = _server(serve, monkeypatch, url).url
        ann = page_for(chromium, live)
        bob = page_for(chromium, live, width=390)
        pages = [ann, bob]
        for page, name, address in zip(pages, names, addresses, strict=True):
            sign_up(page, name, PASSWORD)
            _confirm_email(page, box, address)
        # Ann opens a turn-based table and invites Bob: he is emailed.
        ann.select_option("#new-table select[name=clock]", "1d")
        ann.click("#btn-open-table")
        ann.wait_for_selector(f"li.lobby-table[data-host='{names[0]}'] .invite-who")
        assert "1 day a move" in ann.inner_text(f"li.lobby-table[data-host='{names[0]}']")
        ann.select_option(f"li.lobby-table[data-host='{names[0]}'] .invite-who", names[1])
        ann.click(f"li.lobby-table[data-host='{names[0]}'] button.invite")
        invitation = box.wait_for(addresses[1], 2)[-1]
        assert invitation["Subject"] == f"donutbox: {names[0]} invites you to a table"
        bob.click("#invites button.join-invite")
        # The table starts: the lobby takes both pages to the game, each on
        # its own seat's link (#/online/<game>/<token>).
        for page in pages:
            page.wait_for_function(
                "() => location.hash.startsWith('#/online/') && window.donutbox.state"
            )
        links = [str(p.evaluate("() => location.hash")) for p in pages]
        game = links[0].split("/")[2]
        tokens = [lk.split("/")[3] for lk in links]
        first = _get(f"{live}/api/online/{game}", tokens[0])["to_move"]
        # The first player to move is emailed; the game waits for them.
        turn = box.wait_for(addresses[first], 3 if first == 1 else 2)[-1]
        assert turn["Subject"] == f"donutbox: your move against {names[1 - first]}"
        pages[first].click("#btn-new")  # the first screen lists it
        pages[first].wait_for_selector("#waiting-home-list a.open-game")
        assert names[1 - first] in pages[first].inner_text("#waiting-home")
        for page in pages:  # the invitation's notice gone (4 s), for the pictures
            page.wait_for_selector("#error", state="hidden")
        pages[first].screenshot(path=str(SHOTS / "turn-first-screen.png"))
        for page in pages:
            page.click("#btn-community")
            _open_email_settings(page)
            page.wait_for_selector("#btn-reminders")
        pages[first].wait_for_selector("#waiting-lobby a.open-game")
        assert pages[1 - first].locator("#waiting-lobby").count() == 0  # not their move
        for scheme in ("light", "dark"):
            for page, who in ((ann, "desktop"), (bob, "phone")):
                page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
                page.screenshot(path=str(SHOTS / f"turn-lobby-{who}-{scheme}.png"), full_page=True)
        # Each move emails the other player; the email's link opens the
        # game in that player's page, on their own seat.
        mover = first
        for _ in range(2):
            before = len(box.to(addresses[1 - mover]))
            _move(live, game, tokens[mover])
            msg = box.wait_for(addresses[1 - mover], before + 1)[-1]
            target = link(msg, r"http://\S+/#/play/\S+")
            assert target.endswith(f"/#/play/{game}") and tokens[1 - mover] not in target
            page = pages[1 - mover]
            page.goto(target)
            page.wait_for_selector("#play:not([hidden])")
            page.wait_for_function(
                f"() => window.donutbox.state && window.donutbox.state.id === {json.dumps(game)}"
            )
            assert page.evaluate("() => window.donutbox.state.player") == 1 - mover
            assert page.evaluate("() => window.donutbox.state.clock.days") == 1
            mover = 1 - mover
        for page, who in ((ann, "desktop"), (bob, "phone")):
            page.screenshot(path=str(SHOTS / f"turn-game-{who}.png"))
        # Bob unsubscribes in one click, from a browser that is not signed in.
        bobs = box.to(addresses[1])
        stranger = fresh_page(chromium)
        stranger.goto(unsubscribe_url(bobs[-1]))
        assert stranger.inner_text("h1") == "Unsubscribed"
        # Moves go on; Bob gets no more mail, Ann still does.
        for _ in range(4):
            to_move = _get(f"{live}/api/online/{game}", tokens[0])["to_move"]
            before = len(box.to(addresses[0]))
            _move(live, game, tokens[to_move])
            if to_move == 1:
                box.wait_for(addresses[0], before + 1)
        time.sleep(1.5)  # several of the sender's polls
        assert len(box.to(addresses[1])) == len(bobs)


def test_a_missed_deadline_ends_a_rated_turn_based_game_in_the_page(
    serve: Callable[..., Any], chromium: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    tag = secrets.token_hex(3)
    names = [f"cy{tag}", f"di{tag}"]
    with smtp_server() as (_, url):
        live = _server(
            serve, monkeypatch, url, DONUTBOX_DAY_SECONDS="6", DONUTBOX_DEADLINE_SWEEP_SECONDS="1"
        ).url
        cy = page_for(chromium, live)
        di = page_for(chromium, live)
        sign_up(cy, names[0], PASSWORD)
        sign_up(di, names[1], PASSWORD)
        cy.select_option("#new-table select[name=clock]", "1d")
        cy.click("#btn-open-table")
        di.click(f"li.lobby-table[data-host='{names[0]}'] button.join")
        # The lobby takes Cy's page to the game once the table starts.
        cy.wait_for_function(
            "() => location.hash.startsWith('#/online/')"
            " && window.donutbox.state && window.donutbox.state.clock"
        )
        state = cy.evaluate("() => window.donutbox.state")
        assert state["rated"] and state["clock"]["days"] == 1
        idle = state["to_move"]
        # Nobody moves: at the deadline the player to move loses on time.
        cy.wait_for_function(
            "() => window.donutbox.state.finished && window.donutbox.state.ended_by === 'time'",
            timeout=30_000,
        )
        assert cy.evaluate("() => window.donutbox.state.winners") == [1 - idle]
        text = cy.inner_text("#scores")
        assert re.search(r"⚑", text), text
