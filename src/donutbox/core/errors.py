"""Typed errors of the rules core: it raises nothing else on bad input.

All are ``DonutboxError`` and so ``ValueError`` subclasses: callers that only
care about "bad input" catch one type, while tools that must tell a malformed
record from an illegal move (``donutbox replay`` exits 2 or 1) tell them
apart.  Every message is one line that names the field or the rule.
"""

from __future__ import annotations


class DonutboxError(ValueError):
    """Base class of every error the rules core raises on bad input."""


class IllegalMove(DonutboxError):
    """A well-formed move that the rules do not allow in this position.

    The message names the broken rule in one line, e.g.
    ``"One Good Match: no touching pair agrees"``.
    """


class NotationError(DonutboxError):
    """Text that is not a move in donutbox notation (docs/spec.md, 'Game
    records and notation')."""


class RecordError(DonutboxError):
    """A game record that cannot be read (bad JSON shape, field or value)."""


def move_label(ply: int, move: object = None) -> str:
    """A record's move in a message, the one way every part names it: its
    number counted from 1, then its 0-based ``ply`` as in ``replay --json``,
    then the move if it could be read: ``move 3 (ply 2, box@0,0)``."""
    return f"move {ply + 1} (ply {ply}{'' if move is None else f', {move}'})"


class InputError(DonutboxError):
    """A value given by a caller or typed by a user that is not one the core
    can use: a player count or name, a seed, a ply, a depth, an agent name,
    a command at the terminal.  (A record's fields raise ``RecordError``.)"""
