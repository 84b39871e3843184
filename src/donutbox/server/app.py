"""The HTTP and WebSocket API (FastAPI).  OpenAPI at /docs and /openapi.json.

The browser sends intents; the session checks them with the engine and every
answer is the state as that reader may see it.  AI moves are computed in a
worker process so the event loop never blocks.

The parts (docs/web.md has the map):
- routes/local.py: local games (against the AI, hotseat), records, replays;
- routes/online.py: online games (secret links), their WebSocket;
- bots/: the Bot API (bot accounts, tokens, NDJSON streams);
- routes/meta.py: the API's metadata, the rules card, the PDF, the donuts;
- routes/common.py: the typed refusals (errors.py) mapped to HTTP status codes;
- protocol.py: the online WebSocket protocol (hello, dispatch, limits);
- hub.py: the games in memory; fanout.py, ai_runner.py, clocks.py its jobs;
- session.py: one game's authority, transport-agnostic.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles

from . import ai_runner, migrate, security, wire
from .bots import routes as bot_routes
from .broker import check_url, make_broker, schema_lock
from .hub import Hub
from .mail import routes as mail_routes
from .mail.config import parse_smtp_url
from .mail.routes import start_mail
from .routes import lobby as routes_lobby
from .routes import local as routes_local
from .routes import meta as routes_meta
from .routes import online as routes_online
from .routes.analysis import router as analysis_router
from .routes.common import install_error_handlers
from .session import warm_up
from .storage import Store, make_engine

STATIC = Path(__file__).parent / "static"


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


def create_app(
    db_url: str | None = None,
    workers: int = 1,
    inline_ai: bool = False,
    broker_url: str | None = None,
    smtp_url: str | None = None,
    public_url: str = "http://127.0.0.1:8000",
) -> FastAPI:
    """The ASGI app.  ``inline_ai`` computes AI moves in the event loop's
    default thread pool instead of worker processes (tests).  ``broker_url``
    (Redis) joins the other server processes on the same database
    (broker.py, docs/deploy.md); without it this process is the only one."""

    # Made now, not at start-up, so that a bad URL or an unwritable file is
    # reported by whoever creates the app (``donutbox serve``: one line).
    with schema_lock(db_url):  # PostgreSQL: processes starting together take turns
        engine = make_engine(db_url)
        migrate.upgrade(engine)  # the community's tables (docs/community.md)
    if broker_url:
        check_url(broker_url)  # one line if it is not Redis or does not answer
    # One line (a ValueError naming --smtp) if the URL cannot be used.
    smtp = parse_smtp_url(smtp_url, public_url) if smtp_url else None

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        spawn = multiprocessing.get_context("spawn")

        # Searches on ``workers`` processes; quick agents on one of their own
        # (ai_runner.AIWork).  Processes start when first needed.
        # A worker exits when this process is gone, however it went.
        def workers_of(n: int) -> ProcessPoolExecutor:
            return ProcessPoolExecutor(
                n, spawn, initializer=ai_runner.die_with_parent, initargs=(os.getpid(),)
            )

        executor = None if inline_ai else workers_of(workers)
        quick = None if inline_ai else workers_of(1)
        hub = Hub(
            Store(engine), executor, capacity=workers, quick=quick, broker=make_broker(broker_url)
        )
        await hub.broker.start()
        for pool in (executor, quick):
            if pool is not None:
                pool.submit(warm_up)  # start the worker now, not at the first AI move
        app.state.hub = hub
        await routes_lobby.start(app, hub)
        app.state.mail = start_mail(hub, smtp)
        hub.start()
        _tune_gc()
        yield
        await routes_lobby.stop(app)
        if app.state.mail is not None:
            await app.state.mail.sender.close()
        await hub.close()
        hub.store.close()
        for pool in (executor, quick):
            if pool is not None:
                pool.shutdown(cancel_futures=True)

    app = FastAPI(
        title="donutbox",
        version="0.1.0",
        lifespan=lifespan,
        description="Play the donut card game: the server is the authority.",
        docs_url=None,  # security.install serves /docs from the package
        redoc_url=None,  # it would load from a CDN, which the CSP blocks
    )
    install_error_handlers(app)
    security.install(app)
    app.include_router(routes_meta.router)
    app.include_router(routes_online.router)
    app.include_router(routes_local.router)
    app.include_router(analysis_router)  # analyse a finished game
    routes_lobby.install(app)  # accounts, lobby, ratings
    bot_routes.install(app)  # the Bot API (docs/bots.md)
    app.include_router(mail_routes.router)  # email settings, confirm, unsubscribe

    if STATIC.exists():
        app.mount("/static", StaticFiles(directory=STATIC), name="static")

        @app.get("/", include_in_schema=False)
        async def index() -> FileResponse:
            return FileResponse(STATIC / "index.html")

    _answer_head_like_get(app)
    _document_messages(app)
    return app


def _document_messages(app: FastAPI) -> None:
    """The WebSocket messages in the OpenAPI document's components
    (``ServerMessage``, ``ClientMessage``, ``LobbyMessage``: server/wire):
    OpenAPI has no operations for a socket, but its schemas are where a
    client's author looks."""
    made = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = made()
            schema.setdefault("components", {}).setdefault("schemas", {}).update(wire.schemas())
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _answer_head_like_get(app: FastAPI) -> None:
    """HEAD on a page (``/``, ``/docs``, the drawings) answers as GET does,
    without the body (``curl -I``, link checkers, uptime probes); the static
    files do so already.  Only the routes outside the API schema: the API's
    own operations stay as documented."""
    for route in app.routes:
        if not isinstance(route, APIRoute) or route.include_in_schema:
            continue
        if route.methods is not None and "GET" in route.methods:
            route.methods.add("HEAD")
