"""The lab's games on a Dask distributed cluster (``--cluster``).

``donutbox sim`` and ``donutbox balance`` (and ``balance --sweep``) spread
their games over the workers of a Dask cluster instead of local worker
processes:

- ``--cluster local`` (one worker per core) or ``--cluster local:N`` starts a
  cluster on this machine for the run (N worker processes, one thread each);
- ``--cluster tcp://HOST:PORT`` uses a running scheduler (``dask scheduler``
  and ``dask worker ADDRESS --nthreads 1`` on any machines that have the same
  donutbox installed).

A game is a pure function of its spec (seats, rules, deal seed, options,
deck), so which worker plays it changes nothing: the results are the same
as with ``--jobs`` and collected in game order.  Dask is an optional extra,
``pip install '.[cluster]'``; why Dask and not Ray is in docs/balance.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import DonutboxError
from .match import GameResult

#: How long to wait for a remote scheduler to answer, by default (seconds).
CONNECT_SECONDS = 10.0
#: The most workers ``local:N`` starts.
MAX_LOCAL = 64
INSTALL = "pip install '.[cluster]'"


class ClusterError(DonutboxError):
    """A ``--cluster`` that cannot be used; the message says why in one line."""


@dataclass(frozen=True)
class Target:
    """Where the games go: a local cluster of ``workers`` processes, or the
    scheduler at ``address``."""

    address: str | None = None
    workers: int = 0

    @property
    def local(self) -> bool:
        return self.address is None


_ADDRESS = re.compile(r"^(tcp|tls)://(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


def parse_target(text: str) -> Target:
    """``local``, ``local:N`` or ``tcp://HOST:PORT`` (``tls://`` too)."""
    text = text.strip()
    if text == "local":
        return Target(workers=os.cpu_count() or 1)
    if text.startswith("local:"):
        n = text.partition(":")[2]
        if not n.isdigit() or not 1 <= int(n) <= MAX_LOCAL:
            raise ClusterError(f"--cluster {text}: N in local:N must be from 1 to {MAX_LOCAL}")
        return Target(workers=int(n))
    m = _ADDRESS.match(text)
    if not m:
        raise ClusterError(
            f"--cluster {text}: give local, local:N or a scheduler's address, tcp://HOST:PORT"
        )
    if not 1 <= int(m.group(3)) <= 65535:
        raise ClusterError(f"--cluster {text}: the port must be from 1 to 65535")
    return Target(address=text)


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ClusterError(
            f"--cluster needs Dask distributed, which is not installed: {INSTALL}"
        ) from None
    return distributed


def _worker_version() -> str:
    """Run on each worker: the donutbox it plays with."""
    from .. import __version__

    return __version__


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Dask's own log lines (a worker restarting, a slow event loop) stay
    off the terminal; errors that matter reach the caller as exceptions."""
    logger = logging.getLogger("distributed")
    old = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(old)


async def _probe(address: str, timeout: float) -> None:
    """Raise unless a Dask scheduler answers at ``address`` within ``timeout``.

    (A socket that accepts and never answers would keep Dask's own client
    waiting for ever.)"""
    from distributed.comm import core

    connect: Any = core.connect  # untyped

    async def ask() -> None:
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            reply = await comm.read()
        finally:
            comm.abort()
        if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
            raise ClusterError(f"--cluster {address}: what answers there is not a Dask scheduler")

    await asyncio.wait_for(ask(), timeout)


class Cluster:
    """A connection to a Dask cluster (and the local cluster it started, if
    any).  Open with ``open_cluster``; a context manager."""

    def __init__(self, client: Any, local: Any, target: Target) -> None:
        self.client = client
        self._local = local
        self.target = target

    def workers(self) -> dict[str, int]:
        """Each worker's address and its number of threads."""
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        return {addr: int(w.get("nthreads", 1)) for addr, w in info.items()}

    def describe(self) -> str:
        n = len(self.workers())
        where = (
            "a local Dask cluster"
            if self.target.local
            else f"the Dask cluster at {self.target.address}"
        )
        return f"{where} ({n} worker{'s' if n != 1 else ''})"

    def close(self) -> None:
        with _quiet():
            try:
                self.client.close()
            finally:
                if self._local is not None:
                    self._local.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ignoring_sigint() -> contextlib.AbstractContextManager[None]:
    """SIGINT ignored in this process while local workers start: they are
    started with it ignored and keep it so (the parent stops them all on
    Ctrl-C; a worker that got it too would print a traceback of its own)."""

    @contextlib.contextmanager
    def ignore() -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, old)

    return ignore()


def open_cluster(target: Target | str, timeout: float = CONNECT_SECONDS) -> Cluster:
    """Start a local cluster or connect to a remote scheduler, and check its
    workers run the same donutbox; a ``ClusterError`` says in one line why
    not."""
    if isinstance(target, str):
        target = parse_target(target)
    distributed = _import_distributed()
    local = None
    with _quiet():
        if target.local:
            with _ignoring_sigint():
                local = distributed.LocalCluster(
                    n_workers=target.workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # any free port: two runs at once must not clash
                    memory_limit=0,
                    silence_logs=logging.CRITICAL,
                )
            client = distributed.Client(local)
        else:
            address = target.address
            assert address is not None
            try:
                asyncio.run(_probe(address, timeout))
            except ClusterError:
                raise
            except (OSError, TimeoutError, ValueError) as err:
                reason = "no answer" if isinstance(err, TimeoutError) else str(err)
                raise ClusterError(
                    f"--cluster {address}: no Dask scheduler answered within "
                    f"{timeout:g} s ({reason})"
                ) from None
            client = distributed.Client(address, timeout=timeout)
    cluster = Cluster(client, local, target)
    try:
        _check_workers(cluster, timeout)
    except BaseException:
        cluster.close()
        raise
    return cluster


def _check_workers(cluster: Cluster, timeout: float) -> None:
    from .. import __version__

    where = cluster.target.address or "local"
    try:
        cluster.client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise ClusterError(
            f"--cluster {where}: the scheduler has no workers (start some with "
            f"'dask worker {where} --nthreads 1')"
        ) from None
    try:
        versions = cluster.client.run(_worker_version)
    except Exception as err:
        raise ClusterError(
            f"--cluster {where}: a worker cannot run donutbox ({type(err).__name__}: {err}); "
            f"install donutbox {__version__} on every worker"
        ) from None
    other = {v for v in versions.values() if v != __version__}
    if other:
        raise ClusterError(
            f"--cluster {where}: workers run donutbox {', '.join(sorted(other))}, this is "
            f"{__version__}; the same version must play every game"
        )


def check_budget(cluster: Cluster, timed_by_clock: bool) -> None:
    """A thinking-time budget needs workers that play one game at a time:
    two threads in one worker would share its CPU (and its CPU clock)."""
    if not timed_by_clock:
        return
    crowded = {a: n for a, n in cluster.workers().items() if n > 1}
    if crowded:
        addr, n = next(iter(crowded.items()))
        raise ClusterError(
            f"--cluster: worker {addr} runs {n} threads, and a searching agent's time "
            "budget needs one game per worker process (start workers with --nthreads 1, "
            "or give --iterations)"
        )


def run_on_cluster(
    cluster: Cluster,
    todo: Sequence[Any],
    play: Callable[[Any], tuple[int, GameResult]],
    done: Callable[[tuple[int, GameResult]], None],
) -> None:
    """Play every spec of ``todo`` with ``play`` on the cluster's workers,
    calling ``done`` with each (index, result) as it finishes.  On any
    exception (Ctrl-C included) every game not yet finished is cancelled
    before it propagates."""
    distributed = _import_distributed()
    token = uuid.uuid4().hex[:12]
    keys = [f"donutbox-game-{token}-{spec.index}" for spec in todo]
    futures = cluster.client.map(play, list(todo), key=keys, retries=1)
    try:
        for future in distributed.as_completed(futures):
            try:
                pair = future.result()
            except distributed.client.FutureCancelledError:
                raise ClusterError(
                    "--cluster: a game was cancelled (did the scheduler stop?)"
                ) from None
            except distributed.KilledWorker as err:
                raise ClusterError(f"--cluster: workers died playing a game ({err})") from None
            future.release()
            done(pair)
    except BaseException:
        with _quiet(), contextlib.suppress(Exception):
            cluster.client.cancel(futures)
        raise
