"""Many games stepped per call: a batched self-play environment.

>>> from donutbox.envs.vector import VectorEnv
>>> env = VectorEnv(64, players=2)
>>> obs, mask, seat = env.reset(seed=0)          # (64, 4632), (64, A), (64,)
>>> obs, mask, seat, rewards, done = env.step(actions)   # one action per game

Each of the ``num_envs`` games is a self-play game: the agent to move in
game ``i`` is seat ``seat[i]``, and ``obs[i]`` / ``mask[i]`` are that
seat's observation (the environments' encoding, compact by default) and
legal actions.  ``step`` plays one action in every game; a game that ends
is dealt afresh at once (its next seed), so every row always holds a game
to play: ``done[i]`` says that game ``i`` ended with this step, and
``rewards[i]`` is then its zero-sum outcome per seat (``common.outcome``),
else zeros.  Seeds: game ``i`` of ``reset(seed)`` deals ``seed + i``, its
``k``-th replacement ``seed + i + k * num_envs``, so a run is reproducible.

It is the AEC environment's encoding without PettingZoo's per-agent
bookkeeping, with the observation and mask written into batch arrays
(``benchmarks/envs_speed.py`` measures both).  An illegal action raises
``ValueError`` naming the game, and changes no game.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.game import Game
from ..core.moves import Move
from ..core.rules import Rules
from .common import check_players, make_rules, outcome
from .encoding import Encoder


class VectorEnv:
    """``num_envs`` self-play games (module doc)."""

    def __init__(
        self,
        num_envs: int,
        rules: Rules | Mapping[str, Any] | None = None,
        players: int = 2,
        observation: str = "compact",
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or not 1 <= num_envs <= 4096:
            raise ValueError(f"num_envs must be from 1 to 4096, not {num_envs!r}")
        self.num_envs = num_envs
        self.rules = make_rules(rules)
        self.players = check_players(players)
        self.encoders = [
            Encoder(self.rules, self.players, observation=observation) for _ in range(num_envs)
        ]
        first = self.encoders[0]
        self.observation_size = first.size
        self.actions = first.actions
        self.obs = np.zeros((num_envs, self.observation_size), dtype=np.float32)
        self.mask = np.zeros((num_envs, self.actions), dtype=np.int8)
        self.seat = np.zeros(num_envs, dtype=np.int64)
        self.games: list[Game] = []
        self._next_seed: list[int] = []

    def reset(self, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal every game afresh (module doc); the first observations."""
        self.games = []
        self._next_seed = []
        for i in range(self.num_envs):
            self.games.append(Game.new(self.rules, self.players, seed=seed + i))
            self._next_seed.append(seed + i + self.num_envs)
            self._write(i)
        return self.obs, self.mask, self.seat

    def _write(self, i: int) -> None:
        game = self.games[i]
        seat = game.to_move
        assert seat is not None
        enc = self.encoders[i]
        self.seat[i] = seat
        self.obs[i] = enc.observe(game, seat)
        enc.mask(game, seat, self.mask[i])

    def legal(self, i: int) -> Mapping[int, Move]:
        """Game ``i``'s legal actions as ``action -> Move``."""
        return self.encoders[i].legal(self.games[i])

    def step(
        self, actions: np.ndarray | list[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One action per game (module doc): observations, masks, seats to
        move, rewards ``(num_envs, players)`` and ``done``."""
        if not self.games:
            raise RuntimeError("call reset() first")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), not {acts.shape}")
        moves = []
        for i, a in enumerate(acts.tolist()):
            move = self.legal(i).get(int(a))
            if move is None:
                raise ValueError(f"game {i}: illegal action {a} ({self.encoders[i].describe(a)})")
            moves.append(move)
        rewards = np.zeros((self.num_envs, self.players), dtype=np.float32)
        done = np.zeros(self.num_envs, dtype=bool)
        for i, move in enumerate(moves):
            game = self.games[i]
            game.play(move)
            if game.finished:
                rewards[i] = outcome(game)
                done[i] = True
                self.games[i] = Game.new(self.rules, self.players, seed=self._next_seed[i])
                self._next_seed[i] += self.num_envs
            self._write(i)
        return self.obs, self.mask, self.seat, rewards, done
