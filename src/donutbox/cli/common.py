"""What the commands of ``donutbox`` share: the argument parser class and its
"did you mean", the rule and deck options, the consoles, one-line warnings."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from ..core import DonutboxError, Game, Rules
from ..core.cards import check_face
from ..core.rules import RULE_OPTIONS
from ..usage import UsageError, illegal_text, one_line, printable


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        command = self.prog.partition(" ")[2]
        hint = f"donutbox help {command}" if command else "donutbox help"
        raise UsageError(f"{message}{self._did_you_mean(message)} (see '{hint}')", prog=self.prog)

    def _did_you_mean(self, message: str) -> str:
        """``; did you mean 'serve'?`` for a misspelled command or choice,
        ``; did you mean --players?`` for a misspelled option (difflib's
        closest match), else nothing."""
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            known = re.findall(r"'([^']*)'", choice.group(2))
            return _closest(choice.group(1), known, "'{}'")
        unknown = re.match(r"unrecognized arguments: (-[^\s=]+)", message)
        if unknown:
            options = [o for action in self._actions for o in action.option_strings]
            return _closest(unknown.group(1), options, "{}")
        return ""


def _closest(word: str, known: Sequence[str], shown: str) -> str:
    import difflib

    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"; did you mean {shown.format(close[0])}?" if close else ""


def _rules_from(args: argparse.Namespace) -> Rules:
    return Rules.from_dict({o.name: getattr(args, o.name) for o in RULE_OPTIONS}, "the rules")


def _add_rule_options(p: argparse.ArgumentParser) -> None:
    """One option per rule of ``RULE_OPTIONS`` (the core's one schema of the
    variants): its choices, default and help come from there."""

    def esc(text: str) -> str:  # argparse %-formats help texts
        return text.replace("%", "%%")

    for option in RULE_OPTIONS:
        flag = "--" + option.name.replace("_", "-")
        if option.kind == "flag":
            p.add_argument(
                flag,
                dest=option.name,
                action="store_true",
                help=esc(f"{option.label}. {option.help} (default: off)"),
            )
            continue
        values = " ".join(f"{c.value} ({c.label}): {c.help}" for c in option.choices)
        p.add_argument(
            flag,
            dest=option.name,
            choices=option.values,
            default=option.default,
            help=esc(f"{option.label}. {option.help} {values}"),
        )


_DECK_HELP = (
    "deck composition file (JSON, or TOML named *.toml; docs/deck-lab.md); "
    "default: the standard deck"
)


def _deck_arg(path: str | None) -> Any:
    """``--deck FILE``: a deck composition (JSON, or TOML by its ``.toml``
    name; docs/deck-lab.md), or None without one.  A file that cannot be
    read or used is one line naming the field."""
    if path is None:
        return None
    from ..core.decks import MAX_TEXT, DeckError, parse_text

    file = Path(path)
    try:
        with file.open("rb") as fh:
            raw = fh.read(MAX_TEXT * 4 + 1)
    except OSError as err:
        raise UsageError(f"--deck {printable(path)}: {err.strerror or err}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--deck {printable(path)}: not UTF-8 text") from None
    fmt = "toml" if file.suffix.lower() == ".toml" else "json"
    try:
        return parse_text(text, fmt, default_name=file.stem[:60] or "custom")
    except DeckError as err:
        raise UsageError(f"--deck {printable(path)}: {err}") from None


def _new_game(rules: Rules, players: Sequence[str] | int, seed: int | None, deck: Any) -> Game:
    """A dealt game: standard decks, or the composition ``deck``."""
    if deck is None:
        return Game.new(rules, players, seed)
    return deck.new_game(rules, players, seed)  # type: ignore[no-any-return]


def _dump(obj: object) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False)


def warn(command: str, text: str) -> None:
    """A problem that does not stop the command (an illegal move in a
    record, a warning), on standard error in the one style of every error:
    ``donutbox COMMAND: text``, one line."""
    print(one_line(f"donutbox {command}: {text}"), file=sys.stderr)


def _warn_illegal(command: str, error: tuple[int, str, str] | None, after: str = "") -> None:
    if error:
        warn(command, illegal_text(*error) + after)


def _face_arg(text: str) -> str:
    try:
        return check_face(text)
    except DonutboxError as err:
        raise UsageError(f"--card: {err}") from None


def _console(no_color: bool = False) -> Any:
    """The console of ``show``, ``replay`` and ``play``.  ``--no-color`` or
    NO_COLOR (no-color.org) set and not empty: no escape code for colour or
    style at all (rich's own ``no_color`` drops colours but keeps bold, dim
    and strikethrough)."""
    from rich.console import Console

    plain = no_color or bool(os.environ.get("NO_COLOR"))
    return Console(
        no_color=plain,
        color_system=None if plain else "auto",
        highlight=False,
        soft_wrap=True,
    )


def _console_err() -> Any:
    from rich.console import Console

    return Console(stderr=True)
