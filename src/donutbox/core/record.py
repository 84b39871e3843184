"""Game records, ``donutbox/1`` (docs/spec.md, 'Game records and notation'):
read, check, write.

Reading is strict: anything the format does not allow is refused with a
``RecordError`` whose one-line message names the field.  Unknown top-level
keys are metadata, kept as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, NamedTuple

from .cards import check_face
from .errors import IllegalMove, NotationError, RecordError, move_label
from .game import Game
from .moves import Move
from .rng import SEED_LIMIT
from .rules import GAME_INFO, Rules

FORMAT: Final = "donutbox/1"
SETUP_KEYS: Final = ("decks", "seed", "start")
KNOWN_KEYS: Final = frozenset({"format", "rules", "players", "moves", "end", *SETUP_KEYS})
#: Generous limits that no real game comes near; they keep hostile records cheap.
MAX_DECK: Final = 1000
MAX_MOVES: Final = 100_000
MAX_NAME: Final = GAME_INFO.max_name_length


class Replay(NamedTuple):
    """A record played as far as it is legal."""

    game: Game
    #: None, or (ply, move as written, reason) for the first illegal move.
    error: tuple[int, str, str] | None


def _players(raw: object) -> list[str]:
    if not isinstance(raw, list):
        raise RecordError("players must be a list of 2 to 4 names")
    if not GAME_INFO.min_players <= len(raw) <= GAME_INFO.max_players:
        raise RecordError(f"players must list 2 to 4 names, not {len(raw)}")
    for i, name in enumerate(raw):
        if not isinstance(name, str):
            raise RecordError(f"players[{i}] must be a string")
        if len(name) > MAX_NAME:
            raise RecordError(f"players[{i}] is longer than {MAX_NAME} characters")
    return list(raw)


def _decks(raw: object, players: int) -> list[list[str]]:
    if not isinstance(raw, list):
        raise RecordError("decks must be a list of decks, one per player")
    if len(raw) != players:
        raise RecordError(f"decks: {players} players need {players} decks, not {len(raw)}")
    decks = []
    for i, deck in enumerate(raw):
        if not isinstance(deck, list):
            raise RecordError(f"decks[{i}] must be a list of faces")
        need = 6 if i == 0 else 5
        if len(deck) < need:
            raise RecordError(f"decks[{i}] has {len(deck)} cards; player {i} needs at least {need}")
        if len(deck) > MAX_DECK:
            raise RecordError(f"decks[{i}] has more than {MAX_DECK} cards")
        for j, face in enumerate(deck):
            try:
                check_face(face)
            except NotationError as err:
                raise RecordError(f"decks[{i}][{j}]: {err}") from None
        decks.append(list(deck))
    return decks


def _seed(raw: object) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise RecordError("seed must be an integer")
    if not 0 <= raw < SEED_LIMIT:
        raise RecordError(f"seed must be from 0 to {SEED_LIMIT - 1}")
    return raw


def _moves(raw: object) -> list[Move]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RecordError("moves must be a list of strings")
    if len(raw) > MAX_MOVES:
        raise RecordError(f"moves: more than {MAX_MOVES} moves")
    out = []
    for i, text in enumerate(raw):
        try:
            out.append(Move.parse(text))
        except NotationError as err:
            raise RecordError(f"{move_label(i)}: {err}") from None
    return out


def check_text(value: object, where: str = "record") -> None:
    """Refuse strings that are not valid Unicode text (JSON can smuggle lone
    surrogates in with ``\\ud800``): such a record could not be written back
    as UTF-8."""
    stack: list[tuple[object, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise RecordError(f"{at} is not valid Unicode text (a lone surrogate)") from None
        elif isinstance(item, dict):
            for key, sub in item.items():
                stack.append((key, at))
                stack.append((sub, f"{at}.{key}" if at != "record" else str(key)))
        elif isinstance(item, list):
            stack.extend((sub, f"{at}[{i}]") for i, sub in enumerate(item))


def setup(record: object) -> tuple[Game, list[Move], bool]:
    """Check a record and build its starting position.

    Returns the game before any move, the parsed moves, and whether a free
    game asks to be ended after them.
    """
    if not isinstance(record, dict):
        raise RecordError("a record must be a JSON object")
    check_text(record)
    if "format" not in record:
        raise RecordError('format is missing (it must be "donutbox/1")')
    if record["format"] != FORMAT:
        raise RecordError(f'format must be "{FORMAT}", not {str(record["format"])[:40]!r}')
    rules = Rules.from_dict(record["rules"]) if "rules" in record else Rules()
    if "players" not in record:
        raise RecordError("players is missing (a list of 2 to 4 names)")
    names = _players(record["players"])
    moves = _moves(record.get("moves"))
    end = record.get("end", False)
    if "start" in record:
        if "decks" in record or "seed" in record:
            raise RecordError("start (a free game) cannot go with decks or seed")
        try:
            start = check_face(record["start"])
        except NotationError as err:
            raise RecordError(f"start: {err}") from None
        if not isinstance(end, bool):
            raise RecordError("end must be true or false")
        game = Game.free_game(start, rules, names)
    elif "decks" in record:
        seed = _seed(record["seed"]) if "seed" in record else None
        game = Game.deal(_decks(record["decks"], len(names)), rules, names, seed)
        end = False
    elif "seed" in record:
        game = Game.new(rules, names, _seed(record["seed"]))
        end = False
    else:
        raise RecordError("the record needs decks, seed or start")
    game.meta = {k: v for k, v in record.items() if k not in KNOWN_KEYS}
    if not game.free and "end" in record:
        game.meta["end"] = record["end"]
    return game, moves, bool(end)


def play_moves(game: Game, moves: Sequence[Move], end: bool) -> tuple[int, str, str] | None:
    """The one move loop: play ``moves`` on ``game``, then end it if ``end``
    (a free game's ``"end": true``), stopping at the first illegal one.

    Returns None, or (ply, move as written, reason) for the first illegal
    move (``"end"`` for an illegal end); the game is then the position
    before it.
    """
    for ply, move in enumerate(moves):
        try:
            game.play(move)
        except IllegalMove as err:
            return (ply, str(move), str(err))
    if end:
        try:
            game.end()
        except IllegalMove as err:
            return (len(moves), "end", str(err))
    return None


def play_all(game: Game, moves: Sequence[Move], end: bool) -> None:
    """``play_moves``, strictly: IllegalMove names the ply of the first
    illegal move (the game is then the position before it)."""
    error = play_moves(game, moves, end)
    if error is None:
        return
    ply, text, reason = error
    if text == "end":
        raise IllegalMove(f"the record's end is illegal: {reason}")
    raise IllegalMove(f"{move_label(ply, text)} is illegal: {reason}")


def replay_partial(record: object) -> Replay:
    """Play a record's moves up to the first illegal one, and say which it is
    (``donutbox replay`` reports it; ``load`` and ``replay.replay`` raise
    instead).

    Raises RecordError if the record cannot be read at all.
    """
    game, moves, end = setup(record)
    return Replay(game, play_moves(game, moves, end))


def load(record: object) -> Game:
    """Read a record and play all its moves.  RecordError if it cannot be
    read; IllegalMove names the ply of the first illegal move."""
    game, moves, end = setup(record)
    play_all(game, moves, end)
    return game


def dump(game: Game) -> dict[str, Any]:
    """The record of a game; it carries ``decks`` so any reader can replay it,
    and only the rule options that are not at their default."""
    out: dict[str, Any] = {
        "format": FORMAT,
        "rules": game.rules.record_options(),
        "players": list(game.names),
    }
    if game.free:
        out["start"] = game.start
    else:
        if game.seed is not None:
            out["seed"] = game.seed
        assert game.decks is not None
        out["decks"] = [list(d) for d in game.decks]
    out["moves"] = [str(m) for m in game.history]
    if game.free and game.finished:
        out["end"] = True
    for key, value in game.meta.items():
        out.setdefault(key, value)
    return out
