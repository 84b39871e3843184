"""JSON parsing with bounds: size and nesting are checked before the parser
runs, so a hostile document gets a one-line ``JsonTooLarge``/``JsonTooDeep``
(both ``ValueError``), never a ``RecursionError`` or a 500.

The standard library's parser recurses once per ``[`` or ``{``: about a
thousand levels (2,000 characters, ``[[[[...``) exhaust the interpreter's
stack.  ``depth`` finds the deepest nesting with a scan that does not
recurse and skips strings (a ``[`` inside a string is not nesting), so the
check costs far less than the parse it protects.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Nesting allowed in anything a client sends or the server stores.  A game
#: record is 3 deep (``{"moves": ["..."]}``, ``meta``'s small objects);
#: 32 leaves room for any honest document.
MAX_DEPTH = 32

# A JSON string (with escapes), or one bracket.  Strings are matched whole so
# that brackets inside them are skipped.
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
_TOKENS_STR = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


class JsonTooLarge(ValueError):
    """The document is longer than allowed."""


class JsonTooDeep(ValueError):
    """The document nests arrays/objects deeper than allowed."""


def depth(text: str | bytes, stop_at: int | None = None) -> int:
    """The deepest nesting of arrays/objects in ``text`` (0 for a scalar).
    Not a validator: malformed JSON gets some number, and the parser then
    refuses it.  With ``stop_at`` the scan ends as soon as that depth is
    passed (and returns it plus one)."""
    pattern = _TOKENS if isinstance(text, bytes) else _TOKENS_STR
    level = deepest = 0
    for m in pattern.finditer(text):  # type: ignore[arg-type]
        c = m.group()[:1]
        if c in ("[", "{", b"[", b"{"):
            level += 1
            if level > deepest:
                deepest = level
                if stop_at is not None and deepest > stop_at:
                    return deepest
        elif c in ("]", "}", b"]", b"}"):
            level = max(0, level - 1)
    return deepest


def check(
    text: str | bytes, max_depth: int = MAX_DEPTH, max_bytes: int | None = None, what: str = "JSON"
) -> None:
    """Raise JsonTooLarge / JsonTooDeep (one line naming ``what``) unless
    ``text`` is within the bounds."""
    size = len(text)
    if max_bytes is not None and size > max_bytes:
        raise JsonTooLarge(f"{what}: too large ({size} bytes, at most {max_bytes})")
    if depth(text, stop_at=max_depth) > max_depth:
        raise JsonTooDeep(f"{what}: nested too deeply (at most {max_depth} levels)")


def loads_bounded(
    text: str | bytes,
    max_depth: int = MAX_DEPTH,
    max_bytes: int | None = None,
    what: str = "JSON",
) -> Any:
    """``json.loads`` that refuses, with a one-line ValueError, documents
    over ``max_bytes`` (length of ``text``: bytes, or characters for a str)
    or nested deeper than ``max_depth``.  Invalid JSON is a plain ValueError
    (``json.JSONDecodeError``) as before."""
    check(text, max_depth, max_bytes, what)
    try:
        return json.loads(text)
    except RecursionError:  # cannot happen after the check; never let it out
        raise JsonTooDeep(f"{what}: nested too deeply (at most {max_depth} levels)") from None
