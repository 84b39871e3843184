"""OpenSpiel search: resampled worlds replay legally, swaps included, and
the Python ISMCTSBot plays whole games at its default settings."""

from __future__ import annotations

import random
import re

import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="the rl extra is not installed: pip install '.[rl]'"
)

import numpy as np  # noqa: E402

from donutbox.core import Game, Rules  # noqa: E402
from donutbox.core.moves import SWAP  # noqa: E402
from donutbox.core.sampling import sample_move  # noqa: E402
from donutbox.envs import register_openspiel  # noqa: E402
from donutbox.envs.openspiel_game import FACE_INDEX  # noqa: E402

NAME = register_openspiel()

#: One event of an information-state string: a draw, the start card, or a move.
_EVENT = re.compile(r"(\d+)\+(\S+)|start (\S+)|(\d+):(swap(?: [A-Z]{4})?|pass|\S+)")


def _events(info: str) -> tuple[list[str], list[str]]:
    """The player's own draws and every move text, from their string."""
    draws, moves = [], []
    me, rest = info.split(" ", 1)
    for m in _EVENT.finditer(rest):
        if m.group(1) == me[1:]:
            draws.append(m.group(2))
        elif m.group(4) is not None:
            moves.append(m.group(5))
    return draws, moves


def _replay_world(world: pyspiel.State) -> list[str]:
    """Deal and play ``world``'s history afresh from what each player's own
    information string says they drew and did; return the reasons it is not
    a legal game (empty when every draw was possible and every move legal,
    and the replay ends in the same information states)."""
    game = world.get_game()
    n = game.num_players()
    infos = [world.information_state_string(q) for q in range(n)]
    draws = []
    moves_by = []
    for q in range(n):
        d, m = _events(infos[q])
        draws.append(iter(d))
        moves_by.append(m)
    start = re.search(r"start (\S+)", infos[0])
    state = game.new_initial_state()
    try:
        for q in range(n):
            for _ in range(4):
                state.apply_action(FACE_INDEX[next(draws[q])])
        if start is None:
            return ["the deal is not over"]
        state.apply_action(FACE_INDEX[start.group(1)])
        for ply, _ in enumerate(moves_by[0]):
            mover = state.current_player()
            text = moves_by[mover][ply]
            legal = {str(m): a for a, m in state.legal().items()}
            if text not in legal:
                return [f"ply {ply}: player {mover}'s {text} is not legal there"]
            state.apply_action(legal[text])
            while state.is_chance_node() and not state.is_terminal():
                face = next(draws[mover], None)
                if face is None:
                    break  # the world's pending draw
                outcomes = dict(state.chance_outcomes())
                if FACE_INDEX[face] not in outcomes:
                    return [f"ply {ply}: player {mover} cannot draw {face}"]
                state.apply_action(FACE_INDEX[face])
    except (StopIteration, ValueError) as err:
        return [f"replay failed: {err!r}"]
    wrong = [q for q in range(n) if state.information_state_string(q) != infos[q]]
    return [f"player {q}'s information differs after the replay" for q in wrong]


def _random_step(state: pyspiel.State, rng: random.Random) -> None:
    if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(rng.choices(outcomes, probs)[0])
    else:
        state.apply_action(rng.choice(state.legal_actions()))


def _state_after(rules: Rules, players: int, engine_moves: list, seed: int) -> pyspiel.State:
    """The OpenSpiel state of the engine game ``Game.new(rules, players,
    seed)`` after ``engine_moves``."""
    engine = Game.new(rules, players, seed=seed)
    assert engine.decks is not None
    state = pyspiel.load_game(NAME, {**rules.to_dict(), "players": players}).new_initial_state()
    for face in [f for p in range(players) for f in engine.decks[p][:4]] + [engine.decks[0][4]]:
        state.apply_action(FACE_INDEX[face])
    for move in engine_moves:
        action = next(a for a, m in state.legal().items() if m == move)
        mover = engine.to_move
        engine.play(move)
        state.apply_action(action)
        if state.is_chance_node():
            state.apply_action(FACE_INDEX[engine.trays[mover][-1]])
    return state


def _after_a_swap(rules: Rules, players: int) -> tuple[pyspiel.State, int]:
    """A position just after a swap (random play), and who swapped."""
    for seed in range(2000):
        game = Game.new(rules, players, seed=seed)
        rng = random.Random(seed)
        while not game.finished and SWAP not in (m.kind for m in game.history):
            game.play(sample_move(game, rng))
        if game.history[-1].kind == SWAP and not game.finished:
            return _state_after(rules, players, game.history, seed), (game.ply - 1) % players
    pytest.fail("no swap in 2000 random games")


def test_the_replay_check_catches_an_illegal_swap() -> None:
    """The checker itself: a world whose swapper could have placed a card
    is reported (the swapped face written as a placeable one)."""
    state, swapper = _after_a_swap(Rules(match="perfect-match"), 2)
    assert _replay_world(state) == []
    world = state.clone()
    core = world._core
    last = len(core.game.history) - 1
    assert core.placeable[last]  # some faces fitted: the swapper held none of them
    fits = sorted(core.placeable[last])[0]
    idx = max(i for i, e in enumerate(core.events) if e[2] == f"{swapper}:swap")
    core.events[idx] = (swapper, f"{swapper}:swap {fits}", f"{swapper}:swap")
    assert _replay_world(world) != []


def test_resampled_worlds_after_an_opponents_swap_are_consistent() -> None:
    for rules, players in ((Rules(match="perfect-match"), 2), (Rules(match="perfect-match"), 3)):
        state, swapper = _after_a_swap(rules, players)
        me = (swapper + 1) % players
        assert state.current_player() == me
        rng = np.random.RandomState(1)
        bad = []
        trays = set()
        for _ in range(20):
            world = state.resample_from_infostate(
                me, pyspiel.UniformProbabilitySampler(int(rng.randint(1 << 30)), 0, 1)
            )
            assert world.information_state_string(me) == state.information_state_string(me)
            assert world.legal_actions() == state.legal_actions()
            bad += _replay_world(world)
            trays.add(tuple(sorted(world._core.game.trays[swapper])))
        assert bad == []
        assert len(trays) > 1  # the swapper's tray really is redrawn


def test_resampled_worlds_midgame_replay_legally() -> None:
    for rules, players, seed in (
        (Rules(), 2, 3),
        (Rules(layout="splitzkies"), 3, 4),
        (Rules("perfect-match", "splitzkies", True), 4, 5),
    ):
        game = pyspiel.load_game(NAME, {**rules.to_dict(), "players": players})
        state = game.new_initial_state()
        rng = random.Random(seed)
        while state.move_number() < 60 + 12 * players and not state.is_terminal():
            _random_step(state, rng)
        while state.is_chance_node():
            _random_step(state, rng)
        me = state.current_player()
        for k in range(8):
            world = state.resample_from_infostate(me, pyspiel.UniformProbabilitySampler(k, 0, 1))
            assert _replay_world(world) == []
            # worlds with the same information state for a player agree on
            # that player's legal actions (no collapsed node)
            other = (me + 1) % players
            assert world.information_state_string(other) != state.information_state_string(
                other
            ) or sorted(world._core.game.trays[other]) == sorted(state._core.game.trays[other])


def test_python_ismcts_bot_at_defaults_plays_whole_games() -> None:
    """OpenSpiel's Python ISMCTSBot with every default (in particular
    ``allow_inconsistent_action_sets=False``) at 100 simulations; 1,000 are
    measured in docs/research.md."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game(NAME)
    for seat in (0, 1):
        rs = np.random.RandomState(seat)
        bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), 2.0, 100, random_state=rs)
        state = game.new_initial_state()
        rng = random.Random(seat)
        moves = 0
        while not state.is_terminal():
            if state.current_player() == seat:
                state.apply_action(bot.step(state))
                moves += 1
            else:
                _random_step(state, rng)
        assert moves > 10 and sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])
