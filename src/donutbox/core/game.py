"""A game in progress: players' trays and piles, turns, scores and the end.

``Game`` is the authority on the rules (RULES.md sections 3 and 5-8).  It
does no I/O.  Randomness enters only through a seed given to ``Game.new``;
hidden information leaves only through ``view(player)``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from .cards import FLAVOUR_INDEX, FLAVOURS, ROLL, ROTATIONS, STANDARD_DECK, check_face, rotate
from .counter import DELIVERED_BIT, Counter, Run, pack
from .errors import IllegalMove, InputError, NotationError
from .geometry import COORD_LIMIT, OFFSET, STRIDE, cell, xy
from .matching import lock_choices, start_lock
from .moves import BOX, PASS, PLACE, SWAP, Move
from .policy import MatchRule
from .rng import SEED_LIMIT, shuffled_decks
from .rules import GAME_INFO, Rules

if TYPE_CHECKING:
    from .view import PlayerView

TRAY_SIZE: Final = GAME_INFO.tray_size

#: How a delivery happened (RULES.md section 9, ``deliveries``).
SEALED: Final = "sealed"
BOXED: Final = "boxed"
END: Final = "end"


class Delivery(NamedTuple):
    """A box that scored: sealed, boxed, or scored at the end."""

    ply: int | None  # index of the move, None for end scoring
    how: str
    size: int
    points: int
    to: tuple[int, ...]  # players it scored for (each gets ``points``)
    first: tuple[int, int]  # its first cell in reading order

    def to_dict(self) -> dict[str, Any]:
        return {
            "ply": self.ply,
            "how": self.how,
            "size": self.size,
            "points": self.points,
            "to": list(self.to),
        }


class Game:
    """One game.  Build with ``Game.new``, ``Game.deal``, ``Game.free`` or
    ``Game.from_record``; change only with ``play`` (and ``end`` for a free game)."""

    __slots__ = (
        "_delivered",
        "_finished",
        "_lap",
        "_match",
        "_scores",
        "_streak",
        "_to_move",
        "counter",
        "decks",
        "deliveries",
        "ended_by",
        "free",
        "history",
        "meta",
        "names",
        "piles",
        "rules",
        "seed",
        "start",
        "trays",
    )

    # -- construction -------------------------------------------------------

    def __init__(self, rules: Rules, names: Sequence[str], start: str) -> None:
        """Internal: use the ``new`` / ``deal`` / ``free`` / ``from_record`` builders."""
        n = len(names)
        if not GAME_INFO.min_players <= n <= GAME_INFO.max_players:
            raise ValueError(f"a game has 2 to 4 players, not {n}")
        self.rules = rules
        self._match = rules.match_rule
        self.names: tuple[str, ...] = tuple(names)
        self.counter = Counter(rules.layout_rule)
        self.trays: list[list[str]] = [[] for _ in range(n)]
        self.piles: list[list[str]] = [[] for _ in range(n)]  # top of pile = end of list
        self._scores = [0] * n
        self._delivered = [0] * n
        self._to_move = 0
        self._finished = False
        self._lap: int | None = None  # turns left in the Final Lap
        self._streak = 0  # consecutive swaps and passes
        self.history: list[Move] = []
        self.deliveries: list[Delivery] = []
        self.free = False
        self.decks: tuple[tuple[str, ...], ...] | None = None
        self.seed: int | None = None
        self.start = start
        self.meta: dict[str, Any] = {}
        self.ended_by: str | None = None
        lock = start_lock(start) if ROLL in start else ""
        self.counter.place(
            cell(0, 0),
            tuple(  # type: ignore[arg-type]
                pack(FLAVOUR_INDEX[lock if q == ROLL else q], q == ROLL, None) for q in start
            ),
        )

    @classmethod
    def new(
        cls,
        rules: Rules | None = None,
        players: int | Sequence[str] = 2,
        seed: int | None = None,
    ) -> Game:
        """A dealt game with a standard deck per player, shuffled from ``seed``.

        Without a seed, one is drawn from the system's secure source and kept
        in the game, so the game can still be reproduced from its record.
        """
        names = _names(players)
        if seed is None:
            seed = secrets.randbelow(SEED_LIMIT)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
            raise ValueError(f"seed must be an integer from 0 to {SEED_LIMIT - 1}")
        decks = shuffled_decks(seed, [list(STANDARD_DECK) for _ in names])
        game = cls.deal(decks, rules, names)
        game.seed = seed
        return game

    @classmethod
    def deal(
        cls,
        decks: Sequence[Sequence[str]],
        rules: Rules | None = None,
        players: int | Sequence[str] | None = None,
    ) -> Game:
        """A dealt game from decks given top card first (RULES.md section 3)."""
        names = _names(len(decks) if players is None else players)
        if len(decks) != len(names):
            raise ValueError(f"{len(names)} players need {len(names)} decks, not {len(decks)}")
        for i, deck in enumerate(decks):
            need = 6 if i == 0 else 5
            if len(deck) < need:
                raise ValueError(
                    f"deck {i} has {len(deck)} cards; player {i} needs at least {need}"
                )
            for face in deck:
                check_face(face)
        start = decks[0][TRAY_SIZE]
        game = cls(rules or Rules(), names, start)
        game.decks = tuple(tuple(d) for d in decks)
        for i, deck in enumerate(decks):
            game.trays[i] = list(deck[:TRAY_SIZE])
            rest = list(deck[TRAY_SIZE + 1 :] if i == 0 else deck[TRAY_SIZE:])
            rest.reverse()
            game.piles[i] = rest
        return game

    @classmethod
    def free_game(
        cls, start: str, rules: Rules | None = None, players: int | Sequence[str] = 2
    ) -> Game:
        """A free game (analysis board): any face may be played, no trays or piles."""
        game = cls(rules or Rules(), _names(players), check_face(start))
        game.free = True
        return game

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Game:
        """Read a record (RULES.md section 9) and play all its moves.

        Raises RecordError if it cannot be read, IllegalMove (with the ply in
        its message) at the first illegal move.
        """
        from .record import load

        return load(record)

    def to_record(self) -> dict[str, Any]:
        from .record import dump

        return dump(self)

    def restart(self) -> Game:
        """The same deal before any move: rules, players, decks or start
        card, seed and metadata (``replay.cut`` plays moves on it).
        InputError for a sampled world, which has no deal."""
        if self.free:
            new = Game.free_game(self.start, self.rules, self.names)
        elif self.decks is None:
            raise InputError("a sampled world has no deal to start again from")
        else:
            new = Game.deal(self.decks, self.rules, self.names)
            new.seed = self.seed
        new.meta = dict(self.meta)
        return new

    def copy(self) -> Game:
        """An independent copy (shallow copies of flat containers only)."""
        new = Game.__new__(Game)
        new.rules = self.rules
        new._match = self._match
        new.names = self.names
        new.counter = self.counter.copy()
        new.trays = [t[:] for t in self.trays]
        new.piles = [p[:] for p in self.piles]
        new._scores = self._scores[:]
        new._delivered = self._delivered[:]
        new._to_move = self._to_move
        new._finished = self._finished
        new._lap = self._lap
        new._streak = self._streak
        new.history = self.history[:]
        new.deliveries = self.deliveries[:]
        new.free = self.free
        new.decks = self.decks
        new.seed = self.seed
        new.start = self.start
        new.meta = dict(self.meta)
        new.ended_by = self.ended_by
        return new

    # -- reading ------------------------------------------------------------

    @property
    def players(self) -> int:
        return len(self.names)

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def to_move(self) -> int | None:
        """The player to move, None once the game is finished."""
        return None if self._finished else self._to_move

    @property
    def ply(self) -> int:
        """How many moves have been played."""
        return len(self.history)

    @property
    def scores(self) -> list[int]:
        return self._scores[:]

    @property
    def boxes_delivered(self) -> list[int]:
        """Sealed boxes scored plus boxes boxed, per player (the tie-break)."""
        return self._delivered[:]

    @property
    def final_lap(self) -> bool:
        return self._lap is not None

    @property
    def final_lap_turns(self) -> int | None:
        """Turns left in the Final Lap, or None before it starts."""
        return self._lap

    @property
    def swap_streak(self) -> int:
        """Consecutive turns that ended in a swap or pass (the deadlock guard)."""
        return self._streak

    @property
    def cards_left(self) -> int:
        """Cards in all trays and piles together."""
        return sum(map(len, self.trays)) + sum(map(len, self.piles))

    @property
    def winners(self) -> list[int]:
        """Highest score, then most boxes delivered; shared on a tie of both.
        Empty until the game is finished."""
        if not self._finished:
            return []
        best = max(self._scores)
        tied = [p for p, s in enumerate(self._scores) if s == best]
        most = max(self._delivered[p] for p in tied)
        return [p for p in tied if self._delivered[p] == most]

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know: see ``PlayerView``."""
        from .view import make_view

        return make_view(self, player)

    # -- legal moves --------------------------------------------------------

    def legal_moves(self, cards: Iterable[str] | None = None) -> list[Move]:
        """Every legal action of the player to move, each once.

        In a free game there are no trays: ``cards`` names the faces whose
        placements to list (box-its are always listed).  In a dealt game
        ``cards`` is ignored.
        """
        if self._finished:
            return []
        if self.free:
            faces = list(dict.fromkeys(check_face(f) for f in (cards or ())))
        else:
            faces = list(dict.fromkeys(self.trays[self._to_move]))
        out = self._placements(faces)
        placed = bool(out)
        out.extend(self._box_moves())
        if not self.free and not placed:
            if self.piles[self._to_move]:
                out.extend(Move(SWAP, f) for f in faces)
            else:
                out.append(Move(PASS))
        return out

    def _placements(self, faces: list[str]) -> list[Move]:
        return placements(self.counter, faces, self._match)

    def _box_moves(self) -> list[Move]:
        return box_moves(self.counter, self._to_move)

    def can_place(self) -> bool:
        """Can the player to move place any card of their tray?"""
        if self._finished or self.free:
            return False
        faces = set(self.trays[self._to_move])
        fits = self._match.fits
        for key in {pk & 0xFFFF for pk in self.counter.places.values()}:
            for face in faces:
                if fits(face, key):
                    return True
        return False

    # -- playing ------------------------------------------------------------

    def check(self, move: Move | str) -> Move:
        """The move as it will be played (Cinnamon Roll lock filled in), or
        IllegalMove naming the broken rule.  Changes nothing."""
        if isinstance(move, str):
            move = Move.parse(move)
        elif not isinstance(move, Move):
            raise NotationError(f"not a move: {type(move).__name__}")
        if self._finished:
            raise IllegalMove("the game is over")
        kind = move.kind
        if kind == PLACE:
            return self._check_place(move)
        if kind == BOX:
            self._box_run(move)
            return move
        if self.free:
            raise IllegalMove(f"{kind}: there is no {kind} in a free game")
        tray = self.trays[self._to_move]
        if kind == SWAP:
            if move.face not in tray:
                raise IllegalMove(f"swap: {move.face} is not in your tray")
            if self.can_place():
                raise IllegalMove("swap: allowed only when no card in your tray can be placed")
            if not self.piles[self._to_move]:
                raise IllegalMove("swap: your pile is empty (pass instead)")
            return move
        if kind == PASS:
            if self.can_place():
                raise IllegalMove("pass: allowed only when no card in your tray can be placed")
            if self.piles[self._to_move]:
                raise IllegalMove("pass: your pile still has cards (swap instead)")
            return move
        raise NotationError(f"unknown move kind {kind!r}")

    def is_legal(self, move: Move | str) -> bool:
        try:
            self.check(move)
        except (IllegalMove, NotationError):
            return False
        return True

    def play(self, move: Move | str) -> Move:
        """Play one move for the player to move; return it as played.

        Raises IllegalMove (a ValueError) naming the broken rule, and then
        changes nothing.
        """
        move = self.check(move)
        me = self._to_move
        lap_before = self._lap
        kind = move.kind
        ply = len(self.history)
        if kind == PLACE:
            self._put(move, me, ply)
            if not self.free:
                tray = self.trays[me]
                tray.remove(move.face)
                pile = self.piles[me]
                while len(tray) < TRAY_SIZE and pile:
                    tray.append(pile.pop())
                    if not pile and self._lap is None:
                        self._lap = len(self.names) - 1
            self._streak = 0
        elif kind == BOX:
            r = self._box_run(move)
            self.counter.deliver(r)
            points = r.points
            self._scores[me] += points
            self._delivered[me] += 1
            self.deliveries.append(Delivery(ply, BOXED, len(r.cells), points, (me,), xy(r.first)))
            self._streak = 0
        elif kind == SWAP:
            tray = self.trays[me]
            pile = self.piles[me]
            tray.remove(move.face)
            pile.insert(0, move.face)
            tray.append(pile.pop())
            self._streak += 1
        else:
            self._streak += 1
        self.history.append(move)
        if lap_before is not None:
            self._lap = lap_before - 1
            if self._lap <= 0:
                self._finish("final-lap")
                return move
        if self._streak and not self.free and self._streak >= self.cards_left:
            self._finish("deadlock")
            return move
        self._to_move = (me + 1) % len(self.names)
        return move

    def end(self) -> None:
        """End a free game now (the record's ``"end": true``): end scoring applies."""
        if not self.free:
            raise IllegalMove("only a free game is ended by hand; a dealt game ends by the rules")
        if self._finished:
            raise IllegalMove("the game is over")
        self._finish("record")

    # -- internals ----------------------------------------------------------

    def _check_place(self, move: Move) -> Move:
        face, x, y, rot, lock = move.face, move.x, move.y, move.rot, move.lock
        if self.free:
            check_face(face)
        elif face not in self.trays[self._to_move]:
            raise IllegalMove(f"{face} is not in your tray")
        counter = self.counter
        p = cell(x, y)
        pk = counter.places.get(p)
        key = None if pk is None else pk & 0xFFFF
        if key is not None:
            options = self._match.fits(face, key)
            if (rot, lock) in options:
                return move
        # Slow path: find the rule that is broken, in the order a player
        # would check them.
        if rot not in ROTATIONS:
            raise NotationError(f"rotation must be 0, 90, 180 or 270, not {rot}")
        if lock and (ROLL not in face or lock not in FLAVOURS):
            raise NotationError(f"bad lock ={lock}: only a card with an R locks, to C, S, H or B")
        if abs(x) > COORD_LIMIT or abs(y) > COORD_LIMIT:
            raise NotationError(f"coordinates are limited to +/-{COORD_LIMIT}")
        if not counter.layout.allows(x, y):
            raise IllegalMove(counter.layout.why_not(x, y))
        if not counter.is_empty(p):
            raise IllegalMove(f"the card would overlap the counter at {x},{y}")
        if not counter.touches(p):
            raise IllegalMove(
                "the card must touch the counter edge to edge (a corner is no contact)"
            )
        if key is None:
            raise IllegalMove(
                "no touching pair: the card touches only delivered donuts, which form no pairs"
            )
        quads = rotate(face, rot)
        masks = [(key >> (4 * i)) & 15 for i in range(4)]
        why = self._match.mismatch(quads, masks)
        if why is not None:
            raise IllegalMove(why)
        if ROLL not in quads:
            return move
        choices = lock_choices(quads, masks)
        if not lock:
            if len(choices) == 1:
                return move._replace(lock=choices[0])
            raise IllegalMove(
                "Cinnamon Roll: choose its lock, one of " + ", ".join(f"={c}" for c in choices)
            )
        raise IllegalMove(f"Cinnamon Roll: it can lock to {' or '.join(choices)} here, not {lock}")

    def _box_run(self, move: Move) -> Run:
        counter = self.counter
        c = cell(move.x, move.y)
        code = counter.cells.get(c)
        where = f"{move.x},{move.y}"
        if code is None:
            raise IllegalMove(f"box it: there is no donut at {where}")
        if code & DELIVERED_BIT:
            raise IllegalMove(f"box it: the run at {where} is already delivered")
        r = counter.runs[counter.run_of[c]]
        size = len(r.cells)
        if size < 3:
            raise IllegalMove(f"box it: a run of {size} is not a box (a box needs 3 donuts)")
        held = r.held[self._to_move]
        if 2 * held < size:
            raise IllegalMove(
                f"box it: you hold {held} of its {size} donuts; you need at least half"
            )
        return r

    def _put(self, move: Move, me: int, ply: int) -> None:
        sealed = self.counter.place(cell(move.x, move.y), card_codes(move, me))
        for r in sealed:
            size = len(r.cells)
            if size < 3:
                continue
            to = (me,) if self.rules.closers else self._majority(r)
            points = r.points
            for p in to:
                self._scores[p] += points
                self._delivered[p] += 1
            self.deliveries.append(Delivery(ply, SEALED, size, points, to, xy(r.first)))

    def _majority(self, r: Run) -> tuple[int, ...]:
        held = r.held[: len(self.names)]
        best = max(held)
        if best == 0:
            return ()
        return tuple(p for p, h in enumerate(held) if h == best)

    def _finish(self, why: str) -> None:
        for r in self.counter.boxes():
            to = self._majority(r)
            points = r.points
            for p in to:
                self._scores[p] += points
            self.deliveries.append(Delivery(None, END, len(r.cells), points, to, xy(r.first)))
        self._finished = True
        self.ended_by = why


def placements(counter: Counter, faces: list[str], match: MatchRule) -> list[Move]:
    """Every legal placement of these faces on the counter, lock choices included.

    This is the hot path of every AI and of move listing, so it is built from
    memo tables that are pure functions of their keys (bounded in size):

    - per face and requirement, the fitting (rotation, lock) choices;
    - per face and (place, requirement), the list of moves, which most
      places keep from one ply to the next;
    - per face and place, each move object once, reused whenever the place's
      requirement changes back and forth.
    """
    out: list[Move] = []
    if not faces:
        return out
    tables = _TABLES.get(match)
    if tables is None:
        tables = _TABLES[match] = {}
    places = counter.places.values()
    extend = out.extend
    for face in faces:
        table = tables.get(face)
        if table is None or len(table.lists) > _TABLE_LIMIT:
            table = tables[face] = _FaceTable(face, match)
        get = table.lists.get
        for pk in places:
            found = get(pk)
            if found is None:
                found = table.build(pk)
            if found:
                extend(found)
    return out


class _FaceTable:
    """Memo tables of one face under one matching rule (see ``placements``)."""

    __slots__ = ("face", "fits", "lists", "match", "moves")

    def __init__(self, face: str, match: MatchRule) -> None:
        self.face = face
        self.match = match
        self.fits: dict[int, tuple[tuple[int, str], ...]] = {}
        self.lists: dict[int, list[Move]] = {}
        self.moves: dict[int, dict[tuple[int, str], Move]] = {}

    def build(self, pk: int) -> list[Move]:
        p = pk >> 16
        key = pk & 0xFFFF
        options = self.fits.get(key)
        if options is None:
            options = self.fits[key] = self.match.fits(self.face, key)
        if not options:
            self.lists[pk] = _NONE
            return _NONE
        made = self.moves.get(p)
        if made is None:
            made = self.moves[p] = {}
        found = []
        for fit in options:
            move = made.get(fit)
            if move is None:
                y, x = divmod(p, STRIDE)
                move = made[fit] = _new_move(
                    Move, (PLACE, self.face, x - OFFSET, y - OFFSET, fit[0], fit[1])
                )
            found.append(move)
        self.lists[pk] = found  # a list, never mutated
        return found


_NONE: Final[list[Move]] = []
_TABLES: Final[dict[MatchRule, dict[str, _FaceTable]]] = {}
_TABLE_LIMIT: Final = 50_000
_new_move = tuple.__new__


def box_moves(counter: Counter, player: int) -> list[Move]:
    """Box-its open to ``player``, each naming its run's first cell in reading order."""
    box_ids = counter.box_ids
    if not box_ids:
        return []
    firsts = []
    runs = counter.runs
    for rid in box_ids:
        r = runs[rid]
        if 2 * r.held[player] >= len(r.cells):
            firsts.append(r.first)
    firsts.sort()
    return [_box_move(c) for c in firsts]


def _box_move(c: int) -> Move:
    found = _BOX_MEMO.get(c)
    if found is None:
        found = _BOX_MEMO[c] = Move(BOX, "", *xy(c))
    return found


_BOX_MEMO: Final[dict[int, Move]] = {}


def card_codes(move: Move, owner: int) -> tuple[int, int, int, int]:
    """The packed donuts (NW, NE, SE, SW) a placement puts down; memoised."""
    k = (move.face, move.rot, move.lock, owner)
    found = _CODES_MEMO.get(k)
    if found is None:
        quads = rotate(move.face, move.rot)
        lock = move.lock
        a, b, c, d = (
            pack(FLAVOUR_INDEX[lock], True, owner)
            if q == ROLL
            else pack(FLAVOUR_INDEX[q], False, owner)
            for q in quads
        )
        found = _CODES_MEMO[k] = (a, b, c, d)
    return found


_CODES_MEMO: Final[dict[tuple[str, int, str, int], tuple[int, int, int, int]]] = {}


def _names(players: int | Sequence[str]) -> list[str]:
    if isinstance(players, bool):
        raise ValueError("players must be a count or a list of names")
    if isinstance(players, int):
        if not GAME_INFO.min_players <= players <= GAME_INFO.max_players:
            raise ValueError(f"a game has 2 to 4 players, not {players}")
        return [f"Player {i + 1}" for i in range(players)]
    names = list(players)
    if not GAME_INFO.min_players <= len(names) <= GAME_INFO.max_players:
        raise ValueError(f"a game has 2 to 4 players, not {len(names)}")
    for name in names:
        if not isinstance(name, str):
            raise ValueError("player names must be strings")
        if len(name) > GAME_INFO.max_name_length:
            raise ValueError(f"a player name is longer than {GAME_INFO.max_name_length} characters")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a player name is not valid Unicode text") from None
    return names
