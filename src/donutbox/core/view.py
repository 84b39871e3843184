"""What one player may know (the engine's only exit for hidden information).

A ``PlayerView`` holds the public state (counter, scores, pile and tray
sizes, the history with other players' swapped faces hidden) and the
viewer's own tray.  It never holds another player's tray or any pile's
order.  AI agents and the server receive views, never games.
"""

from __future__ import annotations

from collections import Counter as Multiset
from dataclasses import dataclass, fields
from typing import Any

from .counter import Counter, Donut
from .errors import InputError
from .movegen import distinct, legal_moves
from .moves import SWAP, Move
from .rules import Rules
from .state import Delivery, GameState, winners


@dataclass(frozen=True)
class PlayerView:
    player: int  # the viewer; -1 for a spectator
    rules: Rules
    names: tuple[str, ...]
    free: bool
    to_move: int | None
    finished: bool
    winners: tuple[int, ...]
    scores: tuple[int, ...]
    boxes_delivered: tuple[int, ...]
    tray: tuple[str, ...]  # the viewer's own tray (empty for spectators)
    tray_sizes: tuple[int, ...]
    pile_sizes: tuple[int, ...]
    #: Per player, the faces of their deck not yet seen by the viewer
    #: (sorted: a multiset, never an order).  Empty for a free game.
    unseen: tuple[tuple[str, ...], ...]
    history: tuple[str, ...]  # moves in notation; others' swap faces hidden
    deliveries: tuple[Delivery, ...]
    final_lap_turns: int | None
    swap_streak: int
    counter: Counter  # a private copy of the public table

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickling (the server sends views to its AI worker processes): the
        # compiled core's frozen native class cannot be filled in field by
        # field after it is made, so rebuild it through its constructor.
        return (PlayerView, tuple(getattr(self, f.name) for f in fields(self)))

    @property
    def cards_left(self) -> int:
        return sum(self.tray_sizes) + sum(self.pile_sizes)

    def donuts(self) -> list[Donut]:
        return self.counter.donuts()

    def table_cells(self) -> list[dict[str, Any]]:
        """Every donut on the counter, JSON-ready (public information)."""
        return [d._asdict() for d in self.counter.donuts()]

    def legal_moves(self) -> list[Move]:
        """The viewer's legal moves when it is their turn in a dealt game."""
        if self.finished or self.to_move != self.player or self.free:
            return []
        faces = distinct(list(self.tray))
        me = self.player
        rules = self.rules
        return legal_moves(
            self.counter, rules.match_rule, rules.scoring_rule, faces, me, self.pile_sizes[me]
        )

    def to_dict(self, cells: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """A JSON-ready form (what the server sends this reader).  ``cells``:
        the counter's donuts already made JSON-ready (they are the same for
        every reader of one position, so a server computes them once)."""
        return {
            "player": self.player,
            "rules": self.rules.to_dict(),
            "players": list(self.names),
            "free": self.free,
            "to_move": self.to_move,
            "finished": self.finished,
            "winners": list(self.winners),
            "scores": list(self.scores),
            "delivered": list(self.boxes_delivered),
            "tray": list(self.tray),
            "tray_sizes": list(self.tray_sizes),
            "pile_sizes": list(self.pile_sizes),
            "unseen": [list(u) for u in self.unseen],
            "history": list(self.history),
            "deliveries": [d.to_dict() for d in self.deliveries],
            "final_lap_turns": self.final_lap_turns,
            "cells": cells if cells is not None else self.table_cells(),
        }


def make_view(state: GameState, player: int) -> PlayerView:
    """The view of ``player`` (0-based), or of a spectator with ``player=-1``,
    of a game's state (``Game.view`` passes a fresh copy; the view keeps its
    counter)."""
    n = len(state.names)
    if isinstance(player, bool) or not isinstance(player, int) or not -1 <= player < n:
        raise InputError(f"no player {player} in a {n}-player game")
    history = []
    for ply, move in enumerate(state.history):
        # Players move strictly in turn order; nothing skips a turn.
        if move.kind == SWAP and ply % n != player:
            history.append(SWAP)
        else:
            history.append(str(move))
    unseen: list[tuple[str, ...]] = []
    if not state.free:
        for p in range(n):
            hidden = Multiset(state.piles[p])
            if p != player:
                hidden.update(state.trays[p])
            unseen.append(tuple(sorted(hidden.elements())))
    finished = state.finished
    return PlayerView(
        player=player,
        rules=state.rules,
        names=state.names,
        free=state.free,
        to_move=None if finished else state.to_move,
        finished=finished,
        winners=tuple(_winners(state)),
        scores=tuple(state.scores),
        boxes_delivered=tuple(state.delivered),
        tray=tuple(state.trays[player]) if player >= 0 else (),
        tray_sizes=tuple(len(t) for t in state.trays),
        pile_sizes=tuple(len(p) for p in state.piles),
        unseen=tuple(unseen),
        history=tuple(history),
        deliveries=tuple(state.deliveries),
        final_lap_turns=state.final_lap_turns,
        swap_streak=state.swap_streak,
        counter=state.counter,
    )


def _winners(state: GameState) -> list[int]:
    return winners(state.scores, state.delivered) if state.finished else []
