"""A Gymnasium single-agent environment: one learner against registered agents.

>>> import gymnasium, donutbox.envs
>>> env = gymnasium.make("donutbox/Donutbox-v0", opponent="heuristic")
>>> obs, info = env.reset(seed=7)
>>> obs, reward, terminated, truncated, info = env.step(
...     env.action_space.sample(info["action_mask"]))

The learner sits at ``seat`` (default 0; ``None`` draws a seat at each
reset); every other seat is played by ``donutbox.ai.make_agent(opponent,
**opponent_options)``, which sees only its own player's view.  The
observation is the AEC environment's ``observation`` array alone (a flat
``Box``: ``encoding.py``, compact unless ``observation="board"``); the
mask is **not** in it, so a network never eats it by accident: it is
``info["action_mask"]`` (int8) and
``action_masks()`` (booleans, the method sb3-contrib's ``MaskablePPO``
looks for).  ``info["overflow"]`` / ``info["truncated_encoding"]`` say if
the encoding could not show or name something (never, in measured games).
``gymnasium.make`` sets ``max_episode_steps`` to the learner's share of the
proven game-length bound (``openspiel_game.max_game_length``).

An action outside the mask ends the episode with reward -1 and
``info["illegal"] = True`` (``illegal="lose"``, the default, so that
unmasked samplers and Gymnasium's own checker can run) or raises
``ValueError`` (``illegal="raise"``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Final

import gymnasium
import numpy as np
from gymnasium import spaces

from ..ai import Agent, make_agent
from ..core.decks import Composition
from ..core.game import Game
from ..core.moves import Move
from ..core.rules import Rules
from ..core.view import PlayerView
from . import render as draw
from .common import check_players, check_reward, deal, game_seed, make_deck, make_rules, outcome
from .encoding import Encoder
from .length import max_game_length

ENV_ID: Final = "donutbox/Donutbox-v0"
ILLEGAL_REWARD: Final = -1.0
#: The most moves one player can make in a dealt game (the proven length
#: bound of ``length.py`` over the players, each player's share rounded up):
#: ``make`` gives it as ``max_episode_steps``, so it never cuts a real game.
MAX_EPISODE_STEPS: Final = max(-(-max_game_length(n) // n) for n in (2, 3, 4))

Observation = np.ndarray


class DonutboxEnv(gymnasium.Env[Observation, np.int64]):
    """One learner against agents from ``donutbox.ai`` (see module doc)."""

    metadata = {"render_modes": [*draw.RENDER_MODES, "human"], "render_fps": 2}  # noqa: RUF012

    def __init__(
        self,
        rules: Rules | Mapping[str, Any] | None = None,
        players: int = 2,
        opponent: str | Sequence[str] = "random",
        opponent_options: Mapping[str, Any] | None = None,
        seat: int | None = 0,
        window: int | None = None,
        reward: str = "win",
        illegal: str = "lose",
        render_mode: str | None = None,
        encoding: str = "places",
        max_places: int | None = None,
        deck: Composition | Mapping[str, Any] | None = None,
        observation: str = "compact",
    ) -> None:
        self.rules = make_rules(rules)
        self.deck = make_deck(deck, encoding)
        self.players = check_players(players)
        names = [opponent] * (players - 1) if isinstance(opponent, str) else list(opponent)
        if len(names) != players - 1:
            raise ValueError(f"{players} players need {players - 1} opponents, not {len(names)}")
        options = dict(opponent_options or {})
        self.opponents: list[Agent] = [make_agent(name, **options) for name in names]
        if seat is not None and not 0 <= seat < players:
            raise ValueError(f"seat must be 0 to {players - 1} or None, not {seat}")
        self.seat_option = seat
        self.seat = 0 if seat is None else seat
        self.reward_mode = check_reward(reward)
        if illegal not in ("lose", "raise"):
            raise ValueError(f"illegal must be 'lose' or 'raise', not {illegal!r}")
        self.illegal = illegal
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be ansi, rgb_array or human, not {render_mode!r}")
        self.render_mode = render_mode
        self.encoding = Encoder(
            self.rules, self.players, encoding, window, max_places, observation=observation
        )
        self.codec = self.encoding.codec
        self.window = self.encoding.board
        low, high = self.encoding.bounds()
        self.observation_space: spaces.Space[Any] = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Discrete(self.codec.size)
        self.game: Game | None = None
        self._rng = random.Random(0)
        self._over = True

    # -- reading -----------------------------------------------------------------

    def _game(self) -> Game:
        if self.game is None:
            raise RuntimeError("call reset() first")
        return self.game

    def encode(self, move: Move | str) -> int:
        """The action index of a move of the player to move, in this turn."""
        return self.encoding.encode(self._game(), move)

    def decode(self, action: int) -> Move:
        """The move an action index stands for in this turn."""
        return self.encoding.decode(self._game(), int(action))

    def view(self) -> PlayerView:
        """The learner's view of the game."""
        return self._game().view(self.seat)

    def legal(self) -> Mapping[int, Move]:
        """The learner's legal actions as ``action -> Move`` (empty when it is
        not the learner's turn)."""
        game = self._game()
        if game.finished or game.to_move != self.seat:
            return {}
        return self.encoding.legal(game)

    def action_masks(self) -> np.ndarray:
        """The legal actions as a boolean array."""
        return self.encoding.mask(self._game(), self.seat).astype(bool)

    def _observation(self) -> Observation:
        return self.encoding.observe(self._game(), self.seat)

    def _info(self) -> dict[str, Any]:
        game = self._game()
        over = self.encoding.overflow(game, self.seat)
        return {
            "seat": self.seat,
            "scores": game.scores,
            "ply": game.ply,
            "action_mask": self.encoding.mask(game, self.seat),
            "overflow": over,
            "truncated_encoding": any(over.values()),
        }

    # -- acting ------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Deal ``Game.new(rules, players, seed=seed)`` (from the ``deck``
        composition if one was given; a drawn seed when none
        is given) and let the opponents move up to the learner's first turn."""
        if seed is not None:
            seed = game_seed(int(seed))
        super().reset(seed=seed)
        rng = self.np_random
        if seed is None:
            seed = int(rng.integers(0, 2**63))
        self.seat = int(rng.integers(self.players)) if self.seat_option is None else self.seat
        self._rng = random.Random(int(rng.integers(0, 2**63)))
        self.game = deal(self.rules, self.players, seed, self.deck)
        self._legal_at = None
        self._over = False
        self._opponents_move()
        return self._observation(), self._info()

    def _opponents_move(self) -> None:
        game = self._game()
        while not game.finished and game.to_move != self.seat:
            p = game.to_move
            assert p is not None
            agent = self.opponents[(p - self.seat - 1) % self.players]
            game.play(agent.choose(game.view(p), self._rng))

    def step(
        self, action: int | np.integer
    ) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self._over:
            raise RuntimeError("the episode is over: call reset()")
        game = self._game()
        move = self.legal().get(int(action))
        if move is None:
            if self.illegal == "raise":
                raise ValueError(
                    f"illegal action {int(action)} ({self.codec.describe(int(action))})"
                )
            self._over = True
            info = self._info()
            info["illegal"] = True
            return self._observation(), ILLEGAL_REWARD, True, False, info
        before = game.scores[self.seat]
        game.play(move)
        self._opponents_move()
        if self.reward_mode == "points":
            reward = float(game.scores[self.seat] - before)
        else:
            reward = outcome(game)[self.seat]
        self._over = game.finished
        return self._observation(), reward, game.finished, False, self._info()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: give render_mode= to make()")
            return None
        if self.render_mode == "human":
            print(draw.ansi(self._game()), flush=True)
            return None
        return draw.draw(self._game(), self.render_mode, self.window)


def register() -> None:
    """Register ``donutbox/Donutbox-v0`` with Gymnasium (done on import of
    ``donutbox.envs``); keyword arguments of ``make`` go to ``DonutboxEnv``."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="donutbox.envs.gym_env:DonutboxEnv",
            max_episode_steps=MAX_EPISODE_STEPS,
        )
