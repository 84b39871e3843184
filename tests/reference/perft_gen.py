"""Perft counts from the naive reference engine: writes tests/data/perft/positions.json.

Run from the repository root (either form works), niced, it takes a few
minutes::

    nice -n 15 python tests/reference/perft_gen.py
    nice -n 15 python -m tests.reference.perft_gen --only fresh-one-good-squared

For each position below it counts, with ``naive.NaiveGame`` only (brute-force
move listing, ``copy.deepcopy`` for every child, no shortcut of any kind), the
number of move sequences of each length 1..``depth`` (perft), and the count
under each first move at the top depth (divide).  It imports nothing from
``donutbox``: ``tests/core/test_perft.py`` checks the engine's
``donutbox.core.perft`` against the file this script writes.

Convention (the same as the engine's): ``perft(position, 0) == 1``; a finished
game has no moves, so it contributes 0 at every depth of 1 or more; a move is
an action as ``legal_moves`` lists it (docs/spec.md, 'Game records and notation'), so two rotations
that put the same donuts down are two moves.

The positions are data.  Each is a ``donutbox/1`` record with its decks: the
decks are the project's shuffle of the standard decks from ``seed`` (so
``Game.new(rules, players, seed)`` deals them; the naive engine only reads
``decks``), and the moves were made once by a seeded random agent that prefers
box-its and placements with many contacts, stopped where the position shows
what its ``about`` says.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from reference.naive import NaiveGame

OUT = Path(__file__).resolve().parents[1] / "data" / "perft" / "positions.json"
FORMAT = "donutbox-perft/1"


class Position(NamedTuple):
    name: str
    about: str
    rules: dict[str, Any]
    players: list[str]
    seed: int
    decks: list[str]  # faces separated by spaces, top card first
    moves: str  # moves separated by spaces
    depth: int  # perft is counted for 1..depth, divide at depth

    def record(self) -> dict[str, Any]:
        return {
            "format": "donutbox/1",
            "rules": dict(self.rules),
            "players": list(self.players),
            "seed": self.seed,
            "decks": [deck.split() for deck in self.decks],
            "moves": self.moves.split(),
        }


POSITIONS: list[Position] = [
    Position(
        name="fresh-one-good-squared",
        about=(
            "A fresh deal, One Good Match, Squared Away: only the start card on the counter; A "
            "holds two Cinnamon Rolls, with a choice of lock at some places."
        ),
        rules={"match": "one-good-match", "layout": "squared-away", "closers": False},
        players=["A", "B"],
        seed=11,
        decks=[
            "CSHB SSBB RBSH RHSC CCHH SSBB RCSH RBHC RBCS SSHB HHBC CCBH CSBH CCSS BBCS "
            "SSBH CCBB CCSS HHBB CHSB CCBB SSHH RSHB CCSH SSHH RCSB RCHB CHBS HHBB CCHH",
            "CCSS RSHB SSBH RHSC RBHC CSHB SSBB RCHB SSHB HHBB CCBH CCSS HHBB CCHH SSHH "
            "CHBS RBSH RCSH RBCS RCSB HHBC SSBB BBCS SSHH CCSH CHSB CCBB CCHH CSBH CCBB",
        ],
        moves="",
        depth=3,
    ),
    Position(
        name="fresh-perfect-splitzkies-closers",
        about="A fresh deal, Perfect Match, Splitzkies, Coffee's For Closers.",
        rules={"match": "perfect-match", "layout": "splitzkies", "closers": True},
        players=["A", "B"],
        seed=12,
        decks=[
            "CCBH HHBB CCSS RCSH RHSC RBHC RCSB CCBB HHBB SSHH RBCS SSHB BBCS SSBH CSBH "
            "RSHB RCHB SSBB CHBS CCSH SSHH CHSB SSBB CCSS CCBB HHBC RBSH CCHH CSHB CCHH",
            "CCBB CSBH CCHH CHSB CSHB HHBB HHBB RBSH SSHB CCSS SSBB CCHH HHBC RCSB CHBS "
            "CCBH RHSC SSHH RBCS RBHC CCSS RCHB SSBH CCSH SSHH BBCS CCBB SSBB RCSH RSHB",
        ],
        moves="",
        depth=3,
    ),
    Position(
        name="mid-one-good-splitzkies",
        about="Ply 14, One Good Match, Splitzkies: A to move, with six box-its open.",
        rules={"match": "one-good-match", "layout": "splitzkies", "closers": False},
        players=["A", "B"],
        seed=13,
        decks=[
            "CCBB SSHB RBHC HHBC SSHH RCSB RCSH CCHH CCSH CHSB CCSS CSHB CHBS SSBH SSHH "
            "RSHB CCHH HHBB CCSS SSBB RCHB CCBB HHBB BBCS RHSC CSBH RBSH CCBH SSBB RBCS",
            "RBCS CCHH RCHB CHBS RCSH RHSC RBHC BBCS CCHH CCSS HHBB CHSB RSHB SSHH SSBB "
            "SSHB SSHH CCBB RBSH SSBB CSHB CSBH HHBC SSBH CCBH CCBB RCSB HHBB CCSS CCSH",
        ],
        moves=(
            "RBHC@0,-2/270=S RBCS@-2,-2/0=S HHBC@-2,0/90 RCHB@-4,-2/180=S CCBB@2,-2/180 "
            "CCHH@2,0/0 CCHH@-2,2/270 box@-2,-2 RCSH@0,3/90=C RCSH@-4,0/0=C RCSB@3,-4/0=C "
            "RHSC@1,-4/180=B CCSS@-1,-4/180 RBHC@-4,2/270=B"
        ),
        depth=2,
    ),
    Position(
        name="mid-perfect-squared-closers",
        about=(
            "Ply 18, Perfect Match, Squared Away, Coffee's For Closers: Perfect Match leaves A "
            "few placements; five box-its; depth 4."
        ),
        rules={"match": "perfect-match", "layout": "squared-away", "closers": True},
        players=["A", "B"],
        seed=14,
        decks=[
            "RBHC CCSH RBSH CSHB SSBB SSHB CCSS RCHB CCHH SSBH SSHH HHBC RSHB CCBH CHBS "
            "CSBH CCHH RCSB RCSH SSHH CHSB CCBB RHSC HHBB RBCS BBCS CCBB HHBB CCSS SSBB",
            "RCHB HHBC RSHB SSHH SSBH SSHH SSHB BBCS CHBS HHBB RBCS CCSH CSBH RCSH CCSS "
            "SSBB CCBB CCBB SSBB RHSC CCSS RBHC RCSB HHBB CSHB CHSB CCHH CCHH RBSH CCBH",
        ],
        moves=(
            "RBSH@0,2/0=B SSHH@0,4/90 SSHB@0,-2/180 RSHB@0,-4/270=H box@0,-1 SSBH@2,-4/90 "
            "CCSH@-2,-2/180 RCHB@2,-2/90=S RBHC@2,0/180=B BBCS@2,2/0 CCSS@2,4/90 box@1,3 "
            "RCHB@-2,2/180=H box@3,-4 box@-1,3 CHBS@-2,4/0 CCHH@-4,2/180 SSHH@2,-6/0"
        ),
        depth=4,
    ),
    Position(
        name="box-it-one-good-squared-closers",
        about=(
            "Ply 17, One Good Match, Squared Away, Coffee's For Closers: B to move, with four "
            "box-its open and a Cinnamon Roll in the tray."
        ),
        rules={"match": "one-good-match", "layout": "squared-away", "closers": True},
        players=["A", "B"],
        seed=1002,
        decks=[
            "CHBS RHSC CCSS HHBB CCSH CSBH CCSS CSHB RCHB CCHH RCSB SSHH HHBC CCBB SSBH "
            "SSHH HHBB CCBB RCSH RBSH RBHC SSBB SSHB RBCS SSBB CCHH CCBH CHSB RSHB BBCS",
            "HHBC HHBB RHSC CCSS CCSH HHBB RCSB SSHH CSHB CSBH CCBH RCSH BBCS SSBH CCBB "
            "CCSS SSBB CCHH CCHH RBCS CCBB RSHB RBSH SSBB RBHC RCHB CHBS CHSB SSHH SSHB",
        ],
        moves=(
            "CHBS@2,0/0 HHBB@2,2/270 HHBB@0,2/180 RHSC@2,-2/0=H CSBH@0,-2/270 HHBB@2,4/180 "
            "CSHB@0,4/270 RCSB@-2,2/90=B RCHB@-2,0/180=H HHBC@-2,-2/180 CCSS@4,-2/0 "
            "CCSH@-2,4/0 RCSB@4,0/90=S CSHB@-4,0/180 box@3,-1 CCSS@4,2/0 box@-2,2"
        ),
        depth=3,
    ),
    Position(
        name="roll-lock-perfect-splitzkies",
        about=(
            "Ply 12, Perfect Match, Splitzkies: A to move holds RBCS, whose lock is a choice at "
            "many places (the same place and rotation listed with two locks), and one box-it."
        ),
        rules={"match": "perfect-match", "layout": "splitzkies", "closers": False},
        players=["A", "B"],
        seed=1001,
        decks=[
            "SSBB CCHH CSBH CCSS CSHB RBSH SSBB CHSB RBCS HHBC RHSC RSHB HHBB RBHC RCSH "
            "CCBB CCSH RCSB SSHH HHBB RCHB CHBS SSHH CCSS CCHH SSHB CCBB SSBH BBCS CCBH",
            "CSBH SSHB CCBB RBSH HHBB CCBH RBCS CCSH CHBS HHBC CCHH SSBB RCSH HHBB RCSB "
            "CSHB CCHH CCSS RSHB RCHB SSBB CCSS SSHH SSBH CHSB RBHC BBCS RHSC CCBB SSHH",
        ],
        moves=(
            "CSBH@0,2/180 RBSH@-2,2/0=H RBSH@-4,3/180=B SSHB@-2,4/90 box@-4,4 HHBB@-3,0/180 "
            "CCSS@0,4/90 CCBH@-4,5/180 SSBB@-5,-1/0 CSBH@-2,6/0 CCHH@2,5/270 box@-5,0"
        ),
        depth=3,
    ),
    Position(
        name="final-lap-one-good-squared",
        about=(
            "Ply 56, One Good Match, Squared Away: A to move with one card left in the pile. A "
            "placement draws it and starts the Final Lap (B's last turn), so at depth 3 only the "
            "lines that begin with A's one box-it go on."
        ),
        rules={"match": "one-good-match", "layout": "squared-away", "closers": False},
        players=["A", "B"],
        seed=1003,
        decks=[
            "SSHH RCSH CSBH CHSB CCBH RCHB CCHH CCSS SSHH CCBB SSBB RBHC CSHB CCSH RBSH "
            "CCHH SSBH CCSS RSHB CHBS RBCS HHBB HHBC RHSC SSBB BBCS HHBB RCSB SSHB CCBB",
            "CCSH CCSS RBHC CCBB RBSH RCSB HHBC CSHB RSHB SSHH CHBS RHSC SSBB SSHH CHSB "
            "CSBH SSBH CCSS CCBB SSBB CCHH HHBB SSHB HHBB CCHH RBCS CCBH RCSH RCHB BBCS",
        ],
        moves=(
            "RCSH@-2,0/0=C CCBB@-2,-2/90 CSBH@0,-2/180 RBSH@0,2/0=H RCHB@-2,2/0=H box@0,1 "
            "CCHH@2,-2/90 CCSS@2,0/90 SSHH@2,2/270 box@2,0 CHSB@-2,-4/0 RBHC@0,-4/0=H "
            "box@1,-3 CCSH@2,-4/90 CCBB@-4,-2/0 RSHB@-4,0/90=C SSBB@-6,0/180 CSHB@-8,0/180 "
            "CSHB@-4,2/180 RCSB@-6,-2/90=C CCSS@-10,0/270 box@-5,-2 RBSH@-4,-4/90=C "
            "CHBS@0,-6/180 CCSH@-6,2/270 SSBB@-2,-6/180 CCHH@2,-6/270 HHBC@-8,-2/180 "
            "CCSS@-12,0/90 SSHH@-4,-6/90 RBHC@-10,-2/180=S CHSB@4,-6/270 CHBS@-12,-2/0  "
            "SSBH@-8,2/0 RSHB@-8,-4/0=B RHSC@-6,-4/180=S HHBB@-6,-6/0 SSHH@-4,-8/90 "
            "SSHH@-8,-6/90 CSBH@-10,-4/180 box@-12,-1 CCSS@-12,-4/0 box@-11,0 CCHH@-6,-8/90 "
            "RBCS@4,-8/180=S SSBB@-2,-8/90 SSBH@0,-8/0 CCBB@2,-8/90 box@-1,-8 SSHB@-10,-6/0 "
            "RHSC@-10,2/270=C box@-6,-8 BBCS@-8,-8/270 HHBB@-12,2/90 HHBB@-2,-10/90 "
            "CCBH@-12,-6/180"
        ),
        depth=3,
    ),
    Position(
        name="three-players-one-good-splitzkies-closers",
        about="Ply 9, three players, One Good Match, Splitzkies, Coffee's For Closers.",
        rules={"match": "one-good-match", "layout": "splitzkies", "closers": True},
        players=["A", "B", "C"],
        seed=15,
        decks=[
            "SSBH SSHH SSBB RHSC SSBB CCSH SSHB CCBH HHBB RCSH CSBH CCBB HHBC CCSS CCHH "
            "BBCS CCBB CCHH RSHB RBCS RCHB RCSB CCSS RBHC CHBS CSHB CHSB RBSH SSHH HHBB",
            "HHBC RCSH SSHB CSBH CCBB SSBB CCBB CCHH SSHH RSHB CSHB CHSB CCHH HHBB RHSC "
            "CCSS CHBS SSHH RCHB SSBH BBCS RBHC CCSH SSBB RCSB CCSS RBSH RBCS CCBH HHBB",
            "CCBB RCSB SSHB CCSH CHBS HHBB CSHB CHSB RSHB RCHB RCSH SSBB HHBC CCSS BBCS "
            "RBCS HHBB CCHH SSHH SSHH CCBB SSBH CSBH RBSH CCBH CCSS CCHH SSBB RBHC RHSC",
        ],
        moves=(
            "SSBH@-1,-2/180 HHBC@1,-2/270 RCSB@-2,0/270=C CCSH@-3,-2/90 RCSH@-4,0/270=C "
            "CCSH@-3,-4/90 RHSC@-1,-4/90=C CSBH@1,-4/0 SSHB@-5,-2/180"
        ),
        depth=3,
    ),
    Position(
        name="final-lap-three-players-perfect-squared",
        about=(
            "Ply 87, three players, Perfect Match, Squared Away: in the Final Lap with two turns "
            "left (A, then B), so every line ends the game at its second move and perft at depth "
            "3 is 0."
        ),
        rules={"match": "perfect-match", "layout": "squared-away", "closers": False},
        players=["A", "B", "C"],
        seed=16,
        decks=[
            "RCSH SSHH RBSH CCSS CSHB BBCS HHBB CCHH CCSS CCHH RBCS CHSB SSBB SSHB SSBH "
            "CHBS HHBC SSBB CCBB RBHC RCHB CSBH HHBB RHSC RCSB CCBH RSHB CCSH SSHH CCBB",
            "CHBS CCSH SSHH CCBB RHSC SSHH SSBB CSHB BBCS CSBH RSHB HHBB CCSS RCHB CCBB "
            "CHSB RBCS SSBH RBSH CCHH SSHB RCSH SSBB CCBH CCSS HHBB RCSB HHBC CCHH RBHC",
            "CCHH CCSS RBSH CCHH BBCS CCSS SSBH CSBH CCBH RCHB RCSB HHBC RSHB CHBS RHSC "
            "SSBB HHBB CSHB RBHC SSHH HHBB CHSB CCBB CCSH CCBB RBCS RCSH SSBB SSHB SSHH",
        ],
        moves=(
            "RBSH@-2,0/90=C CHBS@-2,-2/180 RBSH@-2,-4/180=S BBCS@-4,-4/180 RHSC@0,-2/0=S "
            "BBCS@-2,2/90 RCSH@2,-2/90=C CCBB@-2,4/270 CCSS@-4,4/90 HHBB@-4,-2/180 box@-1,-3 "
            "CCHH@2,-4/90 SSHH@-4,0/180 SSBB@-6,4/90 CCSS@4,-2/270 CCSS@4,-4/270 "
            "SSHH@6,-2/270 SSBH@6,-4/270 RBCS@-2,6/0=C SSHH@8,-2/90 CCHH@2,-6/90 "
            "CCSS@4,-6/270 CSHB@8,-4/90 RCSB@-4,6/0=S SSBB@6,-6/270 CCSH@4,0/270 "
            "RCHB@6,-8/270=S box@-4,-1 RSHB@6,0/270=H RSHB@8,0/0=H CCHH@2,-8/90 "
            "CCSS@-4,-6/270 CCBH@-6,-6/90 CCHH@6,-10/270 HHBB@0,2/90 RHSC@2,0/180=C "
            "SSBH@-2,-6/270 CCBB@8,-6/90 box@2,-8 box@6,-10 CSBH@0,-4/90 HHBC@4,2/90 "
            "CHSB@10,0/180 RBCS@-2,8/90=C CHBS@0,-6/180 SSBB@0,-8/90 box@9,-3 CSBH@2,-10/180 "
            "HHBC@10,-2/0 RCHB@-4,8/90=S RBHC@4,-10/0=H RBHC@8,-8/180=C box@9,-8 CSHB@0,8/0 "
            "RCHB@4,4/90=H RBSH@6,2/0=H box@-5,4 box@7,-10 CHSB@6,4/270 SSBB@-2,-8/270  "
            "box@1,-8 SSHB@2,-12/0 HHBB@10,-4/180 box@-4,1 RCSH@-4,2/90=H CCBB@10,-6/0  "
            "box@-4,-3 SSBH@4,-12/0 SSHH@4,-14/180 CSBH@2,4/270 CCBH@10,-8/180 CCBB@-6,-4/90 "
            "CCBB@-6,-2/90 BBCS@-6,0/270 RBCS@0,6/270=C RHSC@12,-8/270=C box@7,1 "
            "RCSH@8,2/90=H box@10,-3 CCHH@4,-16/0 SSBB@-6,2/90 box@4,3 RCSB@12,-6/0=C "
            "box@3,-9 SSHB@2,2/180 SSBB@12,-4/90 CHSB@4,-8/0"
        ),
        depth=3,
    ),
]


# ----------------------------------------------------------------- counting


def naive_moves(game: NaiveGame) -> list[str]:
    moves = game.legal_moves()
    assert len(set(moves)) == len(moves), f"the naive engine listed a move twice: {moves}"
    return moves


def naive_perft(game: NaiveGame, depth: int) -> int:
    """Move sequences of length ``depth``, by brute force."""
    if depth == 0:
        return 1
    moves = naive_moves(game)
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        child = copy.deepcopy(game)
        child.play(move)
        total += naive_perft(child, depth - 1)
    return total


def naive_divide(game: NaiveGame, depth: int) -> dict[str, int]:
    """Per first move, the sequences of ``depth - 1`` moves after it."""
    out = {}
    for move in naive_moves(game):
        child = copy.deepcopy(game)
        child.play(move)
        out[move] = naive_perft(child, depth - 1)
    return out


def naive_game(record: dict[str, Any]) -> NaiveGame:
    game, error = NaiveGame.from_record(record)
    if error is not None:
        raise SystemExit(f"the naive engine refuses the record: {error}")
    return game


def count(position: Position) -> dict[str, Any]:
    record = position.record()
    game = naive_game(record)
    perft = {}
    for depth in range(1, position.depth):
        perft[str(depth)] = naive_perft(game, depth)
    top = naive_divide(game, position.depth)
    perft[str(position.depth)] = sum(top.values())
    return {
        "name": position.name,
        "about": position.about,
        "record": record,
        "perft": perft,
        "divide": {"depth": position.depth, "counts": dict(sorted(top.items()))},
    }


# ------------------------------------------------------------------ writing


def dumps(data: dict[str, Any]) -> str:
    """JSON with one position entry per line where that keeps the file readable."""
    lines = ["{"]
    for key in ("format", "about", "convention", "generator"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(data[key])},")
    lines.append('  "positions": [')
    for i, pos in enumerate(data["positions"]):
        lines.append("    {")
        lines.append(f'      "name": {json.dumps(pos["name"])},')
        lines.append(f'      "about": {json.dumps(pos["about"])},')
        lines.append(f'      "record": {json.dumps(pos["record"])},')
        lines.append(f'      "perft": {json.dumps(pos["perft"])},')
        divide = pos["divide"]
        lines.append(f'      "divide": {{"depth": {divide["depth"]}, "counts": {{')
        items = list(divide["counts"].items())
        for j, (move, n) in enumerate(items):
            comma = "," if j < len(items) - 1 else ""
            lines.append(f"        {json.dumps(move)}: {n}{comma}")
        lines.append("      }}")
        lines.append("    }" + ("," if i < len(data["positions"]) - 1 else ""))
    lines.append("  ]")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == data
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write (default {OUT})")
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="recount only this position (repeatable); the others are kept from the file",
    )
    args = parser.parse_args(argv)
    known = {p.name for p in POSITIONS}
    for name in args.only or ():
        if name not in known:
            parser.error(f"no position {name!r}; known: {', '.join(sorted(known))}")
    old: dict[str, Any] = {}
    if args.only:
        # the other positions are kept from --out, or from the repository's file
        source = args.out if args.out.exists() else OUT
        if source.exists():
            data = json.loads(source.read_text("utf-8"))
            old = {entry["name"]: entry for entry in data["positions"]}
    positions = []
    for position in POSITIONS:
        if args.only and position.name not in args.only and position.name in old:
            positions.append(old[position.name])
            continue
        start = time.process_time()
        entry = count(position)
        seconds = time.process_time() - start
        print(f"{position.name}: perft {entry['perft']} ({seconds:.1f} s CPU)", file=sys.stderr)
        positions.append(entry)
    data = {
        "format": FORMAT,
        "about": "Perft counts (move sequences of each length) from donutbox/1 positions.",
        "convention": (
            "perft(position, 0) = 1; a finished game has no moves and counts 0 at depth 1 "
            "or more; a move is an action as legal_moves lists it (docs/spec.md, "
            "'Game records and notation'); "
            "divide.counts gives, per first move, the count of depth - 1 further moves."
        ),
        "generator": (
            "tests/reference/perft_gen.py, with the naive reference engine "
            "tests/reference/naive.py only"
        ),
        "positions": positions,
    }
    args.out.write_text(dumps(data), "utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
