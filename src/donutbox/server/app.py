"""The HTTP and WebSocket API (FastAPI).  OpenAPI at /docs and /openapi.json.

The browser sends intents; the session checks them with the engine and every
answer is the state as that reader may see it.  AI moves are computed in a
worker process so the event loop never blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import multiprocessing
import secrets
from concurrent.futures import ProcessPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Header, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from ..core import DonutboxError, Game, Rules
from ..core.record import setup
from . import security
from .hub import HELLO_TIMEOUT, Connection, Hub, NoSuchGame
from .online import digest as token_digest
from .online import new_token
from .session import HUMAN, ONLINE, SPECTATOR, ActionError, GameSession
from .storage import Store, make_engine

STATIC = Path(__file__).parent / "static"
_DONUT_KEYS = frozenset(["C", "S", "H", "B", "R", "RC", "RS", "RH", "RB"])
#: How long the hint's search runs (wall clock: the player is waiting).
HINT_SECONDS = 1.0
AGENTS = ("random", "greedy", "heuristic", "mcts", "easy", "medium", "hard")


class NewGame(BaseModel):
    match: Literal["one-good-match", "perfect-match"] = "one-good-match"
    layout: Literal["squared-away", "splitzkies"] = "squared-away"
    closers: bool = False
    players: int = Field(2, ge=2, le=4)
    opponent: str = Field("medium", description="hotseat, or an agent or level name")
    seconds: float = Field(1.0, gt=0, le=30, description="thinking time of mcts")
    human_seat: int = Field(0, ge=0, le=3, description="the human's seat against the AI")
    names: list[Annotated[str, Field(max_length=40)]] | None = Field(
        None, description="player names, in turn order (at most 40 characters each)"
    )
    seed: int | None = Field(None, ge=0, lt=2**63)


class Intent(BaseModel):
    move: str = Field(..., max_length=40, description="a move in notation")
    version: int = Field(..., ge=0, description="the state version the move was made on")


class Version(BaseModel):
    version: int = Field(..., ge=0)


class ClockOption(BaseModel):
    minutes: float = Field(10, gt=0, le=180, description="each player's time")
    increment: float = Field(15, ge=0, le=600, description="seconds added a move")


class OnlineSeat(BaseModel):
    kind: str = Field(HUMAN, description="human, or an agent or level name")
    name: str = Field("", max_length=40, description="shown escaped")


class NewOnlineGame(BaseModel):
    match: Literal["one-good-match", "perfect-match"] = "one-good-match"
    layout: Literal["squared-away", "splitzkies"] = "squared-away"
    closers: bool = False
    seats: list[OnlineSeat] = Field(..., min_length=2, max_length=4)
    clock: ClockOption | None = None
    seconds: float = Field(1.0, gt=0, le=30, description="thinking time of mcts seats")
    seed: int | None = Field(None, ge=0, lt=2**63)


@functools.lru_cache(maxsize=4)
def _print_pdf(paper: str, backs: bool) -> bytes:
    """The PDF's bytes: the same for the same options, so made once (about a
    second of CPU)."""
    from ..render.pdf import make_pdf

    return make_pdf(paper, 2, backs)[0]


async def refuse(ws: WebSocket, code: int) -> None:
    """Close a socket with a reason the page can act on (4404: no such game,
    4403: the wrong kind of game).  It is accepted first: a socket closed
    during the handshake reaches a browser as a plain failure (HTTP 403,
    close code 1006), which a client would take for a network drop and retry
    for ever."""
    await ws.accept()
    await ws.close(code=code)


def _tune_gc() -> None:
    """Full garbage collections stop the server for as long as they take
    (about 100 ms with 200 games in memory on the project's machine: the
    engine's move tables are long-lived and GC-tracked), and the default
    thresholds run one every 10-20 seconds under load.  Almost all garbage
    here is freed by reference counting and the young generations still
    collect young cycles, so the server freezes what start-up made (modules,
    classes) and lets a full collection wait for 1,000 younger ones: a pause
    every quarter of an hour or so at 90 moves a second, not one every few
    seconds (docs/performance.md, online play load)."""
    gc.freeze()
    gc.set_threshold(2000, 10, 1000)


def create_app(db_url: str | None = None, workers: int = 1, inline_ai: bool = False) -> FastAPI:
    """The ASGI app.  ``inline_ai`` computes AI moves in the event loop's
    default thread pool instead of worker processes (tests)."""

    hub: Hub | None = None
    # Made now, not at start-up, so that a bad URL or an unwritable file is
    # reported by whoever creates the app (``donutbox serve``: one line).
    engine = make_engine(db_url)

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
        hub = Hub(Store(engine), executor)
        app.state.hub = hub
        hub.resume_online()
        _tune_gc()
        yield
        await hub.close()
        hub.store.close()
        if executor is not None:
            executor.shutdown(cancel_futures=True)

    app = FastAPI(
        title="donutbox",
        version="0.1.0",
        lifespan=lifespan,
        description="Play the donut card game: the server is the authority.",
        docs_url=None,  # security.install serves /docs from the package
    )
    security.install(app)

    hinting: set[str] = set()  # games whose hint is being searched

    def the_hub() -> Hub:
        assert hub is not None
        return hub

    def found(game_id: str) -> GameSession:
        try:
            return the_hub().session(game_id)
        except NoSuchGame:
            raise HTTPException(404, "no such game") from None

    def local(game_id: str) -> GameSession:
        """A game played in one browser (against the AI, or hotseat)."""
        s = found(game_id)
        if s.online:
            raise HTTPException(403, "this is an online game: open it with its invite link")
        return s

    def online(game_id: str, authorization: str | None) -> tuple[GameSession, int]:
        """An online game and the seat (or SPECTATOR) the bearer token opens."""
        s = found(game_id)
        token = (authorization or "").removeprefix("Bearer ").strip()
        seat = s.reader_for(token) if s.online and token else None
        if seat is None:
            raise HTTPException(403, "token: this link does not open this game")
        return s, seat

    @app.exception_handler(ActionError)
    async def _action_error(_request: Any, err: ActionError) -> JSONResponse:
        return JSONResponse({"detail": err.reason}, status_code=err.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Any, err: RequestValidationError) -> JSONResponse:
        """One line naming the field (never the input echoed back: it may be
        huge, or not even valid JSON, e.g. Infinity)."""
        reasons = []
        for e in err.errors()[:3]:
            where = ".".join(str(part) for part in e.get("loc", ())[1:]) or "body"
            reasons.append(f"{where}: {e.get('msg', 'invalid')}")
        return JSONResponse({"detail": "; ".join(reasons) or "invalid request"}, 422)

    @app.get("/api/meta")
    async def meta() -> dict[str, Any]:
        return {
            "agents": list(AGENTS),
            "matches": ["one-good-match", "perfect-match"],
            "layouts": ["squared-away", "splitzkies"],
        }

    @app.get("/api/rules")
    async def rules() -> dict[str, Any]:
        """The reference card (the same text as the print-and-play PDF's), for
        the page's How to play panel.  Items use <b> and <i> only."""
        from ..render.pdf import REFERENCE, REFERENCE_TITLE

        columns = [[{"heading": h, "items": list(items)} for h, items in col] for col in REFERENCE]
        return {"title": REFERENCE_TITLE, "columns": columns}

    @app.get("/api/print.pdf", response_class=Response)
    async def print_and_play(
        paper: Literal["a4", "letter"] = "a4", backs: bool = False
    ) -> Response:
        """The print-and-play PDF (two decks: the cards, the rules, a reference
        card), as ``donutbox print`` makes it."""
        data = await asyncio.to_thread(_print_pdf, paper, backs)
        return Response(
            data,
            media_type="application/pdf",
            headers={"Content-Disposition": 'attachment; filename="donutbox-print-and-play.pdf"'},
        )

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
        return s.state()

    @app.post("/api/online")
    async def new_online_game(req: NewOnlineGame) -> dict[str, Any]:
        """An online game: one secret link per human seat, and a spectator
        link.  The tokens are shown once, here; the server keeps digests."""
        h = the_hub()
        kinds = []
        for i, seat in enumerate(req.seats):
            if seat.kind != HUMAN and seat.kind not in AGENTS:
                raise HTTPException(
                    422, f"seats[{i}].kind: must be human or one of {', '.join(AGENTS)}"
                )
            kinds.append(seat.kind)
        if HUMAN not in kinds:
            raise HTTPException(422, "seats: an online game needs at least one human seat")
        names = [
            " ".join(seat.name.split())[:40] or (f"Player {i + 1}" if k == HUMAN else k.title())
            for i, (seat, k) in enumerate(zip(req.seats, kinds, strict=True))
        ]
        try:
            game = Game.new(Rules(req.match, req.layout, req.closers), names, req.seed)
        except (ValueError, DonutboxError) as err:
            raise HTTPException(422, str(err)) from None
        tokens = [new_token() if k == HUMAN else None for k in kinds]
        watch = new_token()
        clock = None
        if req.clock is not None:
            from .online import Clock

            clock = Clock.new(
                req.clock.minutes * 60, req.clock.increment, [k == HUMAN for k in kinds]
            ).to_dict()
        options: dict[str, Any] = {
            "online": {
                "digests": [token_digest(t) if t else None for t in tokens],
                "watch": token_digest(watch),
                "clock": clock,
            }
        }
        if any(k in ("mcts", "hard") for k in kinds):
            options["agent"] = {"seconds": req.seconds}
        stored = h.store.create(game.rules.label(), ONLINE, kinds, options, game.to_record())
        h.session(stored.id)

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

    @app.get("/api/online/{game_id}")
    async def online_state(
        game_id: str, authorization: str | None = Header(None)
    ) -> dict[str, Any]:
        """The game as the bearer's seat (or a spectator) may see it."""
        s, seat = online(game_id, authorization)
        state = s.state(seat)
        state["presence"] = the_hub().presence(game_id)
        return state

    @app.post("/api/online/{game_id}/moves")
    async def online_move(
        game_id: str, intent: Intent, authorization: str | None = Header(None)
    ) -> dict[str, Any]:
        h = the_hub()
        s, seat = online(game_id, authorization)
        if seat == SPECTATOR:
            raise HTTPException(403, "move: spectators cannot act")
        async with h.locks[game_id]:
            await s.act(intent.move, intent.version, seat)
            h.changed(s)
            return s.state(seat)

    @app.websocket("/api/online/{game_id}/ws")
    async def online_socket(ws: WebSocket, game_id: str) -> None:
        """Online play: send ``{"type": "hello", "token": ...}`` first; see
        docs/online.md for every message."""
        h = the_hub()
        try:
            s = h.session(game_id)
        except NoSuchGame:
            await refuse(ws, 4404)
            return
        if not s.online:
            await refuse(ws, 4403)
            return
        await ws.accept()
        conn = Connection(ws.send_text, game_id)
        conn.online = True
        h.attach(conn)
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
                if not await h.receive(conn, text):
                    break
        except WebSocketDisconnect:
            pass
        finally:
            h.detach(conn)
            if conn.writer is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(conn.writer, 2.0)
            with contextlib.suppress(Exception):
                await ws.close()

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
        """Games played in this browser's way (online games are reached by
        their links only)."""
        out = []
        for g in the_hub().store.list(exclude_mode=ONLINE):
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
        return local(game_id).state()

    @app.post("/api/games/{game_id}/moves")
    async def play(game_id: str, intent: Intent) -> dict[str, Any]:
        h = the_hub()
        async with h.locks[game_id]:
            s = local(game_id)
            await s.act(intent.move, intent.version)
            h.changed(s)
            return s.state()

    @app.get("/api/games/{game_id}/preview")
    async def preview(game_id: str, move: str) -> dict[str, Any]:
        """What ``move`` would seal and score, without playing it."""
        if len(move) > 40:
            raise HTTPException(422, "move: at most 40 characters")
        return local(game_id).preview(move)

    @app.post("/api/games/{game_id}/hint")
    async def hint(game_id: str, body: Version) -> dict[str, Any]:
        """The strongest agent's move (``mcts``, one second) for the human to
        move, searched from that player's view only.  Local games only: in an
        online game it would be help the opponent has not agreed to."""
        h = the_hub()
        view = local(game_id).hint_view(body.version)
        # A search takes a worker for a second: one at a time per game.
        if game_id in hinting:
            raise HTTPException(429, "hint: one is already being worked out for this game")
        hinting.add(game_id)
        try:
            move = await h.think(view, "mcts", {"seconds": HINT_SECONDS}, secrets.randbits(32))
        finally:
            hinting.discard(game_id)
        return {"move": move, "version": body.version}

    @app.post("/api/games/{game_id}/undo")
    async def undo(game_id: str, body: Version) -> dict[str, Any]:
        h = the_hub()
        async with h.locks[game_id]:
            s = local(game_id)
            await s.undo(body.version)
            h.changed(s)
            return s.state()

    @app.get("/api/games/{game_id}/record")
    async def record(game_id: str, authorization: str | None = Header(None)) -> dict[str, Any]:
        s = found(game_id)
        if s.online:
            s, _ = online(game_id, authorization)
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
    async def replay_at(
        game_id: str, ply: int, authorization: str | None = Header(None)
    ) -> dict[str, Any]:
        s = found(game_id)
        if s.online:
            s, _ = online(game_id, authorization)
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
        """A local game's browser listens here (intents go over HTTP)."""
        h = the_hub()
        try:
            s = h.session(game_id)
        except NoSuchGame:
            await refuse(ws, 4404)
            return
        if s.online:
            await refuse(ws, 4403)
            return
        await ws.accept()
        conn = Connection(ws.send_text, game_id)
        h.attach(conn)
        try:
            conn.put({"type": "state", "state": s.state()})
            while not conn.closed.is_set():
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
        except WebSocketDisconnect:
            pass
        finally:
            h.detach(conn)
            with contextlib.suppress(Exception):
                await ws.close()

    if STATIC.exists():
        app.mount("/static", StaticFiles(directory=STATIC), name="static")

        @app.get("/", include_in_schema=False)
        async def index() -> FileResponse:
            return FileResponse(STATIC / "index.html")

    return app
