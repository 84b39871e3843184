"""Online games: made here, then reached by their secret links (a bearer
token per seat, one for spectators); the play itself is on the WebSocket
(protocol.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Header, WebSocket

from ...core import DonutboxError, Game
from ...core.record import dump
from .. import seating
from ..errors import Invalid, NoSuchGame, NotAllowed, Stale
from ..hub import Hub
from ..models import MAX_NAME, Intent, NewOnlineGame, Version, rules_of
from ..online import Clock, new_token
from ..online import digest as token_digest
from ..protocol import serve_online
from ..routes.common import Creating, HubDep
from ..session import HUMAN, ONLINE, SPECTATOR, GameSession, waiting_on
from ..wire import STATE

router = APIRouter()


def bearer(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header ("" if none)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


async def online_reader(
    hub: Hub, game_id: str, authorization: str | None
) -> tuple[GameSession, int]:
    """An online game and the seat (or SPECTATOR) the bearer token opens.
    A token that opens nothing gets ``NoSuchGame`` (404, "no such game"),
    the very answer to an id that does not exist: a stranger cannot tell a
    real game from a guessed id."""
    token = bearer(authorization)
    s = await hub.open(game_id, token)
    seat = s.reader_for(token) if s.online and token else None
    if seat is None:
        raise NoSuchGame()
    return s, seat


@router.post("/api/online", dependencies=[Creating])
async def new_online_game(req: NewOnlineGame, hub: HubDep) -> dict[str, Any]:
    """An online game: one secret link per human seat, and a spectator
    link.  The tokens are shown once, here; the server keeps digests."""
    return await make_online_game(req, hub)


async def make_online_game(req: NewOnlineGame, hub: Hub, rated: bool = False) -> dict[str, Any]:
    """``POST /api/online``'s game; ``rated`` (the lobby's rated games
    only): running out of time loses it, and it is aborted if its players
    do not all arrive (server/forfeits.py)."""
    kinds = []
    agents = []
    for i, seat in enumerate(req.seats):
        if seat.kind != HUMAN:
            agents.append(seating.agent(seat.kind, f"seats[{i}].kind"))
        kinds.append(seat.kind)
    if HUMAN not in kinds:
        raise Invalid("seats: an online game needs at least one human seat")
    agent_options = seating.thinking(agents, req.seconds)
    names = [
        " ".join(seat.name.split())[:MAX_NAME] or (f"Player {i + 1}" if k == HUMAN else k.title())
        for i, (seat, k) in enumerate(zip(req.seats, kinds, strict=True))
    ]
    try:
        # No seed: the deal comes from the server's secrets (Game.new).
        game = Game.new(rules_of(req), names)
    except (ValueError, DonutboxError) as err:
        raise Invalid(str(err)) from None
    tokens = [new_token() if k == HUMAN else None for k in kinds]
    watch = new_token()
    humans = [k == HUMAN for k in kinds]
    clock_made: Clock | None = None
    if req.clock is not None and req.clock.days is not None:
        # Turn-based: it runs from now (a player may open the link a day later).
        clock_made = Clock.turn_based(req.clock.days, humans)
    elif req.clock is not None:
        clock_made = Clock.new(req.clock.minutes * 60, req.clock.increment, humans)
    clock = None if clock_made is None else clock_made.to_dict()
    options: dict[str, Any] = {
        "online": {
            "digests": [token_digest(t) if t else None for t in tokens],
            "watch": token_digest(watch),
            "clock": clock,
            "takebacks": req.takebacks,
            "rated": rated,
        }
    }
    options.update(agent_options)
    waiting = waiting_on(game, kinds, clock_made)
    stored = await asyncio.to_thread(
        hub.store.create, game.rules.label(), ONLINE, kinds, options, dump(game), False, waiting
    )
    hub.adopt(stored)

    def link(token: str) -> str:
        return f"/#/online/{stored.id}/{token}"

    return {
        "id": stored.id,
        "seats": [
            {
                "seat": i,
                "name": names[i],
                "kind": kinds[i],
                "token": tokens[i],
                "link": link(t) if (t := tokens[i]) else None,
            }
            for i in range(len(kinds))
        ],
        "spectator": {"token": watch, "link": link(watch)},
    }


@router.get("/api/online/{game_id}", **STATE)
async def online_state(
    game_id: str, hub: HubDep, authorization: str | None = Header(None)
) -> dict[str, Any]:
    """The game as the bearer's seat (or a spectator) may see it."""
    s, seat = await online_reader(hub, game_id, authorization)
    state = s.state(seat)
    state["presence"] = hub.fanout.presence(s)
    return state


@router.post("/api/online/{game_id}/moves", **STATE)
async def online_move(
    game_id: str, intent: Intent, hub: HubDep, authorization: str | None = Header(None)
) -> dict[str, Any]:
    s, seat = await online_reader(hub, game_id, authorization)
    if seat == SPECTATOR:
        raise NotAllowed("move: spectators cannot act")
    try:
        async with hub.lock(game_id):
            hub.arrived(s, seat)
            await s.act(intent.move, intent.version, seat)
            hub.changed(s)
            return s.state(seat)
    except Stale:
        await hub.broker.caught_up(game_id)  # this copy may be the one behind
        raise


@router.post("/api/online/{game_id}/resign", **STATE)
async def online_resign(
    game_id: str, body: Version, hub: HubDep, authorization: str | None = Header(None)
) -> dict[str, Any]:
    """The bearer's seat resigns (as the socket's ``resign`` message): it
    forfeits at once and ranks last; a game of two is over."""
    s, seat = await online_reader(hub, game_id, authorization)
    if seat == SPECTATOR:
        raise NotAllowed("resign: spectators cannot act")
    try:
        async with hub.lock(game_id):
            await s.resign(seat, body.version)
            hub.changed(s)
            return s.state(seat)
    except Stale:
        await hub.broker.caught_up(game_id)
        raise


@router.websocket("/api/online/{game_id}/ws")
async def online_socket(ws: WebSocket, game_id: str) -> None:
    """Online play: send ``{"type": "hello", "token": ...}`` first; see
    docs/online.md for every message."""
    await serve_online(ws, ws.app.state.hub, game_id)
