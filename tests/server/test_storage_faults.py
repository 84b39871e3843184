"""Storage faults (issue 12, points 10, 11 and 12): a locked, damaged or
vanished database gives a one-line error and a log line, is retried where a
retry can help, never leaves a game wedged, never stops start-up, and never
kills the process.

The faults are real: another SQLite connection holding the lock, bytes
overwritten in the file, the file truncated under the server.  Each test
says what main did."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from donutbox.core import Game, Rules
from donutbox.core.record import dump
from donutbox.server import ai_runner, storage
from donutbox.server.app import create_app
from donutbox.server.storage import CorruptGame, StorageError, Store, make_engine


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "games.db"


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


def _record() -> dict[str, Any]:
    return dump(Game.new(Rules("one-good-match", "squared-away", False), ["A", "B"], 1))


class Locker:
    """Another process's hold on the database: an exclusive transaction on
    a second connection, as ``sqlite3 games.db 'BEGIN EXCLUSIVE'`` would.

    The server keeps the file locked while its connection is open, so the
    locker first has the server's engine let go (as when that connection
    is dropped after an error) and takes the lock before it reconnects."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn: sqlite3.Connection | None = None

    def lock(self) -> None:
        make_engine(_url(self.path)).dispose()
        self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.conn.execute("BEGIN EXCLUSIVE")

    def unlock(self) -> None:
        # Closed, not only rolled back: an open connection to a WAL file
        # keeps a shared hold that the server's exclusive one must wait for.
        if self.conn is not None:
            self.conn.execute("ROLLBACK")
            self.conn.close()
            self.conn = None

    def close(self) -> None:
        self.unlock()


def _one_line(text: object) -> str:
    assert isinstance(text, str) and text and "\n" not in text and "Traceback" not in text
    return text


# -- point 10: a failed write is retried, then reported; nothing is wedged --------------------


def test_save_is_retried_while_the_database_is_locked(path: Path) -> None:
    """Locked for the first try only: the second try (after the pause)
    succeeds and the version moves on by one.  (Main: one try, then the
    driver's OperationalError.)"""
    store = Store(make_engine(_url(path), busy_timeout_ms=50))
    store.pause = 0.3
    game = store.create("t", "hotseat", ["human", "human"], {}, _record())
    locker = Locker(path)
    locker.lock()
    threading.Timer(0.15, locker.unlock).start()  # released during the first pause
    assert store.save_with_retry(game.id, 0, _record(), False) == 1
    assert store.get(game.id).version == 1  # type: ignore[union-attr]
    locker.close()


def test_save_that_keeps_failing_is_one_storage_error(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Locked throughout: after SAVE_ATTEMPTS tries, StorageError with one
    line saying what failed, a log line, and the stored game unchanged."""
    store = Store(make_engine(_url(path), busy_timeout_ms=50))
    store.pause = 0.01
    game = store.create("t", "hotseat", ["human", "human"], {}, _record())
    locker = Locker(path)
    locker.lock()
    try:
        with (
            caplog.at_level(logging.WARNING, "donutbox.storage"),
            pytest.raises(StorageError) as info,
        ):
            store.save_with_retry(game.id, 0, {"moves": ["x"]}, True)
    finally:
        locker.unlock()
        locker.close()
    reason = _one_line(info.value.reason)
    attempts = storage.SAVE_ATTEMPTS
    assert reason == f"storage: could not save the move ({attempts} tries) (database is locked)"
    assert [r.levelname for r in caplog.records].count("WARNING") == attempts - 1
    assert caplog.records[-1].getMessage() == reason
    stored = store.get(game.id)
    assert stored is not None and stored.version == 0 and stored.record == _record()


def test_stale_version_is_not_retried(path: Path) -> None:
    store = Store(make_engine(_url(path)))
    game = store.create("t", "hotseat", ["human", "human"], {}, _record())
    store.save_with_retry(game.id, 0, _record(), False)
    with pytest.raises(storage.StaleVersion):
        store.save_with_retry(game.id, 0, _record(), False)


def _wait_for(ws: Any, predicate: Any, limit: int = 50) -> dict[str, Any]:
    for _ in range(limit):
        msg = ws.receive_json()
        if predicate(msg):
            return msg
    raise AssertionError("message not received")


def test_an_ai_seat_whose_save_fails_is_reported_and_moves_later(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Main: with the file locked while an online AI seat saved its move,
    the task died ("Task exception was never retrieved") and the game stayed
    "thinking" until a restart.  Now every reader gets a one-line error, and
    once the lock is gone the AI seat moves by itself."""
    monkeypatch.setattr(storage, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(storage, "SAVE_PAUSE", 0.01)
    monkeypatch.setattr(ai_runner, "AI_RETRY", 0.3)
    with TestClient(create_app(_url(path), inline_ai=True)) as c:
        made = c.post(
            "/api/online",
            json={"seats": [{"name": "Ann"}, {"kind": "mcts"}], "seconds": 0.4},
        ).json()
        token = made["seats"][0]["token"]
        locker = Locker(path)
        with c.websocket_connect(f"/api/online/{made['id']}/ws") as ws:
            ws.send_json({"type": "hello", "token": token})
            state = _wait_for(ws, lambda m: m["type"] == "state")["state"]
            ws.send_json({"type": "move", "move": state["legal"][0], "version": 0, "ref": 1})
            _wait_for(ws, lambda m: m["type"] == "ack")
            locker.lock()  # the AI is thinking (0.4 s): its save will find the lock
            try:
                error = _wait_for(ws, lambda m: m["type"] == "error")
                assert _one_line(error["reason"]).startswith("storage: could not save the move")
            finally:
                locker.unlock()
                locker.close()
            after = _wait_for(ws, lambda m: m["type"] == "state" and m["state"]["version"] >= 2)
            assert after["state"]["version"] == 2


def test_a_timed_out_players_stand_in_whose_save_fails_is_reported_and_moves_later(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for a clock that runs out: the server's AI moves for the
    player out of time.  Before, its save failing on a locked file killed
    the clock's task ("Task exception was never retrieved") and the game
    waited for a move nobody would make.  Now every reader gets the
    one-line error, and once the lock is gone the stand-in moves."""
    monkeypatch.setattr(storage, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(storage, "SAVE_PAUSE", 0.01)
    monkeypatch.setattr(ai_runner, "AI_RETRY", 0.3)
    with TestClient(create_app(_url(path), inline_ai=True)) as c:
        made = c.post(
            "/api/online",
            json={"seats": [{"name": "Ann"}, {"name": "Bob"}], "clock": {"minutes": 0.02}},
        ).json()
        locker = Locker(path)
        url = f"/api/online/{made['id']}/ws"
        with c.websocket_connect(url) as a, c.websocket_connect(url) as b:
            a.send_json({"type": "hello", "token": made["seats"][0]["token"]})
            _wait_for(a, lambda m: m["type"] == "state")
            b.send_json({"type": "hello", "token": made["seats"][1]["token"]})
            state = _wait_for(b, lambda m: m["type"] == "state")["state"]
            assert state["version"] == 0 and state["clock"]["running"] == 0
            locker.lock()  # Ann's 1.2 s run out while the file is locked
            try:
                error = _wait_for(b, lambda m: m["type"] == "error")
                assert _one_line(error["reason"]).startswith("storage: could not save the move")
            finally:
                locker.unlock()
                locker.close()
            after = _wait_for(b, lambda m: m["type"] == "state" and m["state"]["version"] >= 1)
            assert after["state"]["version"] == 1
            assert after["state"]["clock"]["flagged"][0] is True
            assert after["state"]["to_move"] == 1


# -- point 11: one bad row does not stop start-up --------------------------------------------


def _online_row(c: TestClient) -> str:
    return _online_game(c)[0]


def _online_game(c: TestClient) -> tuple[str, str]:
    """A new online game's id and its first seat's token."""
    made = c.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]})
    assert made.status_code == 200
    return str(made.json()["id"]), str(made.json()["seats"][0]["token"])


def test_a_bad_row_is_quarantined_and_the_server_runs(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Main: an unfinished online game whose row did not parse (or whose
    record the engine refused) made start-up fail ("Application startup
    failed", exit 3); once games load on demand, opening it was a 500.  Now:
    the server starts, each bad game is set aside with one log line when it
    is first opened and answers 503 in one line, the good game plays."""
    with TestClient(create_app(_url(path), inline_ai=True)) as c:
        made = [_online_game(c) for _ in range(3)]
    (good, good_token), (bad_json, token_1), (bad_record, token_2) = made
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("update games set record = '{\"moves\": [' where id = ?", (bad_json,))
        (text,) = conn.execute("select record from games where id = ?", (bad_record,)).fetchone()
        record = json.loads(text)
        record["moves"] = ["this is not a move"]
        conn.execute("update games set record = ? where id = ?", (json.dumps(record), bad_record))
    with (
        caplog.at_level(logging.ERROR, "donutbox.storage"),
        TestClient(create_app(_url(path), inline_ai=True)) as c,
    ):
        for gid, token in ((bad_json, token_1), (bad_record, token_2)):
            r = c.get(f"/api/online/{gid}", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 503
            assert _one_line(r.json()["detail"]).startswith(f"game {gid}: its stored record")
        set_aside = [r.getMessage() for r in caplog.records if "set aside" in r.getMessage()]
        assert len(set_aside) == 2
        assert any(bad_json in m for m in set_aside) and any(bad_record in m for m in set_aside)
        assert all("\n" not in m for m in set_aside)
        r = c.get(f"/api/online/{good}", headers={"Authorization": f"Bearer {good_token}"})
        assert r.status_code == 200 and r.json()["version"] == 0
    # Remembered: the next start does not try them again.
    store = Store(make_engine(_url(path)))
    assert set(store.quarantined) == {bad_json, bad_record}
    assert good in store.unfinished_ids("online")
    assert bad_json not in store.unfinished_ids("online")
    store.close()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_bad_row_does_not_break_the_list(path: Path) -> None:
    """Main: one unreadable row made ``GET /api/games`` a 500."""
    with TestClient(create_app(_url(path), inline_ai=True)) as c:
        first = c.post("/api/games", json={"opponent": "random"}).json()
        auth = _bearer(first["owner_token"])
        second = c.post("/api/games", json={"opponent": "random"}, headers=auth).json()
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("update games set seats = 'not json' where id = ?", (second["id"],))
    with TestClient(create_app(_url(path), inline_ai=True)) as c:
        r = c.get("/api/games", headers=auth)
        assert r.status_code == 200
        assert [g["id"] for g in r.json()] == [first["id"]]


# -- point 12: locked, damaged, truncated ---------------------------------------------------------


def test_a_move_on_a_locked_database_gets_a_clear_error(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Main: an HTTP move on a locked database was a bare 500, a WebSocket
    move got nothing (the socket closed after 5 s).  Now both get the same
    one line, and the game is unchanged once the lock is gone."""
    monkeypatch.setattr(storage, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(storage, "SAVE_PAUSE", 0.01)
    with TestClient(create_app(_url(path), inline_ai=True)) as c:
        made = c.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]}).json()
        gid, token = made["id"], made["seats"][0]["token"]
        auth = {"Authorization": f"Bearer {token}"}
        state = c.get(f"/api/online/{gid}", headers=auth).json()
        move = state["legal"][0]
        locker = Locker(path)
        locker.lock()
        try:
            r = c.post(f"/api/online/{gid}/moves", json={"move": move, "version": 0}, headers=auth)
            assert r.status_code == 503
            reason = _one_line(r.json()["detail"])
            assert reason.startswith("storage: could not save the move")
            with c.websocket_connect(f"/api/online/{gid}/ws") as ws:
                ws.send_json({"type": "hello", "token": token})
                _wait_for(ws, lambda m: m["type"] == "state")
                ws.send_json({"type": "move", "move": move, "version": 0, "ref": 7})
                error = _wait_for(ws, lambda m: m["type"] == "error")
                assert error["ref"] == 7 and error["reason"] == reason
                ws.send_json({"type": "ping", "ref": 8})
                assert _wait_for(ws, lambda m: m["type"] == "pong")["ref"] == 8
        finally:
            locker.unlock()
            locker.close()
        assert c.get(f"/api/online/{gid}", headers=auth).json()["version"] == 0
        r = c.post(f"/api/online/{gid}/moves", json={"move": move, "version": 0}, headers=auth)
        assert r.status_code == 200 and r.json()["version"] == 1


def test_a_corrupt_page_gives_a_log_line_and_a_clear_error(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Main: a damaged page in the middle of the file was a bare 500.  Now:
    503 with one line, one log line, and the process answers other requests."""
    with TestClient(create_app(_url(path), inline_ai=True)) as c:
        first = c.post("/api/games", json={"opponent": "hotseat"}).json()
        auth = _bearer(first["owner_token"])
    # More games of the same owner, straight into the store (the API limits
    # how fast one address makes games): a file of many pages.
    store = Store(make_engine(_url(path)))
    model = store.get(first["id"])
    assert model is not None
    ids = [first["id"]] + [
        store.create(model.title, model.mode, model.seats, model.options, model.record).id
        for _ in range(39)
    ]
    store.close()
    size = path.stat().st_size
    page = 4096
    assert size >= 8 * page
    with path.open("r+b") as f:  # garbage over every page but the first (the header)
        for offset in range(page, size, page):
            f.seek(offset)
            f.write(os.urandom(page))
    with caplog.at_level(logging.ERROR, "donutbox.storage"):
        app = create_app(_url(path), inline_ai=True)
        with TestClient(app) as c:
            statuses = []
            for gid in ids[:5]:
                r = c.get(f"/api/games/{gid}", headers=auth)
                statuses.append(r.status_code)
                if r.status_code != 200:
                    assert r.status_code in (404, 503)
                    _one_line(r.json()["detail"])
            assert 503 in statuses
            assert c.get("/api/meta").status_code == 200
    lines = [r.getMessage() for r in caplog.records]
    assert lines and all(m.startswith("storage: ") and "\n" not in m for m in lines)


def test_a_truncated_database_is_an_error_not_a_signal(path: Path) -> None:
    """Main ran SQLite in WAL's shared mode, whose ``-shm`` index is
    memory-mapped: truncating the database's files under a running server
    killed it with SIGBUS (exit -7, no log line).  Now nothing is mapped:
    the next read and write work or are StorageErrors, and the process
    carries on to exit 0."""
    script = textwrap.dedent(
        f"""
        import os, sys
        from donutbox.server.storage import Store, StorageError, make_engine
        from donutbox.core import Game, Rules, dump
        path = {str(path)!r}
        store = Store(make_engine("sqlite:///" + path))
        record = dump(Game.new(Rules("one-good-match", "squared-away", False), ["A", "B"], 1))
        ids = [store.create("t", "hotseat", ["human", "human"], {{}}, record).id for _ in range(30)]
        store.save_with_retry(ids[0], 0, record, False)
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(path + suffix):
                os.truncate(path + suffix, 0)
        outcomes = []
        calls = (lambda: store.get(ids[1]), lambda: store.save_with_retry(ids[1], 0, record, False))
        for call in calls:
            try:
                call()
                outcomes.append("ok")
            except StorageError as err:
                outcomes.append("StorageError: " + err.reason)
            except Exception as err:
                outcomes.append("other: " + repr(err))
        print("\\n".join(outcomes))
        print("still alive")
        """
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(storage.__file__).parents[2])
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    lines = done.stdout.splitlines()
    assert lines[-1] == "still alive"
    # Each call either works (the pages are still in this process's cache)
    # or is a StorageError: never another exception, never a signal.
    assert all(line == "ok" or line.startswith("StorageError: storage: ") for line in lines[:-1])


def test_get_of_a_quarantined_game_is_corrupt_game(path: Path) -> None:
    store = Store(make_engine(_url(path)))
    game = store.create("t", "hotseat", ["human", "human"], {}, _record())
    store.quarantine(game.id, "by hand")
    with pytest.raises(CorruptGame, match=r"^game .*: its stored record is damaged \(by hand\)"):
        store.get(game.id)


def test_a_socket_on_a_damaged_game_is_closed_with_the_reason(path: Path) -> None:
    """Main: a WebSocket opened on a game whose row could not be read raised
    in the handler (a bare handshake failure, a traceback in the log).  Now
    a hello with one of the game's tokens gets the one-line reason (an
    ``error``, then close 1011); any other token gets what an unknown id
    gets (close 4404: a stranger does not learn the game exists)."""
    from starlette.websockets import WebSocketDisconnect

    with TestClient(create_app(_url(path), inline_ai=True)) as c:
        gid, token = _online_game(c)
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("update games set record = '{' where id = ?", (gid,))
    with TestClient(create_app(_url(path), inline_ai=True)) as c:
        for hello, code in ((token, 1011), ("t" * 43, 4404)):
            with (
                pytest.raises(WebSocketDisconnect) as info,
                c.websocket_connect(f"/api/online/{gid}/ws") as ws,
            ):
                ws.send_json({"type": "hello", "token": hello})
                error = ws.receive_json()
                ws.receive_json()
            assert info.value.code == code
            if code == 1011:
                assert _one_line(error["reason"]).startswith(f"game {gid}: its stored record")
