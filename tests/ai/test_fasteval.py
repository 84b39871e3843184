"""MCTS's fast evaluation gives exactly the heuristic evaluation's numbers."""

from __future__ import annotations

import random

import pytest

import donutbox
from donutbox.ai import make_agent
from donutbox.ai.evaluate import expected_scores, margin
from donutbox.ai.fasteval import box_margin, fast_margin, fast_scores
from donutbox.core.worlds import sample_world


def _positions(rules: donutbox.Rules, seed: int, players: int = 2):  # type: ignore[no-untyped-def]
    """Every position of a game between greedy (boxes often) and random agents."""
    game = donutbox.Game.new(rules, players, seed=seed)
    rng = random.Random(seed)
    agents = [make_agent("greedy"), make_agent("random")]
    yield game
    while not game.finished:
        p = game.to_move
        assert p is not None
        game.play(agents[p % 2].choose(game.view(p), rng))
        yield game


@pytest.mark.parametrize("rules", donutbox.Rules.all(), ids=lambda r: r.label())
def test_fast_scores_and_margin_equal_the_heuristic_evaluation(rules: donutbox.Rules) -> None:
    rng = random.Random(0)
    for seed in range(4):
        for game in _positions(rules, seed):
            assert fast_scores(game) == expected_scores(game)
            for p in (0, 1):
                assert fast_margin(game, p) == margin(game, p)
            if not game.finished:
                world = sample_world(game.view(game.to_move), rng)  # type: ignore[arg-type]
                assert fast_scores(world) == expected_scores(world)


@pytest.mark.parametrize("rules", donutbox.Rules.all(), ids=lambda r: r.label())
def test_box_margin_equals_playing_the_box_it(rules: donutbox.Rules) -> None:
    checked = 0
    for seed in range(6):
        for game in _positions(rules, seed):
            if game.finished:
                continue
            me = game.to_move
            assert me is not None
            for box in game.box_moves():
                after = game.copy()
                after.play(box)
                assert box_margin(game, box, me) == margin(after, me)
                checked += 1
    assert checked > 0


def test_more_than_two_players_use_the_general_code() -> None:
    for game in _positions(donutbox.Rules(), 3, players=3):
        assert fast_scores(game) == expected_scores(game)
        if not game.finished:
            assert fast_margin(game, 2) == margin(game, 2)
