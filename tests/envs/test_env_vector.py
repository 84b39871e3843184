"""The batched environment: each row is its own game, stepped as the
single-game path would, dealt afresh when it ends; illegal input refused."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed: pip install '.[rl]'")

from donutbox.core import Game, Rules  # noqa: E402
from donutbox.envs.encoding import Encoder  # noqa: E402
from donutbox.envs.vector import VectorEnv  # noqa: E402


def test_rows_follow_their_own_games_to_the_end_and_are_dealt_again() -> None:
    n = 3
    env = VectorEnv(n, players=2)
    obs, mask, seat = env.reset(seed=20)
    mirror = [Game.new(Rules(), 2, seed=20 + i) for i in range(n)]
    encs = [Encoder(Rules(), 2) for _ in range(n)]
    finished = [0] * n
    steps = 0
    while min(finished) < 1 and steps < 2000:
        for i in range(n):
            assert seat[i] == mirror[i].to_move
            assert np.array_equal(obs[i], encs[i].observe(mirror[i], int(seat[i])))
        # the highest legal action in every game
        actions = [int(np.flatnonzero(mask[i])[-1]) for i in range(n)]
        moves = [encs[i].legal(mirror[i])[actions[i]] for i in range(n)]
        obs, mask, seat, rewards, done = env.step(actions)
        steps += 1
        for i in range(n):
            mirror[i].play(moves[i])
            assert done[i] == mirror[i].finished
            if done[i]:
                s = mirror[i].scores
                d = mirror[i].boxes_delivered
                # by hand: the higher score wins, then more boxes delivered
                key = [(s[p], d[p]) for p in (0, 1)]
                want = (
                    [0.0, 0.0]
                    if key[0] == key[1]
                    else ([1.0, -1.0] if key[0] > key[1] else [-1.0, 1.0])
                )
                assert list(rewards[i]) == want
                finished[i] += 1
                mirror[i] = Game.new(Rules(), 2, seed=20 + i + n * finished[i])
            else:
                assert not rewards[i].any()
    assert min(finished) >= 1


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    env = VectorEnv(2)
    obs, mask, _ = env.reset(seed=1)
    before = obs.copy()
    plies = [g.ply for g in env.games]
    bad = int(np.flatnonzero(mask[1] == 0)[0])
    good = int(np.flatnonzero(mask[0])[0])
    with pytest.raises(ValueError, match="game 1: illegal action"):
        env.step([good, bad])
    assert [g.ply for g in env.games] == plies and np.array_equal(env.obs, before)
    with pytest.raises(ValueError, match="shape"):
        env.step([good])
    with pytest.raises(ValueError, match="num_envs"):
        VectorEnv(0)
