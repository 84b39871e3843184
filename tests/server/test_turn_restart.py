"""A turn-based deadline survives a server restart: a real `donutbox serve`
on PostgreSQL is killed with SIGKILL while a turn runs, stays down while
the deadline passes, and is started again; nobody opens the game, and yet
the restarted server acts on the stored deadline at once (the deadline
sweep, server/deadlines.py), instead of starting the turn again as a
real-time clock does.

A "day" is 10 s (``DONUTBOX_DAY_SECONDS``) and the sweep runs twice a second
(``DONUTBOX_DEADLINE_SWEEP_SECONDS``); the test reads the games table
directly.  Skipped without DONUTBOX_TEST_PG_URL.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

PG = os.environ.get("DONUTBOX_TEST_PG_URL")
if not PG:
    pytest.skip("needs PostgreSQL: set DONUTBOX_TEST_PG_URL", allow_module_level=True)
pytest.importorskip("psycopg")

import donutbox  # noqa: E402

SRC = Path(donutbox.__file__).resolve().parents[1]
#: Long enough that a restarted turn (DAY after the restart) cannot be
#: taken for the stored deadline acted on (well within DAY - 4 s of it, the
#: stand-in's worker process starting included, on a loaded machine).
DAY = 10.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    def __init__(self, log: Path, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
        env.update(DONUTBOX_DAY_SECONDS=str(DAY), DONUTBOX_DEADLINE_SWEEP_SECONDS="0.5")
        assert PG
        command = [sys.executable, "-m", "donutbox.cli", "serve", "--port", str(port)]
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                [*command, "--db", PG],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, "the server exited: " + log.read_text()[-2000:]
            try:
                with urllib.request.urlopen(self.url + "/api/meta", timeout=2):
                    return
            except OSError:
                assert time.monotonic() < deadline, "not started: " + log.read_text()[-2000:]
                time.sleep(0.05)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        req = urllib.request.Request(
            self.url + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())


def _row(game: str) -> tuple[int, dict[str, Any], float | None]:
    """The game's stored version, its clock and its indexed deadline."""
    from sqlalchemy import create_engine, text

    assert PG
    engine = create_engine(PG)
    try:
        with engine.connect() as c:
            version, options, deadline = c.execute(
                text("SELECT version, options, deadline_at FROM games WHERE id = :g"), {"g": game}
            ).one()
    finally:
        engine.dispose()
    return version, json.loads(options)["online"]["clock"], deadline


def test_a_deadline_that_passes_while_the_server_is_down_is_acted_on_after_a_restart(
    tmp_path: Path,
) -> None:
    port = _free_port()
    server = Serve(tmp_path / "serve.log", port)
    try:
        made = server.post(
            "/api/online", {"seats": [{"name": "Ann"}, {"name": "Bob"}], "clock": {"days": 1}}
        )
        game = made["id"]
        version, clock, deadline = _row(game)
        assert version == 0 and deadline == clock["deadline_at"]
        assert deadline > time.time()
    finally:
        server.kill()
    # Down while the deadline passes: nothing acted on it.
    time.sleep(max(0.0, deadline - time.time()) + 0.5)
    assert _row(game)[0] == 0
    server = Serve(tmp_path / "serve.log", port)
    try:
        ready = time.monotonic()
        # Well within a day of the restart: a restarted turn would wait DAY.
        while (row := _row(game))[0] == 0:
            assert time.monotonic() - ready < DAY - 4, "the stored deadline was not acted on"
            time.sleep(0.1)
        version, clock, new_deadline = row
        assert version == 1
        mover = 0 if clock["flagged"][0] else 1
        assert clock["flagged"] == [mover == 0, mover == 1]  # the AI moved for the one to move
        assert new_deadline is not None and new_deadline >= time.time() + DAY - 3
    finally:
        server.kill()
