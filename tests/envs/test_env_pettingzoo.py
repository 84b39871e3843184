"""The PettingZoo AEC environment: PettingZoo's own conformance tests, and
agreement with the engine."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pettingzoo", reason="the rl extra is not installed: pip install '.[rl]'")

import numpy as np
from pettingzoo.test import api_test, seed_test

from donutbox.core import Game, Rules
from donutbox.envs import aec_env
from donutbox.render.text import game_text

ALL_RULES = Rules.all()


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.label())
def test_pettingzoo_api_and_seed_tests(rules: Rules) -> None:
    api_test(aec_env(rules=rules, players=2), num_cycles=40)
    seed_test(lambda: aec_env(rules=rules, players=2), num_cycles=40)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("players", [3, 4])
def test_pettingzoo_api_test_more_players(players: int) -> None:
    rules = Rules(match="perfect-match", layout="splitzkies", closers=players == 4)
    api_test(aec_env(rules=rules, players=players), num_cycles=20)
    seed_test(lambda: aec_env(rules=rules, players=players), num_cycles=10)


def test_reset_seed_deals_the_engines_game_and_masks_are_its_legal_moves() -> None:
    rules = Rules(layout="splitzkies")
    env = aec_env(rules=rules, players=2)
    env.reset(seed=21)
    raw = env.unwrapped
    twin = Game.new(rules, 2, seed=21)
    assert raw.game.trays == twin.trays and raw.game.start == twin.start
    rng = np.random.default_rng(0)
    steps = 0
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        seat = int(agent.split("_")[1])
        assert raw.game.to_move == seat
        legal = {raw.decode(int(a)) for a in np.flatnonzero(obs["action_mask"])}
        assert legal == set(raw.game.legal_moves())
        assert env.infos[agent]["truncated_encoding"] is False
        for other in raw.possible_agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        twin.play(raw.decode(action))
        env.step(action)
        steps += 1
    assert twin.finished and raw.game.scores == twin.scores and steps == twin.ply


@pytest.mark.parametrize("reward", ["win", "points"])
def test_rewards_add_up_to_the_result(reward: str) -> None:
    env = aec_env(players=3, reward=reward)
    env.reset(seed=4)
    raw = env.unwrapped
    totals = dict.fromkeys(raw.possible_agents, 0.0)
    rng = random.Random(4)
    for agent in env.agent_iter():
        _, r, terminated, truncated, _ = env.last()
        totals[agent] += r
        env.step(None if terminated or truncated else rng.choice(sorted(raw.legal())))
    game = raw.game
    if reward == "points":
        assert [totals[a] for a in raw.possible_agents] == [float(s) for s in game.scores]
    else:
        result = [totals[a] for a in raw.possible_agents]
        assert sum(result) == pytest.approx(0.0)
        for p in range(3):
            assert (result[p] > 0) == (p in game.winners)


def test_illegal_action_raises_and_names_it() -> None:
    env = aec_env()
    env.reset(seed=1)
    raw = env.unwrapped
    with pytest.raises(ValueError, match=r"illegal action .*pass"):
        env.step(raw.codec.pass_action)


def test_render_modes() -> None:
    env = aec_env(render_mode="ansi")
    env.reset(seed=8)
    text = env.render()
    assert text == game_text(env.unwrapped.game).plain
    assert "Tray of Player 1" in text
    env = aec_env(render_mode="rgb_array")
    env.reset(seed=8)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    first = img.copy()
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert not np.array_equal(first, env.render())
    with pytest.raises(ValueError, match="render_mode"):
        aec_env(render_mode="nothing")


def test_human_render_prints_the_drawing(capsys: pytest.CaptureFixture[str]) -> None:
    env = aec_env(render_mode="human")
    env.reset(seed=8)
    assert env.render() is None
    assert capsys.readouterr().out.strip() == game_text(env.unwrapped.game).plain.strip()


def test_pettingzoo_render_test() -> None:
    from pettingzoo.test import render_test

    render_test(lambda render_mode=None: aec_env(render_mode=render_mode))
