"""The authority over one game: checks intents with the engine, stores every
accepted move, and answers each reader with its own view.

Transport-agnostic (boardgame.io's idea): the HTTP/WebSocket layer and the
tests call the same methods.  Every state sent out is built from
``game.view(seat)``: another player's tray or any pile's order never leaves.
"""

from __future__ import annotations

import copy
import random
import time
from datetime import UTC
from typing import Any

from ..core import DonutboxError, Game, Move, PlayerView
from ..core import cut as cut_game
from ..core.geometry import xy
from ..core.record import dump, load
from ..summary import sorted_moves
from . import failpoints, forfeits
from .errors import ActionError as ActionError  # re-exported: the base of every refusal
from .errors import Conflict, Invalid, NotAllowed, Stale
from .online import Clock, token_matches
from .seating import bounded
from .storage import StaleVersion, Store, StoredGame

HUMAN = "human"
ONLINE = "online"
SPECTATOR = -1


def token_opens(mode: str, options: dict[str, Any], token: str | None) -> bool:
    """True if ``token`` opens a game of ``mode`` with these stored
    ``options``: a seat's or the spectator's link of an online game, the
    owner token of a local one (constant time).  For a game that cannot be
    loaded (a damaged record): who may be told so."""
    if not token:
        return False
    if mode == ONLINE:
        online = options.get("online")
        online = online if isinstance(online, dict) else {}
        digests = online.get("digests")
        known = [d for d in (digests if isinstance(digests, list) else []) if isinstance(d, str)]
        watch = online.get("watch")
        known.append(watch if isinstance(watch, str) else "")
        hits = [token_matches(token, d) for d in known]  # every one compared
        return any(hits)
    owner = options.get("owner")
    return token_matches(token, owner if isinstance(owner, str) else None)


class GameSession:
    """One game in memory, mirrored in the store."""

    def __init__(self, stored: StoredGame, store: Store) -> None:
        self.id = stored.id
        self.store = store
        self.title = stored.title
        self.mode = stored.mode
        self.seats = list(stored.seats)
        self.options = dict(stored.options)
        self.version = stored.version
        self.game = load(stored.record)
        online = self.options.get("online") or {}
        self.digests: list[str | None] = list(online.get("digests") or [])
        self.watch_digest: str | None = online.get("watch")
        #: An online game allows takebacks only if made with them on.
        self.takebacks_allowed = bool(online.get("takebacks", False))
        #: A rated game (made by the lobby): running out of time loses it,
        #: and it is aborted if its players do not all arrive (forfeits.py).
        self.rated = bool(online.get("rated", False))
        self.created = stored.created
        #: A local game belongs to the browser whose owner token this digests.
        owner = self.options.get("owner")
        self.owner_digest: str | None = owner if isinstance(owner, str) else None
        clock = online.get("clock")
        self.clock = Clock.from_dict(clock) if clock else None
        if self.clock is not None and self.clock.running:
            # Time the server was down is not charged: the turn restarts now
            # (a turn-based clock keeps its stored wall-clock deadline).
            self.clock.turn_started = time.monotonic()
        #: A takeback asked for and not yet answered: (asking seat, version,
        #: seats that have agreed).  Kept in memory only.
        self.takeback: tuple[int, int, set[int]] | None = None
        #: Seats that have joined since the game was loaded (the clocks start
        #: once every human seat has).
        self.joined: set[int] = set()
        self._public: tuple[int, list[dict[str, Any]], list[dict[str, Any]]] = (-1, [], [])

    @property
    def online(self) -> bool:
        return self.mode == ONLINE

    def reader_for(self, token: str) -> int | None:
        """The seat a token opens (``SPECTATOR`` for the spectator link), or
        None.  Every digest is compared, in constant time, whatever matches."""
        found: int | None = None
        for seat, d in enumerate(self.digests):
            if token_matches(token, d) and found is None:
                found = seat
        if token_matches(token, self.watch_digest) and found is None:
            found = SPECTATOR
        return found

    def owned_by(self, token: str | None) -> bool:
        """True if ``token`` is this local game's owner token (constant time)."""
        return bool(token) and not self.online and token_matches(token or "", self.owner_digest)

    @property
    def takebacks(self) -> int:
        """Undos and takebacks done so far (kept in the record's metadata)."""
        n = self.game.meta.get("takebacks", 0)
        return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0

    @property
    def practice(self) -> bool:
        """A practice game: dealt from a chosen seed, or against the AI with an
        undo or takeback used (the taker saw cards they should not have)."""
        return self.game.meta.get("practice") is True

    def has_ai(self) -> bool:
        return any(k != HUMAN for k in self.seats)

    @property
    def over(self) -> bool:
        """Over by the rules, or by forfeits or an abort (forfeits.py)."""
        return forfeits.over(self.game)

    def is_human(self, seat: int) -> bool:
        """A human plays this seat (not an AI seat, nor a seat whose player
        forfeited: the stand-in agent plays those)."""
        return self.seats[seat] == HUMAN and seat not in forfeits.out(self.game)

    def humans(self) -> set[int]:
        return {p for p in range(len(self.seats)) if self.is_human(p)}

    # -- reading --------------------------------------------------------------

    def human_seat_to_act(self) -> int | None:
        p = self.game.to_move
        return p if p is not None and not self.over and self.is_human(p) else None

    def ai_to_move(self) -> bool:
        p = self.game.to_move
        return p is not None and not self.over and not self.is_human(p)

    def viewer(self) -> int:
        """Whose view the local browser shows: the human to move (hotseat), or
        the human seat (against the AI)."""
        p = self.human_seat_to_act()
        if p is not None:
            return p
        humans = [i for i, s in enumerate(self.seats) if s == HUMAN]
        return humans[0] if humans else -1

    def state(self, seat: int | None = None) -> dict[str, Any]:
        """The state as ``seat`` may see it (default: the local viewer;
        ``SPECTATOR`` for public information only)."""
        seat = self.viewer() if seat is None else seat
        view = self.game.view(seat)
        # The counter and the open boxes are public and the same for every
        # reader of this version: made once per version.
        if self._public[0] != self.version:
            self._public = (self.version, view.table_cells(), open_boxes(self.game))
        _, cells, boxes = self._public
        data = view.to_dict(cells=cells)
        if self.over and not self.game.finished:  # ended by forfeits or an abort
            data.update(finished=True, to_move=None, winners=forfeits.winners(self.game))
        data.update(
            id=self.id,
            title=self.title,
            mode=self.mode,
            seats=self.seats,
            version=self.version,
            thinking=self.ai_to_move(),
            ended_by=forfeits.ended_by(self.game),
            legal=[] if self.over else self.legal_for(view),
            boxes=boxes,
            if_ended=if_ended(self.game, [] if self.over else boxes),
            takebacks=self.takebacks,
            practice=self.practice,
        )
        if self.online:
            data["clock"] = (
                None
                if self.clock is None
                else self.clock.public(self.game.to_move, time.monotonic())
            )
            data["takebacks_on"] = self.takebacks_allowed
            data["rated"] = self.rated
            data["forfeits"] = [f.to_dict() for f in forfeits.of(self.game)]
            data["takeback"] = (
                None
                if self.takeback is None
                else {"by": self.takeback[0], "agreed": sorted(self.takeback[2])}
            )
        return data

    def legal_for(self, view: PlayerView) -> list[str]:
        if view.player < 0 or view.to_move != view.player or self.seats[view.player] != HUMAN:
            return []
        return [str(m) for m in sorted_moves(view.legal_moves())]

    # -- acting ---------------------------------------------------------------

    async def act(self, move_text: str, version: int, seat: int | None = None) -> None:
        """Play a human's move; Stale, NotAllowed or Invalid if it is stale, not
        this seat's, or illegal."""
        self._fresh(version)
        p = self.game.to_move
        if p is None:
            raise Invalid("the game is over")
        if self.seats[p] != HUMAN or (seat is not None and seat != p):
            raise NotAllowed("it is not your turn")
        await self._commit(move_text)

    async def play_ai(self, move: Move | str) -> None:
        if not self.ai_to_move():
            raise Conflict("it is not the AI's turn")
        await self._commit(str(move))

    async def play_for_timed_out(self, seat: int, move: Move | str) -> None:
        """The server's AI moves for a human whose clock ran out."""
        if self.timed_out() != seat:
            raise Conflict("that player's clock has not run out")
        await self._commit(str(move), timed_out=True)

    async def resign(self, seat: int, version: int) -> None:
        """``seat`` resigns: it forfeits at once (forfeits.py)."""
        self._fresh(version)
        if self.over:
            raise Invalid("resign: the game is over")
        if seat in forfeits.out(self.game):
            raise Invalid("resign: you have already left this game")
        await self._forfeit(seat, "resign")

    async def lose_on_time(self, seat: int) -> None:
        """In a rated game, ``seat``'s clock has run out: it forfeits."""
        if self.timed_out() != seat:
            raise Conflict("that player's clock has not run out")
        await self._forfeit(seat, "time")

    async def abort(self) -> None:
        """A rated game whose players did not all arrive: over, unrated."""
        if self.over or (self.clock is not None and self.clock.running):
            raise Conflict("abort: the game has started")
        absent = sorted(self.humans() - self.joined)
        await self._store(forfeits.with_abort(self.game, absent), copy.deepcopy(self.clock))

    def abort_due(self) -> float | None:
        """The wall-clock time (seconds since the epoch) at which this rated
        game is aborted unless every human seat has joined; None if it
        never is."""
        if not self.rated or self.over or self.clock is None or self.clock.running:
            return None
        made = self.created
        if made.tzinfo is None:  # SQLite gives back naive UTC times
            made = made.replace(tzinfo=UTC)
        return made.timestamp() + forfeits.ABORT_SECONDS

    async def _forfeit(self, seat: int, how: str) -> None:
        game = forfeits.with_forfeit(self.game, seat, how)
        clock = copy.deepcopy(self.clock)
        if clock is not None:
            # The seat's clock stops for good (the stand-in, if any, plays
            # without one, as an AI seat does).
            clock.flagged[seat] = clock.flagged[seat] or how == "time"
            clock.remaining_ms[seat] = None
        if clock is not None and self.game.to_move == seat:
            clock.new_turn(time.monotonic())  # the stand-in's turn now
        await self._store(game, clock)

    async def _commit(self, move_text: str, timed_out: bool = False) -> None:
        trial = self.game.copy()
        mover = trial.to_move
        try:
            trial.play(move_text)
        except DonutboxError as err:
            raise Invalid(str(err)) from None
        clock = copy.deepcopy(self.clock)
        if clock is not None and mover is not None:
            clock.moved(mover, time.monotonic(), timed_out)
        await self._store(trial, clock)

    async def _store(self, game: Game, clock: Clock | None) -> None:
        """Save ``game`` as the next version, then make it (and ``clock``) the
        session's.  The write runs off the event loop (its caller holds the
        game's lock); until it is done every reader still sees the previous
        version, whole."""
        options = self._options(clock) if self.online else None
        waiting = waiting_on(game, self.seats, clock)
        try:
            version = await self.store.save_async(
                self.id, self.version, dump(game), forfeits.over(game), options, waiting
            )
        except StaleVersion:
            raise Stale("stale state: the game was changed elsewhere") from None
        failpoints.crash_here("after-store")
        if options is not None:
            self.options = options
        self.clock = clock
        self.game = game
        self.version = version
        self.takeback = None

    def _options(self, clock: Clock | None) -> dict[str, Any]:
        options = dict(self.options)
        online = dict(options.get("online") or {})
        online["clock"] = None if clock is None else clock.to_dict()
        options["online"] = online
        return options

    def start_clock(self) -> bool:
        """Every human seat has joined: start the clocks (once)."""
        if self.clock is None or self.clock.running or self.over:
            return False
        self.clock.running = True
        self.clock.turn_started = time.monotonic()
        return True

    def timed_out(self) -> int | None:
        """The human seat to move whose clock has run out, if any."""
        p = self.human_seat_to_act()
        if self.clock is None or p is None:
            return None
        left = self.clock.left(p, p, time.monotonic())
        return p if left is not None and left <= 0 and self.clock.running else None

    # -- takebacks (online: only with the other players' consent) ----------------

    async def ask_takeback(self, seat: int, version: int) -> bool:
        """``seat`` asks to take back its last move; True if it was taken back
        at once (no other human to ask)."""
        if not self.takebacks_allowed:
            raise NotAllowed("takeback: this game was made without takebacks")
        self._fresh(version)
        if self.over:
            raise Invalid("takeback: the game is over")
        if self._last_ply_of(seat) is None:
            raise Invalid("takeback: you have no move to take back")
        if self.takeback is not None:
            raise Conflict("takeback: one is already waiting for an answer")
        self.takeback = (seat, version, {seat})
        return await self._takeback_if_agreed()

    async def answer_takeback(self, seat: int, accept: bool, version: int) -> bool:
        """Another player answers; True if the move was taken back."""
        self._fresh(version)
        if self.takeback is None:
            raise Invalid("answer: no takeback was asked for")
        by, _asked_at, agreed = self.takeback
        if seat == by:
            raise Invalid("answer: you asked for this takeback")
        if not accept:
            self.takeback = None
            return False
        agreed.add(seat)
        return await self._takeback_if_agreed()

    async def _takeback_if_agreed(self) -> bool:
        assert self.takeback is not None
        by, _, agreed = self.takeback
        if not self.humans() <= agreed:
            return False
        cut = self._last_ply_of(by)
        assert cut is not None
        await self._truncate(cut)
        return True

    def _last_ply_of(self, seat: int) -> int | None:
        n = self.game.players
        for ply in range(len(self.game.history) - 1, -1, -1):
            if ply % n == seat:
                return ply
        return None

    def _fresh(self, version: int) -> None:
        if version != self.version:
            raise Stale(f"stale state: version {version}, the game is at {self.version}")

    async def _truncate(self, ply: int) -> None:
        """Go back to the position before ply ``ply`` (a new, higher version),
        counting the takeback in the record; against the AI the game becomes
        a practice game."""
        game = cut_game(self.game, ply)
        game.meta["takebacks"] = self.takebacks + 1
        if self.has_ai():
            game.meta["practice"] = True
        clock = copy.deepcopy(self.clock)
        if clock is not None:
            clock.new_turn(time.monotonic())
        await self._store(game, clock)

    async def undo(self, version: int) -> None:
        """Take back the last human move (and the AI replies after it); in
        hotseat, the last move.  (Online games use takebacks instead.)"""
        if self.online:
            raise NotAllowed("undo: online games take back a move only by consent")
        self._fresh(version)
        history = [str(m) for m in self.game.history]
        n = self.game.players
        cut = None
        if self.mode == "hotseat":
            cut = len(history) - 1 if history else None
        else:
            for ply in range(len(history) - 1, -1, -1):
                if self.seats[ply % n] == HUMAN:
                    cut = ply
                    break
        if cut is None:
            raise Invalid("undo: there is no move of yours to take back")
        await self._truncate(cut)

    def preview(self, move_text: str, seat: int | None = None) -> dict[str, Any]:
        """What a move would do, from public information only: the boxes it
        would seal and who would score them (the draw that follows is not
        shown)."""
        to_act = self.human_seat_to_act()
        if to_act is None or (seat is not None and seat != to_act):
            raise NotAllowed("it is not your turn")
        trial = self.game.copy()
        before = len(trial.deliveries)
        try:
            trial.play(move_text)
        except DonutboxError as err:
            raise Invalid(str(err)) from None
        seals = [d.to_dict() for d in trial.deliveries[before:] if d.how != "end"]
        return {
            "move": move_text,
            "deliveries": seals,
            "scores": [trial.scores[p] - self.game.scores[p] for p in range(trial.players)],
        }

    def hint_view(self, version: int) -> PlayerView:
        """The view a hint is searched from: the human to move, at ``version``
        (only their own tray; the AI sees nothing more than they do)."""
        self._fresh(version)
        seat = self.human_seat_to_act()
        if seat is None:
            raise NotAllowed("hint: it is not your turn")
        if self.game.free:
            raise Invalid("hint: a free game (a record without decks) has no tray")
        return self.game.view(seat)

    def ai_view(self) -> tuple[PlayerView, int] | None:
        p = self.game.to_move
        if p is None or self.over or self.is_human(p):
            return None
        return self.game.view(p), p

    def agent_spec(self, seat: int) -> tuple[str, dict[str, Any]]:
        if self.seats[seat] == HUMAN:  # forfeited: the stand-in plays it
            return forfeits.STAND_IN, {}
        name = self.seats[seat]
        return name, bounded(name, dict(self.options.get("agent", {})))


def waiting_on(
    game: Game, seats: list[str], clock: Clock | None
) -> tuple[float | None, int | None]:
    """What the store indexes of a game, so that a query finds it without
    loading it: the wall-clock deadline of its turn-based clock's running
    turn (the deadline sweep, deadlines.py) and the human seat to move (the
    "waiting for your move" list); both None once it is over."""
    if forfeits.over(game):
        return None, None
    p = game.to_move
    human = p is not None and seats[p] == HUMAN and p not in forfeits.out(game)
    deadline = None
    if clock is not None and clock.days is not None and clock.running:
        deadline = clock.deadline_at
    return deadline, (p if human else None)


def open_boxes(game: Game) -> list[dict[str, Any]]:
    """Every open box with its size, value, holdings and who would score it
    if the game ended now (public information: the live state's ``boxes``,
    and the replay's at each move).  Value and scorers are the rules'
    scoring rule's (``Rules.scoring_rule``)."""
    scoring = game.rules.scoring_rule
    n = game.players
    out = []
    for r in game.counter.boxes():
        x, y = xy(r.first)
        out.append(
            {
                "x": x,
                "y": y,
                "size": len(r.cells),
                "points": scoring.run_points(r),
                "held": list(r.held[:n]),
                "end_to": list(scoring.end_to(r.held, n)),
                "cells": [list(xy(c)) for c in sorted(r.cells)],
            }
        )
    return out


def if_ended(game: Game, boxes: list[dict[str, Any]]) -> list[int]:
    """Each player's score if the game ended now (the side panel's "If
    ended now"): the open ``boxes`` (``open_boxes(game)``; none once the
    game is over) scored by the rules' end scoring."""
    out = game.scores
    for box in boxes:
        for p in box["end_to"]:
            out[p] += box["points"]
    return out


def choose_ai_move(view: PlayerView, agent: str, options: dict[str, Any], seed: int) -> str:
    """Run in a worker process: an agent's move for this view, as notation."""
    from ..ai import make_agent

    return str(make_agent(agent, **options).choose(view, random.Random(seed)))


def warm_up() -> None:
    """Run in a new worker process: import the agents, so that its first AI
    move does not wait for the imports."""
    from ..ai import make_agent

    make_agent("random")
