"""What every HTTP exchange goes through before the routes see it, and the
headers every answer carries.  ``install(app)`` puts it all on the app:

- **A request rate per address** for API requests from the network
  (``limits.REQUEST_RATE``, costly requests counting more): 429 with a
  one-line reason and ``Retry-After`` beyond it.
- **Body bounds** (an ASGI middleware, so nothing is parsed first): a body
  over its path's cap gets 413 with a one-line reason, from the
  ``Content-Length`` header when there is one, otherwise as soon as the
  bytes read pass the cap; a body must arrive within ``BODY_TIMEOUT``
  seconds (408); a body nested deeper than ``jsonsafe.MAX_DEPTH`` gets 422
  before any JSON parser recurses into it.
- **Security headers** on every response: the Content-Security-Policy the
  page is written for (no inline script), ``X-Frame-Options: DENY``,
  ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer``.
- **/docs** served from the installed packages (Swagger UI 5's files as the
  ``fastapi-offline`` wheel ships them), not a CDN, with its start-up
  script as a file (the CSP forbids inline script).
- One-line answers for the storage's and the worker pool's failures
  (``StorageError``: 503, or a WebSocket closed with 1011 and the reason;
  ``errors.Overloaded``: 503, in routes/common.py) instead of a bare 500.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI

from . import jsonsafe, limits
from .storage import StorageError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Largest body of any request, in bytes (an intent is under 100).
MAX_BODY = 16 * 1024
#: Larger caps for the few paths that take a document: (method, path, bytes).
#: A finished 4-player record is about 3 KB (104 moves); 32 KiB is ten
#: times that, and a 1.2 MB record of 62,872 moves is refused unread.  (At
#: most about 3,500 moves fit: replaying them costs about half a second,
#: which is why routes replay records through ``limits.run_blocking``.)
BODY_CAPS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("POST", re.compile(r"^/api/games/import$"), 32 * 1024),
    # A new game may carry a custom deck's text (at most 20,000 characters,
    # server/models.py), so that its own limit, not this one, answers.
    ("POST", re.compile(r"^/api/games$"), 32 * 1024),
)
#: Seconds a client has to send the whole body once its headers are in.
BODY_TIMEOUT = 10.0

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; connect-src 'self' ws: wss:; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


#: The per-address request buckets of this process (see limits.REQUEST_RATE).
REQUESTS = limits.AddressBuckets(limits.REQUEST_RATE, limits.REQUEST_BURST)


def body_cap(method: str, path: str) -> int:
    for m, pattern, cap in BODY_CAPS:
        if method == m and pattern.match(path):
            return cap
    return MAX_BODY


async def _answer(
    send: Send, status: int, reason: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps({"detail": reason}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *SECURITY_HEADERS,
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class GuardMiddleware:
    """Body bounds and security headers (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(n, v) for n, v in SECURITY_HEADERS if n not in present]
                message = dict(message)
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        method = scope.get("method", "GET")
        path = scope.get("path", "")
        if scope.get("donutbox.guarded") and path.startswith("/api/"):
            address = limits.client_address(scope)
            cost = limits.request_cost(method, path)
            waiting = await REQUESTS.acquire(address, cost)  # shared with a broker
            if waiting > 0:
                wait = max(1, round(waiting + 0.5))
                await _answer(
                    send,
                    429,
                    f"rate limit: too many requests from your address; try again in {wait} s",
                    [(b"retry-after", str(wait).encode())],
                )
                return
        cap = body_cap(method, path)
        length = None
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    await _answer(send, 400, "content-length: not a number")
                    return
        if length is not None and length > cap:
            await _answer(send, 413, f"body: too large ({length} bytes, at most {cap})")
            return
        if length == 0 or (length is None and method in ("GET", "HEAD", "OPTIONS", "DELETE")):
            await self.app(scope, receive, send_with_headers)
            return

        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + BODY_TIMEOUT
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                await _answer(send, 408, f"body: not received within {BODY_TIMEOUT:g} seconds")
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > cap:
                await _answer(send, 413, f"body: too large (over {cap} bytes)")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body:
            try:
                jsonsafe.check(body, jsonsafe.MAX_DEPTH, what="body")
            except ValueError as err:
                await _answer(send, 422, str(err))
                return

        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send_with_headers)


# -- /docs from the package -------------------------------------------------------------

_DOCS_INIT = """\
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
});
"""

_DOCS_HTML = """\
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} - API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
"""

_DOCS_MISSING = """\
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} - API</title></head>
<body><p>The API page needs the <code>fastapi-offline</code> package
(<code>pip install fastapi-offline</code>). The API itself is described at
<a href="/openapi.json">/openapi.json</a>.</p></body></html>
"""


def swagger_assets() -> str | None:
    """The folder holding Swagger UI's ``swagger-ui-bundle.js`` and
    ``swagger-ui.css`` in the installed ``fastapi-offline`` package (MIT; it
    ships Swagger UI 5, Apache-2.0, which reads the OpenAPI 3.1 FastAPI
    writes), or None.  Found without importing the package's code."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("fastapi_offline")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "static"
    if not (folder / "swagger-ui-bundle.js").is_file():
        return None
    return str(folder)


def install_docs(app: FastAPI) -> None:
    """``/docs`` from the package's files (replacing FastAPI's CDN page)."""
    from fastapi.responses import HTMLResponse, Response
    from fastapi.staticfiles import StaticFiles

    # FastAPI's own /docs (made when the app was created with the default
    # docs_url) points at a CDN: drop it, and its OAuth helper page.
    app.router.routes[:] = [
        r
        for r in app.router.routes
        if getattr(r, "path", None) not in ("/docs", "/docs/oauth2-redirect")
    ]
    app.docs_url = None
    title = app.title
    assets = swagger_assets()
    if assets is not None:
        app.mount("/docs/assets", StaticFiles(directory=assets), name="swagger-assets")

    @app.get("/docs/init.js", include_in_schema=False)
    async def _docs_init() -> Response:
        return Response(_DOCS_INIT, media_type="application/javascript")

    @app.get("/docs", include_in_schema=False)
    async def _docs() -> HTMLResponse:
        page = _DOCS_HTML if assets is not None else _DOCS_MISSING
        return HTMLResponse(page.format(title=title))


# -- install -------------------------------------------------------------------------------


def install(app: FastAPI) -> None:
    """Everything above, on a FastAPI app (call once, in ``create_app``)."""
    from fastapi.responses import JSONResponse

    app.add_middleware(GuardMiddleware)
    install_docs(app)

    @app.exception_handler(StorageError)
    async def _storage_error(conn: Any, err: StorageError) -> JSONResponse | None:
        if conn.scope["type"] == "websocket":
            # Closed with the reason (accepted first: a refused handshake
            # reaches a browser as a bare 1006, which it would retry).
            from starlette.websockets import WebSocketState

            reason = err.reason.encode()[:120].decode("utf-8", "ignore")
            with contextlib.suppress(Exception):
                if conn.application_state == WebSocketState.CONNECTING:
                    await conn.accept()
                await conn.close(code=1011, reason=reason)
            return None
        return JSONResponse({"detail": err.reason}, status_code=503)
