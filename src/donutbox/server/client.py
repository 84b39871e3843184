"""A client for online games over a real WebSocket, for bots, tests and the
load script (``benchmarks/load_online.py``).

It behaves as the browser page does: it says hello with its link's token,
keeps the newest state it was sent (never an older version), and when the
connection drops (network, server restart) it reconnects by itself with a
growing pause and says hello again, which brings the whole current state.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from typing import Any

import websockets


class OnlineClient:
    def __init__(self, base: str, game_id: str, token: str, *, max_pause: float = 2.0) -> None:
        base = base.rstrip("/").replace("http://", "ws://").replace("https://", "wss://")
        self.url = f"{base}/api/online/{game_id}/ws"
        self.token = token
        self.max_pause = max_pause
        self.state: dict[str, Any] | None = None
        self.seat: int | None = None
        self.presence: dict[str, Any] | None = None
        self.errors: list[str] = []
        self.connects = 0
        self.introduced = False
        self._ws: Any = None
        self._changed = asyncio.Event()
        self._replies: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._refs = itertools.count(1)
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    # -- lifecycle ----------------------------------------------------------------

    async def start(self, timeout: float = 10.0) -> None:
        self._task = asyncio.create_task(self._run())
        await self.wait(lambda s: True, timeout)

    async def close(self) -> None:
        self._closing = True
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    async def _run(self) -> None:
        pause = 0.05
        while not self._closing:
            try:
                async with websockets.connect(self.url, open_timeout=5, max_size=2**22) as ws:
                    self._ws = ws
                    self.connects += 1
                    await ws.send(json.dumps({"type": "hello", "token": self.token}))
                    pause = 0.05
                    async for raw in ws:
                        self._receive(json.loads(raw))
            except (TimeoutError, OSError, websockets.WebSocketException):
                pass
            finally:
                self._ws = None
                self.introduced = False
                # Whatever was in flight is unknown now: its sender looks at
                # the state after the reconnect.
                for fut in self._replies.values():
                    if not fut.done():
                        fut.set_result({"type": "lost"})
                self._replies.clear()
            if self._closing:
                return
            await asyncio.sleep(pause)
            pause = min(self.max_pause, pause * 2)

    def _receive(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "welcome":
            self.seat = msg["seat"]
            self.introduced = True
        elif kind == "state":
            state = msg["state"]
            if self.state is None or state["version"] >= self.state["version"]:
                self.state = state
                self.presence = state.get("presence", self.presence)
        elif kind == "presence":
            self.presence = msg["presence"]
        elif kind == "error":
            self.errors.append(msg["reason"])
        ref = msg.get("ref")
        if ref is not None and kind in ("ack", "error", "pong", "preview"):
            fut = self._replies.pop(ref, None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
        self._changed.set()

    # -- waiting and acting ------------------------------------------------------

    async def wait(self, predicate: Any, timeout: float = 10.0) -> dict[str, Any]:
        """Wait until the newest state satisfies ``predicate``; return it."""
        deadline = time.monotonic() + timeout
        while True:
            if self.state is not None and predicate(self.state):
                return self.state
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the state never became what was awaited")
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    async def request(self, timeout: float = 10.0, **msg: Any) -> dict[str, Any]:
        """Send a message with a fresh ``ref`` and wait for its answer (ack,
        error, pong, preview) or ``{"type": "lost"}`` if the connection
        dropped first."""
        ref = next(self._refs)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[ref] = fut
        ws = self._ws
        if ws is None:
            self._replies.pop(ref, None)
            return {"type": "lost"}
        try:
            await ws.send(json.dumps({**msg, "ref": ref}))
        except websockets.WebSocketException:
            self._replies.pop(ref, None)
            return {"type": "lost"}
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._replies.pop(ref, None)

    async def move(self, move: str, version: int | None = None) -> dict[str, Any]:
        assert self.state is not None
        v = self.state["version"] if version is None else version
        return await self.request(type="move", move=move, version=v)

    async def connected(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self._ws is None or not self.introduced:
            if time.monotonic() > deadline:
                raise TimeoutError("not connected")
            await asyncio.sleep(0.02)
