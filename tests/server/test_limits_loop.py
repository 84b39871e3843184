"""Replay work never runs on the event loop (issue 12, point 4): while one
client's slow import, replay or load of a long record is being worked out,
a simple GET on another connection is answered at once.

Each case is run twice: as the server does it (the work in
``limits.run_blocking``) and with ``run_blocking`` put back on the loop
(called inline), which must stall the GET: so the measurement is known to
see a blocked loop, and the first run shows the loop is not blocked.

The slow part is a real replay followed by a CPU spin that holds the
interpreter (not ``sleep``, which would let the loop run even inline)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from donutbox.core import Game, Rules
from donutbox.core.record import dump
from donutbox.server import hub as hub_module
from donutbox.server import limits
from donutbox.server.app import create_app
from donutbox.server.routes import local as routes_local

#: How long the slow work holds the CPU (seconds).
WORK = 2.0
#: A GET during it must be answered within this (generous: the machine may
#: be loaded; the work thread shares the interpreter lock, which Python
#: hands over every 5 ms).
PROMPT = 0.75


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _finished_record() -> dict[str, Any]:
    game = Game.new(Rules("one-good-match", "squared-away", False), ["A", "B", "C", "D"])
    rng = random.Random(3)
    while not game.finished:
        game.play(rng.choice(game.legal_moves()))
    return dump(game)


async def _inline(fn: Callable[..., Any], *args: Any, what: str = "", **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


def _worst_get_while(client: TestClient, slow: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``slow`` (one request) in a thread; meanwhile GET /api/meta over
    and over on the main thread.  The longest GET, timed on this side."""
    out: dict[str, Any] = {}
    started = threading.Event()

    def run() -> None:
        started.set()
        out["r"] = slow()

    t = threading.Thread(target=run)
    t.start()
    started.wait()
    time.sleep(0.2)  # let the slow request reach its work
    worst = 0.0
    while t.is_alive():
        t0 = time.monotonic()
        assert client.get("/api/meta").status_code == 200
        worst = max(worst, time.monotonic() - t0)
        time.sleep(0.05)
    t.join()
    return worst, out["r"]


@pytest.fixture
def client(tmp_path: Path):  # type: ignore[no-untyped-def]
    with TestClient(create_app(f"sqlite:///{tmp_path / 'g.db'}", inline_ai=True)) as c:
        yield c


@pytest.mark.parametrize("on_loop", [False, True], ids=["off-loop", "control-inline"])
def test_a_slow_import_leaves_other_requests_answered(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, on_loop: bool
) -> None:
    real = routes_local.replay

    def slow_replay(record: Any, ply: int | None = None) -> Game:
        game = real(record, ply)
        _spin(WORK)
        return game

    monkeypatch.setattr(routes_local, "replay", slow_replay)
    if on_loop:
        monkeypatch.setattr(limits, "run_blocking", _inline)
    record = _finished_record()
    worst, r = _worst_get_while(client, lambda: client.post("/api/games/import", json=record))
    assert r.status_code == 200, r.text
    if on_loop:
        assert worst > WORK * 0.6  # the probe sees a blocked loop
    else:
        assert worst < PROMPT


@pytest.mark.parametrize("on_loop", [False, True], ids=["off-loop", "control-inline"])
def test_a_slow_replay_leaves_other_requests_answered(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, on_loop: bool
) -> None:
    r = client.post("/api/games/import", json=_finished_record())
    assert r.status_code == 200, r.text
    game_id, token = r.json()["id"], r.json()["owner_token"]
    real = routes_local.cut

    def slow_cut(game: Game, ply: int) -> Game:
        out = real(game, ply)
        _spin(WORK)
        return out

    monkeypatch.setattr(routes_local, "cut", slow_cut)
    if on_loop:
        monkeypatch.setattr(limits, "run_blocking", _inline)
    auth = {"Authorization": f"Bearer {token}"}
    worst, r = _worst_get_while(
        client, lambda: client.get(f"/api/games/{game_id}/replay/5", headers=auth)
    )
    assert r.status_code == 200, r.text
    assert r.json()["ply"] == 5
    if on_loop:
        assert worst > WORK * 0.6
    else:
        assert worst < PROMPT


@pytest.mark.parametrize("on_loop", [False, True], ids=["off-loop", "control-inline"])
def test_loading_a_long_game_leaves_other_requests_answered(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, on_loop: bool
) -> None:
    """A stored game with a long record, not in memory (after a restart or
    once idle), is played back into its session off the loop."""
    record = _finished_record()
    r = client.post("/api/games/import", json=record)
    game_id, token = r.json()["id"], r.json()["owner_token"]
    hub = client.app.state.hub  # type: ignore[attr-defined]
    hub.evict(game_id)
    assert game_id not in hub.sessions
    monkeypatch.setattr(hub_module, "LOAD_INLINE_MOVES", len(record["moves"]) - 1)

    class SlowSession(hub_module.GameSession):  # type: ignore[name-defined,misc]
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            _spin(WORK)

    monkeypatch.setattr(hub_module, "GameSession", SlowSession)
    if on_loop:
        monkeypatch.setattr(limits, "run_blocking", _inline)
    auth = {"Authorization": f"Bearer {token}"}
    worst, r = _worst_get_while(client, lambda: client.get(f"/api/games/{game_id}", headers=auth))
    assert r.status_code == 200, r.text
    assert r.json()["finished"] is True
    if on_loop:
        assert worst > WORK * 0.6
    else:
        assert worst < PROMPT
