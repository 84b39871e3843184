"""The afterstate agent: values each legal move's afterstate observation
with the value network and plays the best (``afterstate.py`` trains the
network; its module doc says how the agent acts).  Apart from the trainer
so that the teacher (``teacher.py``), which plays the learner, need not
import the trainer."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..ai.base import Agent
from ..core import Move, PlayerView
from ..core.game import Game
from ..core.rules import Rules
from ..core.worlds import sample_world
from .encoding import CentredEncoder, Encoder
from .valuenet import Sample, ValueNet, batch, cut

#: The shipped network (``make_agent("learned")``).
SHIPPED = Path(__file__).with_name("data") / "afterstate.npz"

_ENCODERS: dict[Rules, CentredEncoder] = {}


def encoder(rules: Rules) -> CentredEncoder:
    """The compact two-player encoder of ``rules`` (one per rules, kept)."""
    found = _ENCODERS.get(rules)
    if found is None:
        found = _ENCODERS[rules] = Encoder(rules, 2).centred
    return found


def observe(game: Game, seat: int) -> Sample:
    """The network's inputs for ``seat``'s observation of ``game``."""
    enc = encoder(game.rules)
    return cut(enc.encode_game(game, seat)[0], enc.layout)


def final_lead(game: Game, seat: int) -> float:
    """``seat``'s score minus the other's, in tens of points."""
    return (game.scores[seat] - game.scores[1 - seat]) / 10.0


def afterstate_values(net: ValueNet, world: Game, me: int, moves: Sequence[Move]) -> np.ndarray:
    """The value for ``me`` of each move played in ``world`` (module doc)."""
    values = np.empty(len(moves))
    samples: list[Sample] = []
    open_at: list[int] = []
    for i, move in enumerate(moves):
        after = world.copy()
        after.play(move)
        if after.finished:
            values[i] = final_lead(after, me)
        else:
            samples.append(observe(after, me))
            open_at.append(i)
    if samples:
        values[open_at] = net.value(batch(samples))
    return values


class AfterstateAgent:
    """Plays the move whose afterstate the value network values most
    (module doc); ``explore``: the share of uniformly random moves."""

    name = "learned"

    def __init__(self, net: ValueNet, explore: float = 0.0) -> None:
        self.net = net
        self.explore = explore

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        if len(view.names) != 2:
            raise ValueError("the learned agent plays two-player games")
        moves = view.legal_moves()
        if len(moves) == 1:
            return moves[0]
        if self.explore and rng.random() < self.explore:
            return moves[rng.randrange(len(moves))]
        world = sample_world(view, rng)
        values = afterstate_values(self.net, world, view.player, moves)
        best = np.flatnonzero(values >= values.max() - 1e-9)
        return moves[int(best[rng.randrange(len(best))])]


def make(path: str | None = None) -> AfterstateAgent:
    """``make_agent("learned")``: the shipped network, or the one at ``path``."""
    return AfterstateAgent(ValueNet.load(str(SHIPPED if path is None else path)))


class Exploring:
    """An agent that plays a random move with probability ``explore``."""

    def __init__(self, agent: Agent, explore: float) -> None:
        self.agent = agent
        self.explore = explore
        self.name = agent.name

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        if self.explore and rng.random() < self.explore:
            moves = view.legal_moves()
            return moves[rng.randrange(len(moves))]
        return self.agent.choose(view, rng)


__all__ = [
    "SHIPPED",
    "AfterstateAgent",
    "Exploring",
    "afterstate_values",
    "encoder",
    "final_lead",
    "make",
    "observe",
]
