"""The lobby moves with you (issue 33): real accounts in real Chromium.
A table that fills takes every page of both players to the game without a
click (a second tab of the same account too), with a notice that is no
error; quick match takes the waiting player along; after the game the
page that played it replays it from My games, the players' profiles show
the rating graph, results and head-to-head, and a rematch accepted by both
takes both pages to the new game, the seats turned.  A wrong game link
says so in one line.  Moves are sent through the API with the seat tokens
the pages' addresses hold (as the other online browser tests do)."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from conftest import SHOTS, donuts_drawn, page_for, play_to_the_end, post, sign_up

axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright")
AXE = axe_sync.Axe()

GAME_SHOWN = (
    "(id) => !document.querySelector('#play').hidden && window.donutbox.state"
    " && window.donutbox.state.id === id && location.hash.startsWith('#/online/' + id + '/')"
)
A_GAME_SHOWN = (
    "() => location.hash.startsWith('#/online/') && !document.querySelector('#play').hidden"
    " && window.donutbox.state !== null"
)


def _game_of(page: Any) -> tuple[str, str]:
    """The game id and seat token of the online game the page shows (its
    address)."""
    _, _, game, token = page.evaluate("() => location.hash").split("/")
    return game, token


def _no_error_said(page: Any) -> None:
    """Nothing went wrong: the red error area is hidden or empty."""
    assert page.evaluate(
        "() => document.querySelector('#error').hidden"
        " || document.querySelector('#error').textContent === ''"
    ), page.text_content("#error")


def _notice_gone(page: Any) -> None:
    """The notice of a game found hides by itself (screenshots without it,
    and no second one for the same game)."""
    page.wait_for_selector("#notice", state="hidden")


def _serious(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as shown."""
    return [
        f"{v['id']}: " + "; ".join(n["target"][0] for n in v["nodes"][:3])
        for v in AXE.run(page).response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def _place(final: dict[str, Any], seat: int) -> int:
    keys = list(zip(final["scores"], final["delivered"], strict=True))
    return 1 + sum(1 for k in keys if k > keys[seat])


def test_a_table_that_fills_takes_every_page_of_both_players_to_the_game(
    live: str, chromium: Any
) -> None:
    tag = secrets.token_hex(3)
    ann = page_for(chromium, live)
    bob = page_for(chromium, live, width=390)
    sign_up(ann, f"ann{tag}")
    sign_up(bob, f"bob{tag}")
    # A second tab of Ann's (the same browser: her session), on another screen.
    ann2 = ann.context.new_page()
    ann2.emulate_media(reduced_motion="reduce")
    ann2.goto(live)
    ann2.wait_for_function("() => document.querySelector('#btn-community') !== null")
    ann.click("#btn-open-table")
    bob.wait_for_selector(f"li.lobby-table[data-host='ann{tag}'] button.join")
    bob.click(f"li.lobby-table[data-host='ann{tag}'] button.join")
    # No click more: every page shows the game, each as its own seat.
    for page in (ann, ann2, bob):
        page.wait_for_function(A_GAME_SHOWN)
    game_id = _game_of(ann)[0]
    assert _game_of(bob)[0] == game_id == _game_of(ann2)[0]
    assert ann.evaluate("() => window.donutbox.state.player") == 0
    assert bob.evaluate("() => window.donutbox.state.player") == 1
    for page in (ann, bob):
        page.wait_for_function(
            "() => document.querySelector('#notice').textContent.includes('has started')"
        )
        assert page.is_visible("#notice") and page.is_hidden("#community")
        _no_error_said(page)
    donuts_drawn(ann)
    donuts_drawn(bob)
    ann.screenshot(path=str(SHOTS / "lobby-to-game-desktop.png"))
    bob.screenshot(path=str(SHOTS / "lobby-to-game-phone.png"))


def test_quick_match_takes_the_waiting_player_and_the_other_to_the_game(
    live: str, chromium: Any
) -> None:
    tag = secrets.token_hex(3)
    ann = page_for(chromium, live)
    bob = page_for(chromium, live, width=390)
    sign_up(ann, f"qa{tag}")
    sign_up(bob, f"qb{tag}")
    ann.click("#btn-quick-match")
    ann.wait_for_selector("#queued")  # Ann waits
    bob.click("#btn-quick-match")
    for page in (ann, bob):
        page.wait_for_function(A_GAME_SHOWN)
        page.wait_for_function(
            "() => document.querySelector('#notice').textContent.includes('has started')"
        )
        _no_error_said(page)
    assert _game_of(ann)[0] == _game_of(bob)[0]
    seats = sorted(p.evaluate("() => window.donutbox.state.player") for p in (ann, bob))
    assert seats == [0, 1]


def test_after_a_game_replay_profiles_and_a_rematch_accepted_by_both(
    live: str, chromium: Any
) -> None:
    tag = secrets.token_hex(3)
    names = [f"ra{tag}", f"rb{tag}"]
    ann = page_for(chromium, live)
    bob = page_for(chromium, live, width=390)
    sign_up(ann, names[0])
    sign_up(bob, names[1])
    ann.click("#btn-open-table")
    bob.click(f"li.lobby-table[data-host='{names[0]}'] button.join")
    for page in (ann, bob):
        page.wait_for_function(A_GAME_SHOWN)
    game_id, ann_token = _game_of(ann)
    bob_token = _game_of(bob)[1]
    # The game runs: no Analyse anywhere, and the server refuses it.
    assert ann.is_hidden("#btn-analyse")
    final = play_to_the_end(live, game_id, [ann_token, bob_token])
    for page in (ann, bob):
        page.wait_for_function("() => !document.querySelector('#summary').hidden")
        # The end of an online game: Analyse for the players, Replay, the
        # rematch; no turn notifications; no "0 spectators watching".
        page.wait_for_selector("#online-end .rematch-offer")
        assert page.is_visible("#btn-analyse") and page.is_visible("#btn-replay")
        assert page.is_hidden("#btn-notify") and page.is_hidden("#watchers")
    # Analyse, asked for by a player once the game is over, runs.
    bob.click("#btn-analyse")
    bob.wait_for_function(
        "() => /^Analys/.test((document.querySelector('#analysis-progress') || {}).textContent)"
    )
    # Replay from My games, in the page that played the game (a link to
    # the address the page is at already).
    ann.click("#btn-community")
    ann.click("[data-tab=profile]")
    row = f"#history tr[data-game='{game_id}']"
    ann.wait_for_function(
        f'() => (document.querySelector("{row} .rating-change") || {{}}).textContent'
        ' && document.querySelector("' + row + " .rating-change\").textContent.includes('→')",
    )
    ann.click(f"{row} a.replay-link")
    ann.wait_for_function(GAME_SHOWN, arg=game_id)
    assert ann.is_hidden("#community") and ann.is_visible("#summary")
    ann.click("#btn-replay")
    ann.wait_for_selector("#replay:not([hidden])")
    ann.click("#rp-close")
    # Ann's profile: her rating on the 1500 scale, marked provisional, its
    # graph (and the same as a table), her results; worked out from the
    # final scores.
    ann.click("#btn-community")
    ann.click("[data-tab=profile]")
    ann.wait_for_selector(".rating-graph svg")
    place = _place(final, 0)
    other = _place(final, 1)
    result = "win" if place < other else "loss" if place > other else "draw"
    counts = {k: int(k == result) for k in ("win", "draw", "loss")}
    words = (
        f"1 game: {counts['win']} win{'s' if counts['win'] != 1 else ''}, "
        f"{counts['draw']} draw{'s' if counts['draw'] != 1 else ''}, "
        f"{counts['loss']} loss{'es' if counts['loss'] != 1 else ''}"
    )
    assert ann.inner_text("#results") == words
    label = ann.get_attribute(".rating-graph svg", "aria-label")
    assert "rating 1500 before the first rated game" in label and "after 1 game" in label
    cells = ann.locator(".rating-table tr").nth(1).locator("td").all_text_contents()
    after = ann.inner_text(f"{row} .rating-change").split("→")[1].split()[0]
    assert cells[2:] == [names[1], "1500", after]
    assert "?" in ann.inner_text("#ratings li")
    _notice_gone(ann)
    ann.click(".rating-graph summary")  # the table shown too, for the scan
    assert _serious(ann) == []
    ann.screenshot(path=str(SHOTS / "profile-graph-desktop.png"), full_page=True)
    # Bob's profile, opened from Ann's games: head to head against Ann.
    ann.click(f"{row} button.linkish")
    ann.wait_for_function(
        "(n) => (document.querySelector('#h2h-result') || {}).textContent"
        " && document.querySelector('#h2h-result').textContent.startsWith(n + ' against')",
        arg=names[1],
    )
    flipped = {"win": "loss", "loss": "win", "draw": "draw"}[result]
    assert f": {flipped}" in ann.inner_text("#h2h-result")
    # Lobby, then My games: Ann's own games again, not Bob's profile.
    ann.click("[data-tab=lobby]")
    ann.click("[data-tab=profile]")
    ann.wait_for_function(
        "(n) => (document.querySelector('#community-body h3') || {}).textContent"
        " && document.querySelector('#community-body h3').textContent.startsWith(n + ' ')",
        arg=names[0],
    )
    bob.emulate_media(color_scheme="dark")
    bob.click("#btn-community")
    bob.click("[data-tab=profile]")
    bob.wait_for_selector(".rating-graph svg")
    _notice_gone(bob)
    assert _serious(bob) == []
    bob.screenshot(path=str(SHOTS / "profile-graph-phone-dark.png"), full_page=True)
    # The rematch: Ann offers it from the game's end screen; Bob's page
    # (in the lobby now) is told, and he accepts there; both pages go to
    # the new game, the seats turned (Bob starts).
    ann.click(f"{row} a.replay-link")
    ann.wait_for_selector("#online-end .rematch-offer")
    ann.click("#online-end .rematch-offer")
    ann.wait_for_selector("#online-end .rematch-waiting")
    assert ann.is_hidden("#notice")  # no second "has started" for the old game
    bob.click("[data-tab=lobby]")
    bob.wait_for_selector(f"#rematches li[data-game='{game_id}'] .rematch-accept")
    assert "offers a rematch" in bob.text_content("#notice")
    assert _serious(bob) == []
    bob.screenshot(path=str(SHOTS / "rematch-offer-phone-dark.png"))
    ann.emulate_media(color_scheme="dark")
    assert _serious(ann) == []
    ann.screenshot(path=str(SHOTS / "rematch-waiting-desktop-dark.png"))
    bob.click(f"#rematches li[data-game='{game_id}'] .rematch-accept")
    for page in (ann, bob):
        page.wait_for_function(
            "(old) => location.hash.startsWith('#/online/') && !location.hash.includes(old)"
            " && window.donutbox.state && window.donutbox.state.id !== old",
            arg=game_id,
        )
        _no_error_said(page)
    new_id = _game_of(ann)[0]
    assert _game_of(bob)[0] == new_id
    assert ann.evaluate("() => window.donutbox.state.players") == [names[1], names[0]]
    assert bob.evaluate("() => window.donutbox.state.player") == 0


def test_a_wrong_game_link_says_no_such_game(live: str, chromium: Any) -> None:
    page = page_for(chromium, live)
    page.goto(f"{live}/#/online/nosuchgame1/{'x' * 43}")
    page.wait_for_function(
        "() => document.querySelector('#status').textContent.startsWith('No such game')"
    )
    assert page.is_hidden("#btn-rotate") and page.is_hidden("#btn-undo")
    assert page.is_hidden("#conn")


def test_a_resignation_is_told_on_every_screen(live: str, chromium: Any) -> None:
    """The player who resigned, the opponent and a spectator each read what
    happened (not only a ranking); the spectator count shows only when
    someone watches."""
    game = post(
        f"{live}/api/online",
        {"seats": [{"kind": "human", "name": "Em"}, {"kind": "human", "name": "Flo"}]},
    )
    em = page_for(chromium, live + game["seats"][0]["link"])
    flo = page_for(chromium, live + game["seats"][1]["link"], width=390)
    for page in (em, flo):
        page.wait_for_function("() => window.donutbox.connected === true")
    assert em.is_hidden("#watchers")  # nobody watches yet
    watcher = page_for(chromium, live + game["spectator"]["link"])
    watcher.wait_for_function("() => window.donutbox.connected === true")
    em.wait_for_function(
        "() => document.querySelector('#watchers').textContent === '1 spectator watching'"
        " && !document.querySelector('#watchers').hidden"
    )
    flo.click("#takeback button:text-is('Resign')")
    flo.click("#btn-resign-yes")
    for page, line in ((flo, "You resigned."), (em, "Flo resigned."), (watcher, "Flo resigned.")):
        page.wait_for_function(
            "(line) => [...document.querySelectorAll('#takeback .forfeit-note')]"
            ".some((n) => n.textContent.trim() === line)",
            arg=line,
        )
        assert page.is_hidden("#btn-notify")
