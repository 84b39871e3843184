"""Failpoints: named places in the server where a test makes this process
die, so that what a crash there costs can be tested with a real kill
instead of a timed guess (as FoundationDB's and etcd's failpoints do).

``DONUTBOX_FAILPOINT`` names the armed places (comma-separated), read once
at start-up; unset, as in every real deployment, each call below is one
look-up in an empty set and does nothing.  The places:

- ``after-store``: a move has just been stored (committed); the process
  dies before anything else: no answer to the mover, nothing published.
- ``before-publish``: the process has stored a move (and answers its
  mover); it dies after ``PUBLISH_GRACE`` seconds instead of publishing the
  version to the other processes (server/broker.py).

tests/server/test_multiprocess_crash.py arms them; docs/deploy.md says what
a crash at each costs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from typing import Final

log = logging.getLogger("donutbox.server.failpoints")

ARMED: Final = frozenset(
    name.strip() for name in os.environ.get("DONUTBOX_FAILPOINT", "").split(",") if name.strip()
)
#: ``before-publish`` waits this long before the kill: the mover's answer,
#: queued just before, reaches it first.
PUBLISH_GRACE: Final = 0.3


def _die(name: str) -> None:
    log.error("failpoint %s: killing this process", name)
    os.kill(os.getpid(), signal.SIGKILL)


def crash_here(name: str) -> None:
    """Die now (SIGKILL) if ``name`` is armed."""
    if name in ARMED:
        _die(name)


def crash_soon(name: str, after: float) -> bool:
    """If ``name`` is armed: die ``after`` seconds from now (the event loop
    runs meanwhile) and say True, so the caller skips what it was about to
    do; else False."""
    if name not in ARMED:
        return False
    asyncio.get_running_loop().call_later(after, _die, name)
    return True
