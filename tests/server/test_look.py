"""The donuts the web page draws (GET /api/look/donut/{key}.svg): each
letter at least 12 CSS px at the smallest size the page draws a donut
(board.js MIN_PX), inside the hole it sits in, dark on light (WCAG 4.5:1);
the printed donut (the PDF, ``donutbox render``) as it was designed."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from donutbox.render import svg
from donutbox.server.app import create_app

NS = "{http://www.w3.org/2000/svg}"
KEYS = ("C", "S", "H", "B", "R", "RC", "RS", "RH", "RB")
BOARD_JS = Path(__file__).resolve().parents[2] / "src/donutbox/server/static/board.js"
#: Liberation Sans Bold has Helvetica's metrics (the drawings ask for
#: Helvetica, Arial, ... in bold).
FONT = Path("/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf")


@pytest.fixture
def client(tmp_path: Path):  # type: ignore[no-untyped-def]
    with TestClient(create_app(f"sqlite:///{tmp_path / 'games.db'}")) as c:
        yield c


def _letter_and_hole(text: str) -> tuple[float, ET.Element, ET.Element]:
    """The drawing's width (its viewBox), its one letter and the circle
    drawn just before it (the hole)."""
    root = ET.fromstring(text.encode("utf-8"))
    _, _, width, height = (float(v) for v in (root.get("viewBox") or "").split())
    assert width == height
    shapes = list(root)
    at = [i for i, e in enumerate(shapes) if e.tag == f"{NS}text"]
    assert len(at) == 1
    hole = shapes[at[0] - 1]
    assert hole.tag == f"{NS}circle"
    return width, shapes[at[0]], hole


def _luminance(colour: str) -> float:
    """WCAG 2 relative luminance of #rrggbb."""

    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(int(colour[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_the_page_s_donut_letters_are_12_px_at_the_smallest_donut(client: TestClient) -> None:
    found = re.search(r"export const MIN_PX = (\d+(?:\.\d+)?);", BOARD_JS.read_text())
    assert found, "board.js names the smallest donut it draws"
    smallest = float(found.group(1))
    for key in KEYS:
        r = client.get(f"/api/look/donut/{key}.svg")
        assert r.status_code == 200
        width, letter, hole = _letter_and_hole(r.text)
        assert letter.text == key[-1]
        size = float(letter.get("font-size") or 0)
        assert size / width >= 0.30, key  # 12 px of a 40 px donut
        assert smallest * size / width >= 12, key
        assert _contrast(letter.get("fill") or "", hole.get("fill") or "") >= 4.5, key


def test_the_page_s_donut_letters_lie_inside_their_hole(client: TestClient) -> None:
    if not FONT.exists():
        pytest.skip(f"{FONT} is not installed (fonts-liberation)")
    from PIL import ImageFont

    for key in KEYS:
        _, letter, hole = _letter_and_hole(client.get(f"/api/look/donut/{key}.svg").text)
        size = float(letter.get("font-size") or 0)
        x, y = float(letter.get("x") or 0), float(letter.get("y") or 0)
        cx, cy, r = (float(hole.get(a) or 0) for a in ("cx", "cy", "r"))
        assert letter.get("text-anchor") == "middle"
        # The glyph's ink, in drawing units: 100 pixels an em, scaled.
        font = ImageFont.truetype(str(FONT), 100)
        left, top, right, bottom = font.getbbox(letter.text or "", anchor="ms")
        corners = [
            (x + px * size / 100, y + py * size / 100)
            for px in (left, right)
            for py in (top, bottom)
        ]
        for px, py in corners:
            assert (px - cx) ** 2 + (py - cy) ** 2 < r**2, (key, px, py, r)


def test_printed_donuts_are_drawn_as_designed() -> None:
    # The PDF's legend and `donutbox render` keep their letter, a fifth of
    # the donut, in a hole of 13.5 (the drawing before the screen's
    # lettering existed, byte for byte).
    for f in "CSHBR":
        assert (
            '<circle cx="50" cy="50" r="13.5" fill="#fff7e8"/><text x="50" y="57" '
            f'font-size="20" fill="#2b1d14" text-anchor="middle">{f}</text>'
        ) in svg.donut_svg(f)
    card = svg.card_svg("RCSH")
    assert card.count('font-size="20"') == 4 and 'r="13.5"' in card
