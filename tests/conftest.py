"""Shared by the whole test suite.

- Markers by path (``slow``, ``browser``, ``postgres``; registered in
  pyproject.toml), so that ``-m "not slow"`` is a quick run and
  ``-m browser`` runs only the Chromium tests, without decorating every file.
- pytest-xdist groups: tests that share an expensive module-scoped fixture
  (a server, a browser, a batch of subprocesses) run on one worker, so the
  fixture is built once (``--dist loadgroup`` in pyproject.toml).
- Throwaway PostgreSQL and Redis servers (``throwaway_servers.py``) when
  ``DONUTBOX_TEST_PG_URL`` / ``DONUTBOX_TEST_REDIS_URL`` are unset, the
  servers are installed and the chosen tests read those variables.
- A PostgreSQL database of its own for every worker of every run, when
  ``DONUTBOX_TEST_PG_URL`` names a server: parallel workers (and other test
  runs on the same server) never see each other's tables.
- Hypothesis profiles: no deadlines (a busy machine or a parallel run must
  not turn a slow example into a failure); ``DONUTBOX_HYPOTHESIS_PROFILE``
  picks one.
- ``DONUTBOX_CHECK_WIRE=1``: outgoing WebSocket messages checked against
  their models (server/wire).
- Fixtures: ``cli`` (the real ``donutbox`` command in a subprocess) and
  ``live_server`` / ``serve`` (a real ``donutbox serve`` on a free loopback
  port with an SQLite file, which a test may kill and start again).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import pytest

# Every outgoing WebSocket message is checked against its documented model
# (server/wire), in this process and in every server a test starts: a field
# a model lacks fails the test that sent it.
os.environ["DONUTBOX_CHECK_WIRE"] = "1"

import donutbox
from throwaway_servers import ThrowawayServers, wanted

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
#: The source tree the tests import (children get it on PYTHONPATH too, so a
#: subprocess runs the same code as the test that started it).
SRC = Path(donutbox.__file__).resolve().parents[1]

# ------------------------------------------------------------------ markers

#: Paths (relative to tests/) whose tests are all ``browser``.
BROWSER = ("browser/",)
#: Paths or node ids (relative to tests/) of tests that need PostgreSQL.
POSTGRES = ("server/test_postgres.py", "server/test_multiprocess", "server/test_turn_restart.py")
#: Paths or node-id prefixes (relative to tests/) of tests that take seconds:
#: a real server or browser, many games, a batch of subprocesses.
SLOW = (
    "browser/",
    "server/test_live.py",
    "server/test_multiprocess",
    # turn-based deadlines and email on the real clock (a "day" of seconds)
    "server/test_turn_",
    "server/test_mail.py",
    "server/test_mail_outbox.py",
    "server/test_broker.py::test_serve_refuses_a_redis_it_cannot_reach_in_one_line",
    "server/test_broker.py::test_versions_stored_while_redis_was_away",
    "server/test_fuzz.py",
    "server/test_limits_connections.py",
    "server/test_schemathesis.py",
    "test_golden.py",
    "ai/test_fasteval.py",
    "core/test_reference_agreement.py",
    "core/test_threads.py",
    "core/test_perft.py::test_perft_matches_the_naive_engine",
    "envs/test_env_openspiel.py",
    "envs/test_env_pettingzoo.py",
    "envs/test_env_example.py",
    "lab/test_sim.py::test_balance",
    "lab/test_sim.py::test_sim_command",
    "lab/test_sim.py::test_results_do_not_depend_on_jobs",
    "ai/test_agents.py::test_agent_plays_a_whole_game_legally",
    "test_cli.py::test_bad_input_exits_2_with_one_line",
    "test_cli.py::test_bad_arguments_are_one_line_through_every_entry_point",
    "test_quality.py",
    # Measured at several seconds of CPU (docs/testing.md): handed out early
    # too, so that none of them starts last.
    "ai/test_agent_moves.py",
    "ai/test_hard.py::test_early_stop_when_the_choice_can_no_longer_change",
    "lab/test_cluster",
    "lab/test_sweep.py",
    "envs/test_env_train.py::test_training_smoke_run",
    "server/test_accounts.py::test_sign_ins_are_rate_limited_per_name_and_per_address",
    "server/test_analysis_api.py::test_one_analysis_per_game_and_a_cap_on_the_server",
    "test_conftest.py::test_live_server_is_this_process_and_comes_back_on_its_port",
    "test_cli.py::test_ctrl_c",
    "test_cli.py::test_serve_on_a_port_in_use",
)


def _matches(rel: str, prefixes: Iterable[str]) -> bool:
    return any(rel == p or rel.startswith(p) for p in prefixes)


def _shared_module_fixtures(item: pytest.Item) -> bool:
    """Does ``item`` use a module- or package-scoped fixture of the suite's
    own (in its module or a conftest)?"""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for name in info.names_closure:
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if fixturedef.scope not in ("module", "package"):
                continue
            if fixturedef.baseid:  # not one of pytest's own
                return True
    return False


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path)).resolve()
        try:
            rel_path = path.relative_to(TESTS).as_posix()
        except ValueError:
            continue
        rel = rel_path + item.nodeid[item.nodeid.find("::") :] if "::" in item.nodeid else rel_path
        if _matches(rel, BROWSER):
            item.add_marker(pytest.mark.browser)
        if _matches(rel, POSTGRES):
            item.add_marker(pytest.mark.postgres)
        if _matches(rel, SLOW):
            item.add_marker(pytest.mark.slow)
        if _shared_module_fixtures(item):
            item.add_marker(pytest.mark.xdist_group(rel_path))
    if any(item.get_closest_marker("browser") for item in items):
        _patient_browser_assertions()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Longest first, so that no worker starts a long test near the end
        # while the other has nothing left (with --no-loadscope-reorder,
        # xdist hands out work in this order).  Stable: a module's tests keep
        # their order.
        items.sort(key=_cost_rank)


#: How long a browser assertion waits for its condition (ms).  Playwright's
#: default, 5 s, is too short on a busy machine running tests in parallel;
#: the browser tests wait on conditions, never fixed sleeps, so a longer
#: limit costs nothing when all is well.
BROWSER_WAIT_MS = 30_000


def _patient_browser_assertions() -> None:
    try:
        from playwright.sync_api import expect
    except ImportError:
        return
    expect.set_options(timeout=BROWSER_WAIT_MS)


def _cost_rank(item: pytest.Item) -> int:
    if item.get_closest_marker("browser"):
        return 0
    if item.get_closest_marker("xdist_group"):
        return 1
    if item.get_closest_marker("slow"):
        return 2
    return 3


# -------------------------------------------------------------- hypothesis


def _hypothesis_profiles() -> None:
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # pragma: no cover - hypothesis is a test dependency
        return
    common: dict[str, Any] = {
        "deadline": None,
        "suppress_health_check": [HealthCheck.too_slow],
        "print_blob": True,
    }
    settings.register_profile("donutbox", **common)
    # On a CI server (CI set): the same examples every run, no example file.
    settings.register_profile("donutbox-ci", derandomize=True, database=None, **common)
    # A deep run: DONUTBOX_HYPOTHESIS_PROFILE=deep (the modules' own
    # max_examples win where they set one; DONUTBOX_TEST_SCALE scales those).
    settings.register_profile("deep", max_examples=1000, **common)
    default = "donutbox-ci" if os.environ.get("CI") else "donutbox"
    settings.load_profile(os.environ.get("DONUTBOX_HYPOTHESIS_PROFILE", default))


_hypothesis_profiles()

# -------------------------------------------------------------- PostgreSQL

_PG_ENV = "DONUTBOX_TEST_PG_URL"
_pg_database: tuple[str, str] | None = None  # (server URL, database) made by this process


def _pg_admin(url: str) -> Any:
    """An autocommit psycopg connection to ``url``'s server, or None."""
    try:
        import psycopg
        from sqlalchemy.engine import make_url
    except ImportError:
        return None
    u = make_url(url)
    try:
        return psycopg.connect(
            host=u.host,
            port=u.port,
            user=u.username,
            password=u.password,
            dbname=u.database or "postgres",
            autocommit=True,
            connect_timeout=5,
        )
    except Exception:
        return None


def _own_pg_database(config: pytest.Config) -> None:
    """Point DONUTBOX_TEST_PG_URL at a fresh database for this process."""
    global _pg_database
    url = os.environ.get(_PG_ENV)
    if not url or os.environ.get("DONUTBOX_TEST_PG_SHARED"):
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    if worker == "main" and config.getoption("numprocesses", None):
        return  # the xdist controller runs no tests
    conn = _pg_admin(url)
    if conn is None:
        return  # the tests themselves say why they cannot connect
    name = f"donutbox_test_{uuid.uuid4().hex[:12]}_{re.sub(r'[^a-z0-9]', '', worker)}"
    with conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    from sqlalchemy.engine import make_url

    _pg_database = (url, name)
    os.environ[_PG_ENV] = make_url(url).set(database=name).render_as_string(hide_password=False)


def _drop_pg_database() -> None:
    global _pg_database
    if _pg_database is None:
        return
    url, name = _pg_database
    _pg_database = None
    os.environ[_PG_ENV] = url
    conn = _pg_admin(url)
    if conn is None:
        return
    with conn, contextlib.suppress(Exception):
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


_servers = ThrowawayServers()


def _start_throwaway_servers(config: pytest.Config) -> None:
    """In the process that runs pytest (not an xdist worker: the workers,
    started later, inherit the variables), start the servers that the
    chosen test files need and no variable names."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    here = config.invocation_params.dir
    paths = [here / arg.split("::", 1)[0] for arg in config.args]
    _servers.start(wanted(p for p in paths if p.exists()))
    for note in _servers.notes:
        print(note, file=sys.stderr)


def pytest_configure(config: pytest.Config) -> None:
    _start_throwaway_servers(config)
    _own_pg_database(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    _drop_pg_database()
    _servers.stop()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # "No tests collected" is not a failure when tests were found and then
    # left out on purpose (-m/-k deselected them, or a module skipped itself
    # for want of PostgreSQL, Chromium, ...): say so rather than exit 5.
    # A run that found no test file at all still exits 5.
    if exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED:
        return
    option = session.config.option
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = getattr(reporter, "stats", {}) if reporter is not None else {}
    # (Under xdist the controller hears of no deselection: the workers
    # deselect; so a -m/-k/--deselect given counts as "left out on purpose".)
    chosen = getattr(option, "markexpr", "") or getattr(option, "keyword", "")
    if (
        stats.get("deselected")
        or stats.get("skipped")
        or chosen
        or getattr(option, "deselect", None)
    ):
        session.exitstatus = pytest.ExitCode.OK


# --------------------------------------------------------------------- CLI


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a child ``donutbox``: this source tree first on
    PYTHONPATH, no colour, no debug tracebacks."""
    env = dict(os.environ)
    env.pop("FORCE_COLOR", None)
    env.pop("DONUTBOX_DEBUG", None)
    env["NO_COLOR"] = "1"
    paths = [str(SRC), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.update(extra)
    return env


def donutbox_command() -> list[str]:
    """The ``donutbox`` console script beside this interpreter (quicker than
    ``python -m``), else ``python -m donutbox.cli``."""
    beside = Path(sys.executable).with_name("donutbox")
    if beside.exists():
        return [str(beside)]
    return [sys.executable, "-m", "donutbox.cli"]


class Job(NamedTuple):
    """One ``donutbox`` command line: its arguments, standard input and
    extra environment variables."""

    args: tuple[str, ...]
    stdin: bytes = b""
    env: tuple[tuple[str, str], ...] = ()


class Cli:
    """Runs the real ``donutbox`` command in a subprocess."""

    def __init__(self, timeout: float = 120) -> None:
        self.timeout = timeout

    def __call__(
        self, *args: str, stdin: bytes = b"", timeout: float | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return self.job(Job(tuple(args), stdin, tuple(env.items())), timeout)

    def job(self, job: Job, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [*donutbox_command(), *job.args],
            input=job.stdin,
            capture_output=True,
            timeout=timeout or self.timeout,
            env=child_env(**dict(job.env)),
            check=False,
        )
        return subprocess.CompletedProcess(
            proc.args,
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
        )

    def many(
        self, jobs: Iterable[Job | Sequence[str]], threads: int = 4, in_process: bool = False
    ) -> list[subprocess.CompletedProcess[str]]:
        """Run ``jobs`` (each a Job or just its arguments) a few at a time
        (each is a fresh interpreter); results in the order of ``jobs``.
        ``in_process``: each through ``in_process`` instead, one after
        another."""
        todo = [j if isinstance(j, Job) else Job(tuple(j)) for j in jobs]
        if in_process:
            return [self.in_process(job) for job in todo]
        with ThreadPoolExecutor(max_workers=threads) as pool:
            return list(pool.map(self.job, todo))

    def in_process(self, job: Job) -> subprocess.CompletedProcess[str]:
        """``job`` through ``donutbox.cli.main`` in this process, as the
        console script runs it (``sys.exit(main())``), for commands that
        touch nothing but their files and standard streams (a fresh
        interpreter costs 0.1 to 0.3 s of CPU, ``main()`` a few ms):
        standard input from ``job.stdin``, standard output and error
        captured as the bytes a pipe would get (UTF-8, the child's error
        handlers), the child's environment (``child_env``); the streams and
        the environment are put back afterwards."""
        import io

        from donutbox.cli import main

        saved_streams = sys.stdin, sys.stdout, sys.stderr
        saved_env = dict(os.environ)
        streams = (
            io.TextIOWrapper(io.BytesIO(job.stdin), encoding="utf-8", errors="surrogateescape"),
            io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape"),
            io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace"),
        )
        sys.stdin, sys.stdout, sys.stderr = streams
        os.environ.clear()
        os.environ.update(child_env(**dict(job.env)))
        try:
            try:
                status = main(list(job.args))
            except SystemExit as stop:  # what sys.exit would make of it
                if stop.code is None or isinstance(stop.code, int):
                    status = stop.code or 0
                else:
                    print(stop.code, file=sys.stderr)
                    status = 1
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            os.environ.clear()
            os.environ.update(saved_env)
        written = []
        for stream in streams[1:]:
            stream.flush()
            written.append(stream.buffer.getvalue().decode("utf-8", "replace"))  # type: ignore[attr-defined]
        return subprocess.CompletedProcess(["donutbox", *job.args], status, *written)


@pytest.fixture(scope="session")
def cli() -> Cli:
    """``cli("replay", path, "--json")`` runs ``donutbox replay PATH --json``
    and returns the CompletedProcess (text); ``cli.many([Job(...), ...])``
    runs a batch in parallel; ``cli.in_process(Job(...))`` and
    ``cli.many(..., in_process=True)`` go through ``main()`` in this
    process."""
    return Cli()


# ------------------------------------------------------------- live server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening_inodes(port: int) -> set[str]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as fh:
            next(fh, None)
            for line in fh:
                f = line.split()
                if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f[9])
    return inodes


def _listens(pid: int, port: int) -> bool | None:
    """Does process ``pid`` (or a child of it) listen on ``port``?  None
    where /proc cannot tell."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    inodes = _listening_inodes(port)
    if not inodes:
        return False
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return True
    return False


class LiveServer:
    """``donutbox serve`` in a child process on a loopback port with an
    SQLite file.  ``start`` waits until this very process answers (not some
    other server that took the port); ``kill`` is SIGKILL (nothing is shut
    down cleanly); ``start`` again serves the same port and database."""

    def __init__(self, db: Path, *args: str, log: Path | None = None) -> None:
        self.db = db
        self.db_url = f"sqlite:///{db}"
        self.args = args
        self.log = log or db.with_suffix(".log")
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> LiveServer:
        first = self.port == 0
        for _attempt in range(5):
            if first:
                self.port = free_port()
            if self._start_once(timeout):
                return self
            if not first:
                time.sleep(0.5)  # the old socket may still be closing
        raise AssertionError("the server did not start: " + self._log_tail())

    def _start_once(self, timeout: float) -> bool:
        command = [*donutbox_command(), "serve", "--port", str(self.port), "--db", self.db_url]
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [*command, *self.args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=child_env(),
                start_new_session=True,  # kill() reaches its AI workers too
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                if "address already in use" in self._log_tail().lower():
                    return False
                raise AssertionError("the server exited: " + self._log_tail())
            if _listens(self.proc.pid, self.port) is not False:
                try:
                    with urllib.request.urlopen(self.url + "/api/meta", timeout=2):
                        return True
                except OSError:
                    pass
            time.sleep(0.05)
        self.kill()
        raise AssertionError("the server did not start in time: " + self._log_tail())

    def _log_tail(self) -> str:
        try:
            return self.log.read_text("utf-8", "replace")[-2000:]
        except OSError:
            return ""

    def _signal(self, sig: int) -> None:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def kill(self) -> None:
        """SIGKILL, as a crash or power cut would."""
        if self.proc is None:
            return
        self._signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def __enter__(self) -> LiveServer:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="module")
def module_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One started ``donutbox serve`` shared by the tests of a module."""
    with LiveServer(tmp_path_factory.mktemp("serve") / "games.db") as server:
        yield server


@pytest.fixture(scope="module")  # one a module: the server's per-address rate limit
def _worker_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(tmp_path_factory.mktemp("serve") / "games.db") as server:
        yield server


@pytest.fixture
def shared_server(_worker_server: LiveServer) -> LiveServer:
    """One ``donutbox serve`` for the tests of a module that ask for it
    (the browser tests, whose games each have an id and owner of their
    own).  A test may ``kill()`` it and ``start()`` it again (same port and
    database); one that left it down finds it started again for the next
    test.  One a module, not one a worker: a worker's ~25 browser tests
    from one address outrun the server's request-rate limit (429) on a
    quiet machine."""
    if _worker_server.proc is None or _worker_server.proc.poll() is not None:
        _worker_server.start()
    return _worker_server


@pytest.fixture
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., LiveServer]]:
    """``serve(*extra_args)`` starts a ``donutbox serve`` of its own (own
    port, own SQLite file); every one is stopped after the test."""
    started: list[LiveServer] = []

    def start(*args: str) -> LiveServer:
        folder = tmp_path_factory.mktemp("serve")
        server = LiveServer(folder / "games.db", *args).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def live_server(serve: Callable[..., LiveServer]) -> LiveServer:
    """A started ``donutbox serve`` for this test (``.url``, ``.kill()``,
    ``.start()`` again on the same port and database)."""
    return serve()


@pytest.fixture(autouse=True)
def _collect_garbage_after_postgres(request: pytest.FixtureRequest) -> Iterator[None]:
    """A PostgreSQL connection left open is reported when it is garbage
    collected, which may be during any later test: collect right after a
    ``postgres`` test, so a leak fails the test that leaked it."""
    yield
    if request.node.get_closest_marker("postgres") is not None:
        import gc

        gc.collect()
