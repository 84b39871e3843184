"""What a game refuses, as types: the session and the hub raise these; each
transport maps them to its own answer (the HTTP routers to a status code,
the WebSocket protocol to an ``error`` message with the reason)."""

from __future__ import annotations


class ActionError(Exception):
    """An intent refused; ``reason`` is one line naming the field or rule."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Invalid(ActionError):
    """Malformed, or against the rules (HTTP 422)."""


class Stale(ActionError):
    """Made on an older version of the game, or clashing with a change in
    progress (HTTP 409)."""


class Conflict(ActionError):
    """Clashes with something pending, e.g. a takeback waiting (HTTP 409)."""


class NotAllowed(ActionError):
    """Not this reader's to do: not their turn, a spectator, a secret until
    the end (HTTP 403)."""


class NotIntroduced(ActionError):
    """An online reader that has not said hello (HTTP 401)."""


class Busy(ActionError):
    """Too many at once: try again later.  The one "busy" refusal of the
    server: HTTP 429 (this client asked too often) or, as ``Overloaded``,
    503 (the server is busy with everyone's work); over a WebSocket an
    ``error`` message, the socket staying open."""


class Overloaded(Busy):
    """The server's blocking-work pool is full (``limits.run_blocking``):
    HTTP 503 with ``Retry-After``."""

    def __init__(self, what: str = "server") -> None:
        super().__init__(f"{what}: busy with other requests, try again in a moment")


class NoSuchGame(ActionError, LookupError):
    """No such game, or not one this reader may know of (HTTP 404)."""

    def __init__(self, reason: str = "no such game") -> None:
        super().__init__(reason)
