"""How the lobby's sockets on every process hear that the lobby changed
(docs/community.md, "The lobby on many processes").

The lobby's state is in the database; what travels is only "something
changed" (for everyone, or for one player: an invitation), never the state
itself, so a lost message costs at most a stale screen until the next change,
and after losing Redis a process wakes all its sockets once (they read the
database again).

- ``LocalBus``: one process (no ``--broker``): nothing is sent.
- ``RedisBus``: the broker's Redis (same URL and key prefix), channel
  ``<prefix>:lobby``; its own connection, so the lobby never waits behind
  the games' messages.  A message is the sender's name on a line of its own
  (a process skips its own) and ``{"u": <user id or null>, "p": <user ids
  or null>}``: ``u``, the one player whose sockets to wake (an invitation),
  or null for everyone's; ``p``, the players whose own part of the lobby
  changed (null: anyone's may have, which a message without it means too).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import socket
from collections.abc import Callable
from typing import Any

log = logging.getLogger("donutbox.server.lobby")

#: Notifications waiting for Redis at most (beyond, dropped).
OUTBOX = 1000
#: The longest message taken (a user id: a few bytes).
MAX_MESSAGE = 200

#: What a bus calls with each change heard: the player concerned (or None),
#: and the players whose own part changed (None: anyone's may have).
Hear = Callable[[int | None, list[int] | None], None]
#: A change naming more players than this says "anyone's" instead.
MAX_NAMED = 8


class LocalBus:
    """One process: every change is already known here."""

    def __init__(self) -> None:
        self.origin = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.hear: Hear = lambda only, private: None

    async def start(self, hear: Hear) -> None:
        self.hear = hear

    def publish(self, only: int | None, private: list[int] | None = None) -> None:
        return None

    async def close(self) -> None:
        return None


class RedisBus(LocalBus):
    def __init__(self, url: str, prefix: str) -> None:
        super().__init__()
        import redis.asyncio as aioredis

        self.channel = f"{prefix}:lobby"
        self.client: Any = aioredis.from_url(url, socket_connect_timeout=5, socket_timeout=10)
        self._head = self.origin.encode() + b"\n"
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue(OUTBOX)
        self._tasks: list[asyncio.Task[None]] = []
        self.unsent = 0
        self.heard = 0

    async def start(self, hear: Hear) -> None:
        await super().start(hear)
        ready = asyncio.Event()
        self._tasks = [
            asyncio.ensure_future(self._listen(ready)),
            asyncio.ensure_future(self._send_forever()),
        ]
        await asyncio.wait_for(ready.wait(), 10)

    def publish(self, only: int | None, private: list[int] | None = None) -> None:
        if private is not None and len(private) > MAX_NAMED:
            private = None
        try:
            message = {"u": only, "p": private}
            self._outbox.put_nowait(self._head + json.dumps(message).encode())
        except asyncio.QueueFull:
            self.unsent += 1

    async def _send_forever(self) -> None:
        while True:
            data = await self._outbox.get()
            try:
                await self.client.publish(self.channel, data)
            except Exception as err:
                self.unsent += 1
                if self.unsent == 1 or self.unsent % 1000 == 0:
                    log.error("lobby: could not publish (%s; %d unsent)", err, self.unsent)

    async def _listen(self, ready: asyncio.Event) -> None:
        pause = 0.1
        first = True
        while True:
            pubsub = self.client.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                ready.set()
                if not first:
                    self.hear(None, None)  # changes may have been missed: all read again
                first = False
                pause = 0.1
                while True:
                    item = await pubsub.get_message(ignore_subscribe_messages=True, timeout=5.0)
                    if item is None or item.get("type") != "message":
                        continue
                    self._take(bytes(item["data"]))
            except asyncio.CancelledError:
                raise
            except Exception as err:
                log.error("lobby: lost Redis (%s); reconnecting", err)
                await asyncio.sleep(pause)
                pause = min(2.0, pause * 2)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _take(self, data: bytes) -> None:
        """One message: skipped if this process's own or malformed."""
        if len(data) > MAX_MESSAGE:
            return
        head, _, body = data.partition(b"\n")
        if head + b"\n" == self._head:
            return
        try:
            msg = json.loads(body)
            only, private = msg.get("u"), msg.get("p")
        except (ValueError, AttributeError):
            return
        if only is not None and not _an_id(only):
            return
        if private is not None and not (
            isinstance(private, list) and len(private) <= MAX_NAMED and all(map(_an_id, private))
        ):
            private = None  # not understood: anyone's part may have changed
        self.heard += 1
        self.hear(only, private)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2):
                while not self._outbox.empty():
                    await asyncio.sleep(0.01)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        with contextlib.suppress(Exception):
            await self.client.aclose()


def _an_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def make_bus(broker: Any) -> LocalBus:
    """The bus of the server's broker: Redis's when it has one (its URL and
    key prefix), else the in-process one."""
    if getattr(broker, "shared", False):
        return RedisBus(str(broker.url), str(broker.prefix))
    return LocalBus()
