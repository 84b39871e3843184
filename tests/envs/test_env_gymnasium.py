"""The Gymnasium single-agent environment: Gymnasium's own checker, and play
against registered agents."""

from __future__ import annotations

import random

import pytest

gymnasium = pytest.importorskip(
    "gymnasium", reason="the rl extra is not installed: pip install '.[rl]'"
)

import numpy as np  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

from donutbox.ai import make_agent  # noqa: E402
from donutbox.core import Game, Rules  # noqa: E402
from donutbox.envs import DonutboxEnv  # noqa: E402
from donutbox.envs.gym_env import ENV_ID  # noqa: E402

ALL_RULES = Rules.all()


# check_env reports some problems only as warnings: count them as failures.
@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.label())
def test_gymnasium_check_env(rules: Rules) -> None:
    env = gymnasium.make(ENV_ID, rules=rules.to_dict(), opponent="greedy")
    check_env(env.unwrapped)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("players", [3, 4])
def test_gymnasium_check_env_more_players(players: int) -> None:
    env = gymnasium.make(ENV_ID, players=players, seat=None, reward="points")
    check_env(env.unwrapped)


def test_learner_plays_the_engines_game_against_the_agent() -> None:
    env = DonutboxEnv(rules=Rules(match="perfect-match"), opponent="greedy", seat=1)
    obs, info = env.reset(seed=13)
    assert info["seat"] == 1
    rng = np.random.default_rng(2)
    terminated = False
    learner_moves = []
    while not terminated:
        assert env.game.to_move == 1
        assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
        assert obs.shape == env.observation_space.shape  # the mask is not in it
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        learner_moves.append(env.legal()[action])
        assert env.decode(action) == learner_moves[-1]
        assert env.encode(learner_moves[-1]) == action
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated and not info["truncated_encoding"]
    game = env.game
    assert game.finished and not info["action_mask"].any()
    assert reward == (1.0 if game.winners == [1] else -1.0 if game.winners == [0] else 0.0)
    # The learner's moves are exactly its moves in the game's history.
    assert [m for i, m in enumerate(game.history) if i % 2 == 1] == learner_moves
    assert Game.new(Rules(match="perfect-match"), 2, seed=13).trays[1] == list(game.decks[1][:4])


def test_opponents_are_the_registered_agents() -> None:
    # Replaying the same seeds with the same agent choices gives the same game.
    env = DonutboxEnv(opponent="heuristic")
    env.reset(seed=5)
    first = env.legal()
    action = min(first)
    env.step(action)
    after = list(env.game.history)
    env.reset(seed=5)
    env.step(action)
    assert env.game.history == after
    assert env.opponents[0].name == "heuristic"
    assert DonutboxEnv(players=3, opponent=["random", "greedy"]).opponents[1].name == "greedy"
    with pytest.raises(ValueError, match="opponents"):
        DonutboxEnv(players=3, opponent=["random"])
    with pytest.raises(ValueError, match="unknown agent"):
        DonutboxEnv(opponent="nobody")


def test_random_seat_is_drawn_from_the_seed() -> None:
    env = DonutboxEnv(players=4, seat=None)
    seats = {env.reset(seed=s)[1]["seat"] for s in range(12)}
    assert len(seats) > 1
    assert env.reset(seed=3)[1]["seat"] == env.reset(seed=3)[1]["seat"]
    _, info = env.reset(seed=3)
    assert env.game.to_move == info["seat"]


def test_illegal_actions() -> None:
    env = DonutboxEnv()
    env.reset(seed=2)
    _, reward, terminated, truncated, info = env.step(env.codec.pass_action)
    assert (reward, terminated, truncated, info["illegal"]) == (-1.0, True, False, True)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    strict = DonutboxEnv(illegal="raise")
    strict.reset(seed=2)
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(strict.codec.pass_action)


def test_mask_uniform_policy_is_the_random_agent() -> None:
    """A policy drawing uniformly from the mask plays like the random agent
    (which draws uniformly from the engine's legal moves): same number of
    choices at every turn."""
    for encoding in ("places", "window"):
        env = DonutboxEnv(rules=Rules(layout="splitzkies"), encoding=encoding)
        _, info = env.reset(seed=17)
        agent = make_agent("random")
        rng = random.Random(0)
        terminated = False
        while not terminated:
            view = env.view()
            assert int(info["action_mask"].sum()) == len(view.legal_moves())
            move = agent.choose(view, rng)
            _, _, terminated, _, info = env.step(env.encode(move))


def test_max_episode_steps_and_human_render(capsys: pytest.CaptureFixture[str]) -> None:
    from donutbox.envs.length import max_game_length

    env = gymnasium.make(ENV_ID, render_mode="human")
    # every player's share of the proven game-length bound fits
    assert env.spec.max_episode_steps >= max(-(-max_game_length(n) // n) for n in (2, 3, 4))
    env.reset(seed=4)
    assert env.render() is None
    assert "Tray of" in capsys.readouterr().out
