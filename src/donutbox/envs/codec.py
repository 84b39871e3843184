"""The fixed action encoding shared by every research environment.

A game's actions are mapped to integers ``0 .. size - 1``; the numbering is
fixed for one (rules, players, window) combination.  The counter is seen
through a **window** of ``W x W`` cells around the start card: cells with
``lo <= x, y <= hi`` where ``lo = -W // 2`` and ``hi = W // 2 - 1`` (for the
default ``W = 64``: ``-32 .. 31``).  Layout of the indices, in order:

1. **place** (``64 * P`` indices): ``channel * P + position`` with
   ``channel = slot * 16 + rot_index * 4 + lock_index``:

   - ``slot`` 0-3: which card of the tray (``tray[slot]``, the order of the
     view's tray); when two slots hold the same face only the first one is
     ever legal, so every legal move has exactly one index;
   - ``rot_index`` 0-3: rotation 0, 90, 180, 270;
   - ``lock_index`` 0-3: the Cinnamon Roll lock C, S, H, B for a face with an
     ``R``; always 0 (no lock) for a face without one;
   - ``position``: the card's NW cell, row-major (reading order) over the card
     positions whose whole card lies in the window.  Squared Away: even
     ``x, y`` only, ``P = (W / 2)^2``, ``position = ((y - lo) / 2) * (W / 2) +
     (x - lo) / 2``.  Splitzkies: ``P = (W - 1)^2``, ``position = (y - lo) *
     (W - 1) + (x - lo)``.

   So a policy's place logits reshape to ``(64, side, side)`` planes.
2. **box** (``W * W`` indices): ``(y - lo) * W + (x - lo)``, the run's first
   cell in reading order (as ``box@X,Y`` is written by the engine).
3. **swap** (4 indices): swap the card in that tray slot (first slot of a
   face only).
4. **pass** (1 index).
5. **outside** (1 index, the last): legal only when the player has legal moves
   but none of them can be written in the window; it plays the first such move
   in the engine's order.  Real games stay far inside the default windows
   (see docs/research.md), so this is a safety valve that keeps every mask
   non-empty, not something a policy needs to learn.

``ActionCodec.legal`` turns the engine's ``legal_moves()`` into the mapping
``action -> Move`` the environments use for both the mask and ``step``, so
the mask is exactly the engine's legal moves that lie in the window.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

import numpy as np

from ..core.cards import FLAVOUR_INDEX, FLAVOURS, ROLL, ROTATIONS
from ..core.moves import BOX, PASS, PLACE, SWAP, Move
from ..core.rules import GAME_INFO, Rules

TRAY_SLOTS: Final = GAME_INFO.tray_size
#: Rotation and lock choices per tray slot (4 rotations x 4 locks).
CHOICES: Final = 16
CHANNELS: Final = TRAY_SLOTS * CHOICES

#: Default window width in cells, by number of players: measured extents of
#: random games stay well inside (docs/research.md, "How big is the window?").
DEFAULT_WINDOW: Final = {2: 64, 3: 88, 4: 88}


def default_window(players: int) -> int:
    if players not in DEFAULT_WINDOW:
        raise ValueError(f"a game has 2 to 4 players, not {players}")
    return DEFAULT_WINDOW[players]


class OutsideWindow(ValueError):
    """A move that the window cannot express."""


@dataclass(frozen=True)
class ActionCodec:
    """Action indices <-> moves for one rules variant and window (see module doc)."""

    rules: Rules = field(default_factory=Rules)
    window: int = 64

    def __post_init__(self) -> None:
        w = self.window
        if isinstance(w, bool) or not isinstance(w, int) or w < 8 or w % 4:
            raise ValueError(f"window must be a multiple of 4 and at least 8, not {w!r}")

    # -- sizes -----------------------------------------------------------------

    @cached_property
    def lo(self) -> int:
        """Smallest x (and y) of a window cell."""
        return -(self.window // 2)

    @cached_property
    def hi(self) -> int:
        """Largest x (and y) of a window cell."""
        return self.window // 2 - 1

    @cached_property
    def side(self) -> int:
        """Card positions per row (and column) of the window."""
        return self.window // 2 if self.rules.squared else self.window - 1

    @cached_property
    def positions(self) -> int:
        return self.side * self.side

    @cached_property
    def place_base(self) -> int:
        return 0

    @cached_property
    def box_base(self) -> int:
        return CHANNELS * self.positions

    @cached_property
    def swap_base(self) -> int:
        return self.box_base + self.window * self.window

    @cached_property
    def pass_action(self) -> int:
        return self.swap_base + TRAY_SLOTS

    @cached_property
    def outside_action(self) -> int:
        return self.pass_action + 1

    @cached_property
    def size(self) -> int:
        """How many actions there are (the ``Discrete`` space's ``n``)."""
        return self.outside_action + 1

    # -- positions -------------------------------------------------------------

    def position_index(self, x: int, y: int) -> int | None:
        """The position index of a card at (x, y), or None outside the window."""
        lo = self.lo
        if self.rules.squared:
            if x % 2 or y % 2:
                return None
            i, j = (x - lo) // 2, (y - lo) // 2
        else:
            i, j = x - lo, y - lo
        side = self.side
        if 0 <= i < side and 0 <= j < side:
            return j * side + i
        return None

    def position_xy(self, index: int) -> tuple[int, int]:
        j, i = divmod(index, self.side)
        step = 2 if self.rules.squared else 1
        return self.lo + step * i, self.lo + step * j

    def cell_index(self, x: int, y: int) -> int | None:
        lo, w = self.lo, self.window
        if lo <= x < lo + w and lo <= y < lo + w:
            return (y - lo) * w + (x - lo)
        return None

    # -- moves <-> indices -----------------------------------------------------

    def encode(self, move: Move, tray: Sequence[str]) -> int:
        """The index of ``move`` for a player holding ``tray``.

        Raises OutsideWindow if the window cannot express it and ValueError if
        the move does not fit the tray (face not held, missing lock).
        """
        kind = move.kind
        if kind == PLACE:
            channel = card_channel(move, tray)
            pos = self.position_index(move.x, move.y)
            if pos is None:
                raise OutsideWindow(f"{move} lies outside the {self.window}x{self.window} window")
            return channel * self.positions + pos
        if kind == BOX:
            c = self.cell_index(move.x, move.y)
            if c is None:
                raise OutsideWindow(f"{move} lies outside the {self.window}x{self.window} window")
            return self.box_base + c
        if kind == SWAP:
            return self.swap_base + _slot(move.face, tray)
        if kind == PASS:
            return self.pass_action
        raise ValueError(f"unknown move kind {kind!r}")

    def decode(self, action: int, tray: Sequence[str]) -> Move:
        """The move an index stands for, for a player holding ``tray``.

        Raises ValueError for an index out of range, an empty tray slot, a
        lock on a card without an R, or the ``outside`` action (which only a
        game can resolve: see ``legal``).
        """
        a = _index(action, self.size)
        if a < self.box_base:
            channel, pos = divmod(a, self.positions)
            face, rot, lock_letter = channel_card(channel, tray, a)
            x, y = self.position_xy(pos)
            return Move(PLACE, face, x, y, rot, lock_letter)
        if a < self.swap_base:
            j, i = divmod(a - self.box_base, self.window)
            return Move(BOX, "", self.lo + i, self.lo + j)
        if a < self.pass_action:
            return Move(SWAP, _face(a - self.swap_base, tray))
        if a == self.pass_action:
            return Move(PASS)
        raise ValueError(f"action {a} (outside) plays a move the window cannot express")

    def to_notation(self, action: int, tray: Sequence[str]) -> str:
        """``decode`` written in the game's notation (e.g. ``RCSH@2,0/90=C``)."""
        return str(self.decode(action, tray))

    def from_notation(self, text: str, tray: Sequence[str]) -> int:
        """The index of a move written in notation (a placement of a card with
        an ``R`` must write its lock, as ``donutbox moves`` does)."""
        return self.encode(Move.parse(text), tray)

    def describe(self, action: int) -> str:
        """The index in words, without a tray: ``slot2@4,-2/90 lock1``,
        ``box@1,0``, ``swap slot1``, ``pass`` or ``outside``."""
        a = _index(action, self.size)
        if a < self.box_base:
            channel, pos = divmod(a, self.positions)
            slot, choice = divmod(channel, CHOICES)
            rot_index, lock = divmod(choice, 4)
            x, y = self.position_xy(pos)
            return f"slot{slot}@{x},{y}/{ROTATIONS[rot_index]} lock{lock}"
        if a < self.swap_base:
            return str(self.decode(a, ()))
        if a < self.pass_action:
            return f"swap slot{a - self.swap_base}"
        return PASS if a == self.pass_action else "outside"

    # -- legal moves -------------------------------------------------------------

    def legal(self, moves: Iterable[Move], tray: Sequence[str]) -> dict[int, Move]:
        """Map the engine's legal moves to their indices (``action -> move``).

        Moves outside the window are left out; if that leaves nothing while
        there were legal moves, the ``outside`` action stands for the first
        of them.  Two legal moves never share an index.
        """
        out: dict[int, Move] = {}
        first_outside: Move | None = None
        # The hot path of every environment step: placements inline, the
        # rest through ``encode``.
        slots: dict[str, int] = {}
        for i, face in enumerate(tray[:TRAY_SLOTS]):
            slots.setdefault(face, i)
        lo, side, positions = self.lo, self.side, self.positions
        squared = self.rules.squared
        for move in moves:
            if (
                move.kind == PLACE
                and move.face in slots
                and (ROLL in move.face) == (move.lock != "")
            ):
                x, y = move.x - lo, move.y - lo
                if squared:
                    i, j = x >> 1, y >> 1
                    ok = not (x & 1 or y & 1)
                else:
                    i, j = x, y
                    ok = True
                if ok and 0 <= i < side and 0 <= j < side:
                    lock = _LOCK_INDEX[move.lock] if move.lock else 0
                    channel = slots[move.face] * CHOICES + _ROT_INDEX[move.rot] * 4 + lock
                    out[channel * positions + j * side + i] = move
                elif first_outside is None:
                    first_outside = move
                continue
            try:
                a = self.encode(move, tray)
            except OutsideWindow:
                if first_outside is None:
                    first_outside = move
                continue
            out[a] = move
        if not out and first_outside is not None:
            out[self.outside_action] = first_outside
        return out

    def mask(self, legal: Iterable[int], out: np.ndarray | None = None) -> np.ndarray:
        """An int8 mask of length ``size`` with ones at the given indices."""
        m = np.zeros(self.size, dtype=np.int8) if out is None else out
        m.fill(0)
        idx = np.fromiter(legal, dtype=np.int64)
        if idx.size:
            m[idx] = 1
        return m


_ROT_INDEX: Final = {rot: i for i, rot in enumerate(ROTATIONS)}
_LOCK_INDEX: Final = FLAVOUR_INDEX


def card_channel(move: Move, tray: Sequence[str]) -> int:
    """The channel of a placed card for a player holding ``tray``: its tray
    slot, rotation and lock, ``slot * CHOICES + rotation * 4 + lock`` (both
    encodings number placed cards so); ValueError naming why if the move
    does not fit the tray (face not held, bad rotation, missing lock)."""
    slot = _slot(move.face, tray)
    if move.rot not in _ROT_INDEX:
        raise ValueError(f"bad rotation {move.rot}")
    if ROLL in move.face:
        if move.lock not in FLAVOUR_INDEX:
            raise ValueError(f"{move}: a card with an R needs its lock written (=F)")
        lock = FLAVOUR_INDEX[move.lock]
    elif move.lock:
        raise ValueError(f"{move}: only a card with an R locks")
    else:
        lock = 0
    return slot * CHOICES + _ROT_INDEX[move.rot] * 4 + lock


def channel_card(channel: int, tray: Sequence[str], action: int) -> tuple[str, int, str]:
    """The card, rotation and lock letter of ``channel`` (``card_channel``)
    for a player holding ``tray``; ValueError naming ``action`` if the slot
    is empty or a lock is asked of a card without an R."""
    slot, choice = divmod(channel, CHOICES)
    rot_index, lock = divmod(choice, 4)
    face = _face(slot, tray)
    if ROLL in face:
        return face, ROTATIONS[rot_index], FLAVOURS[lock]
    if lock:
        raise ValueError(f"action {action}: {face} has no R to lock")
    return face, ROTATIONS[rot_index], ""


def _slot(face: str, tray: Sequence[str]) -> int:
    for i, f in enumerate(tray):
        if f == face:
            if i >= TRAY_SLOTS:
                break
            return i
    raise ValueError(f"{face} is not in the tray {' '.join(tray) or '(empty)'}")


def _face(slot: int, tray: Sequence[str]) -> str:
    if slot >= len(tray):
        raise ValueError(f"tray slot {slot} is empty")
    return tray[slot]


def _index(action: object, size: int) -> int:
    if isinstance(action, bool) or not isinstance(action, int | np.integer):
        raise ValueError(f"an action is an integer, not {type(action).__name__}")
    a = int(action)
    if not 0 <= a < size:
        raise ValueError(f"action {a} is outside 0..{size - 1}")
    return a
