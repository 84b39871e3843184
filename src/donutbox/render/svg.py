"""SVG drawings of donuts, cards and the counter, as strings.

Every function here is pure: it returns a ``str`` and touches no file, so
the web app can call it as well as ``donutbox render``.  The shapes come from
``look.py`` (the same ones the print-and-play PDF draws), and the same input
always gives byte-identical output.

- ``donut_svg`` / ``card_svg`` / ``back_svg``: one donut, card or card back
  as a standalone SVG document;
- ``shapes_svg``: SVG elements for any display list (to embed in a page);
- ``counter_svg``: the counter of a game, with a caption (players, scores,
  boxes delivered, who is to move), as a standalone SVG document.

On the counter each card has a band in its owner's deck colour with the
deck's mark in its corners (the neutral start card: grey, no mark); a
Cinnamon Roll is drawn as a swirl ringed in the flavour it locked to and
lettered with it; delivered boxes are washed out, hatched and outlined.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final, NamedTuple

from . import look
from .look import Circle, Group, Path, PathBuilder, Rect, Shape, Text, num

if TYPE_CHECKING:
    from ..core import Game
    from ..core.counter import Donut

#: Pixels per counter cell (one quadrant) in ``counter_svg``.
CELL_PX: Final = 50.0
#: Empty space round the board, and the width of the coordinate labels.
MARGIN_PX: Final = 16.0
LABEL_PX: Final = 22.0
#: Caption text size and line height.
CAPTION_PX: Final = 15.0
CAPTION_LINE_PX: Final = 22.0
#: Narrowest picture (so that the caption fits beside a lone start card).
MIN_WIDTH_PX: Final = 360.0

FONT: Final = "Helvetica, Arial, 'DejaVu Sans', 'Liberation Sans', sans-serif"
BACKDROP: Final = "#f4f1ec"
LABEL_COLOUR: Final = "#8a8178"
CAPTION_COLOUR: Final = "#2b2b2b"


# -- writing the display list -------------------------------------------------------


def _xml_text(text: str) -> str:
    """Escape text for XML; characters XML cannot hold become U+FFFD."""
    out = []
    for ch in text:
        o = ord(ch)
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == '"':
            out.append("&quot;")
        elif (o < 0x20 and ch not in "\t\n\r") or 0xD800 <= o <= 0xDFFF or o in (0xFFFE, 0xFFFF):
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


def _paint(fill: str | None, stroke: str | None, width: float, opacity: float) -> str:
    attrs = [f'fill="{fill or "none"}"']
    if stroke:
        attrs.append(f'stroke="{stroke}" stroke-width="{num(width)}"')
    if opacity != 1.0:
        attrs.append(f'opacity="{num(opacity)}"')
    return " ".join(attrs)


def _transform(g: Group) -> str:
    parts = []
    if g.dx or g.dy:
        parts.append(f"translate({num(g.dx)} {num(g.dy)})")
    if g.scale != 1.0:
        parts.append(f"scale({num(g.scale)})")
    if g.rotate:
        parts.append(f"rotate({num(g.rotate)})")
    return " ".join(parts)


class _Writer:
    """Writes shapes; a group drawn more than once is defined once (``<defs>``)
    and then reused (``<use>``), which keeps a full counter small."""

    def __init__(self, items: Sequence[Shape]) -> None:
        counts: dict[tuple[Shape, ...], int] = {}
        self._count(items, counts)
        self.ids: dict[tuple[Shape, ...], str] = {}
        for shapes, n in counts.items():
            if n > 1:
                self.ids[shapes] = f"s{len(self.ids) + 1}"

    def _count(self, items: Iterable[Shape], counts: dict[tuple[Shape, ...], int]) -> None:
        for item in items:
            if isinstance(item, Group):
                counts[item.items] = counts.get(item.items, 0) + 1
                if counts[item.items] == 1:
                    self._count(item.items, counts)

    def defs(self) -> str:
        if not self.ids:
            return ""
        body = "".join(
            f'<g id="{ident}">{self.shapes(shapes)}</g>' for shapes, ident in self.ids.items()
        )
        return f"<defs>{body}</defs>"

    def shapes(self, items: Iterable[Shape]) -> str:
        return "".join(self.shape(item) for item in items)

    def shape(self, item: Shape) -> str:
        if isinstance(item, Circle):
            paint = _paint(item.fill, item.stroke, item.width, item.opacity)
            return f'<circle cx="{num(item.cx)}" cy="{num(item.cy)}" r="{num(item.r)}" {paint}/>'
        if isinstance(item, Rect):
            paint = _paint(item.fill, item.stroke, item.width, item.opacity)
            return (
                f'<rect x="{num(item.x)}" y="{num(item.y)}" width="{num(item.w)}" '
                f'height="{num(item.h)}" {paint}/>'
            )
        if isinstance(item, Path):
            paint = _paint(item.fill, item.stroke, item.width, item.opacity)
            return f'<path d="{item.d}" {paint}/>'
        if isinstance(item, Text):
            weight = "" if item.bold else ' font-weight="normal"'
            anchor = "" if item.anchor == "start" else f' text-anchor="{item.anchor}"'
            return (
                f'<text x="{num(item.x)}" y="{num(item.y)}" font-size="{num(item.size)}" '
                f'fill="{item.fill}"{anchor}{weight}>{_xml_text(item.text)}</text>'
            )
        transform = _transform(item)
        attr = f' transform="{transform}"' if transform else ""
        ident = self.ids.get(item.items)
        if ident is not None:
            return f'<use xlink:href="#{ident}"{attr}/>'
        return f"<g{attr}>{self.shapes(item.items)}</g>"


def shapes_svg(items: Sequence[Shape]) -> str:
    """SVG elements for a display list, to put inside an ``<svg>`` element
    (the shapes rely on the attributes ``document`` sets on it: bold font,
    round line caps and joins)."""
    writer = _Writer(items)
    return writer.defs() + writer.shapes(items)


def document(
    items: Sequence[Shape],
    width: float,
    height: float,
    title: str = "",
    pixels: tuple[float, float] | None = None,
) -> str:
    """A standalone SVG document of ``width`` x ``height`` drawing units,
    ``pixels`` (default: the same) across and down."""
    pw, ph = pixels or (width, height)
    writer = _Writer(items)
    head = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        f'width="{num(pw)}" height="{num(ph)}" viewBox="0 0 {num(width)} {num(height)}" '
        f'font-family="{FONT}" font-weight="bold" '
        'stroke-linecap="round" stroke-linejoin="round">'
    )
    title_el = f"<title>{_xml_text(title)}</title>" if title else ""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + head
        + title_el
        + writer.defs()
        + writer.shapes(items)
        + "</svg>\n"
    )


# -- donuts and cards -----------------------------------------------------------------


def donut_svg(
    flavour: str,
    size: float = 100.0,
    locked: str | None = None,
    lettering: look.Lettering = look.PRINTED,
) -> str:
    """One donut on a card-coloured tile, ``size`` pixels square.

    ``flavour`` is C, S, H, B or R; ``locked`` draws a Cinnamon Roll locked
    to that flavour (``flavour`` is then ignored); ``lettering``: the
    letter's size (``look.SCREEN`` for the web page)."""
    if locked:
        shapes = look.legend_tile(locked, roll=True, lettering=lettering)
    else:
        shapes = look.legend_tile(flavour, lettering=lettering)
    name = look.FLAVOUR_SHAPE["R" if locked else flavour]
    return document(shapes, look.QUADRANT, look.QUADRANT, title=name, pixels=(size, size))


def card_svg(face: str, deck: int | None = 0, size: float = 200.0, label: bool = True) -> str:
    """A printed card: ``face`` as printed (NW, NE, SE, SW), the band in the
    colour of ``deck`` (0-3; None: the neutral grey) with its mark, and the
    card's code in the bottom band when ``label``."""
    if deck is None:
        shapes = look.card(face, look.NEUTRAL, None, face if label else None)
    else:
        d = look.DECKS[deck]
        shapes = look.card(face, d.colour, d.mark, face if label else None)
    return document(shapes, look.CARD, look.CARD, title=f"card {face}", pixels=(size, size))


def back_svg(deck: int = 0, size: float = 200.0) -> str:
    """The back of a card of ``deck`` (0-3)."""
    d = look.DECKS[deck]
    return document(
        look.card_back(d), look.CARD, look.CARD, title=f"{d.name} deck", pixels=(size, size)
    )


# -- the counter ----------------------------------------------------------------------


class Placed(NamedTuple):
    """A card on the counter: the cell under its NW quadrant and its owner."""

    x: int
    y: int
    owner: int | None


def placed_cards(game: Game) -> list[Placed]:
    """Every card on the counter, in the order laid (the start card first)."""
    out = [Placed(0, 0, None)]
    for move in game.history:
        if move.kind == "place":
            d = game.counter.donut_at(move.x, move.y)
            out.append(Placed(move.x, move.y, None if d is None else d.owner))
    return out


def board_shapes(game: Game) -> tuple[list[Shape], int, int, int, int]:
    """The cards and delivered boxes of the counter, one cell = 100 units,
    cell (x0, y0) at the origin.  Returns (shapes, x0, y0, columns, rows)."""
    donuts = game.counter.donuts()
    at = {(d.x, d.y): d for d in donuts}
    x0 = min(d.x for d in donuts)
    y0 = min(d.y for d in donuts)
    cols = max(d.x for d in donuts) - x0 + 1
    rows = max(d.y for d in donuts) - y0 + 1
    q = look.QUADRANT
    items: list[Shape] = []
    for card in placed_cards(game):
        cells = [at[(card.x, card.y)], at[(card.x + 1, card.y)]]
        cells += [at[(card.x + 1, card.y + 1)], at[(card.x, card.y + 1)]]
        quadrants = "".join("R" if d.roll else d.flavour for d in cells)
        locks = "".join(d.flavour for d in cells)
        if card.owner is None:
            colour, mark_kind = look.NEUTRAL, None
        else:
            deck = look.DECKS[card.owner % len(look.DECKS)]
            colour, mark_kind = deck.colour, deck.mark
        items.append(
            Group(
                look.card(quadrants, colour, mark_kind, locks=locks),
                dx=(card.x - x0) * q,
                dy=(card.y - y0) * q,
            )
        )
    delivered = [d for d in donuts if d.delivered]
    if delivered:
        items.extend(_delivered_shapes(delivered, at, x0, y0))
    return items, x0, y0, cols, rows


_HATCH: Final = tuple(
    (c, 0.0, q, q - c) if c >= 0 else (0.0, -c, q + c, q)
    for q in (look.QUADRANT,)
    for c in range(-84, 100, 14)
)


def _delivered_shapes(
    delivered: list[Donut], at: dict[tuple[int, int], Donut], x0: int, y0: int
) -> list[Shape]:
    q = look.QUADRANT
    wash = PathBuilder()
    hatch = PathBuilder()
    edges = PathBuilder()
    for d in delivered:
        ox, oy = (d.x - x0) * q, (d.y - y0) * q
        wash.move(ox, oy).line(ox + q, oy).line(ox + q, oy + q).line(ox, oy + q).close()
        for ax, ay, bx, by in _HATCH:
            hatch.move(ox + ax, oy + ay).line(ox + bx, oy + by)
        for dx, dy, seg in (
            (0, -1, (0, 0, q, 0)),
            (1, 0, (q, 0, q, q)),
            (0, 1, (0, q, q, q)),
            (-1, 0, (0, 0, 0, q)),
        ):
            n = at.get((d.x + dx, d.y + dy))
            if n is None or not n.delivered or n.flavour != d.flavour:
                edges.move(ox + seg[0], oy + seg[1]).line(ox + seg[2], oy + seg[3])
    return [
        Path(wash.build(), fill=look.DELIVERED_WASH, opacity=0.5),
        Path(hatch.build(), stroke=look.DELIVERED_HATCH, width=2.2, opacity=0.8),
        Path(edges.build(), stroke=look.DELIVERED_OUTLINE, width=7.0),
    ]


def _text_width(text: str, size: float) -> float:
    """A generous estimate of the width of bold sans-serif text."""
    return 0.62 * size * len(text)


def caption_lines(game: Game, note: str = "") -> list[tuple[int | None, str]]:
    """The caption under the counter: (owner or None, text) per line."""
    view = game.view(-1)
    total = len(game.history)
    lines: list[tuple[int | None, str]] = [
        (None, f"{game.rules.label()} · after {total} move{'' if total == 1 else 's'}")
    ]
    for p, name in enumerate(game.names):
        shown = name if len(name) <= 40 else name[:39] + "…"
        text = (
            f"{shown}: {view.scores[p]} points, {view.boxes_delivered[p]} "
            f"box{'es' if view.boxes_delivered[p] != 1 else ''} delivered"
        )
        if p in view.winners:
            text += " (winner)"
        elif view.to_move == p:
            text += " (to move)"
        lines.append((p, text))
    if game.finished:
        lines.append((None, "Game over."))
    elif view.final_lap_turns is not None:
        turns = view.final_lap_turns
        lines.append((None, f"Final Lap: {turns} turn{'' if turns == 1 else 's'} left."))
    if game.history:
        last = game.history[-1]
        by = game.names[(total - 1) % game.players]
        shown = by if len(by) <= 40 else by[:39] + "…"
        lines.append((None, f"Last move: {last} by {shown}"))
    if note:
        lines.append((None, note if len(note) <= 90 else note[:89] + "…"))
    return lines


def counter_shapes(game: Game, note: str = "") -> tuple[list[Shape], float, float]:
    """The counter with axis labels and a caption, in pixels.

    Returns (shapes, width, height), whole pixels.  The board is ``CELL_PX`` per cell, with
    ``MARGIN_PX + LABEL_PX`` to its left and above it and ``MARGIN_PX`` to its
    right; the caption, ``CAPTION_LINE_PX`` a line, follows ``MARGIN_PX``
    below the board, then ``MARGIN_PX`` more."""
    board, x0, y0, cols, rows = board_shapes(game)
    k = CELL_PX / look.QUADRANT
    left = MARGIN_PX + LABEL_PX
    top = MARGIN_PX + LABEL_PX
    lines = caption_lines(game, note)
    text_w = max(
        _text_width(text, CAPTION_PX) + (22.0 if p is not None else 0.0) for p, text in lines
    )
    width = math.ceil(max(left + cols * CELL_PX + MARGIN_PX, 2 * MARGIN_PX + text_w, MIN_WIDTH_PX))
    board_bottom = top + rows * CELL_PX
    height = math.ceil(board_bottom + MARGIN_PX + len(lines) * CAPTION_LINE_PX + MARGIN_PX)
    items: list[Shape] = [Rect(0, 0, width, height, fill=BACKDROP)]
    step = 1 if not game.rules.squared else 2
    for i in range(cols):
        if (x0 + i) % step == 0:
            items.append(
                Text(left + (i + 0.5) * CELL_PX, top - 6, str(x0 + i), 11.0, fill=LABEL_COLOUR)
            )
    for j in range(rows):
        if (y0 + j) % step == 0:
            items.append(
                Text(
                    left - 6,
                    top + (j + 0.5) * CELL_PX + 4,
                    str(y0 + j),
                    11.0,
                    fill=LABEL_COLOUR,
                    anchor="end",
                )
            )
    items.append(Group(tuple(board), dx=left, dy=top, scale=k))
    y = board_bottom + MARGIN_PX + CAPTION_PX
    for owner, text in lines:
        x = MARGIN_PX
        if owner is not None:
            deck = look.DECKS[owner % len(look.DECKS)]
            items.append(Rect(x, y - 13, 16, 16, fill=deck.colour))
            items.append(look.mark(deck.mark, x + 8, y - 5, 9, "#ffffff"))
            x += 22
        items.append(Text(x, y, text, CAPTION_PX, fill=CAPTION_COLOUR, anchor="start"))
        y += CAPTION_LINE_PX
    return items, width, height


def counter_svg(game: Game, note: str = "") -> str:
    """The counter of ``game`` with its caption, as a standalone SVG document.
    ``note`` is an extra caption line (e.g. why the record stops early)."""
    items, width, height = counter_shapes(game, note)
    return document(items, width, height, title=f"donutbox: {game.rules.label()}")
