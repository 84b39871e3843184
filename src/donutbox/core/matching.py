"""Which rotations (and Cinnamon Roll locks) of a face fit an empty place.

Everything a placement's legality depends on, besides the place being empty
and touching, is summed up by the place's *requirement*: for each quadrant
(NW, NE, SE, SW) the set of flavours of the not-delivered counter donuts it
would touch, as a 4-bit mask, packed into one int (quadrant i at bits 4i).
Different places with the same requirement accept exactly the same
(face, rotation, lock) choices, so the answer is memoised per
(face, requirement): move generation becomes dictionary look-ups
(RULES.md section 4).
"""

from __future__ import annotations

from typing import Final

from .cards import FLAVOUR_INDEX, FLAVOURS, ROLL, ROTATIONS, rotate

#: One way to put a face down: (rotation in degrees, locked flavour of its R or "").
Fit = tuple[int, str]

_MEMO: Final[dict[tuple[bool, str, int], tuple[Fit, ...]]] = {}


def fits(face: str, requirement: int, perfect: bool) -> tuple[Fit, ...]:
    """Every (rotation, lock) that may legally place ``face`` at a place with
    this requirement, under Perfect Match if ``perfect`` else One Good Match.

    Memoised: this is a pure function of its arguments.
    """
    memo_key = (perfect, face, requirement)
    found = _MEMO.get(memo_key)
    if found is None:
        found = _MEMO[memo_key] = _compute(face, requirement, perfect)
    return found


def _compute(face: str, requirement: int, perfect: bool) -> tuple[Fit, ...]:
    # Table-driven: this runs for every new (face, requirement) pair, which in
    # a fresh process is several times per ply.
    m0 = requirement & 15
    m1 = (requirement >> 4) & 15
    m2 = (requirement >> 8) & 15
    m3 = requirement >> 12
    out: list[Fit] = []
    for rot, quads in _turns(face):
        a0 = _AGREE[quads[0]][m0]
        a1 = _AGREE[quads[1]][m1]
        a2 = _AGREE[quads[2]][m2]
        a3 = _AGREE[quads[3]][m3]
        if not (a0 or a1 or a2 or a3):
            continue
        if perfect and ((m0 and not a0) or (m1 and not a1) or (m2 and not a2) or (m3 and not a3)):
            continue
        if ROLL in quads:
            out.extend((rot, lock) for lock in lock_choices(quads, [m0, m1, m2, m3]))
        else:
            out.append((rot, ""))
    return tuple(out)


_TURNS: Final[dict[str, tuple[tuple[int, str], ...]]] = {}


def _turns(face: str) -> tuple[tuple[int, str], ...]:
    found = _TURNS.get(face)
    if found is None:
        found = _TURNS[face] = tuple((rot, rotate(face, rot)) for rot in ROTATIONS)
    return found


def agrees(letter: str, mask: int) -> bool:
    """Does a donut of the placed card agree with a partner among ``mask``?

    An R on the card being placed is wild (RULES.md section 4).
    """
    if letter == ROLL:
        return mask != 0
    return bool(mask >> FLAVOUR_INDEX[letter] & 1)


def mismatch(quads: str, masks: list[int], perfect: bool) -> str | None:
    """Why these turned quadrants may not go down here, or None if they may."""
    if not any(agrees(q, m) for q, m in zip(quads, masks, strict=True)):
        return "no touching pair agrees"
    if perfect:
        for i, (q, m) in enumerate(zip(quads, masks, strict=True)):
            if m and not agrees(q, m):
                return f"quadrant {i}"
    return None


def lock_choices(quads: str, masks: list[int]) -> list[str]:
    """The flavours the R among ``quads`` may lock to, in FLAVOURS order.

    From the not-delivered counter donuts it touches; if it touches none, from
    its two neighbours on its own card (RULES.md section 4).
    """
    i = quads.index(ROLL)
    mask = masks[i]
    if not mask:
        for j in ((i - 1) % 4, (i + 1) % 4):
            mask |= 1 << FLAVOUR_INDEX[quads[j]]
    return [f for b, f in enumerate(FLAVOURS) if mask >> b & 1]


def start_lock(face: str) -> str:
    """The start card's R locks to the next quadrant clockwise (RULES.md section 3)."""
    i = face.index(ROLL)
    return face[(i + 1) % 4]


#: _AGREE[letter][mask]: does a placed donut ``letter`` agree with a partner in ``mask``?
_AGREE: Final = {letter: tuple(agrees(letter, m) for m in range(16)) for letter in FLAVOURS + ROLL}
