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
- A **turn-based clock** (``days`` per move: 1, 2, 3 or 7) instead gives
  the player to move a wall-clock deadline (seconds since the epoch,
  ``deadline_at``), stored with the game: it survives a restart, and time
  the server is down counts.  It runs from the game's making.
"""

from __future__ import annotations

import hashlib
import hmac
import os
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

#: The days a turn-based game may give each move.
TURN_DAYS = (1, 2, 3, 7)
#: Seconds in a turn-based "day": 86,400; ``DONUTBOX_DAY_SECONDS`` makes it
#: shorter, so that tests and demonstrations see deadlines pass in seconds.
DAY_SECONDS = float(os.environ.get("DONUTBOX_DAY_SECONDS", "86400"))

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


def wall() -> float:
    """Seconds since the epoch: turn-based deadlines are wall-clock times."""
    return time.time()


@dataclass
class Clock:
    """Remaining time per seat (milliseconds; ``None`` for AI seats).

    A turn-based clock (``days`` set) gives each move ``move_ms`` and keeps
    the wall-clock deadline of the current turn in ``deadline_at``; its
    ``remaining_ms`` are not used."""

    initial_ms: int
    increment_ms: int
    remaining_ms: list[int | None]
    running: bool = False  # True once every human seat has joined
    flagged: list[bool] = field(default_factory=list)
    #: monotonic time when the current turn's clock started (not stored)
    turn_started: float | None = None
    #: turn-based: days per move, the time a move has, the turn's deadline
    days: int | None = None
    move_ms: int = 0
    deadline_at: float | None = None

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
    def turn_based(cls, days: int, humans: list[bool], now: float | None = None) -> Clock:
        """``days`` per move, running from ``now`` (wall clock) at once: the
        first player's deadline is ``days`` after the game is made."""
        move_ms = int(days * DAY_SECONDS * 1000)
        start = wall() if now is None else now
        return cls(
            initial_ms=move_ms,
            increment_ms=0,
            remaining_ms=[move_ms if h else None for h in humans],
            running=True,
            flagged=[False] * len(humans),
            turn_started=time.monotonic(),
            days=days,
            move_ms=move_ms,
            deadline_at=start + move_ms / 1000,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Clock:
        days = data.get("days")
        deadline = data.get("deadline_at")
        return cls(
            initial_ms=int(data["initial_ms"]),
            increment_ms=int(data["increment_ms"]),
            remaining_ms=list(data["remaining_ms"]),
            running=bool(data.get("running", False)),
            flagged=list(data.get("flagged") or [False] * len(data["remaining_ms"])),
            days=int(days) if days is not None else None,
            move_ms=int(data.get("move_ms") or 0),
            deadline_at=float(deadline) if deadline is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "initial_ms": self.initial_ms,
            "increment_ms": self.increment_ms,
            "remaining_ms": list(self.remaining_ms),
            "running": self.running,
            "flagged": list(self.flagged),
        }
        if self.days is not None:
            out.update(days=self.days, move_ms=self.move_ms, deadline_at=self.deadline_at)
        return out

    def left(self, seat: int, to_move: int | None, now: float) -> int | None:
        """Milliseconds ``seat`` has left at ``now`` (its turn's time deducted)."""
        r = self.remaining_ms[seat]
        if r is None:
            return None
        if self.days is not None:
            if self.running and seat == to_move and self.deadline_at is not None:
                return max(0, int((self.deadline_at - wall()) * 1000))
            return self.move_ms
        if self.running and seat == to_move and self.turn_started is not None:
            r -= int((now - self.turn_started) * 1000)
        return max(0, r)

    def deadline(self, to_move: int | None) -> float | None:
        """The monotonic time at which the player to move runs out."""
        if not self.running or to_move is None:
            return None
        if self.days is not None:
            if self.deadline_at is None or self.remaining_ms[to_move] is None:
                return None
            return time.monotonic() + (self.deadline_at - wall())
        if self.turn_started is None:
            return None
        r = self.remaining_ms[to_move]
        return None if r is None else self.turn_started + r / 1000

    def new_turn(self, now: float) -> None:
        """The next turn starts at ``now`` (monotonic); a turn-based clock
        gives it a whole move's time from this wall-clock moment."""
        self.turn_started = now
        if self.days is not None and self.running:
            self.deadline_at = wall() + self.move_ms / 1000

    def moved(self, seat: int, now: float, timed_out: bool = False) -> None:
        """``seat`` has moved at ``now``: charge its time, add the increment,
        and start the next turn's clock."""
        if self.days is not None:
            if timed_out:
                self.flagged[seat] = True
            self.new_turn(now)
            return
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
        out: dict[str, Any] = {
            "remaining_ms": [self.left(p, to_move, now) for p in range(n)],
            "running": to_move if self.running and to_move is not None else None,
            "increment_ms": self.increment_ms,
            "flagged": list(self.flagged),
        }
        if self.days is not None:
            out.update(days=self.days, deadline_at=self.deadline_at)
        return out
