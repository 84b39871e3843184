"""Local games: played in one browser, against the AI or hotseat.

Intents go over HTTP; the browser listens for the AI's replies on the
game's WebSocket.  Records and replays are here too (for online games as
well: their bearer token opens them once the game is over).
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

from fastapi import APIRouter, Header, HTTPException, WebSocket, WebSocketDisconnect

from ..core import DonutboxError, Game, Rules
from ..core.record import setup
from .errors import Busy, Invalid, NoSuchGame, NotAllowed
from .fanout import Connection
from .hub import Hub
from .models import Intent, NewGame, Version
from .protocol import CLOSE_NO_GAME, CLOSE_WRONG_KIND, refuse
from .routes_meta import AGENTS
from .routes_online import online_reader
from .routing import HubDep
from .session import HUMAN, ONLINE, GameSession

router = APIRouter()

#: How long the hint's search runs (wall clock: the player is waiting).
HINT_SECONDS = 1.0


def local(hub: Hub, game_id: str) -> GameSession:
    """A game played in one browser (against the AI, or hotseat)."""
    s = hub.session(game_id)
    if s.online:
        raise NotAllowed("this is an online game: open it with its invite link")
    return s


def finished_game(hub: Hub, game_id: str, authorization: str | None) -> GameSession:
    s = hub.session(game_id)
    if s.online:
        s, _ = online_reader(hub, game_id, authorization)
    return s


@router.post("/api/games")
async def new_game(req: NewGame, hub: HubDep) -> dict[str, Any]:
    if req.opponent != "hotseat" and req.opponent not in AGENTS:
        raise HTTPException(422, f"opponent must be hotseat or one of {', '.join(AGENTS)}")
    if req.human_seat >= req.players:
        raise HTTPException(422, "human_seat must be a seat of the game")
    names = req.names or None
    if names is not None and len(names) != req.players:
        raise HTTPException(422, "names must list one name per player")
    if req.opponent == "hotseat":
        seats = [HUMAN] * req.players
        default = [f"Player {i + 1}" for i in range(req.players)]
    else:
        seats = [req.opponent] * req.players
        seats[req.human_seat] = HUMAN
        default = [("You" if s == HUMAN else f"{s.title()} {i + 1}") for i, s in enumerate(seats)]
    try:
        game = Game.new(Rules(req.match, req.layout, req.closers), names or default, req.seed)
    except (ValueError, DonutboxError) as err:
        raise HTTPException(422, str(err)) from None
    options = {"agent": {"seconds": req.seconds}} if req.opponent in ("mcts", "hard") else {}
    mode = "hotseat" if req.opponent == "hotseat" else "ai"
    stored = hub.store.create(game.rules.label(), mode, seats, options, game.to_record())
    return hub.session(stored.id).state()


@router.get("/api/games")
async def list_games(hub: HubDep) -> list[dict[str, Any]]:
    """Games played in this browser's way (online games are reached by
    their links only)."""
    out = []
    for g in hub.store.list(exclude_mode=ONLINE):
        out.append(
            {
                "id": g.id,
                "title": g.title,
                "mode": g.mode,
                "finished": g.finished,
                "updated": g.updated.isoformat(),
                "players": g.record.get("players"),
                "moves": len(g.record.get("moves", [])),
            }
        )
    return out


@router.get("/api/games/{game_id}")
async def get_game(game_id: str, hub: HubDep) -> dict[str, Any]:
    return local(hub, game_id).state()


@router.post("/api/games/{game_id}/moves")
async def play(game_id: str, intent: Intent, hub: HubDep) -> dict[str, Any]:
    s = local(hub, game_id)
    async with hub.lock(game_id):
        await s.act(intent.move, intent.version)
        hub.changed(s)
        return s.state()


@router.get("/api/games/{game_id}/preview")
async def preview(game_id: str, move: str, hub: HubDep) -> dict[str, Any]:
    """What ``move`` would seal and score, without playing it."""
    if len(move) > 40:
        raise Invalid("move: at most 40 characters")
    return local(hub, game_id).preview(move)


@router.post("/api/games/{game_id}/hint")
async def hint(game_id: str, body: Version, hub: HubDep) -> dict[str, Any]:
    """The strongest agent's move (``mcts``, one second) for the human to
    move, searched from that player's view only.  Local games only: in an
    online game it would be help the opponent has not agreed to."""
    view = local(hub, game_id).hint_view(body.version)
    # A search takes a worker for a second: one at a time per game.
    if game_id in hub.hinting:
        raise Busy("hint: one is already being worked out for this game")
    hub.hinting.add(game_id)
    try:
        move = await hub.ai.think(
            game_id, view, "mcts", {"seconds": HINT_SECONDS}, secrets.randbits(32)
        )
    finally:
        hub.hinting.discard(game_id)
    return {"move": move, "version": body.version}


@router.post("/api/games/{game_id}/undo")
async def undo(game_id: str, body: Version, hub: HubDep) -> dict[str, Any]:
    s = local(hub, game_id)
    async with hub.lock(game_id):
        await s.undo(body.version)
        hub.changed(s)
        return s.state()


@router.get("/api/games/{game_id}/record")
async def record(
    game_id: str, hub: HubDep, authorization: str | None = Header(None)
) -> dict[str, Any]:
    s = finished_game(hub, game_id, authorization)
    if not s.game.finished:
        raise NotAllowed("the record shows every hidden card: export it when the game is over")
    out = s.game.to_record()
    out["agents"] = s.seats
    return out


@router.post("/api/games/import")
async def import_game(record: dict[str, Any], hub: HubDep) -> dict[str, Any]:
    try:
        game, moves, end = setup(record)
        for m in moves:
            game.play(m)
        if end:
            game.end()
    except DonutboxError as err:
        raise HTTPException(422, str(err)) from None
    seats = [HUMAN] * game.players
    stored = hub.store.create(
        "imported: " + game.rules.label(), "hotseat", seats, {}, game.to_record(), game.finished
    )
    return hub.session(stored.id).state()


@router.get("/api/games/{game_id}/replay/{ply}")
async def replay_at(
    game_id: str, ply: int, hub: HubDep, authorization: str | None = Header(None)
) -> dict[str, Any]:
    s = finished_game(hub, game_id, authorization)
    if not s.game.finished:
        raise NotAllowed("the replay viewer opens when the game is over")
    if not 0 <= ply <= s.game.ply:
        raise Invalid(f"ply must be from 0 to {s.game.ply}")
    record = s.game.to_record()
    record["moves"] = record["moves"][:ply]
    record.pop("end", None)
    game = Game.from_record(record)
    if ply == s.game.ply and s.game.finished and game.free:
        game.end()
    return {"ply": ply, "of": s.game.ply, "state": game.view(-1).to_dict()}


@router.websocket("/api/games/{game_id}/ws")
async def socket(ws: WebSocket, game_id: str) -> None:
    """A local game's browser listens here (intents go over HTTP)."""
    hub: Hub = ws.app.state.hub
    try:
        s = hub.session(game_id)
    except NoSuchGame:
        await refuse(ws, CLOSE_NO_GAME)
        return
    if s.online:
        await refuse(ws, CLOSE_WRONG_KIND)
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
