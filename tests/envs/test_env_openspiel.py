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


def _midgame(seed: int, plies: int, rules: Rules = Rules(), players: int = 2) -> pyspiel.State:  # noqa: B008
    game = _load(rules, players)
    state = game.new_initial_state()
    rng = random.Random(seed)
    while not state.is_terminal() and state.move_number() < plies:
        _random_step(state, rng)
    while state.is_chance_node():
        _random_step(state, rng)
    return state


def test_resample_keeps_what_the_player_knows_and_redraws_the_rest() -> None:
    for rules, players in ((Rules(), 2), (Rules(layout="splitzkies"), 3)):
        state = _midgame(3, 40, rules, players)
        me = state.current_player()
        others_changed = False
        for k in range(6):
            world = state.resample_from_infostate(me, pyspiel.UniformProbabilitySampler(k, 0, 1))
            assert world.information_state_string(me) == state.information_state_string(me)
            assert np.array_equal(world.observation_tensor(me), state.observation_tensor(me))
            assert np.array_equal(
                world.information_state_tensor(me), state.information_state_tensor(me)
            )
            assert world.legal_actions() == state.legal_actions()
            g, w = state._core.game, world._core.game
            for q in range(players):
                assert sorted(w.trays[q] + w.piles[q]) != [] or True
                assert len(w.trays[q]) == len(g.trays[q]) and len(w.piles[q]) == len(g.piles[q])
                if q != me and w.trays[q] != g.trays[q]:
                    others_changed = True
            # every card is still somewhere: trays + known pile faces + undrawn
            for q in range(players):
                held = [f for f in w.trays[q] + w.piles[q] if f != "????"]
                undrawn = sum(world._core.undrawn[q])
                before = [f for f in g.trays[q] + g.piles[q] if f != "????"]
                assert len(held) + undrawn == len(before) + sum(state._core.undrawn[q])
            assert w.trays[me] == g.trays[me]
            # the world plays on to the end
            rng = random.Random(k)
            while not world.is_terminal():
                _random_step(world, rng)
        assert others_changed


def test_tensors_are_shaped_and_the_bound_is_the_proven_one() -> None:
    from donutbox.envs.length import max_game_length

    game = pyspiel.load_game(NAME, {"observation": "board"})
    assert game.max_game_length() == max_game_length(2) == 4003
    state = game.new_initial_state()
    rng = random.Random(1)
    while state.move_number() < 30 or state.is_chance_node():
        _random_step(state, rng)
    from open_spiel.python.observation import make_observation

    obs = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False))
    obs.set_from(state, 0)
    assert list(obs.dict) == ["board", "places", "boxes", "features"]
    assert obs.dict["board"].shape == (11, 112, 112)
    assert obs.dict["places"].shape == (128, 19)
    compact = make_observation(_load(), pyspiel.IIGObservationType(perfect_recall=False))
    assert list(compact.dict) == ["places", "boxes", "features"]
    assert compact.dict["places"].shape == (128, 31) and compact.tensor.size == 4632
    info = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    info.set_from(state, 0)
    assert list(info.dict)[-1] == "history"
    assert len(state.information_state_tensor(0)) == game.information_state_tensor_shape()[0]
    hist = info.dict["history"]
    played = state._core.game.history
    assert hist[:8].sum() == len(played)  # 2 seats x (place, box, swap, pass)
    assert hist[8] == pytest.approx(len(played) / 100)
    # the faces player 0 drew: its 4 dealt cards and one per own placement
    # (a draw refills the tray), minus none while the pile lasts
    own_places = sum(1 for i, m in enumerate(played) if i % 2 == 0 and m.kind == "place")
    assert hist[9:].sum() == 4 + own_places
    assert np.array_equal(
        hist[:8].reshape(2, 4)[:, 0],
        [own_places, len([m for i, m in enumerate(played) if i % 2 == 1 and m.kind == "place"])],
    )


def test_python_ismcts_bot_plays_a_game() -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = _load()
    rs = np.random.RandomState(7)
    bot = ismcts.ISMCTSBot(
        game, mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs), 2.0, 8, random_state=rs
    )
    state = game.new_initial_state()
    rng = random.Random(0)
    moves = 0
    while not state.is_terminal():
        if state.current_player() == 0:
            state.apply_action(bot.step(state))
            moves += 1
        else:
            _random_step(state, rng)
    assert moves > 10 and sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])


_CPP_ISMCTS = """
import numpy as np, pyspiel
from donutbox.envs import register_openspiel
game = pyspiel.load_game(register_openspiel())
bot = pyspiel.ISMCTSBot(7, pyspiel.RandomRolloutEvaluator(1, 7), 2.0, 8, -1,
                        pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT, False, False)
rng = np.random.default_rng(0)
state = game.new_initial_state()
while not state.is_terminal():
    if state.is_chance_node():
        o, p = zip(*state.chance_outcomes()); state.apply_action(int(rng.choice(o, p=p)))
    elif state.current_player() == 0:
        state.apply_action(bot.step(state))
    else:
        state.apply_action(int(rng.choice(state.legal_actions())))
print("finished", state.returns())
"""


def test_cpp_ismcts_bot_in_a_subprocess() -> None:
    """OpenSpiel 2.0.2's C++ ISMCTSBot crashes (SIGSEGV) on this Python game
    at its first move: a known limit of C++ bots on Python games
    (docs/research.md); the Python ISMCTSBot above runs.  The subprocess
    keeps the crash out of the test run; if an upstream fix lands, the
    assertion below checks the game it plays."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    run = subprocess.run(
        [sys.executable, "-c", _CPP_ISMCTS], capture_output=True, text=True, env=env, timeout=600
    )
    if run.returncode < 0 or run.returncode == 139:
        pytest.xfail(f"upstream: the C++ ISMCTSBot crashes on Python games (rc {run.returncode})")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "finished" in run.stdout
