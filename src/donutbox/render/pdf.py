"""The print-and-play PDF: every card of the standard decks, the rules and a
reference card, drawn with reportlab from the same shapes as the SVG
pictures (``look.py``).

Layout (see docs/print-and-play.md):

- card pages: ``COLUMNS`` x ``ROWS`` cards of ``CARD_MM`` mm, edge to edge,
  centred on the page, with cut marks in the margins, a thin white line on
  every cut between two cards, and a bleed of the border colour past the
  outer cuts.  Deck after deck, each in the order of docs/spec.md, 'Components'.
- with ``backs``: after each card page, its backs, mirrored left to right so
  that double-sided printing (flip on the long edge) puts every back behind
  its own card.
- the rules in the project's own words (``RULES``), with pictures drawn by the
  same code as ``donutbox render``; then a one-page reference card.

Output is byte-identical for the same arguments (reportlab's invariant mode).
"""

from __future__ import annotations

import functools
import io
import json
import math
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any, Final, NamedTuple

from ..core.cards import FLAVOUR_NAMES, STANDARD_DECK
from . import look
from .look import Circle, Group, Rect, Shape, Text

MM: Final = 72.0 / 25.4
#: Paper sizes in millimetres (portrait).
PAPERS: Final = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
#: A card is this many millimetres square: 30 mm a donut, big enough to read
#: across a table, and a 3 x 4 grid fits A4 and US Letter with room for cut marks.
CARD_MM: Final = 60.0
COLUMNS: Final = 3
ROWS: Final = 4
CARDS_PER_PAGE: Final = COLUMNS * ROWS
#: Border colour printed past the outer cuts (forgives a cut a little too wide).
BLEED_MM: Final = 2.0
#: Cut marks run from this far outside the grid ...
MARK_GAP_MM: Final = 3.0
#: ... to this far.
MARK_END_MM: Final = 9.0
#: The length of the check bar in the footer of a card page.
BAR_MM: Final = 50.0
MAX_DECKS: Final = len(look.DECKS)

TITLE: Final = "donutbox print-and-play"
RULES_TITLE: Final = "How to play donutbox"
REFERENCE_TITLE: Final = "donutbox reference card"


class PdfInfo(NamedTuple):
    """What a print-and-play PDF holds, page by page."""

    paper: str
    decks: int
    cards: int
    card_pages: int
    back_pages: int
    rules_pages: int
    reference_pages: int

    @property
    def pages(self) -> int:
        return self.card_pages + self.back_pages + self.rules_pages + self.reference_pages


def deck_cards(decks: int) -> list[tuple[int, str]]:
    """(deck, face) of every card to print: deck after deck, each in the
    order of docs/spec.md, 'Components'."""
    return [(d, face) for d in range(decks) for face in STANDARD_DECK]


def card_pages_needed(decks: int) -> int:
    return math.ceil(len(STANDARD_DECK) * decks / CARDS_PER_PAGE)


# -- drawing the display list on a reportlab canvas --------------------------------------


class Painter:
    """Draws ``look`` shapes on a reportlab canvas (the PDF twin of
    ``svg.shapes_svg``)."""

    def __init__(self, canvas: Any) -> None:
        from reportlab.lib.colors import HexColor

        self.c = canvas
        self._hex = HexColor
        self._colours: dict[str, Any] = {}

    def colour(self, text: str) -> Any:
        got = self._colours.get(text)
        if got is None:
            got = self._colours[text] = self._hex(text)
        return got

    def draw(self, items: Iterable[Shape], x: float, top: float, scale: float) -> None:
        """Draw ``items`` with their origin at (x, top) in points (top-left of
        the drawing), ``scale`` points per drawing unit."""
        c = self.c
        c.saveState()
        c.translate(x, top)
        c.scale(scale, -scale)
        c.setLineCap(1)
        c.setLineJoin(1)
        self.items(items)
        c.restoreState()

    def items(self, items: Iterable[Shape]) -> None:
        for item in items:
            self.shape(item)

    def shape(self, item: Shape) -> None:
        c = self.c
        if isinstance(item, Group):
            c.saveState()
            if item.dx or item.dy:
                c.translate(item.dx, item.dy)
            if item.scale != 1.0:
                c.scale(item.scale, item.scale)
            if item.rotate:
                c.rotate(item.rotate)
            self.items(item.items)
            c.restoreState()
            return
        if isinstance(item, Text):
            c.saveState()
            c.translate(item.x, item.y)
            c.scale(1, -1)
            c.setFillColor(self.colour(item.fill))
            c.setFont("Helvetica-Bold" if item.bold else "Helvetica", item.size)
            if item.anchor == "middle":
                c.drawCentredString(0, 0, item.text)
            elif item.anchor == "end":
                c.drawRightString(0, 0, item.text)
            else:
                c.drawString(0, 0, item.text)
            c.restoreState()
            return
        fill, stroke = item.fill, item.stroke
        if item.opacity != 1.0:
            c.saveState()
        if fill:
            c.setFillColor(self.colour(fill))
        if stroke:
            c.setStrokeColor(self.colour(stroke))
            c.setLineWidth(item.width)
        if item.opacity != 1.0:  # after the colours: setting a colour resets its alpha
            c.setFillAlpha(item.opacity)
            c.setStrokeAlpha(item.opacity)
        f, s = int(bool(fill)), int(bool(stroke))
        if isinstance(item, Circle):
            c.circle(item.cx, item.cy, item.r, stroke=s, fill=f)
        elif isinstance(item, Rect):
            c.rect(item.x, item.y, item.w, item.h, stroke=s, fill=f)
        else:
            c.drawPath(self.path(item.d), stroke=s, fill=f)
        if item.opacity != 1.0:
            c.restoreState()

    def path(self, d: str) -> Any:
        p = self.c.beginPath()
        tokens = d.split()
        i = 0
        while i < len(tokens):
            op = tokens[i]
            if op == "M":
                p.moveTo(float(tokens[i + 1]), float(tokens[i + 2]))
                i += 3
            elif op == "L":
                p.lineTo(float(tokens[i + 1]), float(tokens[i + 2]))
                i += 3
            elif op == "C":
                p.curveTo(*(float(t) for t in tokens[i + 1 : i + 7]))
                i += 7
            elif op == "Z":
                p.close()
                i += 1
            else:
                raise ValueError(f"path command {op!r} is not M, L, C or Z")
        return p


# -- card pages -----------------------------------------------------------------------------


class _Sheet:
    """Where the card grid sits on a page, in points (origin bottom-left)."""

    def __init__(self, paper: str) -> None:
        w_mm, h_mm = PAPERS[paper]
        self.width = w_mm * MM
        self.height = h_mm * MM
        self.card = CARD_MM * MM
        self.left = (self.width - COLUMNS * self.card) / 2
        self.top = self.height - (self.height - ROWS * self.card) / 2  # y of the grid's top
        self.bottom = self.top - ROWS * self.card

    def slot(self, col: int, row: int) -> tuple[float, float]:
        """(x, y of the top edge) of a card slot."""
        return self.left + col * self.card, self.top - row * self.card


def _card_page(
    painter: Painter,
    sheet: _Sheet,
    cards: Sequence[tuple[int, str]],
    back: bool,
    footer: str,
) -> None:
    c = painter.c
    scale = sheet.card / look.CARD
    placed: dict[tuple[int, int], tuple[int, str]] = {}
    for i, card in enumerate(cards):
        col, row = i % COLUMNS, i // COLUMNS
        if back:
            col = COLUMNS - 1 - col  # mirrored: flip on the long edge
        placed[(col, row)] = card
    bleed = BLEED_MM * MM
    # Border colour past every outer cut.
    for (col, row), (deck, _face) in placed.items():
        x, top = sheet.slot(col, row)
        x0 = x - (bleed if (col - 1, row) not in placed else 0)
        x1 = x + sheet.card + (bleed if (col + 1, row) not in placed else 0)
        y1 = top + (bleed if (col, row - 1) not in placed else 0)
        y0 = top - sheet.card - (bleed if (col, row + 1) not in placed else 0)
        c.setFillColor(painter.colour(look.DECKS[deck].colour))
        c.rect(x0, y0, x1 - x0, y1 - y0, stroke=0, fill=1)
    for (col, row), (deck, face) in sorted(placed.items(), key=lambda kv: kv[0][::-1]):
        x, top = sheet.slot(col, row)
        d = look.DECKS[deck]
        shapes = look.card_back(d) if back else look.card(face, d.colour, d.mark, face)
        painter.draw(shapes, x, top, scale)
    # A thin white line on every cut between two cards.
    c.setStrokeColor(painter.colour("#ffffff"))
    c.setLineWidth(0.5)
    for col, row in placed:
        x, top = sheet.slot(col, row)
        if (col + 1, row) in placed:
            c.line(x + sheet.card, top, x + sheet.card, top - sheet.card)
        if (col, row + 1) in placed:
            c.line(x, top - sheet.card, x + sheet.card, top - sheet.card)
    _cut_marks(painter, sheet)
    c.setFillColor(painter.colour("#444444"))
    c.setFont("Helvetica", 8)
    c.drawString(sheet.left, sheet.height - 7 * MM, footer)
    if not back:
        right = sheet.left + COLUMNS * sheet.card
        bar_x = right - BAR_MM * MM
        c.setStrokeColor(painter.colour("#444444"))
        c.setLineWidth(1.2)
        c.line(bar_x, 7 * MM, right, 7 * MM)
        c.line(bar_x, 6 * MM, bar_x, 8 * MM)
        c.line(right, 6 * MM, right, 8 * MM)
        c.drawRightString(
            bar_x - 3 * MM,
            6.3 * MM,
            f"Print at 100 % (actual size): this bar is then {BAR_MM:g} mm long "
            f"and every card {CARD_MM:g} mm square",
        )


def _cut_marks(painter: Painter, sheet: _Sheet) -> None:
    c = painter.c
    c.setStrokeColor(painter.colour("#000000"))
    c.setLineWidth(0.4)
    gap, end = MARK_GAP_MM * MM, MARK_END_MM * MM
    right = sheet.left + COLUMNS * sheet.card
    for k in range(COLUMNS + 1):
        x = sheet.left + k * sheet.card
        c.line(x, sheet.top + gap, x, sheet.top + end)
        c.line(x, sheet.bottom - gap, x, sheet.bottom - end)
    for k in range(ROWS + 1):
        y = sheet.top - k * sheet.card
        c.line(sheet.left - gap, y, sheet.left - end, y)
        c.line(right + gap, y, right + end, y)


def _card_footer(
    first: int, last: int, total: int, decks: Sequence[int], page: int, pages: int
) -> str:
    names = " and ".join(f"{look.DECKS[d].name}" for d in decks)
    return (
        f"{TITLE} · sheet {page} of {pages} · cards {first}–{last} of {total} "
        f"({names} deck{'s' if len(decks) > 1 else ''})"
    )


# -- the rules --------------------------------------------------------------------------------


def _load_text() -> tuple[
    tuple[tuple[str, str], ...], tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]
]:
    """The printed prose, kept as package data (``rules_text.json``)."""
    raw = json.loads(resources.files(__package__).joinpath("rules_text.json").read_text("utf-8"))
    rules = tuple((kind, text) for kind, text in raw["rules"])
    reference = tuple(
        tuple((heading, tuple(items)) for heading, items in column) for column in raw["reference"]
    )
    return rules, reference


#: The rules for the printed game, in the project's own words (docs/rules.md,
#: told for a real table instead of coordinates).  Blocks: ("h", heading),
#: ("p", paragraph), ("li", list item), ("fig", name of a picture); text uses
#: reportlab's paragraph markup (<b>, <i>).  The reference card: two columns
#: of (heading, items).  Both are edited in ``rules_text.json``.
RULES, REFERENCE = _load_text()


def _figure_games() -> dict[str, list[tuple[Any, str]]]:
    """The games drawn in the rules, by figure: (game, caption) pairs."""
    from ..core.replay import replay

    def game(start: str, moves: list[str], layout: str = "squared-away", match: str = "") -> Any:
        rules: dict[str, Any] = {"layout": layout}
        if match:
            rules["match"] = match
        record = {
            "format": "donutbox/1",
            "players": ["A", "B"],
            "start": start,
            "rules": rules,
            "moves": moves,
        }
        return replay(record)  # the pictures are fixed: every move is legal

    seal_moves = [
        "HHCC@2,0/270",
        "SSSS@0,2/0",
        "SSSS@0,-2/0",
        "CCCC@2,2/0",
        "SSSS@-2,0/0",
        "CCCC@2,-2/0",
    ]
    return {
        "layouts": [
            (game("CCSS", ["SSHH@0,2/0"]), "Squared Away: whole-card steps."),
            (
                game("CCSS", ["SHHC@1,2/0"], layout="splitzkies"),
                "Splitzkies: half a card out of line.",
            ),
        ],
        "matching": [
            (
                game("CCSS", ["CHHS@2,0/0"]),
                "C meets C, S meets S: fine under both rules.",
            ),
            (
                game("CCSS", ["CHHB@2,0/0"]),
                "C meets C, but B meets S: fine under One Good Match, refused under Perfect Match.",
            ),
        ],
        "sealing": [
            (
                game("SHHS", seal_moves[:5]),
                "Green (player 1) and orange (player 2) have built round the H run in the middle. "
                "Its last empty neighbour is above its right end.",
            ),
            (
                game("SHHS", seal_moves),
                "Orange covers it and seals the run: green owns 2 of its 4 donuts, orange none, "
                "so green scores 4 points although orange closed it (under Coffee's For Closers "
                "orange would). The delivered donuts are greyed: they are frozen.",
            ),
        ],
    }


@functools.cache
def _shapes_flowable() -> Any:
    """The Flowable that draws a display list (made on first use: reportlab
    is imported only when a PDF is made)."""
    from reportlab.platypus import Flowable

    class Shapes(Flowable):  # type: ignore[misc]
        """A display list ``units_w`` x ``units_h`` drawing units, scaled to
        ``width`` points across."""

        def __init__(
            self, items: Sequence[Shape], units_w: float, units_h: float, width: float
        ) -> None:
            super().__init__()
            self.shapes = items
            self.scale = width / units_w
            self.width = width
            self.height = units_h * self.scale

        def wrap(self, avail_w: float, avail_h: float) -> tuple[float, float]:
            return self.width, self.height

        def draw(self) -> None:
            Painter(self.canv).draw(self.shapes, 0, self.height, self.scale)

    return Shapes


def _flavour_legend() -> tuple[list[Shape], float, float]:
    """The five donuts and a locked Cinnamon Roll, named and described."""
    items: list[Shape] = []
    col = 165.0
    tiles = [(f, False, FLAVOUR_NAMES[f], look.FLAVOUR_SHAPE[f]) for f in "CSHBR"]
    tiles.append(("C", True, "Cinnamon Roll, locked", "to C: ringed, lettered C"))
    for i, (f, roll, name, shape) in enumerate(tiles):
        x = i * col
        items.append(Group(look.legend_tile(f, roll=roll), dx=x + (col - 100) / 2, dy=0))
        items.append(Text(x + col / 2, 124, name, 14.0, fill=look.INK))
        items.append(Text(x + col / 2, 142, shape, 12.0, fill="#6b5d52", bold=False))
    return items, len(tiles) * col, 148.0


def _deck_legend() -> tuple[list[Shape], float, float]:
    """The four decks: colour, mark and name."""
    items: list[Shape] = []
    col = 190.0
    for i, d in enumerate(look.DECKS):
        x = i * col
        items.append(Rect(x, 0, 40, 40, fill=d.colour))
        items.append(look.mark(d.mark, x + 20, 20, 24, "#ffffff"))
        items.append(Text(x + 50, 27, f"{d.name} {d.mark}", 16.0, fill=look.INK, anchor="start"))
    return items, 4 * col, 44.0


def _board_figure(games: list[tuple[Any, str]], width: float, styles: Any) -> Any:
    """Boards side by side, each with its caption under it, as a table."""
    from reportlab.platypus import Paragraph, Table, TableStyle

    from .svg import board_shapes

    Shapes = _shapes_flowable()
    cells = []
    col_w = width / len(games)
    boards = [board_shapes(g) for g, _ in games]
    most = max(max(cols, rows) for _, _, _, cols, rows in boards)
    unit = min(col_w - 12, 150.0) / (most * look.QUADRANT)
    for (items, _x0, _y0, cols, rows), (_g, caption) in zip(boards, games, strict=True):
        w = cols * look.QUADRANT
        h = rows * look.QUADRANT
        cells.append([Shapes(items, w, h, w * unit), Paragraph(caption, styles["caption"])])
    table = Table([[c[0] for c in cells], [c[1] for c in cells]], colWidths=[col_w] * len(cells))
    table.setStyle(
        TableStyle(
            [
                ("ALIGN", (0, 0), (-1, 0), "CENTER"),
                ("VALIGN", (0, 0), (-1, 0), "MIDDLE"),
                ("VALIGN", (0, 1), (-1, 1), "TOP"),
            ]
        )
    )
    return table


def _styles() -> dict[str, Any]:
    from reportlab.lib.colors import HexColor
    from reportlab.lib.styles import ParagraphStyle

    ink = HexColor(look.INK)
    body = ParagraphStyle(
        "body",
        fontName="Helvetica",
        fontSize=9.6,
        leading=12.6,
        textColor=ink,
        allowWidows=0,
        allowOrphans=0,
    )
    return {
        "title": ParagraphStyle(
            "title",
            parent=body,
            fontName="Helvetica-Bold",
            fontSize=20,
            leading=24,
            spaceAfter=6,
            textColor=HexColor(look.FLAVOUR_COLOUR["C"]),
        ),
        "h": ParagraphStyle(
            "h",
            parent=body,
            fontName="Helvetica-Bold",
            fontSize=12.5,
            leading=15,
            spaceBefore=8,
            spaceAfter=3,
            keepWithNext=1,
            textColor=HexColor(look.FLAVOUR_COLOUR["C"]),
        ),
        "p": ParagraphStyle("p", parent=body, spaceAfter=4),
        "li": ParagraphStyle("li", parent=body, leftIndent=12, bulletIndent=2, spaceAfter=2.5),
        "caption": ParagraphStyle(
            "caption",
            parent=body,
            fontSize=8.2,
            leading=10,
            alignment=1,
            textColor=HexColor("#5a4e45"),
        ),
        "ref_h": ParagraphStyle(
            "ref_h",
            parent=body,
            fontName="Helvetica-Bold",
            fontSize=13,
            leading=15,
            spaceBefore=9,
            spaceAfter=3,
            textColor=HexColor(look.FLAVOUR_COLOUR["C"]),
        ),
        "ref_li": ParagraphStyle(
            "ref_li",
            parent=body,
            fontSize=11.2,
            leading=14.4,
            leftIndent=10,
            bulletIndent=0,
            spaceAfter=2.5,
        ),
    }


def _rules_story(width: float, styles: dict[str, Any]) -> list[Any]:
    from reportlab.platypus import Paragraph, Spacer

    Shapes = _shapes_flowable()
    figures = _figure_games()
    story: list[Any] = [Paragraph(RULES_TITLE, styles["title"])]
    for kind, text in RULES:
        if kind == "h":
            story.append(Paragraph(text, styles["h"]))  # keepWithNext
        elif kind == "li":
            story.append(Paragraph(text, styles["li"], bulletText="•"))
        elif kind == "p":
            story.append(Paragraph(text, styles["p"]))
        else:
            if text == "flavours":
                items, w, h = _flavour_legend()
                figure = Shapes(items, w, h, width * 0.92)
            else:
                figure = _board_figure(figures[text], width, styles)
            story += [Spacer(1, 3), figure, Spacer(1, 6)]
    return story


def _reference_page(c: Any, sheet: _Sheet, styles: dict[str, Any]) -> None:
    from reportlab.platypus import Frame, Paragraph

    margin = 16 * MM
    width = sheet.width - 2 * margin
    top = sheet.height - margin
    painter = Painter(c)
    # Title band.
    c.setFillColor(painter.colour(look.FLAVOUR_COLOUR["C"]))
    c.rect(margin, top - 14 * MM, width, 14 * MM, stroke=0, fill=1)
    c.setFillColor(painter.colour("#ffffff"))
    c.setFont("Helvetica-Bold", 20)
    c.drawString(margin + 5 * MM, top - 9.5 * MM, REFERENCE_TITLE)
    c.setFont("Helvetica", 9)
    c.drawRightString(margin + width - 5 * MM, top - 9 * MM, "2-4 players · 60 cards for two")
    # Flavours.
    items, w, h = _flavour_legend()
    legend_w = width
    painter.draw(items, margin, top - 18 * MM, legend_w / w)
    legend_bottom = top - 18 * MM - h * legend_w / w
    # Two columns of text.
    gap = 8 * MM
    col_w = (width - gap) / 2
    deck_items, dw, dh = _deck_legend()
    deck_w = width * 0.8
    deck_h = dh * deck_w / dw
    text_bottom = margin + deck_h + 8 * MM
    for i, column in enumerate(REFERENCE):
        story: list[Any] = []
        for heading, lines in column:
            story.append(Paragraph(heading, styles["ref_h"]))
            story.extend(Paragraph(line, styles["ref_li"], bulletText="•") for line in lines)
        frame = Frame(
            margin + i * (col_w + gap),
            text_bottom,
            col_w,
            legend_bottom - 2 * MM - text_bottom,
            leftPadding=0,
            rightPadding=0,
            topPadding=0,
            bottomPadding=0,
        )
        frame.addFromList(story, c)
        if story:
            raise RuntimeError("the reference card does not fit on one page")
    c.setFillColor(painter.colour(look.INK))
    c.setFont("Helvetica-Bold", 10)
    c.drawString(margin, margin + deck_h + 3 * MM, "Decks (border, mark and back of every card)")
    painter.draw(deck_items, margin, margin + deck_h, deck_w / dw)


# -- the document ---------------------------------------------------------------------------


def make_pdf(paper: str = "a4", decks: int = 2, backs: bool = False) -> tuple[bytes, PdfInfo]:
    """The print-and-play PDF as bytes, and what it holds.

    ``paper`` is ``a4`` or ``letter``; ``decks`` 1 to 4 (two for the 60 cards
    of a two-player game); ``backs`` adds a mirrored sheet of backs after each
    sheet of cards, for double-sided printing.
    """
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}")
    if not 1 <= decks <= MAX_DECKS:
        raise ValueError(f"decks must be from 1 to {MAX_DECKS}")
    from reportlab import rl_config
    from reportlab.platypus import (
        BaseDocTemplate,
        Frame,
        NextPageTemplate,
        PageBreak,
        PageTemplate,
        Spacer,
    )

    from .. import __version__

    rl_config.invariant = 1
    sheet = _Sheet(paper)
    cards = deck_cards(decks)
    sheets: list[tuple[list[tuple[int, str]], bool, str]] = []  # cards, back, footer
    for page in range(card_pages_needed(decks)):
        chunk = cards[page * CARDS_PER_PAGE : (page + 1) * CARDS_PER_PAGE]
        first, last = page * CARDS_PER_PAGE + 1, page * CARDS_PER_PAGE + len(chunk)
        in_decks = sorted({d for d, _ in chunk})
        sheets.append(
            (
                chunk,
                False,
                _card_footer(first, last, len(cards), in_decks, page + 1, card_pages_needed(decks)),
            )
        )
        if backs:
            footer = (
                f"{TITLE} · backs of sheet {page + 1} (cards {first}–{last}): print on "
                "its reverse, flipping on the long edge"
            )
            sheets.append((chunk, True, footer))

    out = io.BytesIO()
    doc = BaseDocTemplate(
        out,
        pagesize=(sheet.width, sheet.height),
        invariant=1,
        pageCompression=1,
        title=TITLE,
        author="donutbox",
        subject=f"The cards, rules and reference card ({paper}, {decks} decks)",
        creator=f"donutbox {__version__}",
        keywords="donutbox, print-and-play, card game",
    )
    styles = _styles()
    margin = 18 * MM
    width = sheet.width - 2 * margin

    def draw_sheet(canvas: Any, _doc: Any) -> None:
        chunk, back, footer = sheets[canvas.getPageNumber() - 1]
        _card_page(Painter(canvas), sheet, chunk, back, footer)

    def rules_footer(canvas: Any, _doc: Any) -> None:
        canvas.setFillColor(Painter(canvas).colour("#6b5d52"))
        canvas.setFont("Helvetica", 8)
        n = canvas.getPageNumber() - len(sheets)
        canvas.drawString(margin, 10 * MM, f"{RULES_TITLE} · rules page {n}")

    def draw_reference(canvas: Any, _doc: Any) -> None:
        _reference_page(canvas, sheet, styles)

    full = Frame(0, 0, sheet.width, sheet.height, id="full")
    text = Frame(
        margin,
        margin,
        width,
        sheet.height - 2 * margin,
        leftPadding=0,
        rightPadding=0,
        topPadding=0,
        bottomPadding=0,
        id="text",
    )
    doc.addPageTemplates(
        [
            PageTemplate("cards", [full], onPage=draw_sheet),
            PageTemplate("rules", [text], onPage=rules_footer),
            PageTemplate("reference", [full], onPage=draw_reference),
        ]
    )
    story: list[Any] = []
    for i in range(len(sheets)):
        story.append(Spacer(1, 1))
        if i == len(sheets) - 1:
            story.append(NextPageTemplate("rules"))
        story.append(PageBreak())
    story.extend(_rules_story(width, styles))
    story += [NextPageTemplate("reference"), PageBreak(), Spacer(1, 1)]
    doc.build(story)
    pages = doc.page
    info = PdfInfo(
        paper=paper,
        decks=decks,
        cards=len(cards),
        card_pages=card_pages_needed(decks),
        back_pages=card_pages_needed(decks) if backs else 0,
        rules_pages=pages - len(sheets) - 1,
        reference_pages=1,
    )
    return out.getvalue(), info
