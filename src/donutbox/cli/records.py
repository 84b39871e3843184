"""The commands on game records: ``replay``, ``moves``, ``perft``, ``new`` and
``show``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..core import DonutboxError, RecordError
from ..core import replay_partial as replay_to_first_illegal
from ..core.record import dump
from ..summary import replay_summary, sorted_moves
from ..usage import UsageError, check_seed, position, printable, read_record
from .common import (
    _console,
    _deck_arg,
    _dump,
    _face_arg,
    _new_game,
    _rules_from,
    _warn_illegal,
    warn,
)

#: Perft beyond this would run for hours (depth 4 is ~10^8 paths midgame).
MAX_PERFT_DEPTH = 6


def cmd_replay(args: argparse.Namespace) -> int:
    record = read_record(args.record)
    game, error = replay_to_first_illegal(record)
    summary = replay_summary(game, error)
    if args.json:
        print(_dump(summary))
    else:
        from ..render.text import game_text

        _console().print(game_text(game))
        _warn_illegal("replay", error, "; showing the position before it")
    return 1 if error else 0


def cmd_moves(args: argparse.Namespace) -> int:
    record = read_record(args.record)
    cards = [_face_arg(f) for f in (args.card or [])]
    game, error = replay_to_first_illegal(record)
    if cards and not game.free:
        raise UsageError("--card is only for a free game (a dealt game uses the tray)")
    moves = [str(m) for m in sorted_moves(game.legal_moves(cards=cards))]
    if args.json:
        print(_dump({"moves": moves}))
    else:
        print("\n".join(moves))
    _warn_illegal("moves", error, "; listing the moves of the position before it")
    return 1 if error else 0


def cmd_perft(args: argparse.Namespace) -> int:
    from ..core import divide, perft

    record = read_record(args.record)
    if not 0 <= args.depth <= MAX_PERFT_DEPTH:
        raise UsageError(f"--depth must be from 0 to {MAX_PERFT_DEPTH}")
    game, error = replay_to_first_illegal(record)
    if error:
        _warn_illegal("perft", error, "; nothing counted")
        return 1
    try:  # perft itself refuses a free game, with the reason to print
        split = divide(game, args.depth) if args.divide and args.depth >= 1 else None
        nodes = perft(game, args.depth) if split is None else sum(split.values())
    except ValueError as err:
        raise RecordError(str(err)) from None
    if split is not None:
        order = [str(m) for m in sorted_moves(game.legal_moves())]
        counts = {m: split[m] for m in order}
        if args.json:
            print(_dump({"depth": args.depth, "nodes": nodes, "divide": counts}))
        else:
            for move, n in counts.items():
                print(f"{move} {n}")
            print(f"total {nodes}")
        return 0
    print(_dump({"depth": args.depth, "nodes": nodes}) if args.json else nodes)
    return 0


def _names_arg(text: str) -> list[str]:
    """``--names``: non-empty, printable and different names (two players
    called "Ann" would make records, logs and results ambiguous)."""
    names = [n.strip() for n in text.split(",")]
    if any(not n for n in names):
        raise UsageError("--names must be non-empty names separated by commas")
    for n in names:
        if not all(ch.isprintable() for ch in n):
            raise UsageError(
                f"--names: '{printable(n)}' holds a control character; names must be printable"
            )
    seen: dict[str, str] = {}
    for n in names:
        first = seen.get(n.casefold())
        if first == n:
            raise UsageError(
                f"--names: two players are called '{n}'; give each player a different name"
            )
        if first is not None:
            raise UsageError(
                f"--names: '{first}' and '{n}' differ only in case; "
                "give each player a different name"
            )
        seen[n.casefold()] = n
    return names


def cmd_new(args: argparse.Namespace) -> int:
    names: Sequence[str] | int = _names_arg(args.names) if args.names else args.players
    check_seed(args.seed)
    deck = _deck_arg(args.deck)
    try:
        game = _new_game(_rules_from(args), names, args.seed, deck)
    except DonutboxError:
        raise
    except ValueError as err:
        raise UsageError(str(err)) from None
    text = _dump(dump(game)) + "\n"
    if args.out:
        _write_new(Path(args.out), text)
        print(f"wrote {printable(args.out)} (seed {game.seed})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _write_new(path: Path, text: str) -> None:
    if path.is_dir():
        raise UsageError(f"--out {path}: it is a folder; name a file")
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {err.strerror or err}") from None


def cmd_show(args: argparse.Namespace) -> int:
    from ..render.text import LEGEND, game_text

    record = read_record(args.record)
    game, problem = position(record, args.ply)
    if problem:
        warn("show", problem + "; showing the position before it")
    console = _console(no_color=args.no_color)
    console.print(game_text(game, reveal=args.reveal))
    if not args.no_legend:
        console.print(LEGEND, style="dim")
    return 1 if problem else 0
