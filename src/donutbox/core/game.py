"""A game in progress: players' trays and piles, turns, scores and the end.

``Game`` is the authority on the rules (docs/spec.md, 'Setup', 'Runs and
boxes', 'Delivery', 'A turn' and 'The end'); it asks its rules' policies
(``policy.py``) how cards match and where they may sit, and ``movegen`` for
the legal moves.  It does no I/O.  Randomness enters only through a seed given to ``Game.new``;
hidden information leaves only through ``view(player)``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from typing import Final

from .cards import FLAVOUR_INDEX, FLAVOURS, ROLL, ROTATIONS, STANDARD_DECK, check_face, rotate
from .counter import DELIVERED_BIT, Counter, Run, pack
from .errors import IllegalMove, InputError, NotationError
from .geometry import COORD_LIMIT, cell, xy
from .matching import lock_choices, slot_of, start_lock
from .movegen import box_moves, can_place, distinct, fit_slots_of, legal_moves
from .moves import BOX, PASS, PLACE, SWAP, Move
from .rng import SEED_LIMIT, shuffled_decks
from .rules import GAME_INFO, Rules
from .scoring import ScoringRule
from .state import BOXED, END, SEALED, Delivery, GameState, winners
from .view import PlayerView, make_view

TRAY_SIZE: Final = GAME_INFO.tray_size
_new_state = tuple.__new__
#: ``Delivery(...)`` without its generated (interpreted) ``__new__``.
_new_delivery: Final = tuple.__new__


class Game:
    """One game.  Build with ``Game.new``, ``Game.deal`` or ``Game.free_game``
    (or ``Game.from_state``; ``record.load`` reads a record into one);
    change only with ``play`` (and ``end`` for a free game).  Its fields are
    those of ``GameState``; ``record.dump`` writes its record."""

    __slots__ = (
        "_delivered",
        "_finished",
        "_lap",
        "_match",
        "_scores",
        "_scoring",
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

    def __init__(
        self, rules: Rules, names: Sequence[str], start: str, state: GameState | None = None
    ) -> None:
        """Internal: use the ``new`` / ``deal`` / ``free_game`` builders.
        The start card is down; trays and piles are empty.  With ``state``
        (used by ``from_state`` and ``copy``) the game adopts that state
        instead, and the other arguments are not read.  (No
        ``Game.__new__`` trick: the compiled core's native classes are built
        only through ``__init__``.)"""
        if state is not None:
            self._adopt(state)
            return
        n = len(names)
        if not GAME_INFO.min_players <= n <= GAME_INFO.max_players:
            raise InputError(f"a game has 2 to 4 players, not {n}")
        counter = Counter(rules.layout_rule)
        lock = start_lock(start) if ROLL in start else ""
        counter.place(
            cell(0, 0),
            tuple(  # type: ignore[arg-type]
                pack(FLAVOUR_INDEX[lock if q == ROLL else q], q == ROLL, None) for q in start
            ),
        )
        self._adopt(
            GameState(
                rules=rules,
                names=tuple(names),
                counter=counter,
                trays=[[] for _ in range(n)],
                piles=[[] for _ in range(n)],
                scores=[0] * n,
                delivered=[0] * n,
                to_move=0,
                finished=False,
                final_lap_turns=None,
                swap_streak=0,
                history=[],
                deliveries=[],
                free=False,
                decks=None,
                seed=None,
                start=start,
                meta={},
                ended_by=None,
            )
        )

    def _adopt(self, s: GameState) -> None:
        # The one place that sets every field (see ``state.py``), in
        # GameState's order.  Unpacking is the fastest way to set them all:
        # ``copy`` is on every AI's hot path.
        (
            self.rules,
            self.names,
            self.counter,
            self.trays,
            self.piles,
            self._scores,
            self._delivered,
            self._to_move,
            self._finished,
            self._lap,
            self._streak,
            self.history,
            self.deliveries,
            self.free,
            self.decks,
            self.seed,
            self.start,
            self.meta,
            self.ended_by,
        ) = s
        self._match = s.rules.match_rule
        self._scoring = s.rules.scoring_rule

    @classmethod
    def from_state(cls, state: GameState) -> Game:
        """A game with exactly this state; it keeps the state's containers
        (pass fresh ones: ``game.state()`` makes them)."""
        return cls(state.rules, state.names, state.start, state)

    def state(self) -> GameState:
        """Every field of the game, in fresh containers (changing them does
        not change the game)."""
        return _new_state(  # GameState(...) without its slower generated __new__
            GameState,
            (
                self.rules,
                self.names,
                self.counter.copy(),
                [t[:] for t in self.trays],
                [p[:] for p in self.piles],
                self._scores[:],
                self._delivered[:],
                self._to_move,
                self._finished,
                self._lap,
                self._streak,
                self.history[:],
                self.deliveries[:],
                self.free,
                self.decks,
                self.seed,
                self.start,
                dict(self.meta),
                self.ended_by,
            ),
        )

    def copy(self) -> Game:
        """An independent copy."""
        return Game(self.rules, self.names, self.start, self.state())

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
            raise InputError(f"seed must be an integer from 0 to {SEED_LIMIT - 1}")
        decks = shuffled_decks(seed, [list(STANDARD_DECK) for _ in names])
        return cls.deal(decks, rules, names, seed)

    @classmethod
    def deal(
        cls,
        decks: Sequence[Sequence[str]],
        rules: Rules | None = None,
        players: int | Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Game:
        """A dealt game from decks given top card first (docs/spec.md,
        'Setup').  ``seed``: the seed the decks were shuffled from, if any,
        kept for the record."""
        names = _names(len(decks) if players is None else players)
        if len(decks) != len(names):
            raise InputError(f"{len(names)} players need {len(names)} decks, not {len(decks)}")
        for i, deck in enumerate(decks):
            need = 6 if i == 0 else 5
            if len(deck) < need:
                raise InputError(
                    f"deck {i} has {len(deck)} cards; player {i} needs at least {need}"
                )
            for face in deck:
                check_face(face)
        start = decks[0][TRAY_SIZE]
        game = cls(rules or Rules(), names, start)
        game.decks = tuple(tuple(d) for d in decks)
        game.seed = seed
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

    def restart(self) -> Game:
        """The same deal before any move: rules, players, decks or start
        card, seed and metadata (``replay.cut`` plays moves on it).
        InputError for a sampled world, which has no deal."""
        if self.free:
            new = Game.free_game(self.start, self.rules, self.names)
        elif self.decks is None:
            raise InputError("a sampled world has no deal to start again from")
        else:
            new = Game.deal(self.decks, self.rules, self.names, self.seed)
        new.meta = dict(self.meta)
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
        return winners(self._scores, self._delivered)

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know: see ``PlayerView``."""
        return make_view(self.state(), player)

    # -- legal moves --------------------------------------------------------

    def legal_moves(self, cards: Iterable[str] | None = None) -> list[Move]:
        """Every legal action of the player to move, each once.

        In a free game there are no trays: ``cards`` names the faces whose
        placements to list (box-its are always listed).  In a dealt game
        ``cards`` is ignored.
        """
        if self._finished:
            return []
        me = self._to_move
        if self.free:
            faces = list(dict.fromkeys(check_face(f) for f in (cards or ())))
            return legal_moves(self.counter, self._match, self._scoring, faces, me, None)
        faces = distinct(self.trays[me])
        return legal_moves(self.counter, self._match, self._scoring, faces, me, len(self.piles[me]))

    def box_moves(self) -> list[Move]:
        """The box-its open to the player to move (none once the game is over)."""
        if self._finished:
            return []
        return box_moves(self.counter, self._to_move, self._scoring)

    def can_place(self) -> bool:
        """Can the player to move place any card of their tray?"""
        if self._finished or self.free:
            return False
        return can_place(self.counter, self._match, self.trays[self._to_move])

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

        Raises IllegalMove (a DonutboxError) naming the broken rule, and then
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
            size = len(r.cells)
            roll = r.rolls > 0
            points = self._points(size, roll)
            self._scores[me] += points
            self._delivered[me] += 1
            self.deliveries.append(
                _new_delivery(Delivery, (ply, BOXED, size, points, (me,), xy(r.first), roll))
            )
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
            slot = slot_of(rot, lock)
            if slot >= 0 and slot in fit_slots_of(self._match, face, key):
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
        if not self._scoring.may_box(held, size):
            raise IllegalMove(self._scoring.why_not_box(held, size))
        return r

    def _put(self, move: Move, me: int, ply: int) -> None:
        sealed = self.counter.place(cell(move.x, move.y), card_codes(move, me))
        if not sealed:
            return
        scoring = self._scoring
        n = len(self.names)
        for r in sealed:
            size = len(r.cells)
            if size < 3:
                continue
            to = _scored_by(scoring, r.held, n, me)
            roll = r.rolls > 0
            points = self._points(size, roll)
            for p in to:
                self._scores[p] += points
                self._delivered[p] += 1
            self.deliveries.append(
                _new_delivery(Delivery, (ply, SEALED, size, points, to, xy(r.first), roll))
            )

    def _points(self, size: int, roll: bool) -> int:
        """A box's value by the scoring rule, from its tables where they
        reach (no call into the rule)."""
        scoring = self._scoring
        table: tuple[int, ...] = scoring.rolled if roll else scoring.plain
        if size < len(table):
            return table[size]
        return scoring.value(size, roll)

    def _finish(self, why: str) -> None:
        scoring = self._scoring
        n = len(self.names)
        for r in self.counter.boxes():
            to = _scored_by(scoring, r.held, n, -1)
            size = len(r.cells)
            roll = r.rolls > 0
            points = self._points(size, roll)
            for p in to:
                self._scores[p] += points
            self.deliveries.append(
                _new_delivery(Delivery, (None, END, size, points, to, xy(r.first), roll))
            )
        self._finished = True
        self.ended_by = why


def _scored_by(scoring: ScoringRule, held: list[int], n: int, closer: int) -> tuple[int, ...]:
    """Who scores a box whose donuts ``held`` (4 counts) belong to them:
    ``scoring.sealed_to`` (``closer`` placed the sealing card) or, with
    ``closer`` -1, ``scoring.end_to``; from the rule's memo (no call into
    the interpreted rule for a box like one met before)."""
    key = (n, closer, held[0], held[1], held[2], held[3])
    memo = scoring.memo
    found = memo.get(key)
    if found is None:
        found = scoring.end_to(held, n) if closer < 0 else scoring.sealed_to(held, n, closer)
        memo[key] = found
    return found


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


#: Shared by threads: a pure function of its key, so a racy fill at worst
#: makes an equal tuple twice (each dict operation is atomic).
_CODES_MEMO: Final[dict[tuple[str, int, str, int], tuple[int, int, int, int]]] = {}


def _names(players: int | Sequence[str]) -> list[str]:
    if isinstance(players, bool):
        raise InputError("players must be a count or a list of names")
    if isinstance(players, int):
        if not GAME_INFO.min_players <= players <= GAME_INFO.max_players:
            raise InputError(f"a game has 2 to 4 players, not {players}")
        return [f"Player {i + 1}" for i in range(players)]
    # list[object]: callers may pass anything, and the compiled core checks
    # declared types on the way in (a TypeError instead of this InputError).
    given: list[object] = list(players)
    if not GAME_INFO.min_players <= len(given) <= GAME_INFO.max_players:
        raise InputError(f"a game has 2 to 4 players, not {len(given)}")
    names: list[str] = []
    for name in given:
        if not isinstance(name, str):
            raise InputError("player names must be strings")
        names.append(name)
        if len(name) > GAME_INFO.max_name_length:
            raise InputError(f"a player name is longer than {GAME_INFO.max_name_length} characters")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError("a player name is not valid Unicode text") from None
    return names
