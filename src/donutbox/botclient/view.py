"""The seat's ``PlayerView`` rebuilt from a game stream's ``state`` (the
JSON a human seat's page gets), so that any agent of the catalogue, or a
PettingZoo policy through the env's observation encoder, can play from it.

The state holds the public history (another player's swapped face hidden
as ``swap``), the viewer's own tray, every tray's and pile's size and what
the viewer has not seen (``unseen``).  The counter is rebuilt by playing
the history's placements and box-its on a free game (an analysis board:
any face may be played) that starts with the start card, which is the
card without an owner at (0, 0)-(1, 1) of ``cells``; swaps and passes
change nothing on the counter and only move the turn on.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Any

from ..core import Game, PlayerView, Rules
from ..core.cards import LETTERS, STANDARD_DECK

#: History entries that leave the counter as it was.
_OFF_COUNTER = ("swap", "pass")


def _start_cells(cells: list[dict[str, Any]]) -> tuple[tuple[int, int, str, bool], ...]:
    return tuple(
        sorted(
            (c["x"], c["y"], c["flavour"], bool(c["roll"]))
            for c in cells
            if c["owner"] is None and 0 <= c["x"] <= 1 and 0 <= c["y"] <= 1
        )
    )


@lru_cache(maxsize=64)
def _start_face(wanted: tuple[tuple[int, int, str, bool], ...], rules: Rules) -> str:
    """The face whose start card draws ``wanted`` (the standard deck's
    faces first, then every face)."""
    everything = ("".join(f) for f in itertools.product(LETTERS, repeat=4))
    for face in itertools.chain(dict.fromkeys(STANDARD_DECK), everything):
        try:
            game = Game.free_game(face, rules, 2)
        except Exception:  # not a face the rules take
            continue
        if _start_cells(game.view(0).table_cells()) == wanted:
            return face
    raise ValueError("cells: no start card found at (0, 0)")


def public_game(state: dict[str, Any]) -> Game:
    """A free game with the state's counter, scores and deliveries."""
    rules = Rules.from_dict(state["rules"])
    names = tuple(state["players"])
    n = len(names)
    game = Game.free_game(_start_face(_start_cells(state["cells"]), rules), rules, names)
    for ply, text in enumerate(state["history"]):
        if text.split(" ")[0] in _OFF_COUNTER:
            continue
        if game.to_move != ply % n:  # a swap or pass went before
            game = Game.from_state(game.state()._replace(to_move=ply % n))
        game.play(text)
    return game


def view_of(state: dict[str, Any]) -> PlayerView:
    """The ``PlayerView`` of the state's reader (``state["player"]``)."""
    game = public_game(state)
    history = tuple(state["history"])
    streak = 0
    for text in reversed(history):
        if text.split(" ")[0] not in _OFF_COUNTER:
            break
        streak += 1
    return PlayerView(
        player=state["player"],
        rules=game.rules,
        names=tuple(state["players"]),
        free=False,
        to_move=state["to_move"],
        finished=bool(state["finished"]),
        winners=tuple(state["winners"]),
        scores=tuple(state["scores"]),
        boxes_delivered=tuple(state["delivered"]),
        tray=tuple(state["tray"]),
        tray_sizes=tuple(state["tray_sizes"]),
        pile_sizes=tuple(state["pile_sizes"]),
        unseen=tuple(tuple(u) for u in state["unseen"]),
        history=history,
        deliveries=tuple(game.deliveries),
        final_lap_turns=state["final_lap_turns"],
        swap_streak=streak,
        counter=game.state().counter,
    )
