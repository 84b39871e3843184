"""SVG drawings: valid documents of the documented size, byte-identical for
the same input, and showing what they claim (owners, delivered boxes,
distinct donuts).  Expected values are worked out from the records by hand
(tests/data/README.md) and from the layout constants documented in svg.py."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from donutbox.core.replay import replay
from donutbox.render import look, svg

DATA = Path(__file__).resolve().parents[1] / "data"
NS = "{http://www.w3.org/2000/svg}"


def _game(name: str, ply: int | None = None):
    record = json.loads((DATA / name).read_text())
    return replay(record, ply)


def _root(text: str) -> ET.Element:
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == f"{NS}svg"
    return root


def _size(root: ET.Element) -> tuple[int, int]:
    w, h = root.get("width"), root.get("height")
    assert w is not None and h is not None and w.isdigit() and h.isdigit()
    assert root.get("viewBox") == f"0 0 {w} {h}"
    return int(w), int(h)


def test_start_position_has_the_documented_size() -> None:
    # seal-two-runs before any move: only the start card, 2 x 2 cells.
    # Caption: rules line + 2 players (no last move, not over) = 3 lines.
    game = _game("seal-two-runs.json", ply=0)
    width, height = _size(_root(svg.counter_svg(game)))
    board_h = 2 * 50
    assert height == 16 + 22 + board_h + 16 + 3 * 22 + 16
    # The board is only 2 cells wide: the caption sets the width.
    assert width >= max(360, 16 + 22 + 2 * 50 + 16)


def test_wide_board_sets_the_width() -> None:
    # A free game: nine CCCC cards in a row east of the start card, x = 0..19.
    record = {
        "format": "donutbox/1",
        "players": ["A", "B"],
        "start": "CCCC",
        "moves": [f"CCCC@{x},0/0" for x in range(2, 20, 2)],
    }
    game = replay(record)
    width, height = _size(_root(svg.counter_svg(game)))
    assert width == 16 + 22 + 20 * 50 + 16
    # rules + 2 players + last move = 4 caption lines; 2 rows of cells
    assert height == 16 + 22 + 2 * 50 + 16 + 4 * 22 + 16


def test_finished_game_has_the_documented_size() -> None:
    # seal-two-runs ends with cards from x=-2..5 (hand-worked: CCCS@0,-2 ...
    # SSSS@4,2 and the start card): the cells span x -> see below.
    game = _game("seal-two-runs.json")
    xs = [d.x for d in game.counter.donuts()]
    ys = [d.y for d in game.counter.donuts()]
    cols, rows = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
    # Eight 2x2 cards around SHHS at (0,0): x from 0 to 5, y from -2 to 3.
    assert (cols, rows) == (6, 6)
    root = _root(svg.counter_svg(game))
    width, height = _size(root)
    # rules + 2 players + "Game over." + last move = 5 caption lines.
    assert height == 16 + 22 + rows * 50 + 16 + 5 * 22 + 16
    assert width >= 16 + 22 + cols * 50 + 16


def test_same_input_gives_identical_bytes() -> None:
    a = svg.counter_svg(_game("seal-two-runs.json"))
    b = svg.counter_svg(_game("seal-two-runs.json"))
    assert a == b
    assert svg.card_svg("RCSH", 1) == svg.card_svg("RCSH", 1)


def _wash_cells(text: str) -> int:
    """How many cells the delivered wash covers (one closed square each)."""
    paths = re.findall(r'<path d="([^"]*)" fill="#ffffff" opacity="0.5"/>', text)
    return sum(p.count("Z") for p in paths)


def test_delivered_boxes_are_set_apart() -> None:
    # Hand-worked (tests/data/README.md): at ply 7 B's CCCC@2,-2 seals the H run
    # (1,0),(1,1),(2,0),(2,1) and the B run (3,0),(3,1),(4,0),(4,1): 8 cells.
    before = svg.counter_svg(_game("seal-two-runs.json", ply=7))
    after = svg.counter_svg(_game("seal-two-runs.json", ply=8))
    assert _wash_cells(before) == 0
    assert _wash_cells(after) == 8
    assert look.DELIVERED_OUTLINE in after and look.DELIVERED_OUTLINE not in before


def test_owners_are_shown_by_their_deck_colour() -> None:
    # Ply 1 of seal-two-runs: the neutral start card and A's HBBH.
    one = svg.counter_svg(_game("seal-two-runs.json", ply=1))
    assert look.NEUTRAL in one
    assert look.DECKS[0].colour in one
    # The caption swatches show both players' colours, the cards only A's so far:
    # A's colour appears as a card band as well as a swatch.
    assert one.count(f'fill="{look.DECKS[0].colour}"') > one.count(f'fill="{look.DECKS[1].colour}"')


def test_caption_has_names_scores_and_result() -> None:
    # seal-two-runs final score 26-14, delivered 2-1, A wins (tests/data/README.md).
    root = _root(svg.counter_svg(_game("seal-two-runs.json")))
    texts = [t.text or "" for t in root.iter(f"{NS}text")]
    assert "A: 26 points, 2 boxes delivered (winner)" in texts
    assert "B: 14 points, 1 box delivered" in texts
    assert "Game over." in texts


def test_hostile_names_stay_valid_xml() -> None:
    record = {
        "format": "donutbox/1",
        "players": ['<b>&"x"', "tab\tctl\x01\x7f"],
        "start": "CCSS",
        "moves": ["SSHH@0,2/0"],
    }
    game = replay(record)
    root = _root(svg.counter_svg(game))
    texts = " ".join(t.text or "" for t in root.iter(f"{NS}text"))
    assert '<b>&"x"' in texts
    assert "\x01" not in texts


def test_each_flavour_has_its_own_shape_and_letter() -> None:
    drawings = {f: svg.donut_svg(f) for f in "CSHBR"}
    # the shapes (everything but the letter) differ pairwise
    bodies = {f: re.sub(r"<text.*?</text>", "", d) for f, d in drawings.items()}
    assert len(set(bodies.values())) == 5
    for f, d in drawings.items():
        root = _root(d)
        letters = [t.text for t in root.iter(f"{NS}text")]
        assert letters == [f]
    locked = _root(svg.donut_svg("R", locked="B"))
    assert [t.text for t in locked.iter(f"{NS}text")] == ["B"]


def test_card_shows_its_face_deck_and_code() -> None:
    text = svg.card_svg("RCSH", deck=2)
    root = _root(text)
    letters = [t.text for t in root.iter(f"{NS}text")]
    assert letters == ["R", "C", "S", "H", "RCSH"]  # NW, NE, SE, SW, then the code
    assert look.DECKS[2].colour in text
    assert svg.back_svg(3).count(look.DECKS[3].colour) >= 1


def test_shared_groups_are_defined_once() -> None:
    text = svg.counter_svg(_game("seal-two-runs.json"))
    ids = re.findall(r'<g id="(s\d+)">', text)
    assert ids and len(ids) == len(set(ids))
    for ident in ids:
        assert f'xlink:href="#{ident}"' in text


def test_png_of_the_counter_shows_the_cards() -> None:
    from PIL import Image

    from donutbox.render.commands import cairo_missing, svg_to_png

    if cairo_missing():  # cairosvg without libcairo raises OSError on import
        pytest.skip(cairo_missing())

    game = _game("seal-two-runs.json", ply=0)
    text = svg.counter_svg(game)
    image = Image.open(io.BytesIO(svg_to_png(text))).convert("RGB")
    assert image.size == _size(_root(text))
    # The start card's band (neutral grey) at the middle of its left edge:
    # the board starts 16 + 22 px in; the band is 10 units = 5 px wide.
    left = top = 16 + 22
    assert image.getpixel((left + 2, top + 50)) == (0xA8, 0xA8, 0xA8)
    # Inside the card: not the backdrop.
    assert image.getpixel((left + 50, top + 50)) != (0xF4, 0xF1, 0xEC)


def test_palette_is_the_decks_and_flavours_as_json() -> None:
    # One palette for page, SVG and PDF: player i is deck i (green, orange,
    # purple, black, as the PDF's card backs are named), each with its mark.
    p = look.palette()
    assert json.loads(json.dumps(p)) == p
    assert [(d["name"], d["mark"]) for d in p["players"]] == [
        ("green", "circle"),
        ("orange", "triangle"),
        ("purple", "square"),
        ("black", "diamond"),
    ]
    assert [d["colour"] for d in p["players"]] == [d.colour for d in look.DECKS]
    assert p["players"][0]["colour"] == "#009e73"
    assert sorted(p["flavours"]) == ["B", "C", "H", "R", "S"]
    assert p["flavours"]["C"] == "#5c3317" and p["neutral"] == "#a8a8a8"
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in p["flavours"].values())
