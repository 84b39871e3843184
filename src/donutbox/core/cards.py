"""Flavours, card faces and the standard deck, kept as data.

A face is four letters clockwise from the top-left quadrant as printed:
NW, NE, SE, SW (docs/spec.md, 'Components').  Faces are plain ``str`` values so that
they can be used as dictionary keys and written to records unchanged.
"""

from __future__ import annotations

from typing import Final

from .errors import NotationError

#: The four ordinary flavours, in the order used for bit masks (bit i = FLAVOURS[i]).
FLAVOURS: Final = "CSHB"
#: The Cinnamon Roll: wild for placement, then locked to one of FLAVOURS.
ROLL: Final = "R"
LETTERS: Final = FLAVOURS + ROLL

FLAVOUR_NAMES: Final = {
    "C": "Chocolate Cruller",
    "S": "Strawberry Sprinkles",
    "H": "Donut Holes",
    "B": "Blueberry Glaze",
    "R": "Cinnamon Roll",
}

#: Index of a flavour letter in FLAVOURS (its bit in a mask).
FLAVOUR_INDEX: Final = {f: i for i, f in enumerate(FLAVOURS)}

#: The 30 cards every player colour has (docs/spec.md, 'Components'), by kind.
STANDARD_DECK_KINDS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    (
        "halves",
        (
            "CCSS",
            "CCSS",
            "CCHH",
            "CCHH",
            "CCBB",
            "CCBB",
            "SSHH",
            "SSHH",
            "SSBB",
            "SSBB",
            "HHBB",
            "HHBB",
        ),
    ),
    ("threes", ("CCSH", "SSHB", "HHBC", "BBCS", "CCBH", "SSBH")),
    ("rainbows", ("CSHB", "CSBH", "CHSB", "CHBS")),
    ("rolls", ("RCSH", "RHSC", "RCSB", "RBCS", "RCHB", "RBHC", "RSHB", "RBSH")),
)

#: One standard deck, in the printed order above (shuffle before use).
STANDARD_DECK: Final[tuple[str, ...]] = tuple(
    face for _, faces in STANDARD_DECK_KINDS for face in faces
)

#: Rotations in degrees, clockwise, as written in the notation.
ROTATIONS: Final = (0, 90, 180, 270)


def check_face(text: object) -> str:
    """Return ``text`` if it is a valid face, else raise NotationError."""
    if not isinstance(text, str):
        raise NotationError(f"a face must be a string of 4 letters, not {type(text).__name__}")
    if len(text) != 4 or any(ch not in LETTERS for ch in text):
        raise NotationError(f"bad face {text[:20]!r}: a face is 4 letters from C, S, H, B, R")
    if text.count(ROLL) > 1:
        raise NotationError(f"bad face {text!r}: a card holds at most one R")
    return text


def rotate(face: str, rot: int) -> str:
    """The quadrants NW, NE, SE, SW of ``face`` after turning ``rot`` degrees clockwise.

    Turning by 90 moves NW to NE, NE to SE, SE to SW and SW to NW: ``abcd`` -> ``dabc``.
    """
    steps = (rot // 90) % 4
    return face[4 - steps :] + face[: 4 - steps]
