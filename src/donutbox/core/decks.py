"""Deck compositions as data: what is printed on each player's 30 cards.

The printed rules fix the number of cards (two decks of 30) but not their
faces; the standard deck (docs/spec.md, 'Components') is the project's
choice.  A *composition* says what is on every deck, so that a designer can
try others (docs/deck-lab.md).  It is written as JSON or TOML::

    {"name": "six rolls", "deck": {"rolls": 6}}
    {"name": "my cards", "deck": {"cards": {"CCSS": 10, "RCSH": 8, ...}}}
    {"name": "uneven", "decks": [{"rolls": 10}, {"rolls": 6}]}

A deck is one of:

- ``{"cards": {FACE: COUNT, ...}}`` or ``{"cards": [FACE, ...]}``: the faces
  themselves;
- ``{"halves": N, "threes": N, "rainbows": N, "rolls": N}`` (any of them):
  counts of the standard deck's four kinds.  Each kind cycles through its
  standard faces in an order that keeps the flavours even (``KIND_FACES``).
  Kinds left out share the remaining cards in the standard deck's
  proportions (12 : 6 : 4 : 8), so ``{"rolls": 6}`` is the standard deck with
  6 rolls and 24 other cards mixed as before;
- ``"standard"``: the standard deck.

``"deck"`` gives every colour the same deck; ``"decks"`` gives one deck per
player, in seat order (then the game must have that many players).  Every
deck has exactly ``GAME_INFO.deck_size`` (30) cards, as the printed game
does: the end of the game, the deadlock guard and the bounds the AI and the
environments rely on are all counted in cards.

A composition deals like the standard deck: a seed shuffles each deck, in
turn, with the project's generator (``rng.shuffled_decks``); the standard
composition deals exactly what ``Game.new`` deals from the same seed.  A
game dealt from a composition is an ordinary dealt game: its record carries
its decks, so it replays with nothing new.

Pure and stdlib only.  Bad input raises ``DeckError`` (a ``DonutboxError``)
whose one-line message names the field.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from .cards import FLAVOURS, ROLL, STANDARD_DECK, STANDARD_DECK_KINDS, check_face
from .errors import DonutboxError
from .rules import GAME_INFO

if TYPE_CHECKING:
    from .game import Game
    from .rules import Rules

#: The kinds of card, as the standard deck names them (docs/spec.md, 'Components').
KINDS: Final = ("halves", "threes", "rainbows", "rolls")

#: Each kind's distinct standard faces, in the order a count of that kind
#: takes them (cycling): every prefix of 2 halves, 4 threes, 4 rainbows or 4
#: rolls holds each flavour equally often.  A count equal to the standard one
#: gives exactly the standard cards of that kind.
KIND_FACES: Final[Mapping[str, tuple[str, ...]]] = {
    "halves": ("CCSS", "HHBB", "CCHH", "SSBB", "CCBB", "SSHH"),
    "threes": ("CCSH", "SSHB", "HHBC", "BBCS", "CCBH", "SSBH"),
    "rainbows": ("CSHB", "CSBH", "CHSB", "CHBS"),
    "rolls": ("RCSH", "RCHB", "RCSB", "RSHB", "RHSC", "RBHC", "RBCS", "RBSH"),
}

#: How many of each kind the standard deck has.
STANDARD_COUNTS: Final[Mapping[str, int]] = {
    kind: len(faces) for kind, faces in STANDARD_DECK_KINDS
}

#: A composition's name: short, printable.
MAX_NAME: Final = 60
#: A composition as text (a file, or a request body) is at most this long.
MAX_TEXT: Final = 20_000

_ORDER: Final = {face: i for i, face in reversed(list(enumerate(STANDARD_DECK)))}
_TOP_KEYS: Final = ("name", "about", "deck", "decks")
_SINGULAR: Final = {
    "halves": "half",
    "threes": "three",
    "rainbows": "rainbow",
    "rolls": "roll",
    "other": "other",
}


class DeckError(DonutboxError):
    """A deck composition that cannot be used; the message names the field."""


def kind_of(face: str) -> str:
    """``halves``, ``threes``, ``rainbows`` or ``rolls`` as in the standard
    deck, or ``other`` (one flavour, or two flavours set diagonally)."""
    if ROLL in face:
        return "rolls"
    n = len(set(face))
    if n == 4:
        return "rainbows"
    if n == 3:
        return "threes"
    if n == 2 and (face[0] == face[1] or face[1] == face[2]) and face[0] != face[2]:
        return "halves"
    return "other"


def _sort_key(face: str) -> tuple[int, str]:
    return (_ORDER.get(face, len(STANDARD_DECK)), face)


@dataclass(frozen=True)
class Composition:
    """What is on each deck.  ``decks`` has one deck (every colour gets it)
    or one per player; each deck is its faces in a fixed order (the standard
    deck's order first, then other faces alphabetically), so that equal
    compositions deal equal games."""

    name: str
    decks: tuple[tuple[str, ...], ...]
    about: str = ""

    def for_players(self, players: int) -> list[list[str]]:
        """One unshuffled deck per player."""
        if len(self.decks) == 1:
            return [list(self.decks[0]) for _ in range(players)]
        if len(self.decks) != players:
            raise DeckError(
                f"deck composition '{self.name}' has {len(self.decks)} decks; "
                f"a {players}-player game needs 1 (for every colour) or {players}"
            )
        return [list(d) for d in self.decks]

    def deal(self, players: int, seed: int) -> list[list[str]]:
        """Each player's deck, top card first, shuffled from ``seed``."""
        from .rng import shuffled_decks

        return shuffled_decks(seed, self.for_players(players))

    def new_game(
        self, rules: Rules | None = None, players: int | Sequence[str] = 2, seed: int | None = None
    ) -> Game:
        """A dealt game from this composition, shuffled from ``seed`` (drawn
        from the system's secure source if None, and kept, as ``Game.new``
        does).  A game from a non-standard composition keeps its name in the
        record's metadata, ``"deck"``."""
        import secrets

        from .errors import InputError
        from .game import Game
        from .rng import SEED_LIMIT

        if seed is None:
            seed = secrets.randbelow(SEED_LIMIT)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
            raise InputError(f"seed must be an integer from 0 to {SEED_LIMIT - 1}")
        count = players if isinstance(players, int) else len(players)
        decks = self.deal(count, seed)  # DeckError for a wrong number of decks
        if self.standard:
            return Game.new(rules, players, seed)
        game = Game.deal(decks, rules, players, seed)
        game.meta["deck"] = self.name
        return game

    @property
    def standard(self) -> bool:
        return all(d == STANDARD_DECK for d in self.decks)

    def counts(self, deck: int = 0) -> dict[str, int]:
        """Cards of each kind in one deck (``other`` only when there are any)."""
        out = {kind: 0 for kind in KINDS}
        for face in self.decks[deck]:
            k = kind_of(face)
            out[k] = out.get(k, 0) + 1
        return out

    def flavours(self, deck: int = 0) -> dict[str, int]:
        """Donuts of each flavour (and ``R``) printed on one deck."""
        text = "".join(self.decks[deck])
        return {f: text.count(f) for f in FLAVOURS + ROLL}

    def label(self) -> str:
        """A short description: the kinds of each deck, e.g.
        ``12 halves, 6 threes, 4 rainbows, 8 rolls``."""
        parts = []
        for i in range(len(self.decks)):
            c = self.counts(i)
            parts.append(", ".join(f"{n} {_SINGULAR[k] if n == 1 else k}" for k, n in c.items()))
        return " | ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The composition as data (``parse_composition`` reads it back)."""
        decks = []
        for deck in self.decks:
            cards: dict[str, int] = {}
            for face in deck:
                cards[face] = cards.get(face, 0) + 1
            decks.append({"cards": cards})
        out: dict[str, Any] = {"name": self.name, "decks": decks}
        if self.about:
            out["about"] = self.about
        return out


STANDARD: Final = Composition("standard", (STANDARD_DECK,))


def _count(value: object, where: str) -> int:
    size = GAME_INFO.deck_size
    if isinstance(value, bool) or not isinstance(value, int):
        raise DeckError(f"{where} must be a whole number of cards, not {_shown(value)}")
    if not 0 <= value <= size:
        raise DeckError(f"{where} must be from 0 to {size}, not {value}")
    return value


def _shown(value: object) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float)) else type(value).__name__
    return text if len(text) <= 24 else text[:21] + "..."


def _face(text: object, where: str) -> str:
    try:
        return check_face(text)
    except DonutboxError as err:
        raise DeckError(f"{where}: {err}") from None


def fill(counts: Mapping[str, int]) -> dict[str, int]:
    """The count of every kind: the kinds given as they are, the others
    sharing the rest of the deck in the standard proportions (largest
    remainders, ties to the earlier kind of ``KINDS``).  Counts must already
    be valid; DeckError when they do not add up to one deck."""
    size = GAME_INFO.deck_size
    given = sum(counts.values())
    missing = [k for k in KINDS if k not in counts]
    terms = " + ".join(f"{k} {counts[k]}" for k in KINDS if k in counts)
    if given > size or (not missing and given != size):
        raise DeckError(f"{terms} = {given} cards; a deck has exactly {size}")
    out = {k: counts[k] for k in KINDS if k in counts}
    rest = size - given
    weight = sum(STANDARD_COUNTS[k] for k in missing)
    shares = {k: rest * STANDARD_COUNTS[k] / weight for k in missing}
    for k in missing:
        out[k] = int(shares[k])
    left = rest - sum(out[k] for k in missing)
    by_remainder = sorted(missing, key=lambda k: (-(shares[k] - int(shares[k])), KINDS.index(k)))
    for k in by_remainder[:left]:
        out[k] += 1
    return {k: out[k] for k in KINDS}


def deck_of_kinds(counts: Mapping[str, int]) -> tuple[str, ...]:
    """A deck with ``counts`` cards of each kind (all four kinds given)."""
    faces: list[str] = []
    for kind in KINDS:
        cycle = KIND_FACES[kind]
        faces.extend(cycle[i % len(cycle)] for i in range(counts.get(kind, 0)))
    return tuple(sorted(faces, key=_sort_key))


def from_kinds(counts: Mapping[str, int], name: str | None = None) -> Composition:
    """The composition with every deck of these kind counts (others filled,
    see ``fill``), named e.g. ``rolls 6`` unless ``name`` is given."""
    for kind, n in counts.items():
        if kind not in KINDS:
            raise DeckError(f"unknown kind {kind!r}; the kinds are {', '.join(KINDS)}")
        _count(n, kind)
    full = fill(counts)
    if name is None:
        name = ", ".join(f"{k} {counts[k]}" for k in KINDS if k in counts) or "standard"
    return Composition(name, (deck_of_kinds(full),))


def _deck(raw: object, where: str) -> tuple[str, ...]:
    size = GAME_INFO.deck_size
    if raw == "standard":
        return STANDARD_DECK
    if not isinstance(raw, Mapping):
        raise DeckError(
            f'{where} must be "standard" or an object with "cards" or kind counts '
            f"({', '.join(KINDS)}), not {_shown(raw)}"
        )
    keys = list(raw)
    for key in keys:
        if key != "cards" and key not in KINDS:
            raise DeckError(
                f'{where}: unknown key {_shown(key)}; a deck has "cards" or kind counts '
                f"({', '.join(KINDS)})"
            )
    if "cards" in raw:
        if len(keys) > 1:
            raise DeckError(f'{where}: give "cards" or kind counts, not both')
        cards = raw["cards"]
        faces: list[str] = []
        if isinstance(cards, Mapping):
            counted = [
                (_face(face, f"{where}.cards"), _count(n, f"{where}.cards.{face}"))
                for face, n in cards.items()
            ]
            total = sum(n for _, n in counted)
            if total != size:
                raise DeckError(f"{where}.cards has {total} cards; a deck has exactly {size}")
            faces = [face for face, n in counted for _ in range(n)]
        elif isinstance(cards, list):
            if len(cards) != size:
                raise DeckError(f"{where}.cards has {len(cards)} cards; a deck has exactly {size}")
            faces = [_face(f, f"{where}.cards[{i}]") for i, f in enumerate(cards)]
        else:
            raise DeckError(
                f"{where}.cards must be an object of face: count or a list of faces, "
                f"not {_shown(cards)}"
            )
        return tuple(sorted(faces, key=_sort_key))
    if not keys:
        raise DeckError(f'{where} is empty: give "cards" or kind counts ({", ".join(KINDS)})')
    counts = {k: _count(raw[k], f"{where}.{k}") for k in KINDS if k in raw}
    try:
        return deck_of_kinds(fill(counts))
    except DeckError as err:
        raise DeckError(f"{where}: {err}") from None


def parse_composition(
    data: object, where: str = "composition", default_name: str = "custom"
) -> Composition:
    """Read a composition from parsed JSON/TOML data (strict: unknown keys,
    wrong types, bad faces and wrong deck sizes are errors naming the field)."""
    if not isinstance(data, Mapping):
        raise DeckError(f"{where} must be an object, not {_shown(data)}")
    for key in data:
        if key not in _TOP_KEYS:
            raise DeckError(
                f"{where}: unknown key {_shown(key)}; the keys are {', '.join(_TOP_KEYS)}"
            )
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise DeckError(f"{where}.name must be a non-empty string")
    name = name.strip()
    if len(name) > MAX_NAME or not name.isprintable():
        raise DeckError(f"{where}.name must be printable and at most {MAX_NAME} characters")
    about = data.get("about", "")
    if not isinstance(about, str) or len(about) > 1000:
        raise DeckError(f"{where}.about must be a string of at most 1000 characters")
    if ("deck" in data) == ("decks" in data):
        raise DeckError(
            f'{where} needs "deck" (every colour) or "decks" (one per player), one of them'
        )
    if "deck" in data:
        decks: Sequence[object] = [data["deck"]]
        places = [f"{where}.deck"]
    else:
        raw = data["decks"]
        lo, hi = GAME_INFO.min_players, GAME_INFO.max_players
        if not isinstance(raw, list) or not (raw and len(raw) <= hi):
            raise DeckError(
                f"{where}.decks must be a list of 1 to {hi} decks "
                f"(1 for every colour, or one per player: {lo} to {hi})"
            )
        decks = raw
        places = [f"{where}.decks[{i}]" for i in range(len(raw))]
    parsed = tuple(_deck(d, w) for d, w in zip(decks, places, strict=True))
    return Composition(name, parsed, about)


def parse_text(text: str, fmt: str = "json", default_name: str = "custom") -> Composition:
    """Read a composition from JSON or TOML text (``fmt``: ``json``/``toml``)."""
    if len(text) > MAX_TEXT:
        raise DeckError(f"a deck composition is at most {MAX_TEXT} characters")
    if fmt == "toml":
        try:
            data: object = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise DeckError(f"not TOML: {str(err).splitlines()[0]}") from None
        except RecursionError:  # tomllib recurses once per level of nesting
            raise DeckError("not TOML: nested too deeply") from None
    elif fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise DeckError(
                f"not JSON: {err.msg} (line {err.lineno}, column {err.colno})"
            ) from None
        except RecursionError:
            raise DeckError("not JSON: nested too deeply") from None
    else:
        raise DeckError(f"unknown format {fmt!r}; json or toml")
    return parse_composition(data, default_name=default_name)
