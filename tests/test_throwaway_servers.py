"""The test run starts a throwaway PostgreSQL and Redis (tests/throwaway_servers.py)
when their variables are unset and the servers are installed, so that the
README's test command runs those tests on a fresh machine."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from donutbox import __file__ as donutbox_init
from throwaway_servers import PG_ENV, REDIS_ENV, ThrowawayServers, pg_ctl, wanted

TESTS = Path(__file__).resolve().parent
SRC = Path(donutbox_init).resolve().parents[1]

installed = pytest.mark.skipif(
    pg_ctl() is None or shutil.which("redis-server") is None,
    reason="PostgreSQL or redis-server is not installed (apt-get install postgresql redis-server)",
)


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def test_only_the_files_that_read_a_variable_want_its_server() -> None:
    assert wanted([TESTS / "core"]) == set()
    assert wanted([TESTS / "server" / "test_postgres.py"]) == {PG_ENV}
    assert wanted([TESTS / "server" / "test_broker.py"]) == {REDIS_ENV}
    assert wanted([TESTS]) == {PG_ENV, REDIS_ENV}


@installed
def test_the_servers_answer_and_are_gone_after_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg
    import redis
    from sqlalchemy.engine import make_url

    # Empty counts as unset; monkeypatch puts back whatever was there.
    monkeypatch.setenv(PG_ENV, "")
    monkeypatch.setenv(REDIS_ENV, "")
    servers = ThrowawayServers()
    try:
        servers.start({PG_ENV, REDIS_ENV})
        assert servers.notes == []
        pg = make_url(os.environ[PG_ENV])
        with psycopg.connect(
            host=pg.host, port=pg.port, user=pg.username, dbname="postgres", connect_timeout=5
        ) as conn:
            assert conn.execute("SELECT 6 * 7").fetchone() == (42,)
        client = redis.Redis.from_url(os.environ[REDIS_ENV])
        try:
            assert client.set("k", "v") and client.get("k") == b"v"
        finally:
            client.close()
        rd = make_url(os.environ[REDIS_ENV])
    finally:
        servers.stop()
    assert pg.port is not None and rd.port is not None
    assert not _answers("127.0.0.1", pg.port) and not _answers("127.0.0.1", rd.port)


@pytest.mark.slow
@installed
def test_without_the_variables_the_postgres_and_redis_tests_run() -> None:
    env = {k: v for k, v in os.environ.items() if k not in (PG_ENV, REDIS_ENV)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env.pop("PYTEST_XDIST_WORKER", None)
    chosen = [
        "tests/server/test_postgres.py::test_a_game_round_trips_through_postgresql",
        "tests/server/test_broker.py::test_two_processes_limiters_draw_on_one_bucket",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-rs", *chosen],
        cwd=TESTS.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout and "skipped" not in run.stdout, run.stdout
