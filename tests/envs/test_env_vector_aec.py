"""The batched environment against the PettingZoo one: on the same seeds,
every row's observation, mask, seat to move, rewards and ends equal the AEC
environment's, step for step (every layout and variant, 2-4 players)."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed: pip install '.[rl]'")
pytest.importorskip("pettingzoo")

from donutbox.core import Rules  # noqa: E402
from donutbox.envs import aec_env  # noqa: E402
from donutbox.envs.vector import VectorEnv, random_actions  # noqa: E402


def _deal(rules: Rules, players: int, seed: int) -> object:
    env = aec_env(rules=rules, players=players)
    env.reset(seed=seed)
    return env


@pytest.mark.parametrize(
    ("rules", "players", "steps"),
    [
        (Rules(), 2, 400),
        (Rules(layout="splitzkies", match="perfect-match"), 2, 400),
        (Rules(layout="splitzkies", closers=True), 3, 250),
        (Rules(match="perfect-match", closers=True), 4, 250),
    ],
    ids=lambda v: v.key() if isinstance(v, Rules) else str(v),
)
def test_every_row_is_the_aec_environment_step_for_step(
    rules: Rules, players: int, steps: int
) -> None:
    n, seed = 3, 40
    env = VectorEnv(n, rules=rules, players=players)
    obs, mask, seat = env.reset(seed=seed)
    aecs = [_deal(rules, players, seed + i) for i in range(n)]
    dealt = [0] * n
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(steps):
        for i, aec in enumerate(aecs):
            agent = aec.agent_selection  # type: ignore[attr-defined]
            assert agent == f"player_{seat[i]}"
            seen = aec.observe(agent)  # type: ignore[attr-defined]
            assert np.array_equal(seen["observation"], obs[i])
            assert np.array_equal(seen["action_mask"], mask[i])
        actions = np.array([int(rng.choice(np.flatnonzero(row))) for row in mask])
        obs, mask, seat, rewards, done = env.step(actions)
        for i, aec in enumerate(aecs):
            aec.step(int(actions[i]))  # type: ignore[attr-defined]
            finished = all(aec.terminations.values())  # type: ignore[attr-defined]
            assert done[i] == finished
            if finished:
                want = [aec.rewards[f"player_{p}"] for p in range(players)]  # type: ignore[attr-defined]
                assert list(rewards[i]) == pytest.approx(want)
                assert sum(want) == pytest.approx(0.0) and any(want)
                ended += 1
                dealt[i] += 1
                aecs[i] = _deal(rules, players, seed + i + n * dealt[i])
            else:
                assert not rewards[i].any()
    assert ended >= 2  # games ended and were dealt again on the way


def test_random_actions_draws_every_legal_action_and_only_those() -> None:
    mask = np.zeros((3, 6), dtype=np.int8)
    mask[0, [1, 4]] = 1
    mask[1, 5] = 1
    mask[2, :] = 1
    rng = np.random.default_rng(0)
    drawn = np.array([random_actions(mask, rng) for _ in range(600)])
    assert set(drawn[:, 0]) == {1, 4} and set(drawn[:, 1]) == {5}
    assert set(drawn[:, 2]) == set(range(6))
    counts = np.bincount(drawn[:, 2], minlength=6)
    assert counts.min() > 60  # ~100 each: uniform
    mask[1, 5] = 0
    with pytest.raises(ValueError, match="every row of the mask needs a legal action"):
        random_actions(mask, rng)
