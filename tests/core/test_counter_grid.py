"""The counter's internal grid agrees with its public mapping ``cells``.

``Counter`` reads cells from a grid (one int per cell of a window that grows
as cards go down) in its hot paths and keeps ``cells`` (cell -> code) for
readers.  Random games in both layouts, including long snakes that make the
window grow, must leave the two in agreement everywhere near the cards, and
a copy must be independent of its source.
"""

from __future__ import annotations

import random

from donutbox.core import Game, Rules
from donutbox.core.geometry import cell


def _check(game: Game) -> None:
    counter = game.counter
    xs = [x for x, _y in (d[:2] for d in counter.donuts())]
    ys = [y for _x, y in (d[:2] for d in counter.donuts())]
    for y in range(min(ys) - 6, max(ys) + 7):
        for x in range(min(xs) - 6, max(xs) + 7):
            c = cell(x, y)
            assert counter.code_at(c) == counter.cells.get(c, -1), (x, y)


def test_grid_matches_cells_through_random_games() -> None:
    for layout in ("squared-away", "splitzkies"):
        for seed in range(6):
            game = Game.new(Rules(layout=layout), 2, seed)
            rng = random.Random(seed)
            while not game.finished:
                moves = game.legal_moves()
                game.play(moves[rng.randrange(len(moves))])
                if game.ply % 7 == 0:
                    _check(game)
            _check(game)


def test_grid_grows_far_from_the_start_card_and_copies_are_independent() -> None:
    # A free game: a line of cards walking east, far beyond the first window.
    game = Game.free_game("CCCC")
    for i in range(1, 40):
        game.play(f"CCCC@{2 * i},0/0")
    copy = game.copy()
    copy.play("CCCC@80,0/0")
    assert copy.counter.code_at(cell(80, 0)) >= 0
    assert game.counter.code_at(cell(80, 0)) == -1
    assert game.counter.is_empty(cell(80, 0))
    assert not copy.counter.is_empty(cell(80, 0))
    _check(game)
    _check(copy)
    # far outside the window: empty, no error
    assert game.counter.code_at(cell(-1000, 1000)) == -1
