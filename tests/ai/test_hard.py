"""The hard level: its player's view only, its budget, early stopping, seeds."""

from __future__ import annotations

import random
import time

import pytest

import donutbox
from donutbox.ai import make_agent
from donutbox.ai.mcts import MctsAgent, Node
from donutbox.ai.simple import best_moves
from donutbox.core import STANDARD_DECK, InputError
from donutbox.core.worlds import sample_world


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


def test_the_level_is_version_3() -> None:
    hard = _hard()
    assert (hard.seconds, hard.iterations, hard.root_width) == (1.0, None, 16)
    assert (hard.playout_depth, hard.expand_samples, hard.full_replies) == (0, 10, 1)
    assert (hard.stop_z, hard.stop_delta, hard.stop_lead, hard.leaf) == (2.0, 0.02, None, "margin")
    previous = make_agent("mcts")  # the hard level before version 2: the defaults
    assert isinstance(previous, MctsAgent)
    assert (previous.full_replies, previous.stop_z, previous.playout_depth) == (0, None, 2)


def test_the_expert_level_is_hard_without_its_stop_for_five_seconds() -> None:
    # The agent the expert screen played (docs/ai.md, "An expert level"):
    # make_agent("hard", seconds=5.0, stop_z=None), by the catalogue's name.
    expert = make_agent("expert")
    assert isinstance(expert, MctsAgent)
    assert (expert.seconds, expert.iterations, expert.root_width) == (5.0, None, 16)
    assert (expert.playout_depth, expert.expand_samples, expert.full_replies) == (0, 10, 1)
    assert (expert.stop_z, expert.stop_lead, expert.leaf) == (None, None, "margin")


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


def _heuristic_game(seed: int, plies: int) -> donutbox.Game:
    game = donutbox.Game.new(donutbox.Rules(), 2, seed=seed)
    for _ in range(plies):
        game.play(make_agent("heuristic").choose(game.view(game.to_move), random.Random(0)))  # type: ignore[arg-type]
    return game


def _mover_view(game: donutbox.Game) -> donutbox.PlayerView:
    assert game.to_move is not None
    return game.view(game.to_move)


def test_a_full_reply_is_the_heuristics_choice() -> None:
    # full_replies: a new child in the tree is the move the one-ply
    # heuristic would choose with the sampled world's cards.
    agent = MctsAgent(iterations=10, full_replies=1)
    game = donutbox.Game.new(donutbox.Rules(), 2, seed=8)
    for ply in range(30):
        p = game.to_move
        assert p is not None
        moves = game.legal_moves()
        node = Node(None, None, -1)
        reply = agent._best_reply(game, node)
        assert reply in best_moves(game.view(p), moves, random.Random(ply))
        assert node.replies is not None and set(node.replies) == set(moves)
        assert agent._best_reply(game, node) == reply  # from the kept values
        game.play(reply)


def test_ranked_replies_widen_in_the_heuristics_order() -> None:
    # ranked_replies: a new child is the heuristic's choice among the legal
    # moves that are not children yet; once every legal move is a child, the
    # heuristic's choice among all of them (an existing child).
    agent = MctsAgent(iterations=10, full_replies=1, ranked_replies=True)
    game = donutbox.Game.new(donutbox.Rules(), 2, seed=8)
    widened = 0
    for ply in range(30):
        p = game.to_move
        assert p is not None
        moves = game.legal_moves()
        view = game.view(p)
        node = Node(None, None, -1)
        first = agent._best_reply(game, node)
        assert first in best_moves(view, moves, random.Random(ply))
        for _ in range(3):
            left = [m for m in moves if m not in node.children]
            if not left:
                break
            reply = agent._best_reply(game, node)
            assert reply not in node.children
            assert reply in best_moves(view, left, random.Random(ply))
            node.children[reply] = Node(reply, node, p)
            widened += 1
        full = Node(None, None, -1)
        full.children = {m: Node(m, full, p) for m in moves}
        assert agent._best_reply(game, full) in best_moves(view, moves, random.Random(ply))
        game.play(first)
    assert widened > 60


def test_ranked_replies_search_from_the_view_only() -> None:
    a, b = _twin_games()
    for seed in (1, 2):
        agents = [
            MctsAgent(iterations=150, playout_depth=0, full_replies=1, ranked_replies=True)
            for _ in range(2)
        ]
        found = [
            agent.search(g.view(0), random.Random(seed))
            for agent, g in zip(agents, (a, b), strict=True)
        ]
        assert found[0] == found[1]
        assert found[0][0][0] in a.view(0).legal_moves()


def test_reply_values_do_not_depend_on_the_hidden_cards() -> None:
    # The reason full replies keep each node's move values: after the same
    # moves, two worlds with different hidden cards give every move both
    # can play the same one-ply value.
    view = _mover_view(_heuristic_game(5, 9))
    assert view.player == 1
    ours = view.legal_moves()[3]
    rng = random.Random(4)
    worlds = [sample_world(view, rng) for _ in range(6)]
    agent = MctsAgent(iterations=10, full_replies=1)
    node = Node(None, None, -1)
    checked = 0
    for world in worlds:
        world.play(ours)
        assert world.to_move == 0
        fresh = Node(None, None, -1)
        agent._best_reply(world, fresh)
        assert fresh.replies is not None
        if node.replies is None:
            node.replies = dict(fresh.replies)
            continue
        common = set(fresh.replies) & set(node.replies)
        assert common
        assert all(fresh.replies[m] == node.replies[m] for m in common)
        checked += len(common)
    assert checked > 50
    assert len({tuple(sorted(w.trays[0])) for w in worlds}) > 1  # the worlds differ


def test_confidence_stop_fires_when_one_move_is_clearly_best() -> None:
    options: dict[str, object] = {
        "iterations": 600,
        "playout_depth": 0,
        "expand_samples": 10,
        "full_replies": 1,
        "min_iterations": 128,
    }
    clear = _mover_view(_heuristic_game(13, 12))
    full = MctsAgent(**options)  # type: ignore[arg-type]
    early = MctsAgent(stop_z=3.0, **options)  # type: ignore[arg-type]
    assert full.choose(clear, random.Random(1)) == early.choose(clear, random.Random(1))
    assert full.last_iterations == 600
    assert 128 <= early.last_iterations < 400
    # Near-equal best moves (two rotations of one card, 0.02 apart in
    # value): no clear best, the whole budget is spent; with a tolerance of
    # 0.05 in value the search may stop once no move can be better than its
    # choice by that much.
    close = _mover_view(_heuristic_game(13, 21))
    early = MctsAgent(stop_z=3.0, **options)  # type: ignore[arg-type]
    early.choose(close, random.Random(1))
    assert early.last_iterations == 600
    tolerant = MctsAgent(stop_z=3.0, stop_delta=0.05, **options)  # type: ignore[arg-type]
    tolerant.choose(close, random.Random(1))
    assert tolerant.last_iterations < 600


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("full_replies", -1),
        ("full_replies", 1.5),
        ("full_replies", True),
        ("full_replies", "2"),
        ("stop_z", 0),
        ("stop_z", -1.0),
        ("stop_z", "3"),
        ("stop_delta", -0.01),
        ("stop_delta", 0.5),
        ("stop_delta", None),
        ("leaf", "oracle"),
        ("leaf", None),
        ("ranked_replies", 1),
        ("ranked_replies", "yes"),
    ],
)
def test_bad_search_options_are_refused_in_one_line(option: str, value: object) -> None:
    with pytest.raises(InputError, match=option) as info:
        MctsAgent(**{option: value})  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_confidence_stop_waits_for_every_candidate_without_a_prior() -> None:
    # With no prior visits a candidate may have no value yet, or one (no
    # spread to judge it by): no stop then.
    view = _mover_view(_heuristic_game(13, 12))
    agent = MctsAgent(iterations=200, prior_visits=0, stop_z=2.0, min_iterations=16)
    assert agent.choose(view, random.Random(1)) in view.legal_moves()
    # 16 candidates, each needs two visits before the stop can fire
    assert 16 < agent.last_iterations <= 200
