"""``donutbox analyse RECORD``: the AI's opinion of every move of a game
(the logic is ``ai/analysis.py``; the JSON is documented in docs/ai.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .ai.analysis import DEFAULT_SECONDS, MARKS, analyse_game, to_json
from .usage import UsageError, check_seed, one_line, position, read_record

MAX_SECONDS = 60.0
PLURAL = {"blunder": "blunders", "mistake": "mistakes", "inaccuracy": "inaccuracies"}


def add_analyse(sub: Any) -> None:
    """Register the ``analyse`` subcommand on ``build_parser``'s subparsers."""
    p = sub.add_parser(
        "analyse",
        help="the AI's opinion of every move of a game",
        description="For each move of the game, searched from the mover's own view "
        "(never the hidden cards): the mover's estimated winning chance with the best "
        "move found and with the move played, the best move, and a mark: inaccuracy, "
        "mistake or blunder for a drop of 0.10, 0.20 or 0.30, or a loss of 8.0, 16.2 or "
        "24.8 points, whichever is worse. Progress on standard error; the table (or "
        "--json) on standard output.",
    )
    p.add_argument("record", help="a game record (JSON file, or - for standard input)")
    p.add_argument(
        "--seconds",
        type=float,
        default=DEFAULT_SECONDS,
        help=f"CPU seconds of search per move (default {DEFAULT_SECONDS:g})",
    )
    p.add_argument("--seed", type=int, default=0, help="search seed, 0 to 2**64-1 (default 0)")
    p.add_argument("--json", action="store_true", help="print the analysis as JSON")
    p.add_argument("--out", metavar="FILE", help="also draw the winning-chance graph (.png/.svg)")
    p.set_defaults(func=cmd_analyse)


def cmd_analyse(args: argparse.Namespace) -> int:
    if not 0 < args.seconds <= MAX_SECONDS:
        raise UsageError(f"--seconds must be more than 0 and at most {MAX_SECONDS:g}")
    check_seed(args.seed)
    out = Path(args.out) if args.out else None
    if out is not None:
        if out.suffix.lower() not in (".png", ".svg"):
            raise UsageError(f"--out {out}: name a .png or .svg file")
        if out.is_dir():
            raise UsageError(f"--out {out}: it is a folder; name a file")
        if not out.parent.is_dir():
            raise UsageError(f"--out {out}: no folder {out.parent}")
    game, illegal = position(read_record(args.record))
    if illegal:  # exit status 1, as replay, show, moves, render and perft say it
        print(one_line(f"donutbox analyse: {illegal}; nothing analysed"), file=sys.stderr)
        return 1
    if game.free:
        raise UsageError("a free game (analysis board) cannot be analysed: it has no trays")
    total = len(game.history)

    def progress(done: int, of: int) -> None:
        print(f"analyse: move {done} of {of}", file=sys.stderr, flush=True)

    print(
        f"analyse: {total} moves, {args.seconds:g} CPU-second(s) each", file=sys.stderr, flush=True
    )
    analysis = analyse_game(game, seconds=args.seconds, seed=args.seed, progress=progress)
    if out is not None:
        try:
            from .lab.plots import plot_analysis

            plot_analysis(game, analysis, str(out))
        except OSError as err:
            raise UsageError(f"cannot write {out}: {err.strerror or err}") from None
    if args.json:
        budget = {"seconds": args.seconds, "clock": "cpu", "seed": args.seed}
        print(json.dumps(to_json(game, analysis, budget), indent=2))
        return 0
    names = game.names
    # The player column as wide as the longest name (names may be 40
    # characters: cut past 24), so that "heuristic (1)" and "heuristic (2)"
    # stay apart.
    w = max(6, min(24, max(len(n) for n in names)))
    print(f"{'move':>4}  {'player':<{w}} {'played':<18} {'chance':>13}  {'best':<18} mark")
    for a in analysis:
        best = "" if a.best == a.move else f"{a.best} ({a.best_value:.2f})"
        print(
            f"{a.ply + 1:>4}  {names[a.player][:w]:<{w}} {a.move:<18} "
            f"{a.before:.2f} -> {a.after:.2f}  {best:<18} {a.mark or ''}"
        )
    for p, name in enumerate(names):
        mine = [a.mark for a in analysis if a.player == p]
        counts = ", ".join(
            f"{k} {m if k == 1 else PLURAL[m]}" for m, _ in MARKS for k in [mine.count(m)]
        )
        print(f"{name}: {counts}")
    if out is not None:
        print(f"graph: {out}")
    return 0
