"""``donutbox print`` and ``donutbox render`` through the real ``main``:
exit statuses, one-line messages, files written whole or not at all.

``build_parser`` is wrapped here to add the commands with ``add_commands``
if the parser does not have them (``cli/parser.py`` registers them: the
wrapper then adds nothing).
"""

from __future__ import annotations

import argparse
import io
import json
import re
from pathlib import Path

import pytest

from donutbox import cli
from donutbox.render.commands import add_commands, cairo_missing

DATA = Path(__file__).resolve().parents[1] / "data"
SEAL = DATA / "seal-two-runs.json"  # 8 moves, ends 26-14 (tests/data/README.md)


@pytest.fixture(autouse=True)
def _with_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    original = cli.build_parser

    def build() -> object:
        parser = original()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        if "render" not in sub.choices:
            add_commands(sub, cli._Parser)
        return parser

    monkeypatch.setattr(cli, "build_parser", build)


def _needs_cairo() -> None:
    """Skip, with the reason, where PNG cannot be made: cairosvg missing, or
    installed without the C library libcairo (its import then raises
    OSError, which ``importorskip`` does not catch)."""
    reason = cairo_missing()
    if reason is not None:
        pytest.skip(reason)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def assert_refused(status: int, out: str, err: str, folder: Path) -> None:
    assert status == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].strip(), err
    assert list(folder.iterdir()) == [], "nothing may be written for bad input"


# -- help ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["print", "render"])
def test_help(capsys: pytest.CaptureFixture[str], command: str) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: donutbox {command}")
    assert "--out" in out


def test_top_level_help_lists_both(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "print" in out and "render" in out


# -- print --------------------------------------------------------------------------------


def test_print_writes_a_pdf(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pypdf = pytest.importorskip("pypdf")
    out = tmp_path / "cards.pdf"
    status, stdout, err = run(
        capsys, "print", "--paper", "letter", "--decks", "1", "--out", str(out)
    )
    assert status == 0 and stdout == ""
    assert err.startswith(f"wrote {out}")
    data = out.read_bytes()
    assert data.startswith(b"%PDF-")
    pages = len(pypdf.PdfReader(io.BytesIO(data)).pages)
    # 30 cards: 3 sheets of 12, + rules + 1 reference card; the message says how many
    assert re.search(rf"\b{pages} pages\b", err)
    assert "30 cards on 3 sheets" in err
    assert [p.name for p in tmp_path.iterdir()] == ["cards.pdf"]  # no temporary file left


@pytest.mark.parametrize(
    "args",
    [
        ["--decks", "0"],
        ["--decks", "5"],
        ["--decks", "two"],
        ["--paper", "a3"],
        ["--out", "cards.txt"],
        ["--out", "missing-folder/cards.pdf"],
        ["--colour"],
    ],
)
def test_print_refuses_bad_arguments(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert_refused(*run(capsys, "print", *args), tmp_path)


def test_print_into_a_directory_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "x.pdf"
    target.mkdir()
    status, out, err = run(capsys, "print", "--out", str(target))
    assert status == 2 and out == "" and "directory" in err
    assert list(target.iterdir()) == []


# -- render -------------------------------------------------------------------------------


def _svg_size(text: str) -> tuple[int, int]:
    m = re.search(r'<svg [^>]*width="(\d+)" height="(\d+)"', text)
    assert m, text[:200]
    return int(m.group(1)), int(m.group(2))


def test_render_svg_and_png_agree_in_size(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _needs_cairo()
    from PIL import Image

    svg_path, png_path, png2 = tmp_path / "a.svg", tmp_path / "a.png", tmp_path / "b.png"
    assert run(capsys, "render", str(SEAL), "--out", str(svg_path))[0] == 0
    assert run(capsys, "render", str(SEAL), "--out", str(png_path))[0] == 0
    assert run(capsys, "render", str(SEAL), "--out", str(png2), "--scale", "2")[0] == 0
    text = svg_path.read_text(encoding="utf-8")
    assert text.startswith("<?xml")
    width, height = _svg_size(text)
    # 6 x 6 cells (hand-worked: eight cards round SHHS, x 0..5, y -2..3),
    # caption of 5 lines: see test_svg.py for the layout constants
    assert height == 16 + 22 + 6 * 50 + 16 + 5 * 22 + 16
    with Image.open(png_path) as png, Image.open(png2) as big:
        assert png.format == "PNG" and png.size == (width, height)
        assert big.size == (2 * width, 2 * height)


def test_two_renders_are_identical(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _needs_cairo()
    for name in ("1.svg", "2.svg", "1.png", "2.png"):
        assert run(capsys, "render", str(SEAL), "--ply", "5", "--out", str(tmp_path / name))[0] == 0
    assert (tmp_path / "1.svg").read_bytes() == (tmp_path / "2.svg").read_bytes()
    assert (tmp_path / "1.png").read_bytes() == (tmp_path / "2.png").read_bytes()


def test_render_ply_chooses_the_position(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    start, end = tmp_path / "0.svg", tmp_path / "8.svg"
    assert run(capsys, "render", str(SEAL), "--ply", "0", "--out", str(start))[0] == 0
    assert run(capsys, "render", str(SEAL), "--ply", "8", "--out", str(end))[0] == 0
    first, last = start.read_text(), end.read_text()
    assert "after 0 moves" in first and "Last move" not in first
    assert "after 8 moves" in last and "Last move: CCCC@2,-2/0 by B" in last
    assert "A: 26 points" in last


def test_render_reads_standard_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Stdin:
        buffer = io.BytesIO(SEAL.read_bytes())

    monkeypatch.setattr("sys.stdin", Stdin)
    out = tmp_path / "x.svg"
    assert run(capsys, "render", "-", "--out", str(out))[0] == 0
    assert "A: 26 points" in out.read_text()


def test_render_illegal_move_draws_the_position_before_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # perfect-illegal (tests/data/README.md): ply 2, HHCC@2,2/0, breaks Perfect Match.
    out = tmp_path / "x.svg"
    status, stdout, err = run(
        capsys, "render", str(DATA / "perfect-illegal.json"), "--out", str(out)
    )
    assert status == 1 and stdout == ""
    # The third move (0-based ply 2), named both ways, in the one error style.
    assert "donutbox render: move 3 (ply 2, HHCC@2,2/0) is illegal" in err
    assert "Perfect Match" in err
    text = out.read_text()
    assert "after 2 moves" in text and "Stopped early" in text


@pytest.mark.parametrize(
    "args",
    [
        [str(DATA / "bad-format.json"), "--out", "x.svg"],
        [str(DATA / "bad-move.json"), "--out", "x.png"],
        [str(DATA / "bad-two-r-deck.json"), "--out", "x.svg"],
        ["missing.json", "--out", "x.svg"],
        [str(SEAL), "--out", "x.jpg"],
        [str(SEAL), "--out", "x.svg", "--ply", "9"],
        [str(SEAL), "--out", "x.svg", "--ply", "-1"],
        [str(SEAL), "--out", "x.svg", "--scale", "2"],
        [str(SEAL), "--out", "x.png", "--scale", "100"],
        [str(SEAL), "--out", "no-such-folder/x.svg"],
        [str(SEAL)],
    ],
)
def test_render_refuses_bad_input(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert_refused(*run(capsys, "render", *args), tmp_path)


def test_render_refuses_a_non_object_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    bad = tmp_path.parent / f"{tmp_path.name}-list.json"
    bad.write_text(json.dumps([1, 2]))
    try:
        assert_refused(*run(capsys, "render", str(bad), "--out", "x.svg"), tmp_path)
    finally:
        bad.unlink()


class _NoCairo:
    """Stands in for a machine where cairosvg is installed but the C library
    libcairo is not: importing cairosvg then raises OSError, as cairocffi
    does when ``dlopen`` finds no ``libcairo.so.2``."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in ("cairosvg", "cairocffi"):
            raise OSError('no library called "cairo-2" was found')
        return None


def test_render_png_without_libcairo_names_the_fix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    for name in list(sys.modules):
        if name.partition(".")[0] in ("cairosvg", "cairocffi"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NoCairo(), *sys.meta_path])
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "render", str(SEAL), "--out", "x.png")
    assert_refused(status, out, err, tmp_path)
    assert err.startswith("donutbox render: ")
    assert "apt-get install libcairo2" in err
    assert "pip install" not in err  # cairosvg itself is there: not the fix
    # The SVG needs no cairo at all.
    assert run(capsys, "render", str(SEAL), "--out", "x.svg")[0] == 0


def test_render_png_without_cairosvg_names_the_package(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "cairosvg", None)  # import raises ImportError
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "render", str(SEAL), "--out", "x.png")
    assert_refused(status, out, err, tmp_path)
    assert "pip install cairosvg" in err
