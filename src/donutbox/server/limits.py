"""The server's limits on what one client may cost: connections, time to send
a request, request rate, and CPU work on the event loop.

- ``address_key``: what "an address" is for every per-address limit: an
  IPv4 address, or an IPv6 address's /64 network (a client holding a /64
  can rotate through 2**64 addresses).
- ``AddressBuckets`` (``throttle.Limiter``): a token bucket per client
  address (a burst, then a steady rate); the table of addresses is bounded
  and idle entries are dropped, so a flood of addresses cannot grow it for
  ever; with a broker the buckets are in Redis, shared by every process.
  One of them, ``REQUEST_RATE``/``REQUEST_BURST``, bounds every API request
  from the network (``security.GuardMiddleware``: 429 beyond).
- ``run_blocking``: CPU work (replaying a long record, importing one) runs in
  a small bounded thread pool, never on the event loop; when too much is
  already waiting it refuses at once (``errors.Overloaded``: 503) rather than queueing
  without end.
- ``GuardedHttpProtocol``: uvicorn's HTTP protocol with a deadline for the
  request line and headers (``HEADER_TIMEOUT`` seconds from the first byte
  or from the connection, whichever came first) and a cap on concurrent
  connections per address (``MAX_CONNECTIONS_PER_ADDRESS``; WebSockets
  count until they close; a trusted reverse proxy, uvicorn's
  ``forwarded_allow_ips``, is exempt since all its clients share its
  address).  uvicorn itself has no header timeout: a client sending one
  byte a minute held its connection for ever.
- ``uvicorn_options()``: the keyword arguments ``donutbox serve`` passes to
  ``uvicorn.run`` to use all of this.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import ipaddress
import logging
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from .errors import Overloaded
from .throttle import Limiter

T = TypeVar("T")
log = logging.getLogger("donutbox.limits")


def _env_figure(name: str, default: float) -> float:
    """A positive number from the environment, else ``default``."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


#: Seconds a connection has to send its request line and headers.
HEADER_TIMEOUT = 5.0
#: Concurrent connections (HTTP and WebSocket) one address may hold.
MAX_CONNECTIONS_PER_ADDRESS = 64
#: Online WebSockets one address may hold that have not said hello yet
#: (``protocol.serve_online``; beyond, the handshake is refused and the page
#: tries again 1.5 s later).  A page says hello as soon as its socket opens,
#: so a household behind one NAT never meets it; a flood of sockets that
#: hold memory while they wait to be refused does (docs/online.md).
MAX_UNINTRODUCED_PER_ADDRESS = 4
#: Connections the whole server holds at once (uvicorn answers 503 beyond).
MAX_CONNECTIONS = 4096
#: Seconds an idle keep-alive connection stays open.
KEEP_ALIVE = 5
#: API requests an address may make: a burst, then a steady rate a second
#: (``security.GuardMiddleware`` applies it to requests that came through
#: ``GuardedHttpProtocol``, i.e. from the network).  Costly requests take
#: more than one token (``request_cost``).
#: ``DONUTBOX_REQUEST_RATE`` and ``DONUTBOX_REQUEST_BURST`` change them (a
#: load test making hundreds of games from one address).
REQUEST_RATE = _env_figure("DONUTBOX_REQUEST_RATE", 50.0)
REQUEST_BURST = _env_figure("DONUTBOX_REQUEST_BURST", 200.0)
#: Threads for blocking work, and how many calls may wait for one.
BLOCKING_THREADS = 2
BLOCKING_QUEUE = 16


# -- token buckets per address ----------------------------------------------------

#: The one per-address token bucket (throttle.py): in memory, or shared in
#: Redis by every process when the server has a broker.
AddressBuckets = Limiter


def request_cost(method: str, path: str) -> float:
    """Tokens a request takes from its address's bucket: a record's import
    replays it (10), a new game or a hint makes work (5), anything else 1."""
    if method == "POST":
        if path == "/api/games/import":
            return 10.0
        if path in ("/api/games", "/api/online") or path.endswith("/hint"):
            return 5.0
    return 1.0


def address_key(host: str) -> str:
    """What every per-address limit counts under for the address ``host``:
    an IPv4 address as it is; an IPv6 address by its /64 network
    (``2001:db8:1:2::/64``: one subscriber's network, in which a client can
    take a new address for every request); an IPv4-mapped IPv6 address
    (``::ffff:192.0.2.1``) as its IPv4 address.  Anything else (a test
    client's name, ``unknown``) as it is."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def client_address(scope_or_request: Any) -> str:
    """The key of the client's address (``address_key``) from an ASGI scope
    or a Starlette request (``"unknown"`` when the transport gives none).  A
    trusted proxy keeps its exact address (``capped`` looks it up)."""
    client = (
        scope_or_request.get("client")
        if isinstance(scope_or_request, dict)
        else getattr(scope_or_request, "client", None)
    )
    if not client:
        return "unknown"
    host = client[0] if isinstance(client, (tuple, list)) else getattr(client, "host", None)
    host = str(host or "unknown")
    return host if host in TRUSTED_PROXIES else address_key(host)


# -- blocking work off the event loop ---------------------------------------------


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_waiting = 0


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(BLOCKING_THREADS, thread_name_prefix="donutbox-work")
        return _pool


async def run_blocking(fn: Callable[..., T], *args: Any, what: str = "server", **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in the bounded thread pool; the event loop
    keeps serving other clients meanwhile.  ``Overloaded`` (one line naming
    ``what``) when ``BLOCKING_QUEUE`` calls are already running or waiting.

    The thread still shares the interpreter lock, so a long call slows the
    loop (Python switches threads every 5 ms) but never stops it."""
    global _waiting
    if _waiting >= BLOCKING_QUEUE:
        raise Overloaded(what)
    _waiting += 1
    try:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_executor(), functools.partial(fn, *args, **kwargs))
    finally:
        _waiting -= 1


def blocking_waiting() -> int:
    """Calls in ``run_blocking`` now (running or queued)."""
    return _waiting


# -- giving freed memory back after a burst -------------------------------------------


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)`` (None elsewhere).  Called through ctypes,
    which lets go of the interpreter lock: it may run in a thread while the
    event loop goes on."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to do
        return None
    return lambda: trim(0)


class Trimmer:
    """After a burst of connections ends (their Python objects are freed,
    but glibc keeps the freed heap pages, so the resident size stays at the
    burst's peak), ask the C allocator to give the free pages back
    (``malloc_trim(0)``, glibc only).  ``check`` is called every few
    seconds with the connections held now: it trims once they have fallen
    by ``BURST`` or more from their peak since the last trim and stayed
    there for one check (the burst is over: trimming half-way would leave
    what is freed after it).

    A trim is a full ``gc.collect()`` with the attribute cache emptied
    (``_collect``: what only the collector frees, and strings the cache
    kept; the connections themselves are freed by reference counting as
    they close) and then ``malloc_trim(0)``, which walks the whole heap: on the project's loaded
    machine it took up to ~0.2 s after a 1,000-socket burst, a stall of
    every client when it ran on the event loop.  ``check_async`` (the hub's
    sweeper) runs it in a thread."""

    BURST = 100

    def __init__(self) -> None:
        self.peak = 0
        self.last = -1
        self.trims = 0
        self._malloc = _malloc_trim()
        self._trim: Callable[[], object] | None = (
            None if self._malloc is None else self._collect_and_trim
        )

    def _collect_and_trim(self) -> None:
        _collect()
        if self._malloc is not None:
            self._malloc()

    def due(self, held: int) -> bool:
        """Whether to trim now (and the bookkeeping as if it is done)."""
        self.peak = max(self.peak, held)
        settled = held == self.last  # the burst's connections have all gone
        self.last = held
        if self._trim is None or not settled or self.peak - held < self.BURST:
            return False
        self.trims += 1
        self.peak = held
        return True

    def check(self, held: int) -> bool:
        """``due``, and the trim done here if so."""
        if not self.due(held):
            return False
        assert self._trim is not None
        self._trim()
        return True

    async def check_async(self, held: int) -> bool:
        """``due``; the collection on the event loop (it needs the
        interpreter), ``malloc_trim`` in a thread (it does not)."""
        if not self.due(held):
            return False
        _collect()
        if self._malloc is not None:
            await asyncio.to_thread(self._malloc)
        return True


def _collect() -> None:
    """A full collection, and the interpreter's attribute cache emptied.

    The cache (4,096 entries, type and name) holds a reference to each
    name it has seen, keyed by the name's address: C code that makes its
    name afresh each call (``re``'s ``finditer`` looks up ``"search"`` on a
    new string every time) leaves up to 4,096 small strings alive, each
    wherever it happened to be allocated.  After a burst they are spread
    over the memory the burst needed and keep CPython's 1 MiB arenas
    from being given back (docs/online.md, "Memory").  The cache fills
    again as it is used (a few microseconds)."""
    gc.collect()
    sys._clear_type_cache()


def connections_held() -> int:
    """Connections (HTTP and WebSocket) held from the network now."""
    return sum(GUARD.per_address.values())


# -- the HTTP protocol with a header deadline and a per-address cap -------------------


def _base_protocol() -> type[asyncio.Protocol]:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:  # no httptools: the pure-Python parser
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol


class _Guard:
    """Connections held per address (shared by every protocol instance of
    one server process)."""

    #: When the table empties after holding more addresses than this, it is
    #: made anew: a dict keeps the size it grew to (a flood from 10,000
    #: addresses would leave a table of 10,000 slots for good).
    SHRINK_ABOVE = 64

    def __init__(self) -> None:
        self.per_address: dict[str, int] = {}
        self.refused = 0
        self.timed_out = 0
        self._most = 0  # addresses held at once since the table was made

    def take(self, address: str, cap: int) -> bool:
        n = self.per_address.get(address, 0)
        if n >= cap:
            self.refused += 1
            return False
        self.per_address[address] = n + 1
        self._most = max(self._most, len(self.per_address))
        return True

    def release(self, address: str) -> None:
        n = self.per_address.get(address, 0) - 1
        if n <= 0:
            self.per_address.pop(address, None)
            if not self.per_address and self._most > self.SHRINK_ABOVE:
                self.per_address = {}
                self._most = 0
        else:
            self.per_address[address] = n


GUARD = _Guard()
#: Online sockets not yet introduced, per address (MAX_UNINTRODUCED_PER_ADDRESS).
UNINTRODUCED = _Guard()
#: The trusted reverse proxies of this server (uvicorn's ``forwarded_allow_ips``,
#: set by the first connection): exempt from the per-address caps, like
#: ``GuardedHttpProtocol``'s, since every client without a forwarded address
#: shares theirs.  Empty for an in-process test client.
TRUSTED_PROXIES: Any = frozenset()


def capped(address: str) -> bool:
    """Whether the per-address caps apply to ``address`` (not a trusted proxy)."""
    return address not in TRUSTED_PROXIES


_Base: Any = _base_protocol()


class GuardedHttpProtocol(_Base):  # type: ignore[misc]
    """uvicorn's HTTP protocol plus a header deadline and a per-address cap.

    The deadline is armed when the connection opens and again whenever
    bytes of a new request arrive while none is in progress; it is met when
    uvicorn starts a new request cycle (its headers are complete).  It is
    absolute: a client trickling one byte a second is closed after
    ``header_timeout`` seconds like one that sends nothing."""

    header_timeout = HEADER_TIMEOUT
    max_per_address = MAX_CONNECTIONS_PER_ADDRESS
    guard = GUARD

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._address: str | None = None
        self._exempted = False
        self._header_timer: asyncio.TimerHandle | None = None
        self._armed_cycle: Any = None

    def _exempt(self, address: str) -> bool:
        """A trusted proxy (uvicorn's ``forwarded_allow_ips``, by default
        127.0.0.1 and ::1, when proxy headers are on): every client behind
        it shares its address, so it is not capped (the proxy limits its own
        clients; its own connection count is bounded by ``limit_concurrency``)."""
        global TRUSTED_PROXIES
        config = self.config
        if not getattr(config, "proxy_headers", False):
            return False
        trusted = getattr(config, "_donutbox_trusted", None)
        if trusted is None:
            trusted = _trusted_hosts(getattr(config, "forwarded_allow_ips", ""))
            config._donutbox_trusted = trusted
            TRUSTED_PROXIES = trusted
        return address in trusted

    def connection_made(self, transport: Any) -> None:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, (tuple, list)) and peer else "unknown"
        if self._exempt(address):
            super().connection_made(transport)
            self._address = None
            self._exempted = True
            self._arm()
            return
        address = address_key(address)  # an IPv6 client's /64
        if not self.guard.take(address, self.max_per_address):
            # Over the cap: close before uvicorn sets anything up for it.
            self.transport = transport
            self._unlink()
            transport.close()
            return
        self._address = address
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        # A request from the network (not an in-process test client): the
        # middleware applies the per-address request rate to it.
        self.scope["donutbox.guarded"] = True

    def _arm(self) -> None:
        if self._header_timer is None:
            self._armed_cycle = self.cycle
            self._header_timer = self.loop.call_later(self.header_timeout, self._header_deadline)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_deadline(self) -> None:
        self._header_timer = None
        if self.cycle is self._armed_cycle and not self.transport.is_closing():
            # No new request began since the deadline was armed.
            self.guard.timed_out += 1
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._address is None and not self._exempted:  # refused in connection_made
            return
        idle = self.cycle is None or self.cycle.response_complete
        if idle:
            self._arm()
        super().data_received(data)
        if self._header_timer is not None and self.cycle is not self._armed_cycle:
            self._disarm()  # the headers arrived: the request is under way

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._address is None and not self._exempted:
            return
        self._release()
        super().connection_lost(exc)

    def _unlink(self) -> None:
        """Let reference counting free this protocol once nothing uses it:
        uvicorn's request parser holds the protocol's own methods (a
        reference cycle: protocol -> parser -> bound methods -> protocol,
        with the transport and the flow control hanging on it).  uvicorn
        drops the parser in ``connection_lost``; a connection refused at the
        cap and one upgraded to a WebSocket never get there, so each one
        waited for a full collection (1,000 WebSockets: 21,000 objects,
        with their transports, kept through the burst, see docs/online.md,
        "Memory")."""
        self.parser = None

    def _release(self) -> None:
        if self._address is not None:
            self.guard.release(self._address)
            self._address = None

    def handle_websocket_upgrade(self, *args: Any, **kwargs: Any) -> None:
        self._disarm()
        address = self._address
        self._address = None  # the WebSocket protocol takes the connection over
        super().handle_websocket_upgrade(*args, **kwargs)
        ws = self.transport.get_protocol()
        if ws is not self:
            self._unlink()  # this protocol's part is over: the socket's is the WebSocket's
        if address is None or ws is self:
            return
        guard = self.guard
        lost = ws.connection_lost
        released = False

        def connection_lost(exc: Exception | None) -> None:
            nonlocal released
            if not released:
                released = True
                guard.release(address)
            # This wrapper, kept on the protocol, is a reference cycle (the
            # protocol -> the wrapper -> the protocol's own method): gone
            # with the connection, so that reference counting frees the
            # protocol and all it holds at once.  Left, every WebSocket
            # waited for the next full collection: after a 1,000-socket
            # burst the trimmer's collection freed 75,800 objects in one go
            # (0.13 s of CPU on the event loop; 0.5 s on a loaded machine).
            with contextlib.suppress(AttributeError):
                del ws.connection_lost
            lost(exc)

        ws.connection_lost = connection_lost


class _Hosts:
    def __init__(self, hosts: set[str], everyone: bool) -> None:
        self.hosts = hosts
        self.everyone = everyone

    def __contains__(self, host: object) -> bool:
        return self.everyone or host in self.hosts


def _trusted_hosts(value: list[str] | str) -> Any:
    try:  # uvicorn's own parser (networks, "*"), so both agree
        from uvicorn.middleware.proxy_headers import _TrustedHosts

        return _TrustedHosts(value)
    except Exception:
        items = value if isinstance(value, list) else value.split(",")
        hosts = {h.strip() for h in items if h.strip()}
        return _Hosts(hosts, "*" in hosts)


def uvicorn_options() -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run`` (``donutbox serve``)."""
    return {
        "http": GuardedHttpProtocol,
        "timeout_keep_alive": KEEP_ALIVE,
        "limit_concurrency": MAX_CONNECTIONS,
        "h11_max_incomplete_event_size": 16 * 1024,
        "backlog": 2048,
    }
