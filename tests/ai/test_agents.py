"""Agents: legal choices, the registry, and no reading of hidden cards."""

from __future__ import annotations

import random

import pytest

import donutbox
from donutbox.ai import agent_names, make_agent
from donutbox.core import STANDARD_DECK

FAST = {"mcts": {"iterations": 40}, "hard": {"iterations": 40}, "expert": {"iterations": 40}}


def _agent(name: str):  # type: ignore[no-untyped-def]
    return make_agent(name, **FAST.get(name, {}))


@pytest.mark.parametrize(
    "name", ["random", "greedy", "heuristic", "mcts", "easy", "medium", "hard", "expert"]
)
def test_agent_plays_a_whole_game_legally(name: str) -> None:
    game = donutbox.Game.new(donutbox.Rules(layout="splitzkies"), 2, seed=5)
    agent = _agent(name)
    rng = random.Random(1)
    while not game.finished:
        p = game.to_move
        assert p is not None
        view = game.view(p)
        move = agent.choose(view, rng) if p == 0 else _agent("random").choose(view, rng)
        assert game.is_legal(move), f"{name} chose an illegal move {move}"
        game.play(move)
    assert game.finished


def test_registry_names_and_levels() -> None:
    names = agent_names()
    for required in ("random", "greedy", "heuristic", "mcts", "easy", "medium", "hard", "expert"):
        assert required in names
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("nobody")


def _twin_games() -> tuple[donutbox.Game, donutbox.Game]:
    """Two games that player 0 cannot tell apart: same own cards and the same
    public moves, but player 1's hidden tray and pile are different."""
    deck0 = list(STANDARD_DECK)
    deck1 = list(STANDARD_DECK)
    rng = random.Random(3)
    rng.shuffle(deck0)
    rng.shuffle(deck1)
    first = deck1[0]
    other = deck1[1:]
    other_b = other[:]
    random.Random(99).shuffle(other_b)
    assert other_b[:4] != other[:4]
    a = donutbox.Game.deal([deck0, [first, *other]])
    b = donutbox.Game.deal([deck0, [first, *other_b]])
    # Player 0 moves, then player 1 plays the one card both games share.
    move0 = a.legal_moves()[0]
    a.play(move0)
    b.play(move0)
    reply = next(m for m in a.legal_moves() if m.kind == "place" and m.face == first)
    a.play(reply)
    b.play(reply)
    return a, b


@pytest.mark.parametrize("name", ["random", "greedy", "heuristic", "mcts"])
def test_choice_does_not_depend_on_hidden_cards(name: str) -> None:
    a, b = _twin_games()
    assert a.trays[1] != b.trays[1] or a.piles[1] != b.piles[1]
    assert a.view(0).to_dict() == b.view(0).to_dict()
    choice_a = _agent(name).choose(a.view(0), random.Random(11))
    choice_b = _agent(name).choose(b.view(0), random.Random(11))
    assert choice_a == choice_b


def test_view_hides_other_trays_and_pile_order() -> None:
    a, _ = _twin_games()
    view = a.view(0)
    data = view.to_dict()
    assert data["tray"] == a.trays[0]
    assert "trays" not in data and "piles" not in data
    # Unseen cards are a sorted multiset, never the pile's order.
    assert data["unseen"][1] == sorted(a.trays[1] + a.piles[1])
    assert data["unseen"][0] == sorted(a.piles[0])


def test_greedy_and_heuristic_box_the_points_on_offer() -> None:
    # Start card CCCC (neutral).  Player 0 adds CCCC beside it: a C run of 8,
    # half of it player 0's.  Nobody can place a BBBB (no B on the counter), so
    # player 1 swaps; then player 0 may only box the run (8 points) or swap.
    decks = [
        ["CCCC", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB", "BBBB"],
        ["BBBB"] * 6,
    ]
    game = donutbox.Game.deal(decks)
    game.play("CCCC@2,0/0")
    game.play("swap BBBB")
    assert sorted(map(str, game.legal_moves())) == ["box@0,0", "swap BBBB"]
    for name in ("greedy", "heuristic"):
        move = make_agent(name).choose(game.view(0), random.Random(4))
        assert str(move) == "box@0,0", name


def test_mcts_keeps_to_an_iteration_budget() -> None:
    game = donutbox.Game.new(donutbox.Rules(), 2, seed=8)
    agent = make_agent("mcts", iterations=120)
    move = agent.choose(game.view(0), random.Random(2))
    assert game.is_legal(move)
    assert agent.last_iterations == 120  # type: ignore[attr-defined]


def test_mcts_clock_option() -> None:
    assert make_agent("mcts").clock == "wall"  # type: ignore[attr-defined]
    agent = make_agent("mcts", iterations=20, clock="cpu")
    assert agent.clock == "cpu"  # type: ignore[attr-defined]
    game = donutbox.Game.new(seed=2)
    move = agent.choose(game.view(game.to_move), random.Random(0))  # type: ignore[arg-type]
    assert game.is_legal(move)
    assert make_agent("hard", clock="cpu").clock == "cpu"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="clock"):
        make_agent("mcts", clock="sundial")
