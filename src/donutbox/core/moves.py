"""Moves as small immutable values with a notation round-trip (docs/spec.md,
'Game records and notation').

``Move.parse(str(m)) == m`` for every move.  Four kinds:

- place: ``FACE@X,Y/ROT`` or ``FACE@X,Y/ROT=F`` (``F`` the Cinnamon Roll lock);
- box it: ``box@X,Y`` (any cell of the run);
- swap: ``swap FACE``;
- pass: ``pass``.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from .cards import FLAVOURS, ROLL, ROTATIONS, check_face
from .errors import NotationError
from .geometry import COORD_LIMIT

PLACE: Final = "place"
BOX: Final = "box"
SWAP: Final = "swap"
PASS: Final = "pass"

_INT = r"(-?[0-9]{1,12})"  # ASCII digits only (\d would take any Unicode digit)
_PLACE_RE: Final = re.compile(rf"([A-Z]{{4}})@{_INT},{_INT}/([0-9]{{1,3}})(?:=([A-Z]))?")
_BOX_RE: Final = re.compile(rf"box@{_INT},{_INT}")
_SWAP_RE: Final = re.compile(r"swap ([A-Z]{4})")


class Move(NamedTuple):
    """One action.  Build with the helpers (``Move.place`` ...) or ``Move.parse``."""

    kind: str
    face: str = ""
    x: int = 0
    y: int = 0
    rot: int = 0
    lock: str = ""

    def __str__(self) -> str:
        kind = self.kind
        if kind == PLACE:
            text = f"{self.face}@{self.x},{self.y}/{self.rot}"
            return f"{text}={self.lock}" if self.lock else text
        if kind == BOX:
            return f"box@{self.x},{self.y}"
        if kind == SWAP:
            return f"swap {self.face}"
        return PASS

    @staticmethod
    def place(face: str, x: int, y: int, rot: int = 0, lock: str = "") -> Move:
        return Move(PLACE, face, x, y, rot, lock)

    @staticmethod
    def box(x: int, y: int) -> Move:
        return Move(BOX, "", x, y)

    @staticmethod
    def swap(face: str) -> Move:
        return Move(SWAP, face)

    @staticmethod
    def pass_() -> Move:
        return Move(PASS)

    @staticmethod
    def parse(text: object) -> Move:
        """Read one move in notation; raise NotationError naming what is wrong."""
        if not isinstance(text, str):
            raise NotationError(f"a move must be a string, not {type(text).__name__}")
        if text == PASS:
            return _PASS
        shown = text if len(text) <= 40 else text[:40] + "..."
        m = _PLACE_RE.fullmatch(text)
        if m:
            face = check_face(m.group(1))
            x, y = _coord(m.group(2), shown), _coord(m.group(3), shown)
            rot = int(m.group(4))
            if rot not in ROTATIONS or m.group(4) != str(rot):
                raise NotationError(f"bad move {shown!r}: rotation must be 0, 90, 180 or 270")
            lock = m.group(5) or ""
            if lock:
                if ROLL not in face:
                    raise NotationError(f"bad move {shown!r}: =F is only for a card with an R")
                if lock not in FLAVOURS:
                    raise NotationError(f"bad move {shown!r}: an R locks to C, S, H or B")
            return Move(PLACE, face, x, y, rot, lock)
        m = _BOX_RE.fullmatch(text)
        if m:
            return Move(BOX, "", _coord(m.group(1), shown), _coord(m.group(2), shown))
        m = _SWAP_RE.fullmatch(text)
        if m:
            return Move(SWAP, check_face(m.group(1)))
        raise NotationError(
            f"bad move {shown!r}: expected FACE@X,Y/ROT[=F], box@X,Y, swap FACE or pass"
        )


def _coord(digits: str, shown: str) -> int:
    value = int(digits)
    if (
        abs(value) > COORD_LIMIT
        or digits in ("-0",)
        or (digits.lstrip("-").startswith("0") and digits.lstrip("-") != "0")
    ):
        if abs(value) > COORD_LIMIT:
            raise NotationError(f"bad move {shown!r}: coordinates are limited to +/-{COORD_LIMIT}")
        raise NotationError(f"bad move {shown!r}: numbers are written without leading zeros")
    return value


_PASS: Final = Move(PASS)
