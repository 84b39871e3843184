"""A PettingZoo AEC environment: every player is an agent, taking turns.

>>> from donutbox.envs import aec_env
>>> env = aec_env(rules={"layout": "splitzkies"}, players=2)
>>> env.reset(seed=7)          # the same deal as donutbox.Game.new(seed=7)
>>> for agent in env.agent_iter():
...     obs, reward, terminated, truncated, info = env.last()
...     action = None if terminated else env.action_space(agent).sample(obs["action_mask"])
...     env.step(action)

Agents are ``player_0`` .. ``player_{n-1}`` in turn order.  Each observation
is a dict: ``observation`` (``encoding.py``: compact by default,
``observation="board"`` adds the board planes; ``encoding="window"`` gives
the older fixed window of ``observation.py``) and ``action_mask`` (int8, one
entry per action; all zero for an agent that is not to move).  Each agent's
``info`` has ``overflow`` (what the encoding could not show or name: all 0 in
every measured game) and ``truncated_encoding`` (True if any of it is not 0).
Rewards: ``win`` (default) pays the zero-sum outcome at the end, ``points``
pays points as they are scored.  An action outside the mask raises
``ValueError``; wrap with PettingZoo's ``TerminateIllegalWrapper`` to end
the game instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ..core.decks import Composition
from ..core.game import Game
from ..core.moves import Move
from ..core.rules import Rules
from ..core.view import PlayerView
from . import render as draw
from .common import check_players, check_reward, deal, game_seed, make_deck, make_rules, outcome
from .encoding import Encoder

Observation = dict[str, np.ndarray]


class DonutboxAEC(AECEnv[str, Observation, int]):  # type: ignore[misc]
    """The raw AEC environment (``aec_env`` adds PettingZoo's order checks)."""

    metadata = {  # noqa: RUF012 (PettingZoo reads it from the class)
        "render_modes": [*draw.RENDER_MODES, "human"],
        "name": "donutbox_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        rules: Rules | Mapping[str, Any] | None = None,
        players: int = 2,
        window: int | None = None,
        reward: str = "win",
        render_mode: str | None = None,
        encoding: str = "places",
        max_places: int | None = None,
        deck: Composition | Mapping[str, Any] | None = None,
        observation: str = "compact",
    ) -> None:
        super().__init__()
        self.rules = make_rules(rules)
        self.deck = make_deck(deck, encoding)
        self.players = check_players(players)
        self.reward_mode = check_reward(reward)
        if render_mode is not None and render_mode not in (*draw.RENDER_MODES, "human"):
            raise ValueError(f"render_mode must be ansi, rgb_array or human, not {render_mode!r}")
        self.render_mode = render_mode
        self.encoding = Encoder(
            self.rules, self.players, encoding, window, max_places, observation=observation
        )
        self.codec = self.encoding.codec
        self.window = self.encoding.board
        self.possible_agents = [f"player_{i}" for i in range(self.players)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        low, high = self.encoding.bounds()
        obs_space = spaces.Box(low, high, dtype=np.float32)
        mask_space = spaces.Box(0, 1, (self.codec.size,), dtype=np.int8)
        self.observation_spaces = {
            a: spaces.Dict({"observation": obs_space, "action_mask": mask_space})
            for a in self.possible_agents
        }
        action_space = spaces.Discrete(self.codec.size)
        self.action_spaces = {a: action_space for a in self.possible_agents}
        self.game: Game | None = None
        self.np_random: np.random.Generator | None = None

    # -- spaces ------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # -- the game ----------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game: ``Game.new(rules, players, seed=seed)`` (or the
        same from the ``deck`` composition) when a seed is given, else a seed
        drawn from the environment's generator."""
        if seed is not None:
            seed = game_seed(int(seed))
            self.np_random, _ = seeding.np_random(seed)
        elif self.np_random is None:
            self.np_random, _ = seeding.np_random(None)
        if seed is None:
            assert self.np_random is not None
            seed = int(self.np_random.integers(0, 2**63))
        self.game = deal(self.rules, self.players, seed, self.deck)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        to_move = self.game.to_move
        assert to_move is not None
        self.agent_selection = self.possible_agents[to_move]
        self._flag(to_move)

    def _flag(self, seat: int) -> None:
        over = self.encoding.overflow(self._game(), seat)
        self.infos[self.possible_agents[seat]] = {
            "overflow": over,
            "truncated_encoding": any(over.values()),
        }

    def _game(self) -> Game:
        if self.game is None:
            raise RuntimeError("call reset() first")
        return self.game

    def legal(self) -> Mapping[int, Move]:
        """Legal actions of the player to move, as ``action -> Move`` (empty
        once the game is over)."""
        return self.encoding.legal(self._game())

    def encode(self, move: Move | str) -> int:
        """The action index of a move of the player to move, in this turn."""
        return self.encoding.encode(self._game(), move)

    def decode(self, action: int) -> Move:
        """The move an action index stands for in this turn."""
        return self.encoding.decode(self._game(), int(action))

    def view(self, agent: str) -> PlayerView:
        """What ``agent`` may know (for donutbox.ai agents and debugging)."""
        return self._game().view(self._seat[agent])

    def observe(self, agent: str) -> Observation:
        game = self._game()
        seat = self._seat[agent]
        return {
            "observation": self.encoding.observe(game, seat),
            "action_mask": self.encoding.mask(game, seat),
        }

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._game()
        if action is None:
            raise ValueError(f"{agent} is to move: None is only for a finished agent")
        move = self.legal().get(int(action))
        if move is None:
            raise ValueError(
                f"illegal action {int(action)} ({self.codec.describe(int(action))}) for {agent}"
            )
        before = game.scores
        game.play(move)
        self._cumulative_rewards[agent] = 0.0
        if self.reward_mode == "points":
            after = game.scores
            for p, a in enumerate(self.possible_agents):
                self.rewards[a] = float(after[p] - before[p])
        else:
            result = outcome(game)
            for p, a in enumerate(self.possible_agents):
                self.rewards[a] = result[p]
        if game.finished:
            for a in self.agents:
                self.terminations[a] = True
            seat = (self._seat[agent] + 1) % self.players
        else:
            to_move = game.to_move
            assert to_move is not None
            seat = to_move
            self._flag(seat)
        self.agent_selection = self.possible_agents[seat]
        self._accumulate_rewards()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: give render_mode= to aec_env")
            return None
        if self.render_mode == "human":
            print(draw.ansi(self._game()), flush=True)
            return None
        return draw.draw(self._game(), self.render_mode, self.window)

    def close(self) -> None:
        pass


def aec_env(
    rules: Rules | Mapping[str, Any] | None = None,
    players: int = 2,
    window: int | None = None,
    reward: str = "win",
    render_mode: str | None = None,
    encoding: str = "places",
    max_places: int | None = None,
    deck: Composition | Mapping[str, Any] | None = None,
    observation: str = "compact",
) -> AECEnv[str, Observation, int]:
    """The donutbox AEC environment, wrapped in PettingZoo's order checks.

    ``rules``: a ``donutbox.Rules`` or a dict such as ``{"match":
    "perfect-match", "layout": "splitzkies", "closers": True}``; ``window``:
    the board width in cells (``places``: default 128; ``window``: a
    multiple of 4, default 64 for two players, 88 for three or four);
    ``encoding``: ``places`` (default) or ``window``; ``max_places``: ``K``;
    ``deck``: a deck composition (docs/deck-lab.md; default the standard deck);
    ``observation``: ``compact`` (default: candidate places with run
    summaries, boxes, features; 4,632 floats for two players, 4,880 on
    Splitzkies) or ``board``
    (the full board planes first).
    """
    env = DonutboxAEC(
        rules, players, window, reward, render_mode, encoding, max_places, deck, observation
    )
    return wrappers.OrderEnforcingWrapper(env)
