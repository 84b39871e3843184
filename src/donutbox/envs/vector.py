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
bookkeeping.  With the compact observation (the default) every game's
observation and mask are written a batch at a time (``batched.py``: the
numpy calls once per batch, not once per game); with ``observation="board"``
game by game.  ``benchmarks/envs_speed.py`` measures it against the AEC
environment.  ``obs`` and ``mask`` are the environment's own arrays,
overwritten by the next call (copy what you keep); the legality of an
action is checked against a copy of its own.  An illegal action raises
``ValueError`` naming the game, and changes no game.

``random_actions(mask, rng)`` draws a uniformly random legal action in
every row at once (for random play and exploration).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.game import Game
from ..core.moves import Move
from ..core.rules import Rules
from .batched import BatchWriter
from .common import check_players, make_rules, outcome
from .encoding import Encoder, LegalActions, PlacesCodec, _first_lost


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
        first = Encoder(self.rules, self.players, observation=observation)
        self.observation_size = first.size
        self.actions = first.actions
        #: The compact observation: every game written a batch at a time.
        self.writer = BatchWriter(num_envs, first) if first.observation == "compact" else None
        #: The board observation: one encoder a game.
        self.encoders = (
            [first]
            + [
                Encoder(self.rules, self.players, observation=observation)
                for _ in range(num_envs - 1)
            ]
            if self.writer is None
            else []
        )
        self.obs = (
            self.writer.obs
            if self.writer is not None
            else np.zeros((num_envs, self.observation_size), dtype=np.float32)
        )
        self.mask = np.zeros((num_envs, self.actions), dtype=np.int8)
        self.seat = np.zeros(num_envs, dtype=np.int64)
        self.games: list[Game] = []
        self._next_seed: list[int] = []

    def reset(self, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal every game afresh (module doc); the first observations."""
        self.games = [
            Game.new(self.rules, self.players, seed=seed + i) for i in range(self.num_envs)
        ]
        self._next_seed = [seed + i + self.num_envs for i in range(self.num_envs)]
        self._write()
        return self.obs, self.mask, self.seat

    def _write(self) -> None:
        games = self.games
        seats = [game.to_move for game in games]
        assert None not in seats  # a game that ends is dealt again at once
        self.seat[:] = seats  # type: ignore[assignment]
        if self.writer is not None:
            self.writer.write(games)  # into self.obs
            np.copyto(self.mask, self.writer.mask)
            return
        for i, game in enumerate(games):
            seat = game.to_move
            assert seat is not None
            enc = self.encoders[i]
            self.obs[i] = enc.observe(game, seat)
            enc.mask(game, seat, self.mask[i])

    def legal(self, i: int) -> Mapping[int, Move]:
        """Game ``i``'s legal actions as ``action -> Move``."""
        if self.writer is None:
            return self.encoders[i].legal(self.games[i])
        turn = self.writer.turns[i]
        assert turn is not None and isinstance(self.writer.codec, PlacesCodec)
        return LegalActions(self.writer.codec, turn, self.games[i], self.writer.mask[i].copy())

    def _move(self, i: int, action: int) -> Move | None:
        """The move of a legal ``action`` in game ``i``, else None."""
        writer = self.writer
        if writer is None:
            return self.encoders[i].legal(self.games[i]).get(action)
        if not (0 <= action < self.actions and writer.mask[i, action]):
            return None
        turn = writer.turns[i]
        assert turn is not None
        codec = writer.codec
        if action == codec.overflow_action:
            return _first_lost(self.games[i], turn, codec)
        return codec.decode(action, turn)

    def describe(self, action: int) -> str:
        return (self.writer.codec if self.writer else self.encoders[0].codec).describe(action)

    def step(
        self, actions: np.ndarray | list[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One action per game (module doc): observations, masks, seats to
        move, rewards ``(num_envs, players)`` and ``done``."""
        if not self.games:
            raise RuntimeError("call reset() first")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(
                f"actions must be {self.num_envs} integers (shape ({self.num_envs},)), "
                f"not {acts.dtype} of shape {acts.shape}"
            )
        moves = []
        for i, a in enumerate(acts.tolist()):
            move = self._move(i, a)
            if move is None:
                what = self.describe(a) if 0 <= a < self.actions else "out of range"
                raise ValueError(f"game {i}: illegal action {a} ({what})")
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
        self._write()
        return self.obs, self.mask, self.seat, rewards, done


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (``num_envs x
    actions`` int8, every row with a legal action), drawn in one pass: the
    ``r``-th legal action of each row for a uniform ``r``.  The mask is
    mostly zeros, so it is scanned 8 entries at a time (as 64-bit words)."""
    n, width = mask.shape
    flat = np.ascontiguousarray(mask, dtype=np.int8).reshape(-1)
    pad = -flat.size % 8
    if pad:
        flat = np.concatenate((flat, np.zeros(pad, dtype=np.int8)))
    words = np.flatnonzero(flat.view(np.uint64))
    legal = (words[:, None] * 8 + np.arange(8)).ravel()
    legal = legal[flat[legal] != 0]  # every legal entry, in order
    counts = np.bincount(legal // width, minlength=n)
    if not counts.all():
        raise ValueError("every row of the mask needs a legal action")
    starts = np.cumsum(counts) - counts
    picks = starts + (rng.random(n) * counts).astype(np.intp)
    actions: np.ndarray = legal[picks] - np.arange(n) * width
    return actions
