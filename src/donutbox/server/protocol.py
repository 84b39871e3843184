"""The online WebSocket protocol (docs/online.md): hello, then intents.

A socket to ``/api/online/{game}/ws`` must say hello with its link's token
within ``HELLO_TIMEOUT`` seconds; then it may send moves, previews,
takebacks, answers, syncs and pings.  Every message is parsed strictly
(``online.parse_message``: types, sizes) and rate-limited per connection
(``online.RateLimit``); a refusal is an ``error`` message naming the field,
and the socket stays open, except for a flood (``RATE_CLOSE`` refusals in a
row) or a game already watched by ``MAX_SPECTATORS``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect

from . import limits
from .errors import ActionError, Busy, Conflict, NoSuchGame, NotAllowed, NotIntroduced, Stale
from .fanout import Connection
from .hub import Hub
from .online import RATE_CLOSE, BadMessage, parse_message
from .session import SPECTATOR
from .storage import CorruptGame, StorageError

#: Seconds a new connection has to say hello.
HELLO_TIMEOUT = 10.0
#: Spectators one game may have at once; the next one is refused.
MAX_SPECTATORS = 50
#: Close codes the page acts on.
CLOSE_NO_GAME = 4404
CLOSE_WRONG_KIND = 4403
CLOSE_FULL = 4429


async def refuse(ws: WebSocket, code: int) -> None:
    """Close a socket with a reason the page can act on (4404: no such game,
    4403: the wrong kind of game).  It is accepted first: a socket closed
    during the handshake reaches a browser as a plain failure (HTTP 403,
    close code 1006), which a client would take for a network drop and retry
    for ever."""
    await ws.accept()
    await ws.close(code=code)


async def serve_online(ws: WebSocket, hub: Hub, game_id: str) -> None:
    """One online reader's socket, from accept to close.  The game is looked
    up at the hello, with its token: an id that does not exist and a token
    that opens nothing get the same answer (an ``error`` ``token: no such
    game, or this link does not open it``, then close 4404), so a stranger
    cannot tell a real game from a guessed id.

    Until its hello introduces it, a socket takes one of its address's
    ``limits.MAX_UNINTRODUCED_PER_ADDRESS`` places; with none free the
    handshake is refused before anything is set up for it (the page tries
    again), so a flood of sockets waiting to be refused cannot pile up."""
    address = limits.client_address(ws.scope)
    waiting = limits.capped(address)  # holds a place in UNINTRODUCED
    if waiting and not limits.UNINTRODUCED.take(address, limits.MAX_UNINTRODUCED_PER_ADDRESS):
        await ws.close()  # before accept: HTTP 403 to the handshake
        return
    try:
        await ws.accept()
    except BaseException:
        if waiting:
            limits.UNINTRODUCED.release(address)
        raise
    conn = Connection(ws.send_text, game_id)
    conn.online = True
    conn.start()  # attached to the game's readers once introduced (hello)
    code = 1000
    try:
        while not conn.closed.is_set():
            timeout = HELLO_TIMEOUT if conn.seat is None else None
            try:
                message = await asyncio.wait_for(ws.receive(), timeout)
            except TimeoutError:
                conn.put({"type": "error", "reason": "hello: none within 10 seconds"})
                break
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            if text is None and message.get("bytes") is not None:
                text = message["bytes"]
            try:
                ok = await receive(hub, conn, text)
                if waiting and conn.seat is not None:  # introduced
                    waiting = False
                    limits.UNINTRODUCED.release(address)
                if not ok:
                    break
            except _Closing as closing:
                conn.put({"type": "error", "reason": closing.reason})
                code = closing.code
                break
    except WebSocketDisconnect:
        pass
    finally:
        if waiting:
            limits.UNINTRODUCED.release(address)
        hub.fanout.detach(conn)
        if conn.writer is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.writer, 2.0)
        with contextlib.suppress(Exception):
            await ws.close(code=code)


class _Closing(ActionError):
    """A refusal after which the socket is closed, with ``code``."""

    code = 1000


class _Full(_Closing, Busy):
    """The game has as many spectators as it takes: the socket is closed."""

    code = CLOSE_FULL


class _Unknown(_Closing, NoSuchGame):
    """No such game, or the token opens nothing in it: the same answer."""

    code = CLOSE_NO_GAME

    def __init__(self) -> None:
        super().__init__("token: no such game, or this link does not open it")


class _Damaged(_Closing):
    """The game's stored record cannot be read: it will not get better."""

    code = 1011


class _WrongKind(_Closing):
    """The owner token of a local game, sent to the online socket."""

    code = CLOSE_WRONG_KIND

    def __init__(self) -> None:
        super().__init__("game: this is not an online game")


async def receive(hub: Hub, conn: Connection, text: str | bytes | None) -> bool:
    """Handle one message from an online reader; False if the connection
    should be closed (too many refused messages)."""
    if not conn.limit.allow():
        conn.put({"type": "error", "reason": "rate limit: too many messages, slow down"})
        return conn.limit.refused < RATE_CLOSE
    try:
        msg = parse_message(text)
    except BadMessage as err:
        conn.put({"type": "error", "reason": str(err)})
        return True
    ref = msg.get("ref")
    try:
        await dispatch(hub, conn, msg)
    except _Closing:
        raise
    except NoSuchGame:
        conn.put({"type": "error", "reason": "game: no such game", "ref": ref})
    except Stale as err:
        # This process's copy may be the one behind: read it again (the
        # readers get the newer state), then refuse.
        await hub.broker.caught_up(conn.game_id)
        conn.put({"type": "error", "reason": err.reason, "ref": ref})
    except ActionError as err:
        conn.put({"type": "error", "reason": err.reason, "ref": ref})
    except StorageError as err:  # logged by the store; the socket stays
        conn.put({"type": "error", "reason": err.reason, "ref": ref})
    return True


async def dispatch(hub: Hub, conn: Connection, msg: dict[str, Any]) -> None:
    kind = msg["type"]
    ref = msg.get("ref")
    if kind == "ping":
        conn.put({"type": "pong", "ref": ref})
        return
    if kind == "hello":
        await hello(hub, conn, msg["token"])
        return
    if conn.seat is None:
        raise NotIntroduced("hello: send your link's token first")
    game_id = conn.game_id
    s = hub.session(game_id)
    if kind == "sync":
        async with hub.lock(game_id):
            state = s.state(conn.seat)
            state["presence"] = hub.fanout.presence(s)
            conn.put({"type": "state", "state": state})
        return
    if conn.seat == SPECTATOR:
        raise NotAllowed(f"{kind}: spectators cannot act")
    async with hub.lock(game_id):
        if kind == "preview":
            conn.put({"type": "preview", "ref": ref, **s.preview(msg["move"], conn.seat)})
            return
        if kind == "move":
            await s.act(msg["move"], msg["version"], conn.seat)
            conn.put({"type": "ack", "ref": ref, "version": s.version})
        elif kind == "takeback":
            await s.ask_takeback(conn.seat, msg["version"])
        elif kind == "answer":
            await s.answer_takeback(conn.seat, msg["accept"], msg["version"])
        elif kind == "resign":
            await s.resign(conn.seat, msg["version"])
            conn.put({"type": "ack", "ref": ref, "version": s.version})
        hub.changed(s)


async def hello(hub: Hub, conn: Connection, token: str) -> None:
    if conn.seat is not None:
        raise Conflict("hello: already introduced")
    try:
        s = await hub.open(conn.game_id, token)
    except NoSuchGame:
        raise _Unknown() from None
    except CorruptGame as err:  # told to the game's own tokens only (Hub.open)
        raise _Damaged(err.reason) from None
    async with hub.lock(conn.game_id):
        seat = s.reader_for(token) if s.online else None
        if seat is None:
            raise _WrongKind() if s.owned_by(token) else _Unknown()
        if seat == SPECTATOR and hub.fanout.spectators(s.id) >= MAX_SPECTATORS:
            raise _Full(
                f"spectators: this game already has {MAX_SPECTATORS} watching; try again later"
            )
        conn.seat = seat
        hub.fanout.attach(conn)
        role = "spectator" if seat == SPECTATOR else "player"
        conn.put({"type": "welcome", "seat": seat, "role": role, "game": s.id})
        started = seat != SPECTATOR and hub.arrived(s, seat)
        if started:
            # The clocks start now: every reader is told (this one too).
            hub.fanout.publish(s)
        else:
            # The whole current state: whatever the reader missed while away.
            state = s.state(seat)
            state["presence"] = hub.fanout.presence(s)
            conn.put({"type": "state", "state": state})
    hub.fanout.presence_changed(conn.game_id)
