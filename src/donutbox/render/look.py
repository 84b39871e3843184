"""The look of donutbox, as data: colours, deck marks, and the shapes of
donuts and cards.

Everything here is a *display list*: plain immutable shapes (``Circle``,
``Rect``, ``Path``, ``Text``, ``Group``) that a backend draws.  ``svg.py``
writes them as SVG (the render command and the web app), ``pdf.py`` draws the
very same lists on a reportlab canvas (the print-and-play PDF), so a donut
looks the same everywhere.

Conventions:

- Coordinates grow right and *down* (as in SVG).  One quadrant (one cell of
  the counter) is ``QUADRANT`` = 100 units; a card is 200 x 200.
- Colours are ``#rrggbb`` strings.  ``None`` means "no fill" / "no stroke".
- ``Path.d`` uses only absolute ``M``, ``L``, ``C`` and ``Z`` commands, so
  that every backend can read it.
- Text is bold, in a Helvetica-like font; ``y`` is its baseline.

Each flavour has a colour, a *shape* and its *letter*, so that a donut can be
told by any one of them (colour-blind players, black-and-white printers):

====  =====================  =============================================
 C    Chocolate Cruller      dark brown fluted ring with twisted ridges
 S    Strawberry Sprinkles   pink iced ring with sprinkles
 H    Donut Holes            a ring of five golden balls
 B    Blueberry Glaze        blue glazed ring with a drip and blueberries
 R    Cinnamon Roll          pale swirl (a spiral); once locked, an outer
                             ring in the colour of its flavour
====  =====================  =============================================

The flavour colours follow the Okabe-Ito colour-blind safe palette where a
donut allows it, and differ in lightness as well as hue.  Decks (player
colours) have a colour *and* a mark (circle, triangle, square, diamond).
"""

from __future__ import annotations

import itertools
import math
from typing import Final, NamedTuple

#: Size of one quadrant (one counter cell) in drawing units.
QUADRANT: Final = 100.0
#: Size of a card in drawing units.
CARD: Final = 2 * QUADRANT
#: Width of the coloured band around the edge of a card.
BAND: Final = 10.0
#: Donuts are drawn this much smaller than their quadrant on a card.
DONUT_SCALE: Final = 0.9

# -- the display list ------------------------------------------------------------


class Circle(NamedTuple):
    cx: float
    cy: float
    r: float
    fill: str | None = None
    stroke: str | None = None
    width: float = 0.0
    opacity: float = 1.0


class Rect(NamedTuple):
    x: float
    y: float
    w: float
    h: float
    fill: str | None = None
    stroke: str | None = None
    width: float = 0.0
    opacity: float = 1.0


class Path(NamedTuple):
    d: str  # absolute M, L, C and Z commands only
    fill: str | None = None
    stroke: str | None = None
    width: float = 0.0
    opacity: float = 1.0


class Text(NamedTuple):
    x: float
    y: float  # the baseline
    text: str
    size: float
    fill: str = "#000000"
    anchor: str = "middle"  # start, middle or end
    bold: bool = True


class Group(NamedTuple):
    """``items`` turned by ``rotate`` degrees (clockwise on screen), scaled
    by ``scale``, then moved by (``dx``, ``dy``)."""

    items: tuple[Shape, ...]
    dx: float = 0.0
    dy: float = 0.0
    scale: float = 1.0
    rotate: float = 0.0


Shape = Circle | Rect | Path | Text | Group


def num(v: float) -> str:
    """A number as written in paths and SVG: at most 2 decimals, no trailing
    zeros, never ``-0``.  Keeps output byte-identical across runs."""
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


class PathBuilder:
    """Builds a ``Path.d`` string."""

    def __init__(self) -> None:
        self._parts: list[str] = []

    def move(self, x: float, y: float) -> PathBuilder:
        self._parts.append(f"M {num(x)} {num(y)}")
        return self

    def line(self, x: float, y: float) -> PathBuilder:
        self._parts.append(f"L {num(x)} {num(y)}")
        return self

    def curve(self, x1: float, y1: float, x2: float, y2: float, x: float, y: float) -> PathBuilder:
        self._parts.append(f"C {num(x1)} {num(y1)} {num(x2)} {num(y2)} {num(x)} {num(y)}")
        return self

    def close(self) -> PathBuilder:
        self._parts.append("Z")
        return self

    def polyline(self, points: list[tuple[float, float]], closed: bool = False) -> PathBuilder:
        self.move(*points[0])
        for x, y in points[1:]:
            self.line(x, y)
        if closed:
            self.close()
        return self

    def build(self) -> str:
        return " ".join(self._parts)


# -- colours -------------------------------------------------------------------

#: Main colour of each flavour (legends, the locked ring of a Cinnamon Roll).
FLAVOUR_COLOUR: Final = {
    "C": "#5c3317",  # chocolate
    "S": "#e377b0",  # strawberry icing
    "H": "#e69f00",  # golden (Okabe-Ito orange)
    "B": "#0072b2",  # blueberry (Okabe-Ito blue)
    "R": "#d9a066",  # cinnamon dough
}
#: Shapes, by flavour letter (for legends).
FLAVOUR_SHAPE: Final = {
    "C": "fluted ring with twisted ridges",
    "S": "iced ring with sprinkles",
    "H": "ring of five balls",
    "B": "glazed ring with a drip",
    "R": "swirl",
}
#: The card face under the donuts (and in the holes).
CARD_BACKGROUND: Final = "#fff7e8"
#: Letters and fine lines.
INK: Final = "#2b1d14"
DOUGH: Final = "#e8b46e"
DOUGH_EDGE: Final = "#b9823f"
QUADRANT_LINE: Final = "#e6d3b3"
#: The start card belongs to nobody: a neutral band, no mark.
NEUTRAL: Final = "#a8a8a8"
#: Delivered boxes: washed out, hatched and outlined.
DELIVERED_WASH: Final = "#ffffff"
DELIVERED_HATCH: Final = "#6e6e6e"
DELIVERED_OUTLINE: Final = "#1a1a1a"


class Deck(NamedTuple):
    """A deck (a player colour): its name, colour and mark."""

    name: str
    colour: str
    mark: str  # circle, triangle, square or diamond


#: Up to four decks.  Player ``i`` plays deck ``i``; owners on the counter
#: are drawn in their deck's colour and mark.
DECKS: Final = (
    Deck("green", "#009e73", "circle"),
    Deck("orange", "#d55e00", "triangle"),
    Deck("purple", "#7b4fa6", "square"),
    Deck("black", "#333333", "diamond"),
)


def palette() -> dict[str, object]:
    """The one palette of players and flavours, as JSON: the page reads it
    from ``/api/meta`` so that player ``i`` has the same colour and mark in
    the browser, the SVG drawings and the print-and-play PDF (``DECKS``)."""
    return {
        "players": [{"name": d.name, "colour": d.colour, "mark": d.mark} for d in DECKS],
        "flavours": dict(FLAVOUR_COLOUR),
        "neutral": NEUTRAL,
    }


def deck_colour(owner: int | None) -> str:
    """Band colour of a card of ``owner`` (None: the neutral start card)."""
    return NEUTRAL if owner is None else DECKS[owner % len(DECKS)].colour


# -- deck marks ---------------------------------------------------------------------


def mark(kind: str, cx: float, cy: float, size: float, fill: str) -> Shape:
    """A deck mark centred on (cx, cy), ``size`` across."""
    h = size / 2
    if kind == "circle":
        return Circle(cx, cy, h * 0.9, fill=fill)
    if kind == "square":
        s = h * 0.8
        return Rect(cx - s, cy - s, 2 * s, 2 * s, fill=fill)
    if kind == "diamond":
        pts = [(cx, cy - h), (cx + h * 0.8, cy), (cx, cy + h), (cx - h * 0.8, cy)]
        return Path(PathBuilder().polyline(pts, closed=True).build(), fill=fill)
    # triangle, pointing up
    pts = [(cx, cy - h), (cx + h, cy + h * 0.75), (cx - h, cy + h * 0.75)]
    return Path(PathBuilder().polyline(pts, closed=True).build(), fill=fill)


# -- donuts -----------------------------------------------------------------------
#
# Each donut is drawn in a 100 x 100 quadrant centred on (50, 50).

_C = 50.0


def _polar(r: float, deg: float) -> tuple[float, float]:
    a = math.radians(deg)
    return (_C + r * math.cos(a), _C + r * math.sin(a))


def _wavy(r: float, amp: float, lobes: int, steps: int = 96) -> str:
    pts = [
        _polar(r + amp * math.cos(math.radians(i * 360 / steps) * lobes), i * 360 / steps)
        for i in range(steps)
    ]
    return PathBuilder().polyline(pts, closed=True).build()


class Lettering(NamedTuple):
    """How big a donut's letter is drawn, and the hole it sits in (drawing
    units of the 100-unit quadrant).  The letter's baseline is
    ``baseline`` of its size below the centre, which centres a capital."""

    size: float
    hole: float
    baseline: float = 0.35


#: On printed cards, the PDF and ``donutbox render``: a letter a fifth of
#: the donut, its shape and colour tell the flavour first.
PRINTED: Final = Lettering(20.0, 13.5)
#: On screen (the web page's donut images): the page draws a donut at least
#: 40 CSS px across, and a letter of 32 units is then 12.8 px (as big as an
#: open box's value; the page draws no text under 12 px).  The hole is
#: widened to keep the letter's corners inside it (clear of the icing), and
#: the letter sits a little low so that the value's badge, along the top of
#: the cell, stays clear of it.
SCREEN: Final = Lettering(32.0, 18.0, 0.36)


def _letter(letter: str, hole: str, lettering: Lettering = PRINTED) -> tuple[Shape, ...]:
    size = lettering.size
    return (
        Circle(_C, _C, lettering.hole, fill=hole),
        Text(_C, _C + lettering.baseline * size, letter, size, fill=INK),
    )


def _cruller() -> tuple[Shape, ...]:
    items: list[Shape] = [
        Path(_wavy(35.5, 3.2, 9), fill=FLAVOUR_COLOUR["C"], stroke="#3b200d", width=1.5)
    ]
    for i in range(9):
        a = i * 40 + 20
        x0, y0 = _polar(15.5, a - 8)
        x1, y1 = _polar(26.0, a + 6)
        x2, y2 = _polar(34.0, a + 18)
        items.append(
            Path(
                PathBuilder().move(x0, y0).curve(x1, y1, x1, y1, x2, y2).build(),
                stroke="#9c6a3c",
                width=2.6,
            )
        )
    return tuple(items)


#: (angle, radius, tilt, colour) of each sprinkle.
_SPRINKLES: Final = (
    (10, 24, 30, "#ffffff"),
    (52, 27, 110, "#f0e442"),
    (95, 23, 60, "#56b4e9"),
    (140, 27, 160, "#ffffff"),
    (183, 24, 20, "#f0e442"),
    (225, 28, 95, "#56b4e9"),
    (262, 23, 140, "#ffffff"),
    (300, 27, 45, "#56b4e9"),
    (335, 26, 120, "#f0e442"),
)


def _sprinkles() -> tuple[Shape, ...]:
    items: list[Shape] = [
        Circle(_C, _C, 37.0, fill=DOUGH, stroke=DOUGH_EDGE, width=1.5),
        Path(_wavy(32.0, 2.0, 11), fill=FLAVOUR_COLOUR["S"], stroke="#b84d86", width=1.2),
    ]
    for angle, r, tilt, colour in _SPRINKLES:
        cx, cy = _polar(r, angle)
        dx = 3.6 * math.cos(math.radians(tilt))
        dy = 3.6 * math.sin(math.radians(tilt))
        items.append(
            Path(
                PathBuilder().move(cx - dx, cy - dy).line(cx + dx, cy + dy).build(),
                stroke="#7a2c55",
                width=4.6,
            )
        )
        items.append(
            Path(
                PathBuilder().move(cx - dx, cy - dy).line(cx + dx, cy + dy).build(),
                stroke=colour,
                width=3.0,
            )
        )
    return tuple(items)


def _holes() -> tuple[Shape, ...]:
    items: list[Shape] = []
    for i in range(5):
        cx, cy = _polar(25.0, -90 + i * 72)
        items.append(Circle(cx, cy, 12.2, fill=FLAVOUR_COLOUR["H"], stroke="#8f5d00", width=1.8))
        items.append(Circle(cx - 3.8, cy - 4.0, 3.4, fill="#ffffff", opacity=0.55))
    return tuple(items)


def _blueberry() -> tuple[Shape, ...]:
    # Round the top, the long way, from the right of the drip to its left,
    # then down the drip and back up.
    glaze = PathBuilder().move(*_polar(32.0, 62))
    angles = (62, 0, -60, -120, -180, -242)
    for a0, a1 in itertools.pairwise(angles):
        glaze.curve(*_arc_controls(32.0, a0, a1), *_polar(32.0, a1))
    glaze.curve(_C - 14, 86.0, _C - 4, 93.0, _C + 1, 90.0)
    glaze.curve(_C + 7, 87.0, _C + 8, 81.0, *_polar(32.0, 62))
    glaze.close()
    items: list[Shape] = [
        Circle(_C, _C, 37.0, fill=DOUGH, stroke=DOUGH_EDGE, width=1.5),
        Path(glaze.build(), fill=FLAVOUR_COLOUR["B"], stroke="#004a75", width=1.2),
        Circle(_C - 13, _C - 20, 5.0, fill="#ffffff", opacity=0.35),
    ]
    for angle in (-30, 150, 205):
        cx, cy = _polar(24.5, angle)
        items.append(Circle(cx, cy, 4.6, fill="#1d2a5a", stroke="#0b1230", width=1.0))
    return tuple(items)


def _arc_controls(r: float, a0: float, a1: float) -> tuple[float, float, float, float]:
    """Control points of a cubic Bezier close to the circular arc a0 -> a1
    (degrees, at most 90 apart)."""
    k = 4 / 3 * math.tan(math.radians(a1 - a0) / 4) * r
    p0 = _polar(r, a0)
    p1 = _polar(r, a1)
    t0 = math.radians(a0)
    t1 = math.radians(a1)
    return (
        p0[0] - k * math.sin(t0),
        p0[1] + k * math.cos(t0),
        p1[0] + k * math.sin(t1),
        p1[1] - k * math.cos(t1),
    )


def _spiral() -> str:
    pts = []
    turns = 2.35
    steps = 110
    for i in range(steps + 1):
        t = i / steps
        r = 14.0 + (34.0 - 14.0) * t
        pts.append(_polar(r, -90 + 360 * turns * t))
    return PathBuilder().polyline(pts).build()


def _roll(locked: str | None) -> tuple[Shape, ...]:
    items: list[Shape] = []
    if locked:
        items.append(Circle(_C, _C, 43.0, fill=FLAVOUR_COLOUR[locked]))
    items += [
        Circle(_C, _C, 37.5, fill=FLAVOUR_COLOUR["R"], stroke="#8b4a1c", width=1.8),
        Path(_spiral(), stroke="#8b4a1c", width=4.5),
        Path(_spiral(), stroke="#f6e3c5", width=1.3),
    ]
    return tuple(items)


_BODIES: Final = {
    "C": _cruller(),
    "S": _sprinkles(),
    "H": _holes(),
    "B": _blueberry(),
}
_ROLL: Final = _roll(None)
_LOCKED: Final = {f: _roll(f) for f in "CSHB"}


def donut(
    flavour: str,
    roll: bool = False,
    locked: bool = False,
    hole: str = CARD_BACKGROUND,
    lettering: Lettering = PRINTED,
) -> tuple[Shape, ...]:
    """One donut in a 100 x 100 quadrant (origin at its top-left corner).

    ``flavour`` is C, S, H, B, or R for a Cinnamon Roll that is not yet locked
    (on a printed card).  A roll on the counter is ``donut(F, roll=True,
    locked=True)``: the swirl, ringed in the colour of ``F``, lettered ``F``.
    ``hole`` is the colour behind the donut (seen through its hole),
    ``lettering`` the size of its letter (``PRINTED`` or ``SCREEN``).
    """
    if flavour == "R" or (roll and not locked):
        return (*_ROLL, *_letter("R", hole, lettering))
    if roll:
        return (*_LOCKED[flavour], *_letter(flavour, hole, lettering))
    return (*_BODIES[flavour], *_letter(flavour, hole, lettering))


# -- cards ------------------------------------------------------------------------


def card(
    quadrants: str,
    colour: str = NEUTRAL,
    mark_kind: str | None = None,
    label: str | None = None,
    locks: str | None = None,
) -> tuple[Shape, ...]:
    """A card, 200 x 200, origin at its top-left corner.

    ``quadrants`` are the letters NW, NE, SE, SW as they lie (a face, turned
    or not).  ``colour`` is the band round the edge (the deck or owner),
    ``mark_kind`` the deck mark drawn in the band's corners (None: no mark),
    ``label`` small text in the bottom band (the card's code on a printed
    card).  ``locks``, for a card on the counter, gives the locked flavour of
    each quadrant (a roll there is drawn locked to it).
    """
    items: list[Shape] = [
        Rect(0, 0, CARD, CARD, fill=colour),
        Rect(BAND, BAND, CARD - 2 * BAND, CARD - 2 * BAND, fill=CARD_BACKGROUND),
        Path(
            PathBuilder()
            .move(QUADRANT, BAND + 4)
            .line(QUADRANT, CARD - BAND - 4)
            .move(BAND + 4, QUADRANT)
            .line(CARD - BAND - 4, QUADRANT)
            .build(),
            stroke=QUADRANT_LINE,
            width=1.5,
        ),
    ]
    offset = QUADRANT * (1 - DONUT_SCALE) / 2
    for i, (qx, qy) in enumerate(((0, 0), (1, 0), (1, 1), (0, 1))):
        letter = quadrants[i]
        if locks is not None and letter == "R":
            shapes = donut(locks[i], roll=True, locked=True)
        else:
            shapes = donut(letter)
        items.append(
            Group(shapes, dx=qx * QUADRANT + offset, dy=qy * QUADRANT + offset, scale=DONUT_SCALE)
        )
    if mark_kind is not None:
        h = BAND / 2
        for cx, cy in ((h, h), (CARD - h, h), (CARD - h, CARD - h), (h, CARD - h)):
            items.append(mark(mark_kind, cx, cy, BAND * 0.7, "#ffffff"))
    if label:
        items.append(Text(QUADRANT, CARD - 2.6, label, 7.4, fill="#ffffff"))
    return tuple(items)


def card_back(deck: Deck) -> tuple[Shape, ...]:
    """The back of a card of ``deck``, 200 x 200: the deck colour, the game's
    name, a white donut ring, the deck's mark and name."""
    pale = "#ffffff"
    return (
        Rect(0, 0, CARD, CARD, fill=deck.colour),
        Circle(QUADRANT, 92.0, 46.0, stroke=pale, width=22.0, opacity=0.95),
        Circle(QUADRANT, 92.0, 46.0, stroke=deck.colour, width=2.0),
        mark(deck.mark, QUADRANT, 92.0, 26.0, pale),
        Text(QUADRANT, 168.0, "donutbox", 24.0, fill=pale),
        Text(QUADRANT, 184.0, f"{deck.name} deck", 11.0, fill=pale),
    )


def legend_tile(
    flavour: str, roll: bool = False, lettering: Lettering = PRINTED
) -> tuple[Shape, ...]:
    """A donut on a quadrant-sized tile of card colour (for legends, and
    the web page's donuts with ``lettering=SCREEN``)."""
    return (
        Rect(0, 0, QUADRANT, QUADRANT, fill=CARD_BACKGROUND, stroke=QUADRANT_LINE, width=2.0),
        *donut(flavour, roll=roll, locked=roll, lettering=lettering),
    )
