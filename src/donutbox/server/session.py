"""The authority over one game: checks intents with the engine, stores every
accepted move, and answers each reader with its own view.

Transport-agnostic (boardgame.io's idea): the HTTP/WebSocket layer and the
tests call the same methods.  Every state sent out is built from
``game.view(seat)``: another player's tray or any pile's order never leaves.
"""

from __future__ import annotations

import random
from typing import Any

from ..core import DonutboxError, Game, IllegalMove, Move, PlayerView
from ..summary import sorted_moves
from .storage import StaleVersion, Store, StoredGame

HUMAN = "human"


class ActionError(Exception):
    """An intent refused: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


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
        self.game = Game.from_record(stored.record)

    # -- reading --------------------------------------------------------------

    def human_seat_to_act(self) -> int | None:
        p = self.game.to_move
        return p if p is not None and self.seats[p] == HUMAN else None

    def ai_to_move(self) -> bool:
        p = self.game.to_move
        return p is not None and self.seats[p] != HUMAN

    def viewer(self) -> int:
        """Whose view the local browser shows: the human to move (hotseat), or
        the human seat (against the AI)."""
        p = self.human_seat_to_act()
        if p is not None:
            return p
        humans = [i for i, s in enumerate(self.seats) if s == HUMAN]
        return humans[0] if humans else -1

    def state(self, seat: int | None = None) -> dict[str, Any]:
        """The state as ``seat`` may see it (default: the local viewer)."""
        seat = self.viewer() if seat is None else seat
        view = self.game.view(seat)
        data = view.to_dict()
        data.update(
            id=self.id,
            title=self.title,
            mode=self.mode,
            seats=self.seats,
            version=self.version,
            thinking=self.ai_to_move(),
            ended_by=self.game.ended_by if self.game.finished else None,
            legal=self.legal_for(view),
            boxes=_boxes(self.game),
        )
        return data

    def legal_for(self, view: PlayerView) -> list[str]:
        if view.player < 0 or view.to_move != view.player or self.seats[view.player] != HUMAN:
            return []
        return [str(m) for m in sorted_moves(view.legal_moves())]

    # -- acting ---------------------------------------------------------------

    def act(self, move_text: str, version: int, seat: int | None = None) -> None:
        """Play a human's move; ActionError if it is stale or illegal."""
        if version != self.version:
            raise ActionError(409, f"stale state: version {version}, the game is at {self.version}")
        p = self.game.to_move
        if p is None:
            raise ActionError(422, "the game is over")
        if self.seats[p] != HUMAN or (seat is not None and seat != p):
            raise ActionError(403, "it is not your turn")
        self._commit(move_text)

    def play_ai(self, move: Move) -> None:
        if not self.ai_to_move():
            raise ActionError(409, "it is not the AI's turn")
        self._commit(str(move))

    def _commit(self, move_text: str) -> None:
        trial = self.game.copy()
        try:
            trial.play(move_text)
        except DonutboxError as err:
            raise ActionError(422, str(err)) from None
        try:
            self.version = self.store.save(self.id, self.version, trial.to_record(), trial.finished)
        except StaleVersion:
            raise ActionError(409, "stale state: the game was changed elsewhere") from None
        self.game = trial

    def undo(self, version: int) -> None:
        """Take back the last human move (and the AI replies after it); in
        hotseat, the last move."""
        if version != self.version:
            raise ActionError(409, f"stale state: version {version}, the game is at {self.version}")
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
            raise ActionError(422, "undo: there is no move of yours to take back")
        record = self.game.to_record()
        record["moves"] = history[:cut]
        try:
            game = Game.from_record(record)
        except IllegalMove as err:  # cannot happen: a prefix of a legal game
            raise ActionError(500, str(err)) from None
        self.version = self.store.save(self.id, self.version, game.to_record(), game.finished)
        self.game = game

    def preview(self, move_text: str) -> dict[str, Any]:
        """What a move would do, from public information only: the boxes it
        would seal and who would score them (the draw that follows is not
        shown)."""
        seat = self.human_seat_to_act()
        if seat is None:
            raise ActionError(403, "it is not your turn")
        trial = self.game.copy()
        before = len(trial.deliveries)
        try:
            trial.play(move_text)
        except DonutboxError as err:
            raise ActionError(422, str(err)) from None
        seals = [d.to_dict() for d in trial.deliveries[before:] if d.how != "end"]
        return {
            "move": move_text,
            "deliveries": seals,
            "scores": [trial.scores[p] - self.game.scores[p] for p in range(trial.players)],
        }

    def ai_view(self) -> tuple[PlayerView, int] | None:
        p = self.game.to_move
        if p is None or self.seats[p] == HUMAN:
            return None
        return self.game.view(p), p

    def agent_spec(self, seat: int) -> tuple[str, dict[str, Any]]:
        return self.seats[seat], dict(self.options.get("agent", {}))


def _boxes(game: Game) -> list[dict[str, Any]]:
    """Every open box with its size, value and holdings (public information)."""
    out = []
    for r in game.counter.boxes():
        from ..core.geometry import xy

        x, y = xy(r.first)
        out.append(
            {
                "x": x,
                "y": y,
                "size": len(r.cells),
                "points": r.points,
                "held": list(r.held[: game.players]),
                "cells": [list(xy(c)) for c in sorted(r.cells)],
            }
        )
    return out


def choose_ai_move(view: PlayerView, agent: str, options: dict[str, Any], seed: int) -> str:
    """Run in a worker process: an agent's move for this view, as notation."""
    from ..ai import make_agent

    return str(make_agent(agent, **options).choose(view, random.Random(seed)))
