"""Online play's small parts: seat tokens, clocks, client messages, rate limits.

Nothing here does I/O; the WebSocket protocol (``protocol.py``) and the hub
(``hub.py``) put them together.

- A **token** is 128+ bits from ``secrets`` (``token_urlsafe(24)``: 192 bits).
  The server keeps only its SHA-256 digest and compares digests with
  ``hmac.compare_digest`` (constant time).  The token travels in the link's
  fragment (``/#/online/<game>/<token>``), which browsers never send to a
  server, then in the WebSocket's first message or an ``Authorization``
  header: never in a URL the server logs.
- A **clock** per human seat: ``initial`` plus ``increment`` seconds a move,
  kept by the server.  It runs only once every human seat has joined.  When
  it runs out, the server's medium AI (heuristic) moves for that player;
  they then play on with the increment alone.  Time the server is down is
  not charged.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from .jsonsafe import JsonTooDeep, loads_bounded

#: Largest client message accepted, in characters (a move is under 40).
MAX_MESSAGE = 2048
#: Messages a connection may send: a burst of ``RATE_BURST``, refilled at
#: ``RATE_PER_SECOND``; beyond ``RATE_CLOSE`` refusals in a row it is closed.
RATE_PER_SECOND = 10.0
RATE_BURST = 30
RATE_CLOSE = 50

MESSAGE_TYPES = ("hello", "move", "preview", "takeback", "answer", "resign", "sync", "ping")


def new_token() -> str:
    return secrets.token_urlsafe(24)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_matches(token: str, stored_digest: str | None) -> bool:
    """Constant-time check of ``token`` against a stored digest."""
    if not stored_digest:
        return False
    return hmac.compare_digest(digest(token), stored_digest)


class BadMessage(ValueError):
    """A client message that cannot be acted on; the text says which field."""


def parse_message(text: str | bytes | None) -> dict[str, Any]:
    """A client message as a dict whose fields have the right types, or
    BadMessage naming what is wrong."""
    if text is None:
        raise BadMessage("message: binary frames are not accepted; send JSON text")
    if isinstance(text, bytes):
        raise BadMessage("message: binary frames are not accepted; send JSON text")
    if len(text) > MAX_MESSAGE:
        raise BadMessage(f"message: too long ({len(text)} characters, at most {MAX_MESSAGE})")
    try:
        msg = loads_bounded(text, max_depth=8, what="message")
    except JsonTooDeep as err:
        raise BadMessage(str(err)) from None
    except ValueError:
        raise BadMessage("message: not valid JSON") from None
    if not isinstance(msg, dict):
        raise BadMessage("message: must be a JSON object")
    kind = msg.get("type")
    if not isinstance(kind, str) or kind not in MESSAGE_TYPES:
        raise BadMessage(f"type: must be one of {', '.join(MESSAGE_TYPES)}")
    ref = msg.get("ref")
    if ref is not None and not (
        (isinstance(ref, int) and not isinstance(ref, bool) and abs(ref) < 2**53)
        or (isinstance(ref, str) and len(ref) <= 64)
    ):
        raise BadMessage("ref: must be an integer or a string of at most 64 characters")
    if kind == "hello":
        _text(msg, "token", 200)
    if kind in ("move", "preview"):
        _text(msg, "move", 40)
    if kind in ("move", "takeback", "answer", "resign"):
        _version(msg)
    if kind == "answer" and not isinstance(msg.get("accept"), bool):
        raise BadMessage("accept: must be true or false")
    return msg


def _text(msg: dict[str, Any], key: str, limit: int) -> None:
    value = msg.get(key)
    if not isinstance(value, str) or not value or len(value) > limit:
        raise BadMessage(f"{key}: must be a string of 1 to {limit} characters")


def _version(msg: dict[str, Any]) -> None:
    v = msg.get("version")
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 2**31:
        raise BadMessage("version: must be the state version the action was made on")


@dataclass
class RateLimit:
    """A token bucket per connection."""

    rate: float = RATE_PER_SECOND
    burst: float = RATE_BURST
    tokens: float = RATE_BURST
    stamp: float = field(default_factory=time.monotonic)
    refused: int = 0

    def allow(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            self.refused = 0
            return True
        self.refused += 1
        return False


# -- clocks -------------------------------------------------------------------


@dataclass
class Clock:
    """Remaining time per seat (milliseconds; ``None`` for AI seats)."""

    initial_ms: int
    increment_ms: int
    remaining_ms: list[int | None]
    running: bool = False  # True once every human seat has joined
    flagged: list[bool] = field(default_factory=list)
    #: monotonic time when the current turn's clock started (not stored)
    turn_started: float | None = None

    @classmethod
    def new(cls, initial_s: float, increment_s: float, humans: list[bool]) -> Clock:
        initial = int(initial_s * 1000)
        return cls(
            initial_ms=initial,
            increment_ms=int(increment_s * 1000),
            remaining_ms=[initial if h else None for h in humans],
            flagged=[False] * len(humans),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Clock:
        return cls(
            initial_ms=int(data["initial_ms"]),
            increment_ms=int(data["increment_ms"]),
            remaining_ms=list(data["remaining_ms"]),
            running=bool(data.get("running", False)),
            flagged=list(data.get("flagged") or [False] * len(data["remaining_ms"])),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "initial_ms": self.initial_ms,
            "increment_ms": self.increment_ms,
            "remaining_ms": list(self.remaining_ms),
            "running": self.running,
            "flagged": list(self.flagged),
        }

    def left(self, seat: int, to_move: int | None, now: float) -> int | None:
        """Milliseconds ``seat`` has left at ``now`` (its turn's time deducted)."""
        r = self.remaining_ms[seat]
        if r is None:
            return None
        if self.running and seat == to_move and self.turn_started is not None:
            r -= int((now - self.turn_started) * 1000)
        return max(0, r)

    def deadline(self, to_move: int | None) -> float | None:
        """The monotonic time at which the player to move runs out."""
        if not self.running or to_move is None or self.turn_started is None:
            return None
        r = self.remaining_ms[to_move]
        return None if r is None else self.turn_started + r / 1000

    def moved(self, seat: int, now: float, timed_out: bool = False) -> None:
        """``seat`` has moved at ``now``: charge its time, add the increment,
        and start the next turn's clock."""
        if self.running and self.remaining_ms[seat] is not None:
            left = self.left(seat, seat, now) or 0
            if timed_out:
                left = 0
                self.flagged[seat] = True
            self.remaining_ms[seat] = left + self.increment_ms
        self.turn_started = now

    def public(self, to_move: int | None, now: float) -> dict[str, Any]:
        """What every reader is told: time left now, whose clock runs."""
        n = len(self.remaining_ms)
        return {
            "remaining_ms": [self.left(p, to_move, now) for p in range(n)],
            "running": to_move if self.running and to_move is not None else None,
            "increment_ms": self.increment_ms,
            "flagged": list(self.flagged),
        }
