"""The ``donutbox`` command.

Every command has ``--help``.  Bad input never shows a traceback: a record
that cannot be read gives a one-line reason on standard error and exit
status 2; an illegal move in a record gives status 1 (docs/notation.md, "The
command line"; docs/spec.md, "Command-line contract").
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..core import DonutboxError
from ..usage import MAX_RECORD_BYTES, UsageError, one_line, read_record

# Reached through ``donutbox.cli`` by the commands registered from other
# parts (the parser class) and by tests.
from .common import _Parser as _Parser
from .lab import _agent_options as _agent_options
from .parser import build_parser
from .server import _database_trouble as _database_trouble

__all__ = ["MAX_RECORD_BYTES", "build_parser", "main", "one_line", "read_record"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status (0 success, 1 an illegal move in a
    record, 2 bad input, 3 a bug, 130 interrupted).

    Every error is one line on standard error, in one style:
    ``donutbox COMMAND: reason`` (``donutbox: reason`` before a command is
    known).
    """
    parser = build_parser()
    command: str | None = None
    try:
        args, extra = parser.parse_known_args(argv)
        command = getattr(args, "command", None)
        if extra:  # named by the command's own parser, so that the prefix names it
            owner = _commands(parser).get(command, parser) if command else parser
            owner.error(f"unrecognized arguments: {' '.join(extra)}")
        if not getattr(args, "func", None):
            print(parser.format_help().rstrip(), file=sys.stderr)
            print("donutbox: no command given (see 'donutbox help')", file=sys.stderr)
            return 2
        return int(args.func(args))
    except UsageError as err:
        prefix = err.prog or _prefix(command)
        print(one_line(f"{prefix}: {err}"), file=sys.stderr)
        return 2
    except DonutboxError as err:
        print(one_line(f"{_prefix(command)}: {err}"), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print(f"{_prefix(command)}: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # no traceback ever reaches a user
        if os.environ.get("DONUTBOX_DEBUG"):
            raise
        print(
            one_line(
                f"{_prefix(command)}: internal error ({type(err).__name__}: {err}); "
                "set DONUTBOX_DEBUG=1 for details"
            ),
            file=sys.stderr,
        )
        return 3


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _prefix(command: str | None) -> str:
    return f"donutbox {command}" if command else "donutbox"
