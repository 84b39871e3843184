"""``botclient.view.view_of``: the seat's view rebuilt from the JSON state a
game stream sends equals the engine's own view of that seat (the counter,
the boxes scored, the legal moves, the swap streak), at every ply of random
games of 2 to 4 players and both layouts."""

from __future__ import annotations

import random

import pytest

from donutbox.botclient.view import view_of
from donutbox.core import Game, Rules
from donutbox.summary import sorted_moves


def _moves(view) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(m) for m in sorted_moves(view.legal_moves())]


@pytest.mark.parametrize("seed", range(4))
def test_the_view_rebuilt_from_the_state_is_the_engines(seed: int) -> None:
    layout = "splitzkies" if seed % 2 else "squared-away"
    game = Game.new(Rules.from_dict({"layout": layout}), 2 + seed % 3, seed=seed)
    rng = random.Random(seed)
    while not game.finished:
        for seat in range(game.players):
            real = game.view(seat)
            rebuilt = view_of(real.to_dict())
            assert _moves(rebuilt) == _moves(real)
            assert rebuilt.table_cells() == real.table_cells()
            assert rebuilt.deliveries == real.deliveries
            assert rebuilt.swap_streak == real.swap_streak
            assert rebuilt.tray == real.tray and rebuilt.unseen == real.unseen
        game.play(rng.choice(game.legal_moves()))
    assert game.ply > 20
