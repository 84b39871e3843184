"""Property-based tests of the whole HTTP API from its own OpenAPI document
(schemathesis): every operation of ``create_app`` with generated
parameters and bodies, valid and not.

Checked for every request: no 5xx (the store is healthy here, so not even
its documented 503), the security headers on every answer, a one-line JSON
error for every refusal, and no stored game changed (nor created) by a
refused request.  Bounded: ``EXAMPLES`` cases an operation (env
``DONUTBOX_SCHEMATHESIS_EXAMPLES``), derandomized, no per-case deadline:
about 20 s on the project's machine, so it runs in CI.

On main it fails on the missing security headers.  Its generated inputs
found no 500 there: issue 12's 500s need bodies bigger or deeper than these
(test_limits.py has those cases by hand)."""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("schemathesis")
pytest.importorskip("fastapi")
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from donutbox.core import Game, Rules
from donutbox.core.record import dump
from donutbox.server.app import create_app
from donutbox.server.security import CSP
from donutbox.server.storage import make_engine

HEADERS = {
    "content-security-policy": CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
EXAMPLES = int(os.environ.get("DONUTBOX_SCHEMATHESIS_EXAMPLES", "12"))

_DIR = Path(tempfile.mkdtemp(prefix="donutbox-schemathesis-"))
_DB = _DIR / "games.db"
_URL = f"sqlite:///{_DB}"


def _seed() -> dict[str, object]:
    """Games for generated requests to hit (ids are otherwise random
    strings that match nothing): a hotseat game, a finished imported one,
    an online game.  No AI seat: nothing changes them but a request."""
    with TestClient(create_app(_URL, inline_ai=True)) as c:
        hotseat = c.post("/api/games", json={"opponent": "hotseat", "seed": 4}).json()
        game = Game.new(Rules("one-good-match", "squared-away", False), ["A", "B"], 9)
        rng = random.Random(2)
        while not game.finished:
            game.play(rng.choice(game.legal_moves()))
        finished = c.post("/api/games/import", json=dump(game)).json()
        online = c.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]}).json()
    tokens = [s["token"] for s in online["seats"]] + [online["spectator"]["token"]]
    return {
        "ids": [hotseat["id"], finished["id"], online["id"]],
        "owner": hotseat.get("owner_token"),
        "tokens": tokens,
    }


SEEDED = _seed()
APP = create_app(_URL, inline_ai=True)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


def _snapshot() -> tuple[int, str]:
    """How many games, and a digest of the seeded games' rows."""
    # Through the app's own engine: it holds the SQLite file's lock.
    with make_engine(_URL).connect() as conn:
        count = conn.exec_driver_sql("select count(*) from games").scalar_one()
        marks = ",".join("?" * len(SEEDED["ids"]))  # type: ignore[arg-type]
        rows = conn.exec_driver_sql(
            f"select id, version, finished, record, options from games where id in ({marks})"
            " order by id",
            tuple(SEEDED["ids"]),  # type: ignore[arg-type]
        ).fetchall()
    return count, hashlib.sha256(repr(rows).encode()).hexdigest()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_api_never_fails_and_refusals_change_nothing(case) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(repr(case.path_parameters) + repr(case.body)[:200])
    params = case.path_parameters or {}
    if "game_id" in params and rng.random() < 0.7:
        params["game_id"] = rng.choice(SEEDED["ids"])  # type: ignore[arg-type]
    headers = dict(case.headers or {})
    if rng.random() < 0.5:
        choices = [t for t in [SEEDED["owner"], *SEEDED["tokens"]] if t]  # type: ignore[list-item]
        headers["Authorization"] = f"Bearer {rng.choice(choices)}"
    case.headers = headers
    before = _snapshot()
    response = case.call()
    status = response.status_code
    where = f"{case.method} {case.formatted_path} -> {status}: {response.content[:300]!r}"
    assert status < 500, where
    for name, value in HEADERS.items():
        assert response.headers.get(name, [None])[0] == value, f"{name} missing: {where}"
    if status >= 400:
        detail = response.json().get("detail")
        assert isinstance(detail, str) and detail and "\n" not in detail, where
        assert "Traceback" not in detail, where
        if case.method.upper() != "GET":
            assert _snapshot() == before, f"refused, but the store changed: {where}"
