"""Local games: played in one browser, against the AI or hotseat.

Intents go over HTTP; the browser listens for the AI's replies on the
game's WebSocket.  Records and replays are here too (for online games as
well: their bearer token opens them once the game is over).

A local game belongs to the browser that made it: ``POST /api/games`` (and
``/import``) mints an owner token when the request carries none
(``Authorization: Bearer <token>``), and answers it as ``owner_token``;
the server keeps only its SHA-256 digest (in the game's options).  Every
other request for the game needs that bearer (the WebSocket takes it as
``?token=``): without it, or with another, the game does not exist (404,
never 403: a stranger learns nothing, not even that the id is real), and
``GET /api/games`` lists the bearer's games only.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from typing import Any

from fastapi import APIRouter, Header, Query, WebSocket, WebSocketDisconnect

from ...ai import catalogue
from ...core import DonutboxError, Game, cut, replay
from ...core.record import dump
from .. import limits, seating
from ..errors import Busy, Conflict, Invalid, NoSuchGame, NotAllowed, Stale
from ..fanout import Connection
from ..hub import Hub
from ..models import Intent, NewGame, PlayOut, Version, custom_deck, rules_of
from ..online import digest
from ..protocol import CLOSE_NO_GAME, CLOSE_WRONG_KIND, refuse
from ..routes.common import Creating, HubDep
from ..routes.online import bearer
from ..session import HUMAN, ONLINE, GameSession, open_boxes
from ..wire import STATE, Preview, ReplayFrame

router = APIRouter()

#: How long the hint's search runs (wall clock: the player is waiting).
HINT_SECONDS = 1.0


def hint_agent() -> str:
    """The hint comes from the catalogue's strongest level (``expert`` today,
    for ``HINT_SECONDS``)."""
    levels = [a for a in catalogue() if a.level is not None]
    return max(levels, key=lambda a: a.level or 0).name


#: An owner token a client may choose: URL-safe base64, 32 to 128 characters
#: (the server's own are ``secrets.token_urlsafe(32)``: 43 characters).
OWNER_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,128}")


def owner_for_new_game(authorization: str | None) -> str:
    """The owner token a new game gets: the request's bearer, or a new one."""
    token = bearer(authorization)
    if not token:
        return secrets.token_urlsafe(32)
    if not OWNER_TOKEN.fullmatch(token):
        raise Invalid("Authorization: an owner token is 32 to 128 URL-safe characters")
    return token


async def local(hub: Hub, game_id: str, authorization: str | None) -> GameSession:
    """A game played in one browser (against the AI, or hotseat), if the
    bearer owns it; NoSuchGame otherwise (also for a damaged game that is
    not the bearer's: a stranger learns nothing)."""
    token = bearer(authorization)
    s = await hub.open(game_id, token)
    if not s.owned_by(token):
        raise NoSuchGame()
    return s


async def finished_game(hub: Hub, game_id: str, authorization: str | None) -> GameSession:
    """A local game its owner asks for, or an online game one of its links
    opens (a seat's or the spectator's token as the bearer)."""
    token = bearer(authorization)
    s = await hub.open(game_id, token)
    allowed = (s.reader_for(token) is not None) if s.online else s.owned_by(token)
    if not token or not allowed:
        raise NoSuchGame()
    return s


def _owned(state: dict[str, Any], token: str) -> dict[str, Any]:
    state["owner_token"] = token
    return state


@router.post("/api/games", dependencies=[Creating], **STATE)
async def new_game(
    req: NewGame, hub: HubDep, authorization: str | None = Header(None)
) -> dict[str, Any]:
    """A new game against the AI or hotseat; the answer carries the owner
    token (the request's bearer, or a new one)."""
    token = owner_for_new_game(authorization)
    if req.human_seat >= req.players:
        raise Invalid("human_seat must be a seat of the game")
    names = req.names or None
    if names is not None and len(names) != req.players:
        raise Invalid("names must list one name per player")
    if req.opponent == "hotseat":
        seats = [HUMAN] * req.players
        default = [f"Player {i + 1}" for i in range(req.players)]
        options: dict[str, Any] = {}
    else:
        info = seating.agent(req.opponent, "opponent")
        options = seating.thinking([info], req.seconds)
        seats = [info.name] * req.players
        seats[req.human_seat] = HUMAN
        default = [("You" if s == HUMAN else f"{s.title()} {i + 1}") for i, s in enumerate(seats)]
    try:
        deck = custom_deck(req.deck)
        game = (Game.new if deck is None else deck.new_game)(
            rules_of(req), names or default, req.seed
        )
    except (ValueError, DonutboxError) as err:
        raise Invalid(str(err)) from None
    if req.seed is not None:
        # A chosen deal: the player may know every card (docs/web.md).
        game.meta["practice"] = True
    options["owner"] = digest(token)
    mode = "hotseat" if req.opponent == "hotseat" else "ai"
    stored = await asyncio.to_thread(
        hub.store.create, game.rules.label(), mode, seats, options, dump(game)
    )
    return _owned(hub.adopt(stored).state(), token)


@router.get("/api/games")
async def list_games(hub: HubDep, authorization: str | None = Header(None)) -> list[dict[str, Any]]:
    """The bearer's games (none without a bearer; online games are reached
    by their links only)."""
    token = bearer(authorization)
    if not token or not OWNER_TOKEN.fullmatch(token):
        return []
    out = []
    games = await asyncio.to_thread(hub.store.list, exclude_mode=ONLINE, owner=digest(token))
    for g in games:
        if g.options.get("owner") != digest(token):  # the query matched text only
            continue
        meta = g.record
        out.append(
            {
                "id": g.id,
                "title": g.title,
                "mode": g.mode,
                "finished": g.finished,
                "updated": g.updated.isoformat(),
                "players": g.record.get("players"),
                "moves": len(g.record.get("moves", [])),
                "takebacks": _count(meta.get("takebacks")),
                "practice": meta.get("practice") is True,
            }
        )
    return out


def _count(n: object) -> int:
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0


Auth = Header(None, alias="Authorization", description="Bearer <owner token>")


@router.get("/api/games/{game_id}", **STATE)
async def get_game(game_id: str, hub: HubDep, authorization: str | None = Auth) -> dict[str, Any]:
    return (await local(hub, game_id, authorization)).state()


@router.post("/api/games/{game_id}/moves", **STATE)
async def play(
    game_id: str, intent: Intent, hub: HubDep, authorization: str | None = Auth
) -> dict[str, Any]:
    s = await local(hub, game_id, authorization)
    try:
        async with hub.lock(game_id):
            await s.act(intent.move, intent.version)
            hub.changed(s)
            return s.state()
    except Stale:
        await hub.broker.caught_up(game_id)  # this copy may be the one behind
        raise


@router.get("/api/games/{game_id}/preview", response_model=Preview)
async def preview(
    game_id: str, move: str, hub: HubDep, authorization: str | None = Auth
) -> dict[str, Any]:
    """What ``move`` would seal and score, without playing it."""
    s = await local(hub, game_id, authorization)
    if len(move) > 40:
        raise Invalid("move: at most 40 characters")
    return s.preview(move)


@router.post("/api/games/{game_id}/hint")
async def hint(
    game_id: str, body: Version, hub: HubDep, authorization: str | None = Auth
) -> dict[str, Any]:
    """The strongest level's move (``expert``, one second) for the human to
    move, searched from that player's view only.  Local games only: in an
    online game it would be help the opponent has not agreed to."""
    view = (await local(hub, game_id, authorization)).hint_view(body.version)
    # A search takes a worker for a second: one at a time per game.
    if game_id in hub.hinting:
        raise Busy("hint: one is already being worked out for this game")
    hub.hinting.add(game_id)
    try:
        move = await hub.ai.think(
            game_id, view, hint_agent(), {"seconds": HINT_SECONDS}, secrets.randbits(32)
        )
    finally:
        hub.hinting.discard(game_id)
    return {"move": move, "version": body.version}


@router.post("/api/games/{game_id}/undo", **STATE)
async def undo(
    game_id: str, body: Version, hub: HubDep, authorization: str | None = Auth
) -> dict[str, Any]:
    """Take back the last human move (and the AI's replies after it); in
    hotseat, the last move.  Counted in the record (``takebacks``); against
    the AI it makes the game a practice game."""
    s = await local(hub, game_id, authorization)
    try:
        async with hub.lock(game_id):
            await s.undo(body.version)
            hub.changed(s)
            return s.state()
    except Stale:
        await hub.broker.caught_up(game_id)  # this copy may be the one behind
        raise


@router.delete("/api/games/{game_id}", status_code=204)
async def delete_game(game_id: str, hub: HubDep, authorization: str | None = Auth) -> None:
    """Delete a local game of the bearer's (404 for anyone else's, or an
    online game); refused (409) while the AI is working on it."""
    s = await local(hub, game_id, authorization)
    if s.online:
        raise NoSuchGame()
    async with hub.lock(game_id):
        if game_id in hub.seats.thinking or hub.ai.queued(game_id):
            raise Conflict("the AI is moving in this game: delete it when it has moved")
        await asyncio.to_thread(hub.store.delete, game_id)
        hub.evict(game_id)


@router.get("/api/games/{game_id}/record")
async def record(game_id: str, hub: HubDep, authorization: str | None = Auth) -> dict[str, Any]:
    s = await finished_game(hub, game_id, authorization)
    if not s.game.finished:
        raise NotAllowed("the record shows every hidden card: export it when the game is over")
    out = dump(s.game)
    out["agents"] = s.seats
    return out


@router.post("/api/games/import", dependencies=[Creating], **STATE)
async def import_game(
    record: dict[str, Any], hub: HubDep, authorization: str | None = Auth
) -> dict[str, Any]:
    """A record played into a new hotseat game of the bearer's (or of a new
    owner token, answered as ``owner_token``)."""
    token = owner_for_new_game(authorization)
    try:
        # Off the event loop: a long record takes a while to play.
        game = await limits.run_blocking(replay, record, what="import")
    except DonutboxError as err:
        raise Invalid(str(err)) from None
    seats = [HUMAN] * game.players
    stored = await asyncio.to_thread(
        hub.store.create,
        "imported: " + game.rules.label(),
        "hotseat",
        seats,
        {"owner": digest(token)},
        dump(game),
        game.finished,
    )
    return _owned((await hub.load(stored.id)).state(), token)


@router.post("/api/games/{game_id}/play-out", dependencies=[Creating], **STATE)
async def play_out(
    game_id: str, req: PlayOut, hub: HubDep, authorization: str | None = Auth
) -> dict[str, Any]:
    """A finished game's position after ``ply`` moves as a new game of the
    owner's against the AI: the owner plays the seat to move there, the
    AI every other.  A practice game: the record of a finished game shows
    every deck."""
    s = await finished_game(hub, game_id, authorization)
    if s.online:
        raise NoSuchGame()
    if not s.game.finished:
        raise NotAllowed("a game is played out once it is over")
    if not req.ply < s.game.ply:
        raise Invalid(f"ply must be from 0 to {s.game.ply - 1} (a position with a move to make)")
    info = seating.agent(req.opponent, "opponent")
    options = seating.thinking([info], req.seconds)
    game = await limits.run_blocking(cut, s.game, req.ply, what="replay")
    human = game.to_move
    assert human is not None  # (before the end someone is to move)
    seats = [info.name] * game.players
    seats[human] = HUMAN
    game.meta["practice"] = True
    token = owner_for_new_game(authorization)
    options["owner"] = digest(token)
    stored = await asyncio.to_thread(
        hub.store.create, "played out: " + game.rules.label(), "ai", seats, options, dump(game)
    )
    return _owned(hub.adopt(stored).state(), token)


@router.get("/api/games/{game_id}/replay/{ply}", response_model=ReplayFrame)
async def replay_at(
    game_id: str, ply: int, hub: HubDep, authorization: str | None = Auth
) -> dict[str, Any]:
    s = await finished_game(hub, game_id, authorization)
    if not s.game.finished:
        raise NotAllowed("the replay viewer opens when the game is over")
    if not 0 <= ply <= s.game.ply:
        raise Invalid(f"ply must be from 0 to {s.game.ply}")
    # Off the event loop: a long record takes a while to play again.
    game = await limits.run_blocking(cut, s.game, ply, what="replay")
    # The open boxes too (public): the side panel's "if ended now" and its
    # list of open boxes are those of the move shown, not of the end.
    state = game.view(-1).to_dict()
    state["boxes"] = open_boxes(game)
    return {"ply": ply, "of": s.game.ply, "state": state}


@router.websocket("/api/games/{game_id}/ws")
async def socket(ws: WebSocket, game_id: str, token: str | None = Query(None)) -> None:
    """A local game's browser listens here (intents go over HTTP), with its
    owner token as ``?token=`` (a browser cannot set headers on a
    WebSocket): without it, or with another, closed with 4404."""
    hub: Hub = ws.app.state.hub
    try:
        s = await hub.open(game_id, token)
    except NoSuchGame:
        await refuse(ws, CLOSE_NO_GAME)
        return
    if s.online and token and s.reader_for(token) is not None:
        await refuse(ws, CLOSE_WRONG_KIND)  # one of its links: told where it is
        return
    if not s.owned_by(token):
        await refuse(ws, CLOSE_NO_GAME)
        return
    await ws.accept()
    conn = Connection(ws.send_text, game_id)
    hub.fanout.attach(conn)
    try:
        conn.put({"type": "state", "state": s.state()})
        while not conn.closed.is_set():
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
    except WebSocketDisconnect:
        pass
    finally:
        hub.fanout.detach(conn)
        with contextlib.suppress(Exception):
            await ws.close()
