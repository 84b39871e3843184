"""The hard level: its player's view only, its budget, early stopping, seeds."""

from __future__ import annotations

import random
import time

import pytest

import donutbox
from donutbox.ai import make_agent
from donutbox.ai.mcts import MctsAgent
from donutbox.core import STANDARD_DECK


def _twin_games() -> tuple[donutbox.Game, donutbox.Game]:
    """Two games player 0 cannot tell apart: player 1's hidden tray and pile
    differ, the public moves and player 0's cards are the same."""
    deck0 = list(STANDARD_DECK)
    deck1 = list(STANDARD_DECK)
    rng = random.Random(5)
    rng.shuffle(deck0)
    rng.shuffle(deck1)
    first, other = deck1[0], deck1[1:]
    other_b = other[:]
    random.Random(77).shuffle(other_b)
    assert other_b[:4] != other[:4]
    a = donutbox.Game.deal([deck0, [first, *other]])
    b = donutbox.Game.deal([deck0, [first, *other_b]])
    move0 = a.legal_moves()[0]
    a.play(move0)
    b.play(move0)
    reply = next(m for m in a.legal_moves() if m.kind == "place" and m.face == first)
    a.play(reply)
    b.play(reply)
    return a, b


def _hard(**options: object) -> MctsAgent:
    if "iterations" in options:
        options.setdefault("seconds", None)  # a budget of iterations only
    agent = make_agent("hard", **options)
    assert isinstance(agent, MctsAgent)
    return agent


def test_hard_sees_only_its_players_view() -> None:
    a, b = _twin_games()
    assert a.trays[1] != b.trays[1]
    assert a.view(0).to_dict() == b.view(0).to_dict()
    for seed in (1, 2, 3):
        agent_a, agent_b = _hard(iterations=150), _hard(iterations=150)
        move_a = agent_a.choose(a.view(0), random.Random(seed))
        move_b = agent_b.choose(b.view(0), random.Random(seed))
        assert move_a == move_b
        assert agent_a.last_iterations == agent_b.last_iterations


def test_hard_is_deterministic_for_a_seed_with_an_iteration_budget() -> None:
    game = donutbox.Game.new(donutbox.Rules(), 2, seed=21)
    for _ in range(10):  # into the middle game
        game.play(make_agent("heuristic").choose(game.view(game.to_move), random.Random(0)))  # type: ignore[arg-type]
    view = game.view(game.to_move)  # type: ignore[arg-type]
    first = _hard(iterations=200).search(view, random.Random(9))
    again = _hard(iterations=200).search(view, random.Random(9))
    assert first == again


def test_hard_keeps_to_its_cpu_budget() -> None:
    game = donutbox.Game.new(donutbox.Rules(), 2, seed=4)
    for _ in range(8):
        game.play(make_agent("heuristic").choose(game.view(game.to_move), random.Random(0)))  # type: ignore[arg-type]
    agent = _hard(seconds=0.3, clock="cpu")
    start = time.thread_time()
    move = agent.choose(game.view(game.to_move), random.Random(3))  # type: ignore[arg-type]
    spent = time.thread_time() - start
    assert game.is_legal(move)
    assert agent.last_iterations > 0
    # The budget is checked between iterations: one iteration (well under a
    # tenth of a second) may run past it.
    assert spent < 0.3 + 0.1


def _box_offer() -> donutbox.Game:
    """Player 0 may only box an 8-point run or swap (see test_agents.py)."""
    decks = [
        ["CCCC", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB", "BBBB"],
        ["BBBB"] * 6,
    ]
    game = donutbox.Game.deal(decks)
    game.play("CCCC@2,0/0")
    game.play("swap BBBB")
    assert sorted(map(str, game.legal_moves())) == ["box@0,0", "swap BBBB"]
    return game


def test_early_stop_when_the_choice_can_no_longer_change() -> None:
    # stop_lead=1: stop only when the leader's lead in visits exceeds the
    # iterations left, so the choice is the one the full budget would make.
    game = donutbox.Game.new(donutbox.Rules(), 2, seed=13)
    for _ in range(12):
        game.play(make_agent("heuristic").choose(game.view(game.to_move), random.Random(0)))  # type: ignore[arg-type]
    positions = [_box_offer().view(0), game.view(game.to_move)]  # type: ignore[arg-type]
    stopped_early = 0
    for view in positions:
        for seed in (1, 2):
            full = MctsAgent(iterations=600, playout_depth=0)
            early = MctsAgent(iterations=600, playout_depth=0, stop_lead=1.0)
            assert full.choose(view, random.Random(seed)) == early.choose(view, random.Random(seed))
            assert full.last_iterations == 600
            stopped_early += early.last_iterations < 600
    assert stopped_early >= 2


def test_bad_early_stop_option_is_refused() -> None:
    with pytest.raises(ValueError, match="stop_lead"):
        MctsAgent(stop_lead=0.0)
    with pytest.raises(ValueError, match="stop_lead"):
        MctsAgent(stop_lead=1.5)
