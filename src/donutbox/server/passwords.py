"""Password hashing: Argon2id with parameters sized for a small server, on a
thread pool of its own with a short queue (docs/community.md, "Threat model").

- **Parameters** (``TIME_COST``, ``MEMORY_KIB``, ``LANES``): OWASP's first
  Argon2id configuration, m = 19 MiB, t = 2, p = 1 (the Password Storage
  Cheat Sheet).  On the project's 2-core machine a check takes about 19 ms
  of one core and 19 MiB while it runs; argon2-cffi's defaults (64 MiB,
  t = 3, 4 lanes) take about 136 ms and 187 ms of CPU over both cores, and
  65 MiB (``benchmarks/argon2_params.py``).  A hash
  made with other parameters still verifies (they are written in the hash)
  and is made again with these at the next successful sign-in
  (``needs_rehash``).
- **The pool** (``HashPool``): ``HASH_THREADS`` threads (one for every two
  cores, at least one) do nothing but hash, so a flood of sign-ins uses at
  most that many cores and ``HASH_THREADS x MEMORY_KIB`` of memory, and the
  threads that serve every request's database work (``asyncio.to_thread``)
  stay free.  At most ``HASH_QUEUE`` checks wait for a thread; one more is
  refused at once (``errors.Overloaded``: 503 with ``Retry-After``) rather
  than queued without end.  argon2-cffi lets go of the interpreter lock
  while it hashes, so the event loop keeps running meanwhile.
- **Priority**: on Linux the hashing threads run at nice ``HASH_NICE``
  (a thread's own priority): when the machine's cores are all busy, the
  event loop and the database threads go first and the hashing waits (its
  queue then fills sooner and refuses more).  Measured on the project's
  loaded 2-core machine (load average 7): a Python loop beside a hashing
  thread kept 50% of its speed at nice 0, 97% at nice 10.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError

from .errors import Overloaded

T = TypeVar("T")

TIME_COST = 2
MEMORY_KIB = 19 * 1024
LANES = 1
#: Hashing threads: one for every two cores, at least one.
HASH_THREADS = max(1, (os.cpu_count() or 1) // 2)
#: Checks that may wait for a hashing thread (beyond: 503 at once).  Eight
#: waiting behind one thread is about 0.15 s of waiting.
HASH_QUEUE = 8
#: How much lower the hashing threads' priority is than the server's.
HASH_NICE = 10

HASHER = PasswordHasher(
    time_cost=TIME_COST, memory_cost=MEMORY_KIB, parallelism=LANES, type=Type.ID
)
#: Verified against when the user name does not exist, so that a wrong name
#: takes as long as a wrong password.
DUMMY_HASH = HASHER.hash("not a password of anyone")


def hash_password(password: str) -> str:
    return HASHER.hash(password)


def verify(stored: str, password: str) -> bool:
    """Whether ``password`` is the one ``stored`` was made from (False for a
    malformed hash too)."""
    try:
        return HASHER.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    """Whether ``stored`` was made with other parameters than these."""
    try:
        return HASHER.check_needs_rehash(stored)
    except (InvalidHashError, ValueError):
        return True


def _yield_cpu() -> None:
    """This thread's priority lowered by ``HASH_NICE`` (Linux, where a
    thread's id names it alone to ``setpriority``; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + HASH_NICE)


class HashPool:
    """``threads`` hashing threads and at most ``queue`` calls waiting."""

    def __init__(self, threads: int = HASH_THREADS, queue: int = HASH_QUEUE) -> None:
        self.threads = threads
        self.queue = queue
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        #: calls running or waiting now
        self.busy = 0
        #: calls refused because the queue was full
        self.refused = 0

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    self.threads, thread_name_prefix="donutbox-hash", initializer=_yield_cpu
                )
            return self._executor

    def room(self, what: str = "sign-in") -> None:
        """``Overloaded`` now if ``run`` would refuse now (checked before an
        attempt is counted against its address: a refusal for the server's
        load costs the client none of its attempts)."""
        if self.busy >= self.threads + self.queue:
            self.refused += 1
            raise Overloaded(what)

    async def run(self, fn: Callable[..., T], *args: object, what: str = "sign-in") -> T:
        """``fn(*args)`` on a hashing thread; ``Overloaded`` (one line naming
        ``what``) at once when ``threads + queue`` calls are already in."""
        self.room(what)
        self.busy += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool(), functools.partial(fn, *args))
        finally:
            self.busy -= 1

    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None
