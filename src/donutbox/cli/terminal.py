"""``donutbox play``: a game in the terminal against an agent or hotseat."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..core import DonutboxError, RecordError
from ..usage import UsageError, check_seed, position, read_record
from .common import _closest, _console, _deck_arg, _new_game, _rules_from, warn


def cmd_play(args: argparse.Namespace) -> int:
    from ..ai import agent_names
    from ..play import Session

    known = agent_names()
    if args.seconds <= 0 or args.seconds > 600:
        raise UsageError("--seconds must be more than 0 and at most 600")
    if args.vs != "hotseat" and args.vs not in known:
        guess = _closest(args.vs, ["hotseat", *known], "'{}'")
        raise UsageError(f"--vs must be hotseat or one of {', '.join(known)}{guess}")
    others = "human" if args.vs == "hotseat" else args.vs
    if args.resume and args.deck:
        raise UsageError("--deck: a resumed game keeps the decks of its record; leave out --deck")
    if args.resume:
        try:
            record = read_record(args.resume)
            game, problem = position(record)
        except RecordError as err:  # which file could not be resumed, and why
            raise UsageError(f"--resume {args.resume}: {err}") from None
        if problem:  # a game cannot go on from a record that breaks the rules
            warn("play", f"--resume {args.resume}: {problem}; nothing to resume")
            return 1
        seats = record.get("agents")
        if not (
            isinstance(seats, list)
            and len(seats) == game.players
            and all(s == "human" or s in known for s in seats)
        ):
            seats = ["human"] + [others] * (game.players - 1)
    else:
        check_seed(args.seed)
        deck = _deck_arg(args.deck)
        if not 2 <= args.players <= 4:
            raise UsageError("--players must be from 2 to 4")
        seats = ["human"] + [others] * (args.players - 1)
        if args.second and args.vs != "hotseat":
            seats = seats[1:] + seats[:1]
        try:
            game = _new_game(_rules_from(args), _seat_names(seats), args.seed, deck)
        except DonutboxError:
            raise
        except ValueError as err:
            raise UsageError(str(err)) from None
    session = Session(
        game, list(seats), args.seconds, _console(no_color=args.no_color), seed=game.seed or 0
    )
    return session.run()


def _seat_names(seats: Sequence[str]) -> list[str]:
    """The players' names in a new terminal game: the one human is "You",
    hotseat humans are "Player N", and an AI seat is named by its agent or
    level ("hard (AI)"; "hard (AI 1)", "hard (AI 2)" when there are two)."""
    humans = seats.count("human")
    names = []
    for i, seat in enumerate(seats):
        if seat == "human":
            names.append("You" if humans == 1 else f"Player {i + 1}")
            continue
        alike = [j for j, s in enumerate(seats) if s == seat]
        names.append(f"{seat} (AI)" if len(alike) == 1 else f"{seat} (AI {alike.index(i) + 1})")
    return names
