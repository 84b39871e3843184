"""The lobby over HTTP and a WebSocket (docs/community.md): open tables,
quick match, invitations, presence.  Signed-in players only; every POST
checks CSRF.

A full table becomes an online game through ``routes.online.new_online_game``
(the code behind ``POST /api/online``): the same seat tokens, digests,
clocks and protocol.  Each player's seat token is in their own lobby state
(``games``) and history, never in anyone else's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from fastapi import APIRouter, FastAPI, Request, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, Field, StrictBool

from ...core import RULE_OPTIONS
from .. import wire
from ..accounts import SESSION_COOKIE, User
from ..errors import Conflict, Invalid, NoSuchGame
from ..hub import Hub
from ..lobby.bus import make_bus
from ..lobby.rematch import Rematches
from ..lobby.service import Lobby
from ..lobby.store import DEFAULT_CLOCK, turn_based_refusal
from ..models import ClockOption, NewOnlineGame, RuleFields, rules_of
from ..online import RateLimit
from ..ratings.service import Ratings, ordinal
from ..routes.accounts import Community, CommunityDep, Csrf, Me, origin_ok
from ..routes.online import make_online_game
from ..turns import waiting_for
from ..wire import LobbyState, check_lobby_message

router = APIRouter()
log = logging.getLogger("donutbox.server.lobby")

#: Lobby sockets: at most this many per player and in all.
MAX_SOCKETS_PER_USER = 4
MAX_SOCKETS = 2000
#: Largest message a lobby socket takes (only pings are sent).
MAX_LOBBY_MESSAGE = 256
#: A lobby socket is sent at most one state this often (seconds): changes
#: in between make one push, of the newest state, however fast the lobby
#: churns (a client opening and leaving tables cannot make every socket
#: re-read its state for each change).
PUSH_SECONDS = 1.0
#: How often waiting players are paired again and ended games settled.
TICK_SECONDS = 2.0
#: Every this many ticks, what expired (presence, sockets of dead processes,
#: tables whose game was never made) is forgotten.
SWEEP_TICKS = 15
CLOSE_SIGN_IN = 4401
CLOSE_TOO_MANY = 4429


class NewTable(RuleFields):  # type: ignore[misc,valid-type]
    players: int = Field(2, ge=2, le=4)
    clock: ClockOption | None = Field(
        None,
        description="a rated table without one gets 5 minutes + 3 s a move; "
        '{"days": d} makes a turn-based table',
    )
    rated: StrictBool = Field(True, description="a rated game allows no takebacks")
    takebacks: StrictBool = Field(False, description="allow takebacks (the game is then unrated)")


class QuickMatch(RuleFields):  # type: ignore[misc,valid-type]
    players: int = Field(2, ge=2, le=4)
    clock: ClockOption = Field(
        default_factory=lambda: ClockOption.model_validate(DEFAULT_CLOCK),
        description="the time control: players are paired only with the same one",
    )


class Invitation(BaseModel):
    to: str = Field(..., max_length=20, description="the friend's user name")
    table: str = Field(..., max_length=32, description="a table you sit at")


def _rules(body: BaseModel) -> tuple[dict[str, Any], str, str]:
    r = rules_of(body)
    return {o.name: getattr(body, o.name) for o in RULE_OPTIONS}, r.key(), r.label()


def make_starter(hub: Hub, ratings: Ratings):  # type: ignore[no-untyped-def]
    async def start(
        rules: dict[str, Any],
        rules_key: str,
        rules_label: str,
        users: list[User],
        clock: dict[str, float] | None,
        rated: bool,
        takebacks: bool,
    ) -> str:
        req = NewOnlineGame(
            seats=[{"name": u.name} for u in users],
            clock=clock,
            takebacks=takebacks,
            **rules,
        )
        made = await make_online_game(req, hub, rated=rated and not takebacks)
        tokens = [s["token"] for s in made["seats"]]
        await asyncio.to_thread(
            ratings.record_game,
            made["id"],
            rules_key,
            rules_label,
            rated and not takebacks,
            [(u.id, t) for u, t in zip(users, tokens, strict=True)],
        )
        s = hub.sessions.get(made["id"])
        if s is not None:  # the players' accounts are known now: the first reminder
            for watch in hub.watchers:
                watch(s)
        return str(made["id"])

    return start


class OwnPart:
    """A lobby socket's copy of its player's own part of the lobby (their
    table, queue place, invitations, games in progress) and the version it
    was read at (``Lobby.private_version``): read again only when it
    changed, not for every change of the lobby."""

    def __init__(self) -> None:
        self.version: tuple[int, int] | None = None
        self.private: dict[str, Any] = {}
        self.games: list[dict[str, Any]] = []


async def lobby_state(
    c: Community, user: User, shared: bool = False, own: OwnPart | None = None
) -> dict[str, Any]:
    """The lobby (from the database, in threads: lobby/service.py) and the player's
    games in progress (their history); ``own``: a socket's copy of the
    player's own part, used while it is current."""
    version = c.lobby.private_version(user.id)  # before reading: a change meanwhile shows
    if own is not None and own.version == version:
        private, games = own.private, own.games
    else:
        private = await asyncio.to_thread(c.lobby.store.private, user)
        history = await asyncio.to_thread(c.ratings.history, user.id, 20)
        games = [h for h in history if not h["finished"]]
        private["rematches"] = await asyncio.to_thread(
            Rematches(c.ratings.engine).of_player, user.id
        )
        private["rated_pause"] = await asyncio.to_thread(c.ratings.rated_pause, user.id)
        c.lobby.private_reads += 1
        if own is not None:
            own.version, own.private, own.games = version, private, games
    state = await c.lobby.state_for(user, shared, private)
    state["games"] = games
    state["rematches"] = private.get("rematches", [])
    state["rated_pause"] = private.get("rated_pause")
    return state


def rated_clock(clock: ClockOption | None) -> dict[str, float]:
    """The time control of a rated game: every rated game has one (the
    default if none was asked for), of at least a minute."""
    if clock is None:
        return dict(DEFAULT_CLOCK)
    if clock.days is None and clock.minutes < 1:
        raise Invalid("clock.minutes: a rated game needs at least 1 minute")
    return clock.spec()


async def not_playing_rated(c: Community, user: User) -> None:
    """Abandonment: a player with a rated game still being played cannot
    start another (409 naming it); they finish or resign it first.  Nor can
    a player whose rated play is paused after repeated no-shows."""
    reason = await asyncio.to_thread(c.ratings.rated_refusal, user.id)
    if reason is not None:
        raise Conflict(reason)


async def room_for_turn_based(c: Community, user: User) -> None:
    """At most ``MAX_TURN_BASED_GAMES`` turn-based games in progress an
    account (lobby/store.py): 409 at the cap."""
    count = await asyncio.to_thread(c.ratings.turn_based_in_progress, user.id)
    reason = turn_based_refusal(count)
    if reason is not None:
        raise Conflict(reason)


@router.get("/api/lobby", response_model=LobbyState, response_model_by_alias=True)
async def lobby(me: Me, c: CommunityDep) -> dict[str, Any]:
    """The lobby as the signed-in player sees it (``games``: their games in
    progress, each with their own seat's link)."""
    await c.lobby.touch(me.user)
    return await lobby_state(c, me.user)


@router.get("/api/account/waiting")
async def waiting(me: Me, c: CommunityDep) -> dict[str, Any]:
    """The signed-in player's games waiting for their move (turn-based and
    real-time), the nearest deadline first, each with their own seat link."""
    games = await asyncio.to_thread(waiting_for, c.ratings.engine, me.user.id)
    return {"games": games}


@router.get("/api/account/seat/{game_id}")
async def my_seat(game_id: str, me: Me, c: CommunityDep) -> dict[str, Any]:
    """The signed-in player's own link to a lobby game of theirs: how the
    page opens ``/#/play/<game>``, the link in emails (which never carry a
    seat's secret link).  404 for any game that is not theirs."""
    if len(game_id) > 64:
        raise NoSuchGame()
    seat = await asyncio.to_thread(c.ratings.seat_of, me.user.id, game_id)
    if seat is None:
        raise NoSuchGame()
    return {"game": game_id, "seat": seat.seat, "link": f"/#/online/{game_id}/{seat.token}"}


@router.post("/api/lobby/tables", dependencies=[Csrf])
async def open_table(body: NewTable, me: Me, c: CommunityDep) -> dict[str, Any]:
    await c.lobby.touch(me.user)
    rules, key, label = _rules(body)
    rated = body.rated and not body.takebacks
    if body.clock is not None and body.clock.days is not None:
        await room_for_turn_based(c, me.user)
    if rated:
        await not_playing_rated(c, me.user)
        clock: dict[str, float] | None = rated_clock(body.clock)
    else:
        clock = None if body.clock is None else body.clock.spec()
    return await c.lobby.open_table(
        me.user, rules, key, label, body.players, clock, body.rated, body.takebacks
    )


@router.post("/api/lobby/tables/{table_id}/join", dependencies=[Csrf])
async def join_table(table_id: str, me: Me, c: CommunityDep) -> dict[str, Any]:
    await c.lobby.touch(me.user)
    if await asyncio.to_thread(c.lobby.store.table_turn_based, table_id):
        await room_for_turn_based(c, me.user)
    if await asyncio.to_thread(c.lobby.store.table_rated, table_id):
        await not_playing_rated(c, me.user)
    table, game = await c.lobby.join(me.user, table_id)
    return {"table": table, "game": game}


@router.post("/api/lobby/tables/{table_id}/leave", dependencies=[Csrf])
async def leave_table(table_id: str, me: Me, c: CommunityDep) -> dict[str, Any]:
    await c.lobby.leave(me.user, table_id)
    return {"left": table_id}


@router.post("/api/lobby/queue", dependencies=[Csrf])
async def quick_match(body: QuickMatch, me: Me, c: CommunityDep) -> dict[str, Any]:
    """Wait for a rated game of these rules with players of a similar rating."""
    await c.lobby.touch(me.user)
    await not_playing_rated(c, me.user)
    if body.clock is not None and body.clock.days is not None:
        await room_for_turn_based(c, me.user)
    rules, key, label = _rules(body)
    clock = rated_clock(body.clock)
    r = await asyncio.to_thread(c.ratings.rating, me.user.id, key)
    rating = ordinal(r.mu, r.sigma)
    game = await c.lobby.enqueue(me.user, rules, key, label, body.players, rating, clock)
    return {"queued": game is None, "game": game}


@router.post("/api/lobby/queue/leave", dependencies=[Csrf])
async def leave_queue(me: Me, c: CommunityDep) -> dict[str, Any]:
    await c.lobby.dequeue(me.user)
    return {"queued": False}


@router.post("/api/lobby/invite", dependencies=[Csrf])
async def invite(body: Invitation, me: Me, c: CommunityDep, request: Request) -> dict[str, Any]:
    """Invite a signed-in friend to your table: it appears in their lobby
    at once (their lobby socket)."""
    to = await asyncio.to_thread(c.accounts.find, body.to)
    if to is None:
        raise Invalid("to: no such player")
    if not await c.lobby.is_online(to.id):
        raise NoSuchGame("to: that player is not in the lobby now")
    await c.lobby.invite(me.user, to, body.table)
    mail = getattr(request.app.state, "mail", None)  # mail/routes.py, with --smtp
    if mail is not None:  # an email too, if they chose invitation reminders
        mail.notifier.invited(me.user.name, to.id, body.table)
    return {"invited": to.name}


async def _refuse(ws: WebSocket, code: int, reason: str) -> None:
    """Close a lobby socket with a code the page acts on and a one-line
    reason.  Accepted first (as ``protocol.refuse`` does): a socket closed
    during the handshake reaches a browser as HTTP 403 and close code 1006,
    which looks like a network failure."""
    with contextlib.suppress(Exception):  # the client may be gone already
        await ws.accept()
        await ws.close(code=code, reason=reason)


@router.websocket("/api/lobby/ws")
async def lobby_socket(ws: WebSocket) -> None:
    """Sends ``{"type": "lobby", "lobby": <GET /api/lobby>}`` whenever the
    lobby changes; takes only ``{"type": "ping"}``.  The session cookie
    signs it in.  Refused with a close code and a one-line reason after
    the handshake: 4401 without a session or from another site's Origin,
    4429 beyond the sockets a player or the server may hold."""
    c: Community = ws.app.state.community
    if not origin_ok(ws.headers.get("origin"), ws.headers.get("host")):
        await _refuse(ws, CLOSE_SIGN_IN, "Origin: sockets from another site are refused")
        return
    who = await asyncio.to_thread(c.accounts.session, ws.cookies.get(SESSION_COOKIE))
    if who is None:
        await _refuse(ws, CLOSE_SIGN_IN, "session: sign in first")
        return
    user = who.user
    event = asyncio.Event()
    # At most MAX_SOCKETS here, MAX_SOCKETS_PER_USER a player on every process.
    if c.lobby.sockets() >= MAX_SOCKETS:
        await _refuse(ws, CLOSE_TOO_MANY, "lobby: the server holds all the sockets it can")
        return
    if not await c.lobby.listen(user, event, MAX_SOCKETS_PER_USER):
        await _refuse(ws, CLOSE_TOO_MANY, f"lobby: at most {MAX_SOCKETS_PER_USER} sockets a player")
        return
    event.set()

    async def sender() -> None:
        own = OwnPart()
        last = -PUSH_SECONDS
        while True:
            await event.wait()
            await asyncio.sleep(max(0.0, last + PUSH_SECONDS - time.monotonic()))
            event.clear()
            last = time.monotonic()
            try:
                state = await lobby_state(c, user, shared=True, own=own)
            except Exception as err:  # the database failed: the next change tries again
                log.warning("lobby: a socket's state could not be read (%s)", type(err).__name__)
                continue
            message = {"type": "lobby", "lobby": state}
            if wire.CHECKING:
                check_lobby_message(message)
            await ws.send_text(json.dumps(message))

    task: asyncio.Future[None] | None = None
    limit = RateLimit(rate=2.0, burst=10)
    try:
        await ws.accept()
        task = asyncio.ensure_future(sender())
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            if text is None or len(text) > MAX_LOBBY_MESSAGE or not limit.allow():
                if limit.refused > 20 or text is None or len(text) > MAX_LOBBY_MESSAGE:
                    await ws.close(code=1008)
                    break
                continue
            if '"ping"' in text:
                await ws.send_text('{"type":"pong"}')
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await c.lobby.unlisten(user, event)


def install(app: FastAPI) -> None:
    """Register the community's routers on ``app`` (create_app calls this)."""
    from ..lobby import rematch
    from . import accounts

    app.include_router(accounts.router)
    app.include_router(router)
    app.include_router(rematch.router)


async def start(app: FastAPI, hub: Hub) -> Community:
    """Made at start-up (the lifespan): the accounts, ratings and lobby on the
    hub's store, the lobby's notifications (the broker's Redis, if any), and
    the ticker that pairs the queue, settles ratings, renews this process's
    lobby sockets and forgets what expired."""
    from ..accounts import Accounts

    ratings = Ratings(hub.store)
    c = Community(
        Accounts(hub.store.engine), ratings, Lobby(hub.store.engine, make_bus(hub.broker))
    )
    c.lobby.starter = make_starter(hub, ratings)
    await c.lobby.start()

    async def tick() -> None:
        n = 0
        while True:
            await asyncio.sleep(TICK_SECONDS)
            n += 1
            with contextlib.suppress(Exception):
                await c.lobby.tick(sweep=n % SWEEP_TICKS == 0)
                await c.lobby.pair_waiting()
                if await asyncio.to_thread(ratings.settle_all):
                    c.lobby.changed()

    hub.spawn(tick())
    app.state.community = c
    return c


async def stop(app: FastAPI) -> None:
    """At shutdown: this process's lobby sockets forgotten, the bus closed."""
    c: Community | None = getattr(app.state, "community", None)
    if c is not None:
        await c.lobby.close()
        c.accounts.hashing.close()
