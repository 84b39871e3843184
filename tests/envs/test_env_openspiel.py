"""The OpenSpiel game: OpenSpiel's random simulation test, serialisation,
hidden information, and agreement with the engine."""

from __future__ import annotations

import random

import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="the rl extra is not installed: pip install '.[rl]'"
)

import numpy as np  # noqa: E402

from donutbox.core import Game, Move, Rules  # noqa: E402
from donutbox.core.moves import SWAP  # noqa: E402
from donutbox.core.sampling import sample_move  # noqa: E402
from donutbox.envs import outcome, register_openspiel  # noqa: E402
from donutbox.envs.openspiel_game import FACE_INDEX, FACES  # noqa: E402

NAME = register_openspiel()
ALL_RULES = Rules.all()


def _load(rules: Rules = Rules(), players: int = 2) -> pyspiel.Game:  # noqa: B008
    return pyspiel.load_game(NAME, {**rules.to_dict(), "players": players})


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.label())
def test_openspiel_random_sim_test(rules: Rules) -> None:
    pyspiel.random_sim_test(_load(rules), num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("players", [3, 4])
def test_openspiel_random_sim_test_more_players(players: int) -> None:
    rules = Rules(layout="splitzkies", closers=players == 3)
    pyspiel.random_sim_test(_load(rules, players), num_sims=1, serialize=True, verbose=False)


def _random_step(state: pyspiel.State, rng: random.Random) -> None:
    if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(rng.choices(outcomes, probs)[0])
    else:
        state.apply_action(rng.choice(state.legal_actions()))


def test_serialisation_round_trips_at_every_kind_of_node() -> None:
    game = _load(Rules(layout="splitzkies", match="perfect-match"))
    state = game.new_initial_state()
    rng = random.Random(5)
    checked = set()
    while True:
        kind = "terminal" if state.is_terminal() else "chance" if state.is_chance_node() else "move"
        if state.move_number() % 9 == 0 or kind not in checked:
            checked.add(kind)
            text = pyspiel.serialize_game_and_state(game, state)
            game2, back = pyspiel.deserialize_game_and_state(text)
            assert str(game2) == str(game)
            assert str(back) == str(state)
            assert back.history() == state.history()
            assert back.current_player() == state.current_player()
            assert back.returns() == state.returns()
            for p in range(game.num_players()):
                assert back.information_state_string(p) == state.information_state_string(p)
                assert back.observation_tensor(p) == state.observation_tensor(p)
            if kind == "move":
                assert back.legal_actions() == state.legal_actions()
            elif kind == "chance":
                assert back.chance_outcomes() == state.chance_outcomes()
            # The copy plays on exactly like the original.
            again = game.deserialize_state(state.serialize())
            clone = state.clone()
            for twin in (back, again, clone):
                r1, r2 = random.Random(state.move_number()), random.Random(state.move_number())
                a, b = state.clone(), twin
                for _ in range(12):
                    if a.is_terminal():
                        break
                    _random_step(a, r1)
                    _random_step(b, r2)
                assert str(a) == str(b)
        if state.is_terminal():
            break
        _random_step(state, rng)
    assert checked == {"chance", "move", "terminal"}


def test_chance_nodes_deal_from_what_is_left() -> None:
    state = _load().new_initial_state()
    assert state.is_chance_node()
    outcomes = dict(state.chance_outcomes())
    assert sorted(outcomes) == list(range(len(FACES))) and len(FACES) == 24
    assert outcomes[FACE_INDEX["CCSS"]] == pytest.approx(2 / 30)
    assert outcomes[FACE_INDEX["RCSH"]] == pytest.approx(1 / 30)
    assert sum(outcomes.values()) == pytest.approx(1.0)
    state.apply_action(FACE_INDEX["RCSH"])
    assert FACE_INDEX["RCSH"] not in dict(state.chance_outcomes())
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 0) == f"draw {FACES[0]}"


def _deal(state: pyspiel.State, faces: list[str]) -> None:
    for face in faces:
        assert state.is_chance_node()
        state.apply_action(FACE_INDEX[face])


def test_information_state_hides_other_trays_and_swaps() -> None:
    game = _load()
    p0 = ["CCSS", "RCSH", "HHBB", "CSHB"]
    a, b = game.new_initial_state(), game.new_initial_state()
    _deal(a, [*p0, "SSHH", "CCBB", "RBHC", "CHSB", "SSBB"])
    _deal(b, [*p0, "CCHH", "HHBC", "RSHB", "BBCS", "SSBB"])
    assert a.information_state_string(0) == b.information_state_string(0)
    assert a.information_state_string(1) != b.information_state_string(1)
    assert "0+RCSH" in a.information_state_string(0)
    assert "RCSH" not in a.information_state_string(1)
    action = a.legal_actions()[0]
    assert action in b.legal_actions()
    a.apply_action(action)
    b.apply_action(action)
    _deal(a, ["CCBH"])  # player 0 draws
    _deal(b, ["CCBH"])
    for p in (0,):
        assert a.information_state_string(p) == b.information_state_string(p)
        assert a.observation_string(p) == b.observation_string(p)
        assert np.array_equal(a.observation_tensor(p), b.observation_tensor(p))
    assert "1+?" in a.information_state_string(0)
    assert "0+CCBH" not in a.information_state_string(1)
    assert "0+?" in a.information_state_string(1)
    assert a.observation_string(1) != b.observation_string(1)


def _replay(rules: Rules, engine: Game, moves: list[Move]) -> pyspiel.State:
    """The OpenSpiel state reached by dealing the engine game's decks and
    playing ``moves`` (checking the legal moves agree at every turn)."""
    assert engine.decks is not None
    state = _load(rules, engine.players).new_initial_state()
    n = engine.players
    _deal(state, [face for p in range(n) for face in engine.decks[p][:4]] + [engine.decks[0][4]])
    for move in moves:
        legal = state.legal()
        assert set(legal.values()) == set(engine.legal_moves())
        action = next(a for a, m in legal.items() if m == move)
        mover = engine.to_move
        engine.play(move)
        state.apply_action(action)
        if state.is_chance_node():  # a draw: the card the engine drew
            _deal(state, [engine.trays[mover][-1]])
    return state


def test_a_swapped_face_is_seen_only_by_its_owner() -> None:
    # Swaps are rare (no card fits anywhere): find a random engine game with one.
    rules = Rules(match="perfect-match")
    for seed in range(1000):
        game = Game.new(rules, 2, seed=seed)
        rng = random.Random(seed)
        while not game.finished and SWAP not in (m.kind for m in game.history):
            game.play(sample_move(game, rng))
        if game.history[-1].kind == SWAP:
            break
    else:
        pytest.fail("no swap in 1000 random games")
    swap = game.history[-1]
    me = (game.ply - 1) % 2
    state = _replay(rules, Game.new(rules, 2, seed=seed), game.history)
    mine = state.information_state_string(me)
    theirs = state.information_state_string(1 - me)
    assert f"{me}:swap {swap.face}" in mine
    assert f"{me}:swap {swap.face}" not in theirs and f"{me}:swap" in theirs
    assert f"{1 - me}:swap" not in mine.replace(f"{me}:swap", "")


@pytest.mark.parametrize("rules", [Rules(), Rules("perfect-match", "splitzkies", True)])
def test_openspiel_plays_the_engines_game(rules: Rules) -> None:
    """Feed the OpenSpiel game the cards of an engine deal and the same moves:
    same legal moves at every turn, same scores and result."""
    played = Game.new(rules, 2, seed=31)
    rng = random.Random(31)
    while not played.finished:
        played.play(sample_move(played, rng))
    engine = Game.new(rules, 2, seed=31)
    state = _replay(rules, engine, played.history)
    assert state.is_terminal() and engine.finished
    assert state.returns() == outcome(engine)
    assert "scores " + " ".join(map(str, engine.scores)) in state.observation_string(0)
