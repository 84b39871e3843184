"""Throwaway PostgreSQL and Redis servers for a test run.

The tests that need a database server or Redis read ``DONUTBOX_TEST_PG_URL``
and ``DONUTBOX_TEST_REDIS_URL`` (some at import time).  When a variable is
unset and the server is installed (PostgreSQL's ``pg_ctl`` under
``/usr/lib/postgresql/*/bin`` or on PATH; ``redis-server`` on PATH),
``tests/conftest.py`` starts one here before any test module is imported
(and, under pytest-xdist, before the workers start, so they inherit the
variable), on a free loopback port with its data in a temporary folder,
and stops it when the run ends.  The servers are started by the executors
of pytest-postgresql and pytest-redis (the ``[test]`` extra); a variable
already set (a server of your own) is used as it is.

PostgreSQL refuses to run as root: as root, ``pg_ctl`` is run as the
``postgres`` user (made by the Debian/Ubuntu package) through ``runuser``.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

PG_ENV = "DONUTBOX_TEST_PG_URL"
REDIS_ENV = "DONUTBOX_TEST_REDIS_URL"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pg_ctl() -> Path | None:
    """The newest installed ``pg_ctl`` (Debian/Ubuntu keep it off PATH)."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0,
    )
    if found:
        return found[-1]
    on_path = shutil.which("pg_ctl")
    return Path(on_path) if on_path else None


def wanted(paths: Iterable[Path]) -> set[str]:
    """Which of the two variables the test files under ``paths`` read
    (a run of tests/core starts no server: initdb alone takes seconds)."""
    found: set[str] = set()
    for path in paths:
        files = path.rglob("test_*.py") if path.is_dir() else [path]
        for file in files:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                text = file.read_text("utf-8")
                found.update(name for name in (PG_ENV, REDIS_ENV) if name in text)
    return found


class ThrowawayServers:
    """Starts the servers a run needs; ``stop()`` stops them all."""

    def __init__(self) -> None:
        self._stops: list[Callable[[], None]] = []
        #: Why a wanted server was not started (for the run's header).
        self.notes: list[str] = []

    def start(self, names: set[str]) -> None:
        if PG_ENV in names and not os.environ.get(PG_ENV):
            self._start(PG_ENV, self._postgres)
        if REDIS_ENV in names and not os.environ.get(REDIS_ENV):
            self._start(REDIS_ENV, self._redis)

    def _start(self, name: str, starter: Callable[[], str | None]) -> None:
        try:
            url = starter()
        except Exception as err:  # the tests then skip and say why
            self.notes.append(f"{name}: the throwaway server did not start: {err}")
            return
        if url:
            os.environ[name] = url

    def _folder(self, prefix: str) -> Path:
        folder = Path(tempfile.mkdtemp(prefix=prefix))
        self._stops.append(lambda: shutil.rmtree(folder, ignore_errors=True))
        return folder

    def _postgres(self) -> str | None:
        executable = pg_ctl()
        if executable is None:
            return None
        from pytest_postgresql.executors import PostgreSQLExecutor

        folder = self._folder("donutbox-pg.")
        if os.geteuid() == 0:
            executable = _as_postgres_user(executable, folder)
        port = _free_port()
        server = PostgreSQLExecutor(
            executable=str(executable),
            host="127.0.0.1",
            port=port,
            datadir=str(folder / "data"),
            unixsocketdir=str(folder),
            logfile=str(folder / "log"),
            startparams="-w",
            dbname="postgres",
            user="postgres",
            postgres_options="-c listen_addresses=127.0.0.1",
        )
        server.start()
        self._stops.insert(0, server.stop)
        return f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"

    def _redis(self) -> str | None:
        executable = shutil.which("redis-server")
        if executable is None:
            return None
        from pytest_redis.executor import RedisExecutor

        port = _free_port()
        server = RedisExecutor(
            executable=executable,
            databases=16,
            redis_timeout=30,
            loglevel="warning",
            host="127.0.0.1",
            port=port,
            datadir=self._folder("donutbox-redis."),
        )
        server.start()
        self._stops.insert(0, server.stop)
        return f"redis://127.0.0.1:{port}/0"

    def stop(self) -> None:
        stops, self._stops = self._stops, []
        for stop in stops:
            with contextlib.suppress(Exception):
                stop()


def _as_postgres_user(executable: Path, folder: Path) -> Path:
    """A ``pg_ctl`` that runs the real one as the ``postgres`` user, and
    ``folder`` handed to that user (data, socket and log live there)."""
    try:
        user = pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError(
            "as root, PostgreSQL runs as the user 'postgres', and there is none"
            " (the postgresql package makes it)"
        ) from None
    os.chown(folder, user.pw_uid, user.pw_gid)
    wrapper = folder / "pg_ctl"
    wrapper.write_text(f'#!/bin/sh\nexec runuser -u postgres -- "{executable}" "$@"\n')
    wrapper.chmod(stat.S_IRWXU)
    return wrapper
