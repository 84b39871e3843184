"""The broker: how the server processes on one database hear of each other
(docs/deploy.md).

Without one (``LocalBroker``, the default) the server is one process and
everything is as it always was: every lease is this process's, nothing is
sent anywhere.

With ``donutbox serve --broker redis://...`` (``RedisBroker``) any number of
processes, on one machine or many, share one database and one Redis:

- **Versions.** The database stays the only authority. After a process stores
  a version of a game it publishes it on the ``<prefix>:games`` channel: the
  game, the version, and what was stored (the record and the options: a few
  kilobytes), plus how long its clock's running turn has run (an interval:
  the machines' wall clocks need not agree). Every other process with that
  game in memory applies it (one move played on its copy of the game, or the
  record played back), under the game's lock, and sends each of its readers
  its own filtered view, as for a move made there. A process applies a
  game's versions in order, each once: an older or equal version is ignored,
  and one that leaves a gap (a message lost while Redis was away, or two
  publishers racing) makes it read the game from the database instead. A
  process that loads a game just after a version of it went by reads it
  again.
- **Leases.**  A game's AI seats and clock run on exactly one process: the
  holder of the game's lease, a Redis key ``<prefix>:lease:<game>`` set with
  ``SET NX PX`` (``LEASE_MS``) and renewed every ``RENEW_SECONDS`` by a Lua
  script that extends it only if it is still this process's.  A process asks
  for the lease when one of its games has an AI seat to move or a running
  clock, and keeps it until the game ends or leaves its memory.  Held games
  are listed in the set ``<prefix>:active``; every process looks there every
  ``SCAN_SECONDS`` for a game whose lease has expired (its holder died) and
  takes it over: it reads the game from the database, restarts the turn's
  clock from the takeover (the player to move is not charged for the time
  nobody ran their clock), and carries on.  So a dead process's games carry
  on within ``LEASE_MS / 1000 + SCAN_SECONDS`` seconds.  A lease is acted on
  only while surely unexpired (``holds``); an AI seat or clock that wanted
  to act while its renewal was late resumes once it is renewed
  (``_resume``), and a lease that expired meanwhile is asked for again by
  the scan of every process, its late holder included.
- **Presence.**  Each process publishes which seats are connected to it
  (and how many watch) when that changes, and again every
  ``PRESENCE_BEAT`` seconds; the others merge it into the presence they
  send.  A process that stops beating is forgotten after
  ``PRESENCE_STALE`` seconds.  A clock starts once every human seat has
  joined on whichever processes.
- **Rate limits.**  ``throttle.RedisBuckets``: shared token buckets.

A takeback asked for (kept in memory, not stored) travels with the
messages too: the same version again, with the request, so that it can be
answered on another process.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import secrets
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import orjson

from ..core import Game
from ..core.record import dump, load
from . import failpoints, throttle
from .errors import NoSuchGame
from .online import Clock
from .ports import BrokerHost
from .session import GameSession
from .storage import StorageError, StoredGame

log = logging.getLogger("donutbox.server.broker")

#: A lease lasts this long without renewal (milliseconds).
LEASE_MS = 3000
#: How often held leases are renewed.
RENEW_SECONDS = 0.75
#: How often every process looks for games whose lease holder died.
SCAN_SECONDS = 0.5
#: How often a process repeats its presence; forgotten after PRESENCE_STALE.
PRESENCE_BEAT = 3.0
PRESENCE_STALE = 10.0
#: A renewal's answer is waited for at most this long (seconds).
RENEW_TIMEOUT = 1.0
#: Taken off a lease's length by ``holds`` (seconds, at most a quarter of it):
#: a lease is trusted only while surely unexpired in Redis.
LEASE_MARGIN = 0.5
#: How often the games in memory that someone waits on are compared with
#: the database (``RedisBroker.reconcile``): the longest a move stored by a
#: process that died before telling the others stays unseen here.
#: (``DONUTBOX_RECONCILE_SECONDS`` sets it: the benchmark's way to measure
#: what the comparison costs.)
RECONCILE_SECONDS = float(os.environ.get("DONUTBOX_RECONCILE_SECONDS", "2"))
#: Versions heard of for games not in memory, remembered at most.
HEARD = 10_000
#: Messages waiting for Redis at most (beyond, dropped: a gap the others fill
#: from the database).
OUTBOX = 10_000

_RENEW = """
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
"""
_TAKE = """
local holder = redis.call('GET', KEYS[1])
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""


def _valid() -> float:
    """Seconds after its setting or renewal that a lease is trusted."""
    seconds = LEASE_MS / 1000
    return seconds - min(LEASE_MARGIN, seconds / 4)


def clock_ref(s: GameSession) -> float | None:
    """How long the running turn's clock has run (seconds), as sent to the
    other processes: an interval, so their wall clocks need not agree."""
    c = s.clock
    if c is None or not c.running or c.turn_started is None:
        return None
    return max(0.0, time.monotonic() - c.turn_started)


def _monotonic_of(elapsed: float) -> float:
    """The turn's start on this process's monotonic clock."""
    return time.monotonic() - max(0.0, float(elapsed))


class LocalBroker:
    """One process: every lease is ours, nothing is published."""

    shared = False
    origin = "local"

    def __init__(self, host: BrokerHost) -> None:
        #: the games in memory, their readers, AI seats and clocks (the hub)
        self.host = host

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def holds(self, game_id: str) -> bool:
        return True

    def want(self, game_id: str) -> None:
        return None

    def release(self, game_id: str) -> None:
        return None

    def published(self, s: GameSession) -> None:
        """``s`` has just been stored at a new version by this process."""
        return None

    def clock_started(self, s: GameSession) -> None:
        return None

    def presence_changed(self, game_id: str) -> None:
        return None

    def elsewhere(self, game_id: str) -> tuple[set[int], int]:
        """Seats connected to other processes, and their spectators."""
        return set(), 0

    def installed(self, s: GameSession) -> None:
        """``s`` has just been loaded into this process's memory."""
        return None

    async def refresh(self, game_id: str) -> bool:
        """Read the game from the database if it is newer there; True if
        it was."""
        return False

    async def check_stored(self, game_id: str) -> None:
        """Before a reader is answered from memory: read the game again if
        the database is ahead of this process's copy.  One process is the
        only writer of its games, so here there is nothing to compare."""
        return None

    async def caught_up(self, game_id: str) -> None:
        """After a Stale refusal (and outside the game's lock): read the game
        again if the database is ahead of this process's copy (a version
        whose message never came), so the next move can succeed; a failure
        here is logged, never the caller's answer."""
        try:
            await self.refresh(game_id)
        except Exception as err:
            log.warning("broker: game %s not read again after a stale move (%s)", game_id, err)


class RedisBroker(LocalBroker):
    """Many processes on one database and one Redis (see the module's
    docstring)."""

    shared = True

    def __init__(self, host: BrokerHost, url: str, prefix: str | None = None) -> None:
        super().__init__(host)
        import redis.asyncio as aioredis

        self.url = url
        self.prefix = prefix or os.environ.get("DONUTBOX_BROKER_PREFIX") or "donutbox"
        self.origin = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._head = self.origin.encode() + b"\n"
        self.channel = f"{self.prefix}:games"
        self.active_key = f"{self.prefix}:active"
        self.client: Any = aioredis.from_url(url, socket_connect_timeout=5)
        self._renew = self.client.register_script(_RENEW)
        self._release = self.client.register_script(_RELEASE)
        self._take = self.client.register_script(_TAKE)
        #: the shared rate limits' own client (throttle.RedisBuckets)
        self.buckets_client: Any = None
        #: games whose lease this process holds, and those being asked for
        self.held: set[str] = set()
        #: when each held lease was last set or renewed (asked at, monotonic)
        self.held_at: dict[str, float] = {}
        self.wanted: set[str] = set()
        #: held games whose AI seat or clock wanted to act while the lease
        #: was not trusted (a renewal late): resumed once it is (``_resume``)
        self.stalled: set[str] = set()
        #: when another process was found holding a game's lease
        self.refused: dict[str, float] = {}
        #: per game, per other process: (seats connected, spectators, when)
        self.remote: dict[str, dict[str, tuple[set[int], int, float]]] = {}
        #: the newest version heard of, for games not in memory here
        self.heard: OrderedDict[str, int] = OrderedDict()
        #: per game, the version whose clock start was announced or heard
        #: (dropped when the game is released or leaves memory)
        self.clock_known: dict[str, int] = {}
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue(OUTBOX)
        self._inbox: dict[str, list[dict[str, Any]]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._spawned: set[asyncio.Task[Any]] = set()
        #: when the held leases were last renewed (asked at)
        self._renewed = time.monotonic()
        #: set by ``close``: the loops stop at their next turn
        self._closing = False
        #: a batch of messages is on its way to Redis
        self._sending = False
        self.applied = 0
        self.malformed = 0
        self.reloads = 0
        self.unsent = 0
        self.takeovers = 0
        #: games found behind the database by ``reconcile``
        self.reconciled = 0

    # -- life ---------------------------------------------------------------

    async def start(self) -> None:
        await self.client.ping()
        self.buckets_client = throttle.RedisBuckets.client_for(self.url)
        throttle.use_shared(throttle.RedisBuckets(self.buckets_client, self.prefix))
        ready = asyncio.Event()
        self._tasks = [
            asyncio.ensure_future(self._listen(ready)),
            asyncio.ensure_future(self._send_forever()),
            asyncio.ensure_future(self._leases_forever()),
            asyncio.ensure_future(self._beat_forever()),
            asyncio.ensure_future(self._reconcile_forever()),
        ]
        await asyncio.wait_for(ready.wait(), 10)

    async def close(self) -> None:
        throttle.use_shared(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._drain(), 2)
        self._closing = True
        await _stop([*self._tasks, *self._spawned])
        with contextlib.suppress(Exception):
            # Leases given back at once, so another process need not wait for
            # them to expire.
            for game_id in list(self.held):
                await self._release(keys=[self._lease(game_id)], args=[self.origin])
            await self.client.publish(self.channel, self._head + orjson.dumps({"k": "bye"}))
        with contextlib.suppress(Exception):
            await self.client.aclose()
        if self.buckets_client is not None:
            with contextlib.suppress(Exception):
                await self.buckets_client.aclose()

    async def _drain(self) -> None:
        # Until the last batch has reached Redis, not merely left the queue.
        while not self._outbox.empty() or self._sending:
            await asyncio.sleep(0.01)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._spawned.add(task)
        task.add_done_callback(self._spawned.discard)

    def _lease(self, game_id: str) -> str:
        return f"{self.prefix}:lease:{game_id}"

    # -- publishing -----------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        # The sender's name first, on a line of its own: a process skips its
        # own messages without parsing them.
        try:
            self._outbox.put_nowait(self._head + orjson.dumps(message))
        except asyncio.QueueFull:  # Redis has been away a while: dropped (see below)
            self.unsent += 1

    async def _send_forever(self) -> None:
        # One task sends everything, so this process's messages reach Redis
        # in the order they were made.
        while not self._closing:
            batch = [await self._outbox.get()]
            while len(batch) < 200 and not self._outbox.empty():
                batch.append(self._outbox.get_nowait())
            self._sending = True
            try:
                if len(batch) == 1:
                    await self.client.publish(self.channel, batch[0])
                else:  # one round trip for what queued up meanwhile
                    pipe = self.client.pipeline(transaction=False)
                    for data in batch:
                        pipe.publish(self.channel, data)
                    await pipe.execute()
            except Exception as err:
                # Dropped: the next message shows the others the gap, and
                # they read the game from the database.
                self.unsent += 1
                if self.unsent == 1 or self.unsent % 1000 == 0:
                    log.error("broker: could not publish (%s; %d unsent)", err, self.unsent)
            finally:
                self._sending = False

    def published(self, s: GameSession) -> None:
        if failpoints.crash_soon("before-publish", failpoints.PUBLISH_GRACE):
            return
        if s.over:
            self.release(s.id)  # nothing left to run
        self._send(
            {
                "k": "v",
                "g": s.id,
                "v": s.version,
                "r": dump(s.game),
                "op": s.options,
                "f": s.over,
                "e": clock_ref(s),
                "tb": _takeback_wire(s.takeback),
            }
        )

    def clock_started(self, s: GameSession) -> None:
        if self.clock_known.get(s.id) == s.version:
            return
        self.clock_known[s.id] = s.version
        self._send({"k": "c", "g": s.id, "v": s.version, "e": clock_ref(s)})

    # -- hearing ------------------------------------------------------------------

    async def _listen(self, ready: asyncio.Event) -> None:
        pause = 0.1
        first = True
        while not self._closing:
            pubsub = self.client.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                ready.set()
                if not first:
                    # Messages may have been missed meanwhile: catch up; and
                    # leases dropped while Redis was away are asked for again.
                    for game_id in list(self.host.sessions):
                        self._spawn(self.refresh(game_id))
                    self._ask_again()
                first = False
                pause = 0.1
                while not self._closing:
                    item = await pubsub.get_message(ignore_subscribe_messages=True, timeout=5.0)
                    if item is None or item.get("type") != "message":
                        continue
                    head, _, body = bytes(item["data"]).partition(b"\n")
                    if head + b"\n" == self._head:
                        continue  # this process's own
                    try:
                        msg = orjson.loads(body)
                        if not isinstance(msg, dict):
                            raise ValueError("not an object")
                        msg["o"] = head.decode()
                        self._hear(msg)
                    except Exception as err:
                        # One bad message (another version's, or garbage) is
                        # skipped: not a reconnection and a catch-up of
                        # every game.
                        self.malformed += 1
                        if self.malformed == 1 or self.malformed % 1000 == 0:
                            log.error(
                                "broker: a message skipped (%s; %d so far)", err, self.malformed
                            )
            except asyncio.CancelledError:
                raise
            except Exception as err:
                log.error("broker: lost Redis (%s); reconnecting", err)
                await asyncio.sleep(pause)
                pause = min(2.0, pause * 2)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _hear(self, msg: dict[str, Any]) -> None:
        origin = msg.get("o")
        if origin == self.origin:
            return
        kind = msg.get("k")
        if kind == "bye":
            self._forget_origin(str(origin))
            return
        if kind == "P":  # a beat: the presence of all its games at once
            beat = msg.get("p")
            for game_id, (seats, spectators) in (beat if isinstance(beat, dict) else {}).items():
                self._hear_presence(str(game_id), str(origin), {"s": seats, "n": spectators})
            return
        game_id = msg.get("g")
        if not isinstance(game_id, str):
            return
        if kind == "p":
            self._hear_presence(game_id, str(origin), msg)
            return
        host = self.host
        if game_id not in host.sessions:
            if kind == "v":
                self.heard[game_id] = max(int(msg["v"]), self.heard.pop(game_id, -1))
                while len(self.heard) > HEARD:
                    self.heard.popitem(last=False)
            return
        # One game's messages are applied one at a time, in arrival order.
        queue = self._inbox.get(game_id)
        if queue is not None:
            queue.append(msg)
            return
        self._inbox[game_id] = [msg]
        self._spawn(self._apply_all(game_id))

    async def _apply_all(self, game_id: str) -> None:
        try:
            queue = self._inbox[game_id]
            while queue:
                msg = queue.pop(0)
                try:
                    if msg["k"] == "v":
                        await self._apply_version(game_id, msg)
                    elif msg["k"] == "c":
                        await self._apply_clock(game_id, msg)
                except (StorageError, NoSuchGame) as err:
                    log.warning("broker: game %s not brought up to date: %s", game_id, err)
                except Exception:
                    log.exception("broker: a message about game %s failed", game_id)
        finally:
            self._inbox.pop(game_id, None)

    async def _apply_version(self, game_id: str, msg: dict[str, Any]) -> None:
        host = self.host
        lock = host.locks.get(game_id)
        if lock is None:
            return
        version = int(msg["v"])
        takeback = _takeback_of(msg.get("tb"))
        async with lock:
            s = host.sessions.get(game_id)
            if s is None or version < s.version:
                return
            if version == s.version:
                # The same version again: a takeback asked for or answered
                # on that process (or nothing new).
                if takeback == s.takeback:
                    return
                s.takeback = takeback
                host.fanout.publish(s)
                return
            if version == s.version + 1:
                stored = StoredGame(
                    id=s.id,
                    version=version,
                    title=s.title,
                    mode=s.mode,
                    seats=list(s.seats),
                    options=msg["op"],
                    finished=bool(msg["f"]),
                    record=msg["r"],
                    created=datetime.now(UTC),
                    updated=datetime.now(UTC),
                )
                adopt(s, stored, msg.get("e"))
                s.takeback = takeback
                self.applied += 1
            else:  # a gap: the database has what was missed
                if not await self._reload(s):
                    return
            host.fanout.publish(s)
        self._after_change(s)

    async def _reload(self, s: GameSession) -> bool:
        """Under the game's lock: read it from the database; True if newer."""
        # Not through the work pool (limits.run_blocking): a takeover of many
        # games, or a catch-up of all of them, must not be refused as
        # Overloaded (as Hub._load).
        stored = await asyncio.to_thread(s.store.get, s.id)
        if stored is None or stored.version <= s.version:
            return False
        adopt(s, stored, None)
        self.reloads += 1
        return True

    async def refresh(self, game_id: str) -> bool:
        host = self.host
        lock = host.locks.get(game_id)
        s = host.sessions.get(game_id)
        if lock is None or s is None:
            return False
        async with lock:
            if host.sessions.get(game_id) is not s or not await self._reload(s):
                return False
            host.fanout.publish(s)
        self._after_change(s)
        return True

    async def check_stored(self, game_id: str) -> None:
        host = self.host
        s = host.sessions.get(game_id)
        if s is None:
            return
        try:
            stored = await asyncio.to_thread(s.store.versions, [game_id])
            if stored.get(game_id, -1) > s.version:
                await self.refresh(game_id)
        except Exception as err:  # answered from memory, as before
            log.warning("broker: game %s not compared with the database (%s)", game_id, err)

    async def reconcile(self) -> int:
        """Find what another process stored without telling this one (it
        died between its commit and its message, or the message was lost):
        the stored versions of the games in memory that someone waits on
        (a reader here, or this process's lease: an AI seat or a clock), in
        one query; each game found ahead of memory is read again and its
        readers are sent it.  How many were."""
        host = self.host
        watched = [g for g in host.sessions if g in self.held or host.fanout.count(g)]
        if not watched:
            return 0
        stored = await asyncio.to_thread(host.store.versions, watched)
        behind = 0
        for game_id in watched:
            s = host.sessions.get(game_id)
            if s is not None and stored.get(game_id, -1) > s.version:
                behind += await self.refresh(game_id)
        self.reconciled += behind
        return behind

    async def _reconcile_forever(self) -> None:
        while not self._closing:
            await asyncio.sleep(RECONCILE_SECONDS)
            try:
                await self.reconcile()
            except asyncio.CancelledError:
                raise
            except Exception as err:
                log.error("broker: games not compared with the database (%s)", _said(err))

    def _after_change(self, s: GameSession) -> None:
        host = self.host
        if s.over:
            self.release(s.id)
        host.kick_ai(s.id)
        host.watch_clock(s)

    async def _apply_clock(self, game_id: str, msg: dict[str, Any]) -> None:
        host = self.host
        lock = host.locks.get(game_id)
        if lock is None:
            return
        async with lock:
            s = host.sessions.get(game_id)
            if s is None or s.version != int(msg["v"]) or s.clock is None:
                return
            elapsed = msg.get("e")
            self.clock_known[game_id] = s.version
            s.clock.running = True
            s.clock.turn_started = time.monotonic() if elapsed is None else _monotonic_of(elapsed)
            host.fanout.publish(s)
        host.watch_clock(s)

    def installed(self, s: GameSession) -> None:
        seats, _ = self.elsewhere(s.id)
        s.joined |= seats
        heard = self.heard.pop(s.id, None)
        if heard is not None and heard > s.version:
            self._spawn(self.refresh(s.id))

    # -- presence -----------------------------------------------------------------

    def _local_presence(self, game_id: str) -> tuple[list[int], int]:
        host = self.host
        seats: set[int] = set()
        spectators = 0
        for c in host.fanout.of(game_id):
            if not c.online or c.seat is None:
                continue
            if c.seat < 0:
                spectators += 1
            else:
                seats.add(c.seat)
        return sorted(seats), spectators

    def presence_changed(self, game_id: str) -> None:
        seats, spectators = self._local_presence(game_id)
        self._send({"k": "p", "g": game_id, "s": seats, "n": spectators})

    def _hear_presence(self, game_id: str, origin: str, msg: dict[str, Any]) -> None:
        seats = {int(x) for x in msg.get("s") or []}
        spectators = int(msg.get("n") or 0)
        per_game = self.remote.setdefault(game_id, {})
        before = per_game.get(origin)
        if seats or spectators:
            per_game[origin] = (seats, spectators, time.monotonic())
        else:
            per_game.pop(origin, None)
            if not per_game:
                del self.remote[game_id]
        if before is not None and before[0] == seats and before[1] == spectators:
            return  # a beat: nothing new
        host = self.host
        s = host.sessions.get(game_id)
        if s is not None:
            s.joined |= seats
            self._maybe_start_clock(s)
        host.fanout.presence_changed(game_id, announce=False)

    def _maybe_start_clock(self, s: GameSession) -> None:
        """Every human seat has joined, some of them on other processes."""
        host = self.host
        lock = host.locks.get(s.id)
        if not s.humans() <= s.joined or lock is None or lock.locked():
            return
        if s.start_clock():
            host.watch_clock(s)
            host.fanout.publish(s)

    def elsewhere(self, game_id: str) -> tuple[set[int], int]:
        per_game = self.remote.get(game_id)
        if not per_game:
            return set(), 0
        now = time.monotonic()
        seats: set[int] = set()
        spectators = 0
        for s, n, when in per_game.values():
            if now - when <= PRESENCE_STALE:
                seats |= s
                spectators += n
        return seats, spectators

    def _forget_origin(self, origin: str) -> None:
        for game_id in list(self.remote):
            if self.remote[game_id].pop(origin, None) is not None:
                if not self.remote[game_id]:
                    del self.remote[game_id]
                self.host.fanout.presence_changed(game_id, announce=False)

    async def _beat_forever(self) -> None:
        while not self._closing:
            await asyncio.sleep(PRESENCE_BEAT)
            beat: dict[str, list[Any]] = {}
            for game_id in list(self.host.fanout.readers):
                seats, spectators = self._local_presence(game_id)
                if seats or spectators:
                    beat[game_id] = [seats, spectators]
            if beat:
                self._send({"k": "P", "p": beat})
            now = time.monotonic()
            for game_id in list(self.remote):
                per_game = self.remote[game_id]
                stale = [o for o, (_, _, when) in per_game.items() if now - when > PRESENCE_STALE]
                for origin in stale:
                    del per_game[origin]
                if not per_game:
                    del self.remote[game_id]
                if stale:
                    self.host.fanout.presence_changed(game_id, announce=False)

    # -- leases ---------------------------------------------------------------------

    def holds(self, game_id: str) -> bool:
        # Held, and set or renewed recently enough that it cannot have
        # expired in Redis meanwhile (a renewal that hangs does not keep it).
        at = self.held_at.get(game_id)
        return game_id in self.held and at is not None and time.monotonic() - at < _valid()

    def want(self, game_id: str) -> None:
        if game_id in self.held:
            if not self.holds(game_id):
                # Held, but a renewal is late: the AI seat or clock that
                # asked carries on once it is renewed (``_resume``), or once
                # asked for again if it expired meanwhile (``_scan``).
                self.stalled.add(game_id)
            return
        if game_id in self.wanted:
            return
        refused = self.refused.get(game_id)
        if refused is not None and time.monotonic() - refused < RENEW_SECONDS:
            return  # held elsewhere a moment ago: not a Redis call a move
        self.wanted.add(game_id)
        self._spawn(self._acquire(game_id))

    async def _acquire(self, game_id: str) -> None:
        host = self.host
        try:
            try:
                asked = time.monotonic()
                # Free, or still this process's in Redis (dropped here while
                # Redis was slow to answer): ours.
                got = await asyncio.wait_for(
                    self._take(keys=[self._lease(game_id)], args=[self.origin, LEASE_MS]),
                    RENEW_TIMEOUT,
                )
                if not got:
                    # Another process runs it (the scan takes it if that one dies).
                    self.refused[game_id] = time.monotonic()
                    while len(self.refused) > HEARD:
                        self.refused.pop(next(iter(self.refused)))
                    return
                self.refused.pop(game_id, None)
                added = await asyncio.wait_for(
                    self.client.sadd(self.active_key, game_id), RENEW_TIMEOUT
                )
            except Exception as err:
                # Asked for again by the scan (the game stays listed) or by
                # the next move.
                log.error(
                    "broker: could not ask for the lease of game %s (%s)", game_id, _said(err)
                )
                return
            self.held.add(game_id)
            self.held_at[game_id] = asked
            try:
                s = await host.load(game_id)
            except (NoSuchGame, StorageError):
                self.release(game_id)
                return
            # The database may hold a version whose message never came (its
            # writer died between storing and publishing).
            try:
                await self.refresh(game_id)
            except Exception as err:  # the seats and clock are started anyway
                log.warning("broker: game %s not read again on taking its lease (%s)", game_id, err)
            s = host.sessions.get(game_id) or s
            if s.over:
                self.release(game_id)
                return
            if not added:
                # Taken over from a process that died: its turn's clock
                # restarts now (the time nobody ran it is not charged).
                self.takeovers += 1
                log.warning("broker: took over game %s", game_id)
                lock = host.locks.get(game_id)
                if s.clock is not None and s.clock.running and lock is not None:
                    async with lock:
                        s.clock.turn_started = time.monotonic()
                        self.clock_known[game_id] = s.version
                        self._send({"k": "c", "g": game_id, "v": s.version, "e": clock_ref(s)})
                        host.fanout.publish(s)
            host.kick_ai(game_id)
            host.watch_clock(s)
        finally:
            self.wanted.discard(game_id)

    def release(self, game_id: str) -> None:
        if game_id not in self.held:
            return
        self._drop(game_id)
        self.clock_known.pop(game_id, None)
        self._spawn(self._give_back(game_id))

    def _drop(self, game_id: str) -> None:
        """Not held here any more: its clock stops being watched here."""
        self.held.discard(game_id)
        self.held_at.pop(game_id, None)
        self.stalled.discard(game_id)
        self.host.stop_clock(game_id)

    async def _give_back(self, game_id: str) -> None:
        try:
            await self.client.srem(self.active_key, game_id)
            await self._release(keys=[self._lease(game_id)], args=[self.origin])
        except Exception as err:
            log.error("broker: could not give back the lease of game %s (%s)", game_id, err)

    async def _leases_forever(self) -> None:
        last_renew = 0.0
        while not self._closing:
            await asyncio.sleep(SCAN_SECONDS)
            if time.monotonic() - last_renew >= RENEW_SECONDS:
                last_renew = time.monotonic()
                try:
                    await self._renew_all()
                except asyncio.CancelledError:
                    raise
                except Exception as err:
                    log.error("broker: leases not renewed (%s)", _said(err))
                    if self.held and time.monotonic() - self._renewed > LEASE_MS / 1000:
                        # They have expired by now: another process may run
                        # these games; this one stops (it asks again when
                        # Redis is back, through the scan).
                        log.error("broker: %d leases expired without Redis", len(self.held))
                        for game_id in list(self.held):
                            self._drop(game_id)
                        self._ask_again()
            try:
                # Even when the renewal failed: a lease that expired is
                # asked for again, by this process too.
                await asyncio.wait_for(self._scan(), RENEW_TIMEOUT)
            except asyncio.CancelledError:
                raise
            except Exception as err:
                log.error("broker: games whose holder died not looked for (%s)", _said(err))
            self._resume()

    def _resume(self) -> None:
        """The games whose AI seat or clock gave up while their lease was not
        trusted, and whose lease is trusted again (renewed, or taken again):
        their AI seat is kicked and their clock watched again (nothing else
        would before the next move)."""
        host = self.host
        for game_id in list(self.stalled):
            if game_id not in self.held:  # dropped: asked for again meanwhile
                self.stalled.discard(game_id)
                continue
            if not self.holds(game_id) or host.ai_thinking(game_id):
                continue  # next round (a thinking seat is ending its turn)
            self.stalled.discard(game_id)
            s = host.sessions.get(game_id)
            if s is not None and not s.over:
                host.kick_ai(game_id)
                host.watch_clock(s)

    def _ask_again(self) -> None:
        """Every game in memory with an AI seat to move or a running clock
        asks for its lease again (after leases were dropped without Redis,
        and when it is back: nothing else would ask while nobody moves)."""
        host = self.host
        for game_id, s in list(host.sessions.items()):
            if s.over:
                continue
            host.kick_ai(game_id)
            host.watch_clock(s)

    async def _renew_all(self) -> None:
        host = self.host
        for game_id in list(self.held):
            s = host.sessions.get(game_id)
            if s is None or s.over:
                self.release(game_id)
        # games that left memory (held here or not)
        for game_id in [g for g in self.clock_known if g not in host.sessions]:
            del self.clock_known[game_id]
        games = sorted(self.held)
        if not games:
            self._renewed = time.monotonic()
            return
        asked = time.monotonic()
        kept = await asyncio.wait_for(
            self._renew(keys=[self._lease(g) for g in games], args=[self.origin, LEASE_MS]),
            RENEW_TIMEOUT,
        )
        self._renewed = asked
        for game_id, ok in zip(games, kept, strict=True):
            if ok and game_id in self.held:
                self.held_at[game_id] = asked
            if not ok and game_id in self.held:
                log.warning("broker: lost the lease of game %s", game_id)
                self._drop(game_id)
                # Asked for again: it is free if Redis lost it (a restart),
                # and refused if another process has taken the game over.
                self.want(game_id)

    async def _scan(self) -> None:
        """Games whose lease expired while they are still listed: their
        holder died, or is this process with renewals too late (held here
        but not trusted).  Each is asked for again (by every process: one
        gets it).  A lease held here but not trusted that another process
        has taken is let go."""
        members = await self.client.smembers(self.active_key)
        games = [m.decode() if isinstance(m, bytes) else str(m) for m in members]
        games = [g for g in games if g not in self.wanted and not self.holds(g)]
        if not games:
            return
        holders = await self.client.mget([self._lease(g) for g in games])
        for game_id, holder in zip(games, holders, strict=True):
            if holder is None:
                if game_id in self.held:
                    log.warning("broker: the lease of game %s expired here", game_id)
                    self._drop(game_id)
                self.want(game_id)
            elif game_id in self.held and holder != self.origin.encode():
                log.warning("broker: game %s was taken over by another process", game_id)
                self._drop(game_id)


def _said(err: BaseException) -> str:
    """An error in a few words (a timeout's text is empty)."""
    return str(err).strip().split("\n")[0] or type(err).__name__


#: How long ``close`` waits for the broker's tasks to stop (seconds).
STOP_SECONDS = 5.0


async def _stop(tasks: list[asyncio.Task[Any]]) -> None:
    """Cancel ``tasks`` and wait for them to end, cancelling again those that
    carry on: redis-py (8.1) can swallow a cancellation that lands while a
    command is in flight (the task then waits on its queue for ever, and the
    app's shutdown with it), and a second one lands on an ordinary await.
    Given up on, with a log line, after STOP_SECONDS."""
    pending = {t for t in tasks if not t.done()}
    deadline = time.monotonic() + STOP_SECONDS
    while pending:
        for task in pending:
            task.cancel()
        left = deadline - time.monotonic()
        if left <= 0:
            log.error("broker: %d tasks did not stop at shutdown", len(pending))
            return
        _, pending = await asyncio.wait(pending, timeout=min(0.2, left))
    for task in tasks:  # their ends retrieved: asyncio logs nothing
        if task.done() and not task.cancelled():
            task.exception()


def _takeback_wire(takeback: tuple[int, int, set[int]] | None) -> list[Any] | None:
    if takeback is None:
        return None
    by, version, agreed = takeback
    return [by, version, sorted(agreed)]


def _takeback_of(wire: Any) -> tuple[int, int, set[int]] | None:
    if not isinstance(wire, list) or len(wire) != 3:
        return None
    by, version, agreed = wire
    return int(by), int(version), {int(x) for x in agreed}


def adopt(s: GameSession, stored: StoredGame, elapsed: float | None) -> None:
    """Make ``s`` the game as ``stored`` (a newer version stored by another
    process): one move played on its game when that is all that changed, the
    record played back otherwise.  What only this process knows of the game
    (the seats that joined here) is kept."""
    record = stored.record
    game: Game | None = None
    old = dump(s.game)
    moves = record.get("moves")
    if (
        isinstance(moves, list)
        and moves
        and moves[:-1] == old.get("moves")
        and {k: v for k, v in record.items() if k != "moves"}
        == {k: v for k, v in old.items() if k != "moves"}
    ):
        trial = s.game.copy()
        try:
            trial.play(moves[-1])
            game = trial
        except Exception:
            game = None
    if game is None:
        game = load(record)
    s.game = game
    s.version = stored.version
    s.options = dict(stored.options)
    online = s.options.get("online") or {}
    clock = online.get("clock")
    s.clock = Clock.from_dict(clock) if clock else None
    if s.clock is not None and s.clock.running:
        s.clock.turn_started = time.monotonic() if elapsed is None else _monotonic_of(elapsed)
    s.takeback = None


#: How the hub makes its broker: given the hub (``BrokerHost``), the broker.
BrokerFactory = Callable[[BrokerHost], LocalBroker]


def make_broker(url: str | None) -> BrokerFactory:
    """How to make the broker for ``url`` (``redis://`` or ``rediss://``),
    or the in-process one for None (the hub makes it, handing itself over
    as the broker's host)."""
    if not url:
        return LocalBroker
    return functools.partial(_redis_broker, url=url)


def _redis_broker(host: BrokerHost, url: str) -> LocalBroker:
    return RedisBroker(host, url)


def check_url(url: str) -> None:
    """Refuse a broker URL that is not Redis's or whose server does not
    answer, in one line (ValueError)."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"--broker '{url}': give a Redis URL, e.g. redis://localhost:6379/0")
    try:
        import redis
    except ImportError:
        raise ValueError("--broker: the 'redis' package is not installed") from None
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise ValueError(f"--broker: cannot reach Redis at {url} ({reason})") from None


#: The PostgreSQL advisory lock key taken while a process creates and
#: migrates the schema (any fixed 64-bit number; "donutbox" in ASCII).
SCHEMA_LOCK = 0x646F6E7574626F78
#: How long a starting process waits for another's migration at most
#: (seconds; ``DONUTBOX_SCHEMA_WAIT`` overrides it).
SCHEMA_WAIT = 120.0


@contextlib.contextmanager
def schema_lock(db_url: str | None) -> Iterator[None]:
    """On PostgreSQL, processes starting together create and migrate the
    schema one at a time: a session advisory lock, taken on a connection of
    its own in autocommit mode (no transaction is open while it waits or
    holds it), always given back (closing the connection gives it back even
    if the unlock fails), and waited for at most ``SCHEMA_WAIT`` seconds:
    beyond, a ValueError names the PostgreSQL backend that holds it.
    Elsewhere nothing.  If the server cannot be reached, nothing is locked:
    the caller reports it."""
    if not db_url or not db_url.startswith("postgresql"):
        yield
        return
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    wait = float(os.environ.get("DONUTBOX_SCHEMA_WAIT") or SCHEMA_WAIT)
    engine = create_engine(
        db_url,
        poolclass=NullPool,
        isolation_level="AUTOCOMMIT",
        connect_args={"connect_timeout": 10},
    )
    try:
        try:
            conn = engine.connect()
        except Exception:
            conn = None
        if conn is not None:
            try:
                _take_schema_lock(conn, text, wait)
            except BaseException:
                conn.close()
                raise
        try:
            yield
        finally:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": SCHEMA_LOCK})
                conn.close()
    finally:
        engine.dispose()


def _take_schema_lock(conn: Any, text: Any, wait: float) -> None:
    deadline = time.monotonic() + wait
    said = False
    while not conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": SCHEMA_LOCK}).scalar():
        if not said:
            log.warning("storage: waiting for another process to create or migrate the schema")
            said = True
        if time.monotonic() >= deadline:
            row = conn.execute(
                text(
                    "SELECT l.pid, a.state, a.backend_start FROM pg_locks l"
                    " LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
                    " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                    " AND l.classid::text::bigint = :hi AND l.objid::text::bigint = :lo"
                    " AND l.database = (SELECT oid FROM pg_database"
                    " WHERE datname = current_database())"
                ),
                {"hi": SCHEMA_LOCK >> 32, "lo": SCHEMA_LOCK & 0xFFFFFFFF},
            ).first()
            who = f"PostgreSQL backend {row[0]} ({row[1] or 'unknown state'})" if row else "?"
            raise ValueError(
                f"another process has held the schema lock for over {wait:.0f} s ({who}): "
                "is a server stuck starting? stop it, or free the lock with "
                f"SELECT pg_terminate_backend({row[0] if row else 'pid'})"
            )
        time.sleep(0.2)
