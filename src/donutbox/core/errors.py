"""Typed errors of the rules core.

Both are ``ValueError`` subclasses, so callers that only care about "bad
input" can catch one type, while tools that must tell a malformed record from
an illegal move (``donutbox replay`` exits 2 or 1) can tell them apart.
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
    """Text that is not a move in donutbox notation (RULES.md section 9)."""


class RecordError(DonutboxError):
    """A game record that cannot be read (bad JSON shape, field or value)."""
