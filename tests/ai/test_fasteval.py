"""MCTS's fast evaluation gives exactly the heuristic evaluation's numbers."""

from __future__ import annotations

import random

import pytest

import donutbox
from donutbox.ai import make_agent
from donutbox.ai.evaluate import expected_scores, margin
from donutbox.ai.fasteval import (
    ESTIMATE_ERROR,
    PlaceEvaluator,
    box_margin,
    fast_margin,
    fast_scores,
)
from donutbox.ai.simple import best_moves, rank_moves
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
                world = sample_world(game.view(game.to_move), rng)
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


@pytest.mark.parametrize("rules", donutbox.Rules.all(), ids=lambda r: r.label())
def test_place_evaluator_equals_playing_the_placement(rules: donutbox.Rules) -> None:
    """Its margin and gain are exactly what copying and playing gives (also
    in the Final Lap, where the move ends the game); its estimate is within
    ESTIMATE_ERROR; and the heuristic's best moves are the best of the full
    ranking."""
    rng = random.Random(1)
    checked = last = 0
    for i, game in enumerate(_positions(rules, 0)):
        if game.finished or (i % 2 and game.final_lap_turns is None):
            continue
        me = game.to_move
        assert me is not None
        places = PlaceEvaluator(game, me)
        assert places.applies
        last += game.final_lap_turns is not None
        for move in game.legal_moves()[::3]:
            if move.kind != "place":
                continue
            after = game.copy()
            after.play(move)
            want = fast_margin(after, me)
            assert places.margin(move) == want, move
            assert abs(places.estimate(move) - want) <= ESTIMATE_ERROR, move
            assert places.gain(move) == float(after.scores[me] - game.scores[me])
            checked += 1
        if i % 4 == 0:
            view = game.view(me)
            moves = view.legal_moves()
            state = rng.getstate()
            ranked = rank_moves(view, moves, rng)
            rng.setstate(state)
            best = [m for v, m in ranked if v == ranked[0][0]]
            assert best_moves(view, moves, rng) == best
            # and rank_moves (which MCTS reads) gives every move the value
            # of copying the sampled world and playing the move
            rng.setstate(state)
            world = sample_world(view, rng)
            played = []
            for move in moves:
                after = world.copy()
                after.play(move)
                played.append((fast_margin(after, me), move))
            played.sort(key=lambda vm: -vm[0])
            assert ranked == played
    assert checked > 300 and last > 0
