"""The HTTP and WebSocket API (FastAPI).  OpenAPI at /docs and /openapi.json.

The browser sends intents; the session checks them with the engine and every
answer is the state as that reader may see it.  AI moves are computed in a
worker process so the event loop never blocks.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections import defaultdict
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from ..core import DonutboxError, Game, Rules
from ..core.record import setup
from .session import HUMAN, ActionError, GameSession, choose_ai_move
from .storage import Store, make_engine

STATIC = Path(__file__).parent / "static"
_DONUT_KEYS = frozenset(["C", "S", "H", "B", "R", "RC", "RS", "RH", "RB"])
AGENTS = ("random", "greedy", "heuristic", "mcts", "easy", "medium", "hard")


class NewGame(BaseModel):
    match: Literal["one-good-match", "perfect-match"] = "one-good-match"
    layout: Literal["squared-away", "splitzkies"] = "squared-away"
    closers: bool = False
    players: int = Field(2, ge=2, le=4)
    opponent: str = Field("medium", description="hotseat, or an agent or level name")
    seconds: float = Field(1.0, gt=0, le=30, description="thinking time of mcts")
    human_seat: int = Field(0, ge=0, le=3, description="the human's seat against the AI")
    names: list[str] | None = Field(None, description="player names, in turn order")
    seed: int | None = Field(None, ge=0, lt=2**63)


class Intent(BaseModel):
    move: str = Field(..., max_length=40, description="a move in notation")
    version: int = Field(..., ge=0, description="the state version the move was made on")


class Version(BaseModel):
    version: int = Field(..., ge=0)


class Hub:
    """Sessions in memory, their locks, subscribers and the AI workers."""

    def __init__(self, store: Store, executor: Executor | None) -> None:
        self.store = store
        self.executor = executor
        self.sessions: dict[str, GameSession] = {}
        self.locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.sockets: dict[str, set[WebSocket]] = defaultdict(set)
        self.tasks: set[asyncio.Task[None]] = set()

    def session(self, game_id: str) -> GameSession:
        s = self.sessions.get(game_id)
        if s is None:
            stored = self.store.get(game_id)
            if stored is None:
                raise HTTPException(404, "no such game")
            s = self.sessions[game_id] = GameSession(stored, self.store)
        return s

    async def broadcast(self, s: GameSession) -> None:
        state = s.state()
        for ws in list(self.sockets[s.id]):
            try:
                await ws.send_json({"type": "state", "state": state})
            except Exception:  # a closed socket: forget it
                self.sockets[s.id].discard(ws)

    def kick_ai(self, s: GameSession) -> None:
        if s.ai_to_move() and not s.game.finished:
            task = asyncio.create_task(self.run_ai(s.id))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def run_ai(self, game_id: str) -> None:
        loop = asyncio.get_running_loop()
        while True:
            async with self.locks[game_id]:
                s = self.session(game_id)
                pending = s.ai_view()
                if pending is None:
                    return
                view, seat = pending
                name, options = s.agent_spec(seat)
                version = s.version
            seed = hash((game_id, version)) & 0x7FFFFFFF
            move = await loop.run_in_executor(
                self.executor, choose_ai_move, view, name, options, seed
            )
            async with self.locks[game_id]:
                s = self.session(game_id)
                if s.version != version:
                    continue  # something changed (undo): think again
                s._commit(move)
            await self.broadcast(s)


def create_app(db_url: str | None = None, workers: int = 1, inline_ai: bool = False) -> FastAPI:
    """The ASGI app.  ``inline_ai`` computes AI moves in the event loop's
    default thread pool instead of worker processes (tests)."""

    hub: Hub | None = None

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        nonlocal hub
        executor = (
            None
            if inline_ai
            else ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("spawn")
            )
        )
        hub = Hub(Store(make_engine(db_url)), executor)
        app.state.hub = hub
        yield
        for task in list(hub.tasks):
            task.cancel()
        if executor is not None:
            executor.shutdown(cancel_futures=True)

    app = FastAPI(
        title="donutbox",
        version="0.1.0",
        lifespan=lifespan,
        description="Play the donut card game: the server is the authority.",
    )

    def the_hub() -> Hub:
        assert hub is not None
        return hub

    @app.exception_handler(ActionError)
    async def _action_error(_request: Any, err: ActionError) -> JSONResponse:
        return JSONResponse({"detail": err.reason}, status_code=err.status)

    @app.get("/api/meta")
    async def meta() -> dict[str, Any]:
        return {
            "agents": list(AGENTS),
            "matches": ["one-good-match", "perfect-match"],
            "layouts": ["squared-away", "splitzkies"],
        }

    @app.post("/api/games")
    async def new_game(req: NewGame) -> dict[str, Any]:
        h = the_hub()
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
            default = [
                ("You" if s == HUMAN else f"{s.title()} {i + 1}") for i, s in enumerate(seats)
            ]
        try:
            game = Game.new(Rules(req.match, req.layout, req.closers), names or default, req.seed)
        except (ValueError, DonutboxError) as err:
            raise HTTPException(422, str(err)) from None
        options = {"agent": {"seconds": req.seconds}} if req.opponent in ("mcts", "hard") else {}
        mode = "hotseat" if req.opponent == "hotseat" else "ai"
        stored = h.store.create(game.rules.label(), mode, seats, options, game.to_record())
        s = h.session(stored.id)
        h.kick_ai(s)
        return s.state()

    @app.get("/api/look/donut/{key}.svg", include_in_schema=False)
    async def donut_look(key: str) -> Response:
        """One donut drawn by the same code as the PDF and ``render``: C, S,
        H, B, R, or R plus the flavour a Cinnamon Roll locked to (e.g. RC)."""
        if key not in _DONUT_KEYS:
            raise HTTPException(404, "no such donut")
        from ..render.svg import donut_svg

        body = donut_svg(key[0], locked=key[1] if len(key) == 2 else None)
        return Response(
            body, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"}
        )

    @app.get("/api/games")
    async def list_games() -> list[dict[str, Any]]:
        out = []
        for g in the_hub().store.list():
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

    @app.get("/api/games/{game_id}")
    async def get_game(game_id: str) -> dict[str, Any]:
        return the_hub().session(game_id).state()

    @app.post("/api/games/{game_id}/moves")
    async def play(game_id: str, intent: Intent) -> dict[str, Any]:
        h = the_hub()
        async with h.locks[game_id]:
            s = h.session(game_id)
            s.act(intent.move, intent.version)
        await h.broadcast(s)
        h.kick_ai(s)
        return s.state()

    @app.get("/api/games/{game_id}/preview")
    async def preview(game_id: str, move: str) -> dict[str, Any]:
        """What ``move`` would seal and score, without playing it."""
        if len(move) > 40:
            raise HTTPException(422, "move: at most 40 characters")
        return the_hub().session(game_id).preview(move)

    @app.post("/api/games/{game_id}/undo")
    async def undo(game_id: str, body: Version) -> dict[str, Any]:
        h = the_hub()
        async with h.locks[game_id]:
            s = h.session(game_id)
            s.undo(body.version)
        await h.broadcast(s)
        h.kick_ai(s)
        return s.state()

    @app.get("/api/games/{game_id}/record")
    async def record(game_id: str) -> dict[str, Any]:
        s = the_hub().session(game_id)
        if not s.game.finished:
            raise HTTPException(
                403, "the record shows every hidden card: export it when the game is over"
            )
        out = s.game.to_record()
        out["agents"] = s.seats
        return out

    @app.post("/api/games/import")
    async def import_game(record: dict[str, Any]) -> dict[str, Any]:
        h = the_hub()
        try:
            game, moves, end = setup(record)
            for m in moves:
                game.play(m)
            if end:
                game.end()
        except DonutboxError as err:
            raise HTTPException(422, str(err)) from None
        seats = [HUMAN] * game.players
        stored = h.store.create(
            "imported: " + game.rules.label(), "hotseat", seats, {}, game.to_record(), game.finished
        )
        return h.session(stored.id).state()

    @app.get("/api/games/{game_id}/replay/{ply}")
    async def replay_at(game_id: str, ply: int) -> dict[str, Any]:
        s = the_hub().session(game_id)
        if not s.game.finished:
            raise HTTPException(403, "the replay viewer opens when the game is over")
        if not 0 <= ply <= s.game.ply:
            raise HTTPException(422, f"ply must be from 0 to {s.game.ply}")
        record = s.game.to_record()
        record["moves"] = record["moves"][:ply]
        record.pop("end", None)
        game = Game.from_record(record)
        if ply == s.game.ply and s.game.finished and game.free:
            game.end()
        return {"ply": ply, "of": s.game.ply, "state": game.view(-1).to_dict()}

    @app.websocket("/api/games/{game_id}/ws")
    async def socket(ws: WebSocket, game_id: str) -> None:
        h = the_hub()
        try:
            s = h.session(game_id)
        except HTTPException:
            await ws.close(code=4404)
            return
        await ws.accept()
        h.sockets[game_id].add(ws)
        try:
            await ws.send_json({"type": "state", "state": s.state()})
            while True:
                await ws.receive_text()  # the browser only listens; intents go over HTTP
        except WebSocketDisconnect:
            pass
        finally:
            h.sockets[game_id].discard(ws)

    if STATIC.exists():
        app.mount("/static", StaticFiles(directory=STATIC), name="static")

        @app.get("/", include_in_schema=False)
        async def index() -> FileResponse:
            return FileResponse(STATIC / "index.html")

    return app
