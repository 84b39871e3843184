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

from .cards import FLAVOUR_INDEX, FLAVOURS, ROLL

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
