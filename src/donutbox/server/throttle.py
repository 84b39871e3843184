"""Rate limits: one token-bucket limiter for every per-address limit, kept in
this process's memory, or (with a broker, ``donutbox serve --broker``) in
Redis, shared by every server process.

- ``Limiter``: a token bucket per key (a client address): ``burst`` at
  once, then ``rate`` a second.  ``allow``/``retry_after`` work on this
  process's table (bounded: at most ``max_keys`` keys, the least recently
  used dropped first, and keys whose bucket has filled up again forgotten:
  a dropped key starts with a full bucket, which only errs toward letting
  a client through).  ``acquire`` (async) is what the server calls: with a
  shared store set (``use_shared``) it takes the tokens from Redis, so two
  processes behind one load balancer give an address one budget, not one
  each.
- ``RedisBuckets``: the shared store.  One Lua script per call takes the
  tokens atomically, on Redis's own clock (``TIME``), so processes on
  machines whose clocks differ still agree; each key expires once its
  bucket would be full again.  If Redis fails, the request is let through
  and the failure logged (a limit is a guard, not the authority: the
  database is).
- ``CreationLimit``: how fast one address may make games.
  ``POST /api/games``, ``/api/games/import`` and ``/api/online`` each take a
  token; a client may make ``CREATE_BURST`` games at once and then one
  every ``60 / CREATE_PER_MINUTE`` seconds; beyond, 429 with the wait.  The
  environment variables ``DONUTBOX_CREATE_BURST`` and
  ``DONUTBOX_CREATE_PER_MINUTE`` change the figures (e.g. for a load test).

Behind a reverse proxy every client has the proxy's address: give the
proxy its own limits (docs/online.md, docs/deploy.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import OrderedDict
from typing import Any

from .errors import Busy

log = logging.getLogger("donutbox.limits")

CREATE_BURST = 20
CREATE_PER_MINUTE = 12.0
#: Addresses remembered at most per limiter in memory.
MAX_ADDRESSES = 10_000


class Limiter:
    """A token bucket per key: ``burst`` at once, then ``rate`` a second."""

    def __init__(
        self, rate: float, burst: float, max_keys: int = MAX_ADDRESSES, name: str = "requests"
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self.max_keys = max_keys
        self.name = name
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    # -- in this process's memory -------------------------------------------------

    def allow(self, key: str, cost: float = 1.0, now: float | None = None) -> bool:
        """Take ``cost`` tokens from ``key``'s bucket in this process; False
        (nothing taken) if it has fewer."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, stamp = self._buckets.pop(key, (self.burst, now))
            tokens = min(self.burst, tokens + max(0.0, now - stamp) * self.rate)
            ok = tokens >= cost
            if ok:
                tokens -= cost
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
            self._expire(now)
            return ok

    def _expire(self, now: float) -> None:
        """Drop the least recently used keys whose bucket has filled up again
        (idle for ``burst / rate`` seconds): a full bucket is what a new key
        gets, so forgetting it changes nothing, and the table holds only
        addresses seen lately."""
        idle = self.burst / self.rate
        for _ in range(8):  # a few a call: the cost stays constant
            first = next(iter(self._buckets.items()), None)
            if first is None or now - first[1][1] < idle:
                return
            del self._buckets[first[0]]

    def retry_after(self, key: str, cost: float = 1.0, now: float | None = None) -> float:
        """Seconds until ``allow(key, cost)`` would succeed (0 if it would now)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, stamp = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + max(0.0, now - stamp) * self.rate)
        return max(0.0, (cost - tokens) / self.rate)

    def __len__(self) -> int:
        return len(self._buckets)

    # -- what the server calls -----------------------------------------------------

    async def acquire(self, key: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens from ``key``'s bucket: 0.0 if taken, else
        the seconds to wait (nothing taken).  Shared by every process when
        a shared store is set (``use_shared``), else this process's."""
        # This process's bucket first: if it alone refuses, so would the
        # shared one (which has seen at least this process's takes), and
        # the request costs no Redis call.
        if not self.allow(key, cost):
            return max(1e-3, self.retry_after(key, cost))
        shared = _shared
        if shared is not None:
            wait = await shared.take(self.name, key, self.rate, self.burst, cost)
            if wait is not None:
                return wait
        return 0.0


#: Seconds a shared bucket's answer is waited for at most.
TAKE_TIMEOUT = 0.25
#: Connections to Redis for the shared buckets at most (their own, apart from
#: the broker's leases and messages); beyond, this process's bucket decides.
TAKE_CONNECTIONS = 32


class RedisBuckets:
    """Token buckets in Redis: ``take`` runs one Lua script (atomic; Redis's
    own clock), keys ``<prefix>:rl:<limiter>:<key>`` expiring once full.
    Give it a client of its own (``client_for``): a burst of requests must
    not queue behind, or ahead of, the leases' renewals."""

    @staticmethod
    def client_for(url: str) -> Any:
        """A Redis client for the buckets alone: at most TAKE_CONNECTIONS
        connections (a full pool fails at once: the local bucket decides)."""
        import redis.asyncio as aioredis

        return aioredis.from_url(url, socket_connect_timeout=1, max_connections=TAKE_CONNECTIONS)

    SCRIPT = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local b = redis.call('HMGET', KEYS[1], 'tokens', 'stamp')
local tokens = tonumber(b[1])
local stamp = tonumber(b[2])
if tokens == nil then tokens = burst; stamp = now end
tokens = math.min(burst, tokens + math.max(0, now - stamp) * rate)
local wait = 0
if tokens >= cost then
  tokens = tokens - cost
else
  wait = (cost - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'stamp', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return tostring(wait)
"""

    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.script = client.register_script(self.SCRIPT)
        self.failures = 0
        #: the event loop the client belongs to (an asyncio client must not
        #: be used from another: two apps in one process, as in tests)
        self.loop = asyncio.get_running_loop()

    async def take(
        self, name: str, key: str, rate: float, burst: float, cost: float
    ) -> float | None:
        """Seconds to wait (0.0: taken), or None if Redis failed (the caller
        falls back to this process's bucket; logged)."""
        if asyncio.get_running_loop() is not self.loop:
            return None
        try:
            # A slow Redis does not hold the request up: past TAKE_TIMEOUT
            # this process's bucket decides alone.
            wait = await asyncio.wait_for(
                self.script(keys=[f"{self.prefix}:rl:{name}:{key}"], args=[rate, burst, cost]),
                TAKE_TIMEOUT,
            )
        except Exception as err:
            self.failures += 1
            if self.failures == 1 or self.failures % 1000 == 0:
                log.error("rate limit: the shared store failed (%s); limiting per process", err)
            return None
        return float(wait)


_shared: RedisBuckets | None = None


def use_shared(store: RedisBuckets | None) -> None:
    """Every limiter of this process takes its tokens from ``store`` (None:
    back to this process's memory)."""
    global _shared
    _shared = store


class CreationLimit(Limiter):
    """How fast one address may make games (see the module's docstring)."""

    def __init__(self, burst: int | None = None, per_minute: float | None = None) -> None:
        b = float(burst if burst is not None else _env("DONUTBOX_CREATE_BURST", CREATE_BURST))
        per_minute = (
            per_minute
            if per_minute is not None
            else _env("DONUTBOX_CREATE_PER_MINUTE", CREATE_PER_MINUTE)
        )
        super().__init__(max(per_minute, 1e-9) / 60.0, b, MAX_ADDRESSES, name="create")

    @staticmethod
    def _refuse(wait: float) -> Busy:
        return Busy(f"games: too many made from this address; try again in {max(1, round(wait))} s")

    def take(self, address: str, now: float | None = None) -> None:
        """Take a token for ``address`` from this process's bucket, or raise
        Busy saying how long to wait."""
        if not self.allow(address, 1.0, now):
            raise self._refuse(self.retry_after(address, 1.0, now))

    async def take_async(self, address: str) -> None:
        """Take a token for ``address`` (shared across processes with a
        broker), or raise Busy saying how long to wait."""
        wait = await self.acquire(address)
        if wait > 0:
            raise self._refuse(wait)


def _env(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default
