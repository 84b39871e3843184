"""Agreement of donuts, and Cinnamon Roll locks: the arithmetic of matching.

Everything a placement's legality depends on, besides the place being empty
and touching, is summed up by the place's *requirement*: for each quadrant
(NW, NE, SE, SW) the set of flavours of the not-delivered counter donuts it
would touch, as a 4-bit mask, packed into one int (quadrant i at bits 4i).
Different places with the same requirement accept exactly the same
(face, rotation, lock) choices, so a matching rule (``policy.MatchRule``)
memoises its answer per (face, requirement): move generation becomes
dictionary look-ups (docs/spec.md, 'Matching').
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .cards import FLAVOUR_INDEX, FLAVOURS, ROLL, ROTATIONS, rotate

#: One way to put a face down: (rotation in degrees, locked flavour of its R or "").
Fit = tuple[int, str]


def agrees(letter: str, mask: int) -> bool:
    """Does a donut of the placed card agree with a partner among ``mask``?

    An R on the card being placed is wild (docs/spec.md, 'Matching').
    """
    if letter == ROLL:
        return mask != 0
    return bool(mask >> FLAVOUR_INDEX[letter] & 1)


def lock_choices(quads: str, masks: Sequence[int]) -> list[str]:
    """The flavours the R among ``quads`` may lock to, in FLAVOURS order.

    From the not-delivered counter donuts it touches; if it touches none, from
    its two neighbours on its own card (docs/spec.md, 'Matching').
    """
    i = quads.index(ROLL)
    mask = masks[i]
    if not mask:
        for j in ((i - 1) % 4, (i + 1) % 4):
            mask |= 1 << FLAVOUR_INDEX[quads[j]]
    return [f for b, f in enumerate(FLAVOURS) if mask >> b & 1]


def start_lock(face: str) -> str:
    """The start card's R locks to the next quadrant clockwise (docs/spec.md, 'Setup')."""
    i = face.index(ROLL)
    return face[(i + 1) % 4]


#: AGREE[letter][mask]: does a placed donut ``letter`` agree with a partner in ``mask``?
AGREE: Final = {letter: tuple(agrees(letter, m) for m in range(16)) for letter in FLAVOURS + ROLL}


# -- fits as small ints ------------------------------------------------------
#
# A (rotation, lock) choice is also numbered as one small int, its *slot*:
# ``rotation // 90 * 5 + lock index`` (lock "" 0, then C, S, H, B 1-4).  Move
# generation keeps its memo tables in lists indexed by slot (the compiled
# core then indexes them without hashing anything).

SLOTS: Final = 20
#: The rotation and the lock of each slot.
SLOT_ROT: Final[tuple[int, ...]] = tuple(rot for rot in ROTATIONS for _ in range(5))
SLOT_LOCK: Final[tuple[str, ...]] = tuple(lock for _ in ROTATIONS for lock in ("", *FLAVOURS))
_LOCK_SLOT: Final[dict[object, int]] = {lock: i for i, lock in enumerate(("", *FLAVOURS))}
_ROT_SLOT: Final[dict[object, int]] = {rot: 5 * i for i, rot in enumerate(ROTATIONS)}


def slot_of(rot: object, lock: object) -> int:
    """The slot of a (rotation, lock) choice, or -1 if either is not one
    (``object``: a hand-made Move may hold anything)."""
    r = _ROT_SLOT.get(rot)
    k = _LOCK_SLOT.get(lock)
    if r is None or k is None:
        return -1
    return r + k


class _Turns:
    """One face's agreement tables, per rotation: ``agree[(r * 4 + q) * 16 +
    m]`` is bit ``q`` set when quadrant ``q`` of turn ``r`` agrees with a
    partner among mask ``m``; ``roll[r]`` the quadrant of its R (-1: none)
    and ``near[r]`` the flavours of that R's two neighbours on the card."""

    __slots__ = ("agree", "near", "roll")

    def __init__(self, face: str) -> None:
        self.agree: list[int] = []
        self.roll: list[int] = []
        self.near: list[int] = []
        for rot in ROTATIONS:
            quads = rotate(face, rot)
            for q in range(4):
                row = AGREE[quads[q]]
                self.agree.extend((1 << q) if row[m] else 0 for m in range(16))
            if ROLL in quads:
                i = quads.index(ROLL)
                self.roll.append(i)
                near = 0
                for j in ((i - 1) % 4, (i + 1) % 4):
                    near |= 1 << FLAVOUR_INDEX[quads[j]]
                self.near.append(near)
            else:
                self.roll.append(-1)
                self.near.append(0)


#: ``_Turns`` per face met.  This and ``_SLOT_SETS`` are shared by threads:
#: pure functions of their keys, so a racy fill at worst builds an equal
#: value twice (each dict operation is atomic under the interpreter lock).
_TURNS: Final[dict[str, _Turns]] = {}


def fit_slots(face: str, requirement: int, accept: tuple[bool, ...]) -> tuple[int, ...]:
    """The slots of every (rotation, lock) that may place ``face`` at a place
    with this ``requirement``, in rotation then lock order, under the
    matching rule whose ``accept`` table (``MatchRule.accept_table``) is
    given: ``accept[agree | touched << 4]`` for the 4-bit patterns of
    quadrants that agree with a partner and that touch one."""
    turns = _TURNS.get(face)
    if turns is None:
        turns = _TURNS[face] = _Turns(face)
    agree = turns.agree
    m0 = requirement & 15
    m1 = (requirement >> 4) & 15
    m2 = (requirement >> 8) & 15
    m3 = (requirement >> 12) & 15
    # (conditionals, not shifted comparisons: the compiled core shifts a
    # bool through the generic number protocol)
    touched = (16 if m0 else 0) | (32 if m1 else 0) | (64 if m2 else 0) | (128 if m3 else 0)
    # The fitting slots as bits of one int (slot s: bit s), then the one
    # shared tuple of those slots: no list or tuple is made per call.
    found = 0
    for r in range(4):
        b = r * 64
        bits = agree[b + m0] | agree[b + 16 + m1] | agree[b + 32 + m2] | agree[b + 48 + m3]
        if not accept[bits | touched]:
            continue
        i = turns.roll[r]
        if i < 0:
            found |= 1 << (r * 5)
            continue
        mask = m0 if i == 0 else m1 if i == 1 else m2 if i == 2 else m3
        if not mask:
            mask = turns.near[r]
        # lock f (bit f of the mask) is slot r * 5 + 1 + f
        found |= mask << (r * 5 + 1)
    slots = _SLOT_SETS.get(found)
    if slots is None:
        slots = _SLOT_SETS[found] = tuple(s for s in range(SLOTS) if found >> s & 1)
    return slots


#: The tuple of slots of each set of slots (bit s: slot s) met so far.
_SLOT_SETS: Final[dict[int, tuple[int, ...]]] = {}
