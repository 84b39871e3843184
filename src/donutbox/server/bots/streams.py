"""The Bot API's two NDJSON streams (docs/bots.md): one JSON object a line,
and an empty line every ``KEEPALIVE_SECONDS`` when nothing happens (so a
client, and the server, notice a dead connection).

- **Event stream**: the bot's challenges (incoming, and the answers to its
  own), and each of its games starting and finishing.  It is woken by the
  lobby's notifications (``Lobby.changed``: every process's, through the
  broker's Redis when there is one), and reads the database again then and
  at every keepalive.
- **Game stream**: exactly what the online WebSocket sends that seat: a
  ``state`` message first (the seat's own view, ``GameSession.state``), then
  every ``state`` and ``presence`` the game's fan-out puts on the reader's
  queue.  The stream is a ``fanout.Connection`` like a socket's, so it holds
  nothing another seat's WebSocket would not: never another tray, never a
  pile's order.  It ends after the state that says the game is over.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import orjson

from .. import wire
from ..accounts import now
from ..errors import NoSuchGame
from ..fanout import Connection
from ..hub import Hub
from ..lobby.service import Lobby
from .store import Bot, BotStore, GameInfo

#: An empty line this often when there is nothing to say.
KEEPALIVE_SECONDS = 6.0
#: The event stream reads the database at most this often, however often
#: the lobby changes.
EVENT_READ_SECONDS = 0.5
#: A game that ended is looked for this long after the read that could
#: first have seen it (a read's clock and the database's may differ).
FINISHED_MARGIN_SECONDS = 60.0
#: Lobby listeners a bot may hold on every process (its event streams).
MAX_LISTENERS_PER_BOT = 4


def line(message: dict[str, Any]) -> bytes:
    """One line of the event stream (checked against its model in ``wire``
    when ``DONUTBOX_CHECK_WIRE=1``)."""
    if wire.CHECKING:
        wire.check_bot_event(message)
    return orjson.dumps(message) + b"\n"


class EventFeed:
    """What one event stream has told its bot so far.  Each read asks for
    the games still being played and those that ended since a minute
    before the previous read, and the challenges of the last two minutes;
    what is told is remembered only while it is in those answers, so a
    stream open for weeks holds no more than one read's worth."""

    def __init__(self, store: BotStore, bot: Bot, opened: datetime) -> None:
        self.store = store
        self.bot = bot
        self.since = opened
        self.challenges: set[str] = set()
        self.answers: set[str] = set()
        self.started: set[str] = set()
        self.finished: set[str] = set()

    def read(self) -> list[dict[str, Any]]:
        """The events not told yet (a database read: in a thread)."""
        out: list[dict[str, Any]] = []
        me = self.bot.user.id
        at = now()
        challenges = self.store.challenges_of(self.bot.user)
        for c in challenges:
            if c.dest.id == me and c.status == "created" and c.id not in self.challenges:
                self.challenges.add(c.id)
                out.append({"type": "challenge", "challenge": c.to_dict()})
            elif (
                c.challenger.id == me
                and c.status in ("declined", "expired", "canceled")
                and c.id not in self.answers
            ):
                self.answers.add(c.id)
                out.append({"type": "challengeDeclined", "challenge": c.to_dict()})
        games = self.store.games_of(me, self.since)
        for g in games:
            if g.id not in self.started:
                self.started.add(g.id)
                out.append({"type": "gameStart", "game": g.to_dict()})
            if g.finished and g.id not in self.finished:
                self.finished.add(g.id)
                out.append({"type": "gameFinish", "game": _finish(g)})
        self.since = at - timedelta(seconds=FINISHED_MARGIN_SECONDS)
        ids = {c.id for c in challenges}
        self.challenges &= ids
        self.answers &= ids
        ids = {g.id for g in games}
        self.started &= ids
        self.finished &= ids
        return out


def _finish(g: GameInfo) -> dict[str, Any]:
    return {**g.to_dict(), "finished": True}


async def event_stream(store: BotStore, lobby: Lobby, bot: Bot) -> AsyncIterator[bytes]:
    """The bot's event stream, until the client goes away."""
    woken = asyncio.Event()
    listening = await lobby.listen(bot.user, woken, MAX_LISTENERS_PER_BOT)
    feed = EventFeed(store, bot, now())
    try:
        if not listening:
            yield line({"type": "error", "reason": "stream: this bot has its event streams open"})
            return
        for event in await asyncio.to_thread(feed.read):
            yield line(event)
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(woken.wait(), KEEPALIVE_SECONDS)
            woken.clear()
            if not await asyncio.to_thread(store.token_live, bot.token_id):
                yield line({"type": "error", "reason": "token: revoked"})
                return
            events = await asyncio.to_thread(feed.read)
            for event in events:
                yield line(event)
            if not events:
                yield b"\n"
            await asyncio.sleep(EVENT_READ_SECONDS)
    finally:
        if listening:
            with contextlib.suppress(Exception):
                await lobby.unlisten(bot.user, woken)


async def game_stream(
    hub: Hub, game_id: str, token: str, live: Callable[[], Awaitable[bool]]
) -> AsyncGenerator[bytes, None]:
    """A seat's game stream: its state first, then what the WebSocket would
    send it.  ``token`` is the seat's (the caller found it for the bot);
    ``live`` says whether the bot's token still is (asked at each
    keepalive: a revoked token's stream ends)."""
    s = await hub.open(game_id, token)
    seat = s.reader_for(token)
    if seat is None or seat < 0:  # not a seat of this game (never for the lobby's rows)
        raise NoSuchGame()
    # Bounded: a client that stops reading holds up its Connection's writer,
    # whose own queue then fills and closes it (fanout.QUEUE_LIMIT).
    out: asyncio.Queue[str] = asyncio.Queue(1)
    conn = Connection(out.put, game_id, seat)
    conn.online = True
    async with hub.lock(game_id):
        hub.fanout.attach(conn)
        if hub.arrived(s, seat):  # the clocks start now: every reader is told
            hub.fanout.publish(s)
        else:
            state = s.state(seat)
            state["presence"] = hub.fanout.presence(s)
            conn.put({"type": "state", "state": state})
    hub.fanout.presence_changed(game_id)
    try:
        while True:
            try:
                text = await asyncio.wait_for(out.get(), KEEPALIVE_SECONDS)
            except TimeoutError:
                if conn.closed.is_set() or not await live():
                    return  # fell too far behind (the client reconnects), or revoked
                yield b"\n"
                continue
            yield text.encode() + b"\n"
            if '"finished":true' in text and _over(text):
                return
    finally:
        hub.fanout.detach(conn)


def _over(text: str) -> bool:
    message = orjson.loads(text)
    return bool(message.get("type") == "state" and message["state"].get("finished"))
