"""What the HTTP routers share: the hub of the app, and the mapping of the
session's typed refusals (errors.py) to HTTP status codes."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError, ResponseValidationError
from fastapi.responses import JSONResponse

from .. import limits
from ..errors import (
    ActionError,
    Busy,
    Conflict,
    Invalid,
    NoSuchGame,
    NotAllowed,
    NotIntroduced,
    Overloaded,
    Stale,
)
from ..hub import Hub

log = logging.getLogger("donutbox.server")

#: The HTTP status of each kind of refusal (the most specific class wins).
STATUS: dict[type[ActionError], int] = {
    Invalid: 422,
    Stale: 409,
    Conflict: 409,
    NotAllowed: 403,
    NotIntroduced: 401,
    Busy: 429,
    Overloaded: 503,
    NoSuchGame: 404,
}


def status_of(err: ActionError) -> int:
    for cls in type(err).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 400


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


HubDep = Annotated[Hub, Depends(hub_of)]


async def creation_allowed(request: Request) -> None:
    """A dependency of the routes that make a game: the address's token
    bucket (throttle.py; shared by every process with a broker) must have a
    token, else 429."""
    await hub_of(request).creation.take_async(limits.client_address(request))


Creating = Depends(creation_allowed)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ActionError)
    async def _action_error(_request: Any, err: ActionError) -> JSONResponse:
        headers = {"Retry-After": "1"} if isinstance(err, Overloaded) else None
        return JSONResponse({"detail": err.reason}, status_code=status_of(err), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Any, err: RequestValidationError) -> JSONResponse:
        """One line naming the field (never the input echoed back: it may be
        huge, or not even valid JSON, e.g. Infinity)."""
        reasons = []
        for e in err.errors()[:3]:
            where = ".".join(str(part) for part in e.get("loc", ())[1:]) or "body"
            msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")
            reasons.append(f"{where}: {msg}")
        return JSONResponse({"detail": "; ".join(reasons) or "invalid request"}, 422)

    @app.exception_handler(ResponseValidationError)
    async def _undocumented(request: Request, err: ResponseValidationError) -> JSONResponse:
        """An answer that does not match its response model (server/wire): a
        server bug.  Nothing of it is sent (it may hold a field that must not
        leave); one log line names the field."""
        first = err.errors()[0] if err.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ())[1:]) or "body"
        log.error(
            "wire: %s %s answered %s: %s", request.method, request.url.path, where, first.get("msg")
        )
        return JSONResponse(
            {"detail": "server: the answer did not match its documented shape"}, 500
        )
