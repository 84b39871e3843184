"""The ``print`` and ``render`` commands.

``add_commands`` adds them to the ``donutbox`` parser.  Each command takes the
parsed arguments and returns an exit status.  Bad arguments raise
``donutbox.usage.UsageError`` and unreadable records ``RecordError`` (both exit
status 2, one line, nothing written); output files are written whole or not
at all (a temporary file beside them, then a rename).

Importing this module is cheap: reportlab and cairosvg are imported only by
the command that needs them.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

#: Where ``donutbox print`` writes without ``--out``.
DEFAULT_PDF = "donutbox-print-and-play.pdf"
#: Limits of ``render --scale`` (PNG pixels per SVG pixel).
MIN_SCALE = 0.25
MAX_SCALE = 8.0


def add_commands(sub: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add ``print`` and ``render`` to ``sub`` (the action returned by
    ``add_subparsers``, which makes them with ``parser_class``; that class
    only has to be the one ``sub`` was made with)."""
    del parser_class  # sub.add_parser already builds sub-parsers of that class
    p = sub.add_parser(
        "print",
        help="write the print-and-play PDF (cards, rules, reference card)",
        description="Write a print-and-play PDF: every card of the standard decks "
        "(3 x 4 cards of 60 mm a sheet, cut marks, each deck's colour and mark on "
        "its border), optional backs for double-sided printing, the rules and a "
        "one-page reference card. Print it at 100% (actual size).",
    )
    p.add_argument(
        "--paper",
        choices=["a4", "letter"],
        default="a4",
        help="paper size (default a4)",
    )
    p.add_argument(
        "--decks",
        type=int,
        default=2,
        help="decks to print, 1 to 4, 30 cards each (default 2: the 60 cards for two "
        "players; one more per extra player)",
    )
    p.add_argument(
        "--backs",
        action="store_true",
        help="add a sheet of card backs after each sheet of cards, mirrored for "
        "double-sided printing (flip on the long edge)",
    )
    p.add_argument(
        "--out",
        default=DEFAULT_PDF,
        metavar="FILE.pdf",
        help=f"the PDF to write (default {DEFAULT_PDF})",
    )
    p.set_defaults(func=cmd_print)

    p = sub.add_parser(
        "render",
        help="draw a record's counter as SVG or PNG",
        description="Draw the counter of a game record after any number of moves: "
        "cards with their owners' colours, delivered boxes greyed and outlined, "
        "and a caption with the scores. An illegal move in the record stops the "
        "drawing before it (exit status 1).",
    )
    p.add_argument("record", help="record file, or - for standard input")
    p.add_argument("--ply", type=int, help="draw the position after this many moves (default all)")
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE.svg|FILE.png",
        help="the picture to write; its ending chooses SVG or PNG",
    )
    p.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help=f"PNG only: pixels per SVG pixel, {MIN_SCALE:g} to {MAX_SCALE:g} (default 1)",
    )
    p.set_defaults(func=cmd_render)


# -- print -------------------------------------------------------------------------------


def cmd_print(args: argparse.Namespace) -> int:
    from ..usage import UsageError
    from .pdf import MAX_DECKS

    if not 1 <= args.decks <= MAX_DECKS:
        raise UsageError(f"--decks must be from 1 to {MAX_DECKS}")
    out = Path(args.out)
    if out.suffix.lower() != ".pdf":
        raise UsageError("--out must name a .pdf file")
    try:
        from .pdf import make_pdf

        data, info = make_pdf(args.paper, args.decks, args.backs)
    except ImportError as err:
        raise UsageError(f"the PDF needs reportlab ({err}); pip install reportlab") from None
    write_atomic(out, data)
    from ..usage import plural, printable

    backs = f" and {info.back_pages} of backs" if info.back_pages else ""
    print(
        f"wrote {printable(str(out))}: {plural(info.pages, 'page')}: "
        f"{plural(info.cards, 'card')} on {plural(info.card_pages, 'sheet')}{backs}, "
        f"{plural(info.rules_pages, 'page')} of rules, a reference card",
        file=sys.stderr,
    )
    return 0


# -- render ------------------------------------------------------------------------------


def cmd_render(args: argparse.Namespace) -> int:
    from ..usage import UsageError, one_line, position, printable, read_record
    from .svg import counter_svg

    out = Path(args.out)
    kind = out.suffix.lower()
    if kind not in (".svg", ".png"):
        raise UsageError("--out must name a .svg or .png file")
    if not MIN_SCALE <= args.scale <= MAX_SCALE:
        raise UsageError(f"--scale must be from {MIN_SCALE:g} to {MAX_SCALE:g}")
    if kind == ".svg" and args.scale != 1.0:
        raise UsageError("--scale is for PNG output only")
    record = read_record(args.record)
    game, problem = position(record, args.ply)
    note = f"Stopped early: {problem}" if problem else ""
    text = counter_svg(game, note)
    data = text.encode("utf-8") if kind == ".svg" else svg_to_png(text, args.scale)
    write_atomic(out, data)
    print(f"wrote {printable(str(out))}", file=sys.stderr)
    if problem:
        print(one_line(f"donutbox render: {problem}; drew the position before it"), file=sys.stderr)
        return 1
    return 0


#: What to install when cairosvg cannot find the cairo library (Debian/Ubuntu).
CAIRO_FIX = "apt-get install libcairo2"


def cairo_missing() -> str | None:
    """Why PNG cannot be made here, in one line, or None when it can.

    cairosvg is a Python package, but it loads the C library libcairo when
    it is imported: with the package installed and the library missing the
    import raises OSError (not ImportError), so both are caught.  The tests
    use this to skip with the reason.
    """
    try:
        import cairosvg  # noqa: F401
    except ImportError:
        return "PNG needs the cairosvg package: pip install cairosvg (or write .svg)"
    except OSError:
        return f"PNG needs the cairo library, which is not installed: {CAIRO_FIX} (or write .svg)"
    return None


def svg_to_png(svg: str, scale: float = 1.0) -> bytes:
    """A PNG of an SVG document, through cairosvg (deterministic)."""
    from ..usage import UsageError

    reason = cairo_missing()
    if reason is not None:
        raise UsageError(reason)
    import cairosvg

    png = cairosvg.svg2png(bytestring=svg.encode("utf-8"), scale=scale)
    assert isinstance(png, bytes)
    return png


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (UsageError if it cannot)."""
    from ..usage import UsageError

    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a directory")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {err.strerror or err}") from None
