"""What every command of the command line shares: its error, reading a
record, and making text safe for a terminal.

Other modules than the ``cli`` package need these helpers
(``render/commands.py`` adds the ``print`` and ``render`` commands to the
parser): defined here, they share one ``UsageError`` class with ``cli``
without importing it (no import cycle).

Importing this module is cheap: the standard library and the core only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .core import Game, IllegalMove, InputError, RecordError, replay_partial
from .core.errors import move_label
from .core.replay import replay
from .core.rng import SEED_LIMIT

#: Records larger than this are refused unread (a real record is a few KiB).
MAX_RECORD_BYTES = 4 * 1024 * 1024


class UsageError(Exception):
    """Bad command-line arguments: exit status 2.

    The message is the reason alone; ``donutbox.cli.main`` puts the one
    prefix every command uses in front of it (``donutbox COMMAND: ``).
    ``prog`` is set by the argument parser, which knows the command's name.
    """

    def __init__(self, message: str, prog: str | None = None) -> None:
        super().__init__(message)
        self.prog = prog


def printable(text: str) -> str:
    """``text`` safe to write to a terminal: every character that is not
    printable (control characters such as ESC, BEL, CR, tabs and newlines,
    and format characters such as right-to-left overrides) is written as its
    Python escape (``\\x1b``), so text from a record (a player's name) can
    neither move the cursor, retitle or clear the terminal, nor break a line.
    A lone surrogate (not a character at all) is written escaped too."""
    out = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return out.encode("utf-8", "backslashreplace").decode("utf-8")


def one_line(text: str) -> str:
    """A message as one printable line (see ``printable``)."""
    return printable(text)


def plural(n: int | float, one: str, many: str | None = None) -> str:
    """``1 box``, ``2 boxes``, ``0 moves``: the count and the right word."""
    word = one if n == 1 else (many if many is not None else one + "s")
    return f"{n:g} {word}" if isinstance(n, float) else f"{n} {word}"


def check_seed(seed: int | None, deals: int = 1) -> None:
    """Every command's ``--seed`` takes one range, the record format's
    (docs/notation.md, "The seed generator"): 0 to 2**64-1.  A run of
    ``deals`` deals (sim, balance, sweeps) uses the seeds ``seed`` up to
    ``seed + deals - 1``, which must be in the range too."""
    if seed is None:
        return
    if not 0 <= seed < SEED_LIMIT:
        raise UsageError("--seed must be from 0 to 2**64-1")
    if seed + deals > SEED_LIMIT:
        raise UsageError(
            f"--seed {seed}: {deals} deals use the seeds from it up, past 2**64-1; "
            f"give a --seed of at most {SEED_LIMIT - deals}"
        )


def illegal_text(ply: int, move: str, reason: str) -> str:
    """The first illegal move of a record, for people: the move's number
    counted from 1 and its 0-based ``ply`` as in ``replay --json``.  Every
    command says it the same way."""
    return f"{move_label(ply, move)} is illegal: {reason}"


def _reject_constant(name: str) -> Any:
    raise RecordError(f"not valid JSON: {name} is not a number in JSON")


def read_record(source: str) -> dict[str, Any]:
    """Read a record from a path or ``-`` (standard input); RecordError if unreadable."""
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_RECORD_BYTES + 1)
        else:
            path = Path(source)
            if path.is_dir():
                raise RecordError(f"cannot read {source}: it is a directory")
            with path.open("rb") as fh:
                data = fh.read(MAX_RECORD_BYTES + 1)
    except OSError as err:
        raise RecordError(f"cannot read {source}: {err.strerror or err}") from None
    if len(data) > MAX_RECORD_BYTES:
        raise RecordError(f"record is larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise RecordError(f"record is not UTF-8 (byte {err.start})") from None
    if not text.strip():
        raise RecordError("empty input: expected a JSON game record")
    try:
        record = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        raise RecordError(
            f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"
        ) from None
    except RecursionError:
        raise RecordError("not valid JSON: nested too deeply") from None
    except ValueError:  # Python refuses integers of more than 4,300 digits
        raise RecordError("not valid JSON: a number has too many digits") from None
    if not isinstance(record, dict):
        raise RecordError("a record must be a JSON object")
    return record


def position(record: dict[str, Any], ply: int | None = None) -> tuple[Game, str]:
    """The game of ``record`` after its first ``ply`` moves (all if None), as
    the core's ``replay`` plays it, and "" -- or, when a move among them is
    illegal, the position before that move and the problem in words
    (``illegal_text``).  A ``ply`` out of range is a UsageError naming
    ``--ply``."""
    try:
        return replay(record, ply), ""
    except IllegalMove:
        game, error = replay_partial(record)  # the position before the first illegal move
        if error is None:  # cannot be: the same moves, the same engine
            raise
        at, move, reason = error
        if move == "end":
            return game, f"the record's end is illegal: {reason}"
        return game, illegal_text(at, move, reason)
    except InputError as err:
        if str(err).startswith("ply "):
            raise UsageError(f"--{err}") from None
        raise
