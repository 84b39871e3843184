"""How fast one client address may make games: a token bucket per address.

``POST /api/games``, ``/api/games/import`` and ``/api/online`` each take a
token; a client may make ``CREATE_BURST`` games at once and then one every
``60 / CREATE_PER_MINUTE`` seconds; beyond, 429 with the wait.  The
environment variables ``DONUTBOX_CREATE_BURST`` and
``DONUTBOX_CREATE_PER_MINUTE`` change the figures (e.g. for a load test).
Behind a reverse proxy every client has the proxy's address: give the
proxy its own limits (docs/online.md).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from .errors import Busy

CREATE_BURST = 20
CREATE_PER_MINUTE = 12.0
#: Addresses remembered at most; buckets that have refilled are forgotten first.
MAX_ADDRESSES = 10_000


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class CreationLimit:
    def __init__(self, burst: int | None = None, per_minute: float | None = None) -> None:
        self.burst = float(
            burst if burst is not None else _env("DONUTBOX_CREATE_BURST", CREATE_BURST)
        )
        per_minute = (
            per_minute
            if per_minute is not None
            else _env("DONUTBOX_CREATE_PER_MINUTE", CREATE_PER_MINUTE)
        )
        self.rate = max(per_minute, 1e-9) / 60.0
        self.buckets: dict[str, _Bucket] = {}

    def take(self, address: str, now: float | None = None) -> None:
        """Take a token for ``address``, or raise Busy saying how long to wait."""
        now = time.monotonic() if now is None else now
        b = self.buckets.get(address)
        if b is None:
            if len(self.buckets) >= MAX_ADDRESSES:
                self._forget_full(now)
            b = self.buckets[address] = _Bucket(self.burst, now)
        b.tokens = min(self.burst, b.tokens + (now - b.stamp) * self.rate)
        b.stamp = now
        if b.tokens < 1.0:
            wait = (1.0 - b.tokens) / self.rate
            raise Busy(
                f"games: too many made from this address; try again in {max(1, round(wait))} s"
            )
        b.tokens -= 1.0

    def _forget_full(self, now: float) -> None:
        full = [
            a
            for a, b in self.buckets.items()
            if b.tokens + (now - b.stamp) * self.rate >= self.burst
        ]
        for a in full:
            del self.buckets[a]
        if len(self.buckets) >= MAX_ADDRESSES:  # all busy: forget the oldest half
            for a in sorted(self.buckets, key=lambda a: self.buckets[a].stamp)[
                : MAX_ADDRESSES // 2
            ]:
                del self.buckets[a]


def _env(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default
