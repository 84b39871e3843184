"""The print-and-play PDF, checked by parsing it (pypdf) and by rendering its
pages (pypdfium2, or poppler's pdftoppm).

The expected numbers are worked out here from the print layout, not read
back from the code: 3 x 4 cards of 60 mm a sheet, centred on the paper;
30 cards a deck (docs/spec.md, "Components", copied by hand below)."""

from __future__ import annotations

import io
import math
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("reportlab")
pypdf = pytest.importorskip("pypdf")

from donutbox.render import pdf  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

# docs/spec.md, "Components", by hand: halves, threes, rainbows, rolls.
DECK = Counter(
    ["CCSS", "CCHH", "CCBB", "SSHH", "SSBB", "HHBB"] * 2
    + ["CCSH", "SSHB", "HHBC", "BBCS", "CCBH", "SSBH"]
    + ["CSHB", "CSBH", "CHSB", "CHBS"]
    + ["RCSH", "RHSC", "RCSB", "RBCS", "RCHB", "RBHC", "RSHB", "RBSH"]
)
PER_SHEET = 12
PAPER_MM = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
GREEN = (0x00, 0x9E, 0x73)
RED = (0xD5, 0x5E, 0x00)


@pytest.fixture(scope="module")
def a4() -> bytes:
    data, _info = pdf.make_pdf("a4", 2, backs=False)
    return data


@pytest.fixture(scope="module")
def letter_made() -> tuple[bytes, pdf.PdfInfo]:
    return pdf.make_pdf("letter", 1, backs=True)


@pytest.fixture(scope="module")
def letter_backs(letter_made: tuple[bytes, pdf.PdfInfo]) -> bytes:
    return letter_made[0]


def _pixels(image: Any) -> list[tuple[int, int, int]]:
    data = image.convert("RGB").tobytes()
    return list(zip(data[0::3], data[1::3], data[2::3], strict=True))


_TEXTS: dict[bytes, list[str]] = {}


def _texts(data: bytes) -> list[str]:
    """The text of every page (parsed once per document: pypdf is slow)."""
    if data not in _TEXTS:
        reader = pypdf.PdfReader(io.BytesIO(data))
        _TEXTS[data] = [page.extract_text() or "" for page in reader.pages]
    return _TEXTS[data]


def _faces(text: str) -> list[str]:
    return re.findall(r"^[CSHBR]{4}$", text, flags=re.M)


def _render(data: bytes, index: int, dpi: int = 72) -> Any:
    """Page ``index`` as an RGB image, 1 pixel per point at 72 dpi."""
    try:
        import pypdfium2
    except ImportError:
        pypdfium2 = None
    if pypdfium2 is not None:
        doc = pypdfium2.PdfDocument(data)
        return doc[index].render(scale=dpi / 72).to_pil().convert("RGB")
    if shutil.which("pdftoppm") is None:
        pytest.skip("needs pypdfium2 or pdftoppm to render a page")
    from PIL import Image

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.pdf"
        src.write_bytes(data)
        n = str(index + 1)
        subprocess.run(
            ["pdftoppm", "-png", "-r", str(dpi), "-f", n, "-l", n, str(src), f"{tmp}/p"],
            check=True,
            timeout=60,
        )
        (png,) = Path(tmp).glob("p*.png")
        return Image.open(png).convert("RGB")


def _slot_centre(paper: str, col: int, row: int) -> tuple[float, float]:
    """Centre of a card slot in points from the top-left of the page."""
    w, h = PAPER_MM[paper]
    left = (w - 3 * 60) / 2
    top = (h - 4 * 60) / 2
    mm = 72 / 25.4
    return (left + 60 * col + 30) * mm, (top + 60 * row + 30) * mm


def _near(a: tuple[int, ...], b: tuple[int, ...], tol: int = 12) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


# -- structure -------------------------------------------------------------------------


def test_a4_two_decks_has_the_right_pages(a4: bytes) -> None:
    texts = _texts(a4)
    sheets = math.ceil(2 * 30 / PER_SHEET)  # 5
    rules = [i for i, t in enumerate(texts) if "rules page" in t]
    assert rules == list(range(sheets, sheets + len(rules)))
    assert 2 <= len(rules) <= 6
    assert len(texts) == sheets + len(rules) + 1
    assert "reference card" in texts[-1]
    reader = pypdf.PdfReader(io.BytesIO(a4))
    box = reader.pages[0].mediabox
    assert abs(float(box.width) - 210 * 72 / 25.4) < 0.5
    assert abs(float(box.height) - 297 * 72 / 25.4) < 0.5


def test_every_card_is_printed_once_per_deck(a4: bytes) -> None:
    texts = _texts(a4)
    per_sheet = [_faces(t) for t in texts[:5]]
    assert [len(f) for f in per_sheet] == [12] * 5
    everything = Counter(face for faces in per_sheet for face in faces)
    assert everything == DECK + DECK
    assert sum(everything.values()) == 60
    # no card faces outside the card sheets
    assert all(not _faces(t) for t in texts[5:])


def test_letter_with_backs_interleaves_mirrored_back_sheets(letter_backs: bytes) -> None:
    texts = _texts(letter_backs)
    sheets = math.ceil(30 / PER_SHEET)  # 3: 12, 12 and 6 cards
    fronts = texts[0 : 2 * sheets : 2]
    backs = texts[1 : 2 * sheets : 2]
    assert [len(_faces(t)) for t in fronts] == [12, 12, 6]
    assert Counter(f for t in fronts for f in _faces(t)) == DECK
    assert [t.count("green deck") for t in backs] == [12, 12, 6]
    assert all("backs of sheet" in t for t in backs)
    rules = sum("rules page" in t for t in texts)
    assert len(texts) == 2 * sheets + rules + 1
    reader = pypdf.PdfReader(io.BytesIO(letter_backs))
    assert [round(float(v)) for v in reader.pages[0].mediabox[2:]] == [612, 792]


def test_same_arguments_give_identical_bytes(a4: bytes) -> None:
    again, _info = pdf.make_pdf("a4", 2, backs=False)
    assert again == a4


def test_info_matches_the_document(letter_made: tuple[bytes, pdf.PdfInfo]) -> None:
    data, info = letter_made
    assert info.pages == len(pypdf.PdfReader(io.BytesIO(data)).pages)
    assert (info.cards, info.card_pages, info.back_pages) == (30, 3, 3)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        pdf.make_pdf("a3", 2)
    with pytest.raises(ValueError):
        pdf.make_pdf("a4", 0)
    with pytest.raises(ValueError):
        pdf.make_pdf("a4", 5)


# -- the rules ----------------------------------------------------------------------------


def test_rules_text_is_present_and_agrees_with_the_docs(a4: bytes) -> None:
    texts = _texts(a4)
    rules = " ".join(t for t in texts if "rules page" in t)
    rules = re.sub(r"\s+", " ", rules)
    docs = (ROOT / "docs" / "rules.md").read_text()
    for phrase in (
        "How to play donutbox",
        "One Good Match",
        "Perfect Match",
        "Squared Away",
        "Splitzkies",
        "Coffee's For Closers",
        "Box it",
        "Final Lap",
        "Cinnamon Roll",
        "majority holders",
        "boxes delivered",
    ):
        assert phrase in rules, phrase
        assert phrase.lower() in docs.lower(), phrase
    for section in ("Setup", "Matching", "The Cinnamon Roll", "A turn", "The end"):
        assert section in rules, section
    # the facts that decide scores, in the project's words
    assert "1 point per donut" in rules
    assert "at least half" in rules


def test_reference_card_is_one_page_with_turn_variants_and_scoring(a4: bytes) -> None:
    last = re.sub(r"\s+", " ", _texts(a4)[-1])
    for phrase in (
        "reference card",
        "Your turn",
        "Play a card",
        "Box it",
        "Swap",
        "Pass",
        "Variants",
        "Perfect Match",
        "Splitzkies",
        "Coffee's For Closers",
        "Scoring",
        "1 point a donut",
        "Final Lap",
    ):
        assert phrase in last, phrase


# -- pixels -----------------------------------------------------------------------------------


def test_card_slots_are_drawn_and_margins_are_blank(a4: bytes) -> None:
    image = _render(a4, 0)
    mm = 72 / 25.4
    for row in range(4):
        for col in range(3):
            cx, cy = _slot_centre("a4", col, row)
            # the middle of each quadrant (its donut's letter disc) is not white
            for dx in (-15, 15):
                for dy in (-15, 15):
                    px = image.getpixel((round(cx + dx * mm), round(cy + dy * mm)))
                    assert px != (255, 255, 255), (col, row, dx, dy)
            # most of the slot is ink, not paper
            box = image.crop(
                (round(cx - 28 * mm), round(cy - 28 * mm), round(cx + 28 * mm), round(cy + 28 * mm))
            )
            pixels = _pixels(box)
            white = sum(1 for p in pixels if min(p) >= 250)
            assert white / len(pixels) < 0.05
    # paper beyond the bleed and the cut marks stays white
    assert image.getpixel((round(5 * mm), round(150 * mm))) == (255, 255, 255)
    assert image.getpixel((round(205 * mm), round(150 * mm))) == (255, 255, 255)


def test_border_is_in_the_deck_colour(a4: bytes) -> None:
    # Sheet 3 holds cards 25-36: 25-30 are the last green ones (slots 0-5),
    # 31-36 the first red ones (slots 6-11, rows 2 and 3).
    image = _render(a4, 2)
    mm = 72 / 25.4
    for slot, colour in ((0, GREEN), (5, GREEN), (6, RED), (11, RED)):
        col, row = slot % 3, slot // 3
        cx, cy = _slot_centre("a4", col, row)
        band = image.getpixel((round(cx - 28.5 * mm), round(cy)))  # 1.5 mm inside the edge
        assert _near(band, colour), (slot, band)


def test_empty_slots_of_the_last_sheet_stay_blank(letter_backs: bytes) -> None:
    # One deck: sheet 3 (page 5, after two fronts and two backs) has cards
    # 25-30 in slots 0-5; slots 6-11 are empty.
    image = _render(letter_backs, 4)
    mm = 72 / 25.4
    for slot in range(12):
        col, row = slot % 3, slot // 3
        cx, cy = _slot_centre("letter", col, row)
        box = image.crop(
            (round(cx - 20 * mm), round(cy - 20 * mm), round(cx + 20 * mm), round(cy + 20 * mm))
        )
        inked = sum(1 for p in _pixels(box) if min(p) < 250)
        if slot < 6:
            assert inked > 0.5 * box.width * box.height, slot
        else:
            assert inked == 0, slot


def test_back_sheets_are_the_deck_colour(letter_backs: bytes) -> None:
    image = _render(letter_backs, 1)
    for slot in range(12):
        cx, cy = _slot_centre("letter", slot % 3, slot // 3)
        corner = image.getpixel((round(cx - 25 * 72 / 25.4), round(cy - 25 * 72 / 25.4)))
        assert _near(corner, GREEN), (slot, corner)


def test_backs_are_mirrored_left_to_right() -> None:
    # Two cards (slots 0 and 1, top row) of different decks: on the back sheet
    # the first must be behind slot 0 after a flip on the long edge, i.e.
    # drawn in the top-right slot, the second in the top-middle one.
    from reportlab.pdfgen.canvas import Canvas

    out = io.BytesIO()
    sheet = pdf._Sheet("a4")
    canvas = Canvas(out, pagesize=(sheet.width, sheet.height), invariant=1)
    pdf._card_page(pdf.Painter(canvas), sheet, [(0, "CCSS"), (1, "SSHH")], True, "backs")
    canvas.showPage()
    canvas.save()
    image = _render(out.getvalue(), 0)
    mm = 72 / 25.4

    def corner(col: int) -> tuple[int, ...]:
        cx, cy = _slot_centre("a4", col, 0)
        return image.getpixel((round(cx - 25 * mm), round(cy - 25 * mm)))

    assert _near(corner(2), GREEN)
    assert _near(corner(1), RED)
    assert corner(0) == (255, 255, 255)
