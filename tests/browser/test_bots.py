"""A person challenges a bot from its profile page and plays it to the end
in real Chromium (issue 37), against a real ``donutbox bot`` process (the
heuristic agent) connected to the real server with its token; the game is
rated in the bots' pool, never the person's own.  Screenshots of the bot's
card, desktop and phone, light and dark."""

from __future__ import annotations

import json
import os
import random
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from test_online import _play_one, _state, _wait_connected

import donutbox
from conftest import SHOTS, page_for, sign_up

#: The source tree under test (the one this interpreter imports).
SRC = Path(donutbox.__file__).resolve().parents[1]


class _Owner:
    """The bot's owner: signs up over HTTP, makes the bot and a token."""

    def __init__(self, live: str, name: str) -> None:
        self.live = live
        self.cookies: dict[str, str] = {}
        self.csrf = self._call("/api/account")["csrf"]
        self.csrf = self._call("/api/account/signup", {"name": name, "password": "x" * 12})["csrf"]

    def _call(self, path: str, body: object = None) -> dict[str, Any]:
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        req = urllib.request.Request(
            self.live + path,
            data=None if body is None else json.dumps(body).encode(),
            method="GET" if body is None else "POST",
            headers={
                "Content-Type": "application/json",
                "X-CSRF-Token": getattr(self, "csrf", ""),
                "Cookie": cookie,
            },
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            for header in r.headers.get_all("Set-Cookie") or []:
                k, _, v = header.split(";")[0].partition("=")
                self.cookies[k] = v
            return json.loads(r.read())  # type: ignore[no-any-return]

    def bot_token(self, name: str) -> str:
        self._call("/api/account/bots", {"name": name})
        return str(self._call(f"/api/account/bots/{name}/tokens", {})["token"])


def _get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


def test_a_person_challenges_a_bot_from_its_profile_and_plays_it_to_the_end(
    live: str, chromium: Any
) -> None:
    tag = secrets.token_hex(3)
    bot, person = f"bot{tag}", f"eve{tag}"
    token = _Owner(live, f"own{tag}").bot_token(bot)
    env = dict(os.environ, DONUTBOX_BOT_TOKEN=token, NO_COLOR="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "donutbox.cli", "bot", "--server", live, "--games", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while not _get(f"{live}/api/bots/{bot}")["online"]:  # its event stream is open
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.2)
        page = page_for(chromium, live)
        sign_up(page, person)
        page.fill("#play-bot input[name=bot]", bot)
        page.click("#btn-open-bot")
        card = page.wait_for_selector("#bot-card")
        assert f"Run by own{tag}; connected now" in card.inner_text()
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
            page.screenshot(path=str(SHOTS / f"bot-card-desktop-{scheme}.png"))
        phone = page_for(chromium, live, width=390)
        sign_up(phone, f"ph{tag}")
        phone.fill("#play-bot input[name=bot]", bot)
        phone.click("#btn-open-bot")
        phone.wait_for_selector("#bot-card")
        for scheme in ("light", "dark"):
            phone.emulate_media(color_scheme=scheme, reduced_motion="reduce")
            phone.screenshot(path=str(SHOTS / f"bot-card-phone-{scheme}.png"))
        phone.context.close()

        page.select_option("#bot-card select[name=clock]", "10+5")
        page.click("#btn-challenge-bot")
        page.wait_for_function("() => location.hash.startsWith('#/online/')")
        _wait_connected(page)
        state = _state(page)
        assert state["rated"] and state["clock"]["increment_ms"] == 5000
        assert f"BOT {bot}" in state["players"] and person in state["players"]
        rng = random.Random(7)
        moves = 0
        while True:
            page.wait_for_function(
                "() => { const s = window.donutbox.state; return s.finished ||"
                " (s.to_move === s.player && s.legal.length > 0); }"
            )
            if _state(page)["finished"]:
                break
            _play_one(page, rng)
            moves += 1
        page.screenshot(path=str(SHOTS / "bot-game-end-desktop-dark.png"))
        final = _state(page)
        assert moves >= 10 and not final["forfeits"], final["forfeits"]
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out
        assert f"accepted {person}'s challenge" in out
        # Rated in the bots' pool: the person's rating there moved, and
        # they have none in the people's pool.
        deadline = time.monotonic() + 30
        while True:  # settled by the lobby's ticker (every 2 s)
            profile = _get(f"{live}/api/players/{person}")
            if profile["history"][0]["rating"] or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert list(profile["ratings"]) == ["bot:ogm-sa"]
        assert profile["ratings"]["bot:ogm-sa"]["games"] == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
