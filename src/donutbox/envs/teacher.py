"""Two-ply teacher values: the low-noise targets of the afterstate learner.

The final score difference of a game is a noisy target for the value of
one position: its variance is about 57 (tens of points squared) at every
stage of heuristic self-play, while a move is worth a few points
(docs/research.md, "A learned baseline").  ``--target teacher`` of
``python -m donutbox.envs.afterstate`` learns instead from a search that
the trainer can afford because it sees the whole game:

- at every turn of a recorded game, the mover's ``top`` best moves by the
  one-ply ranking (``ai.simple.rank_moves``), ``extra`` others drawn at
  random, every box-it and (given the learner's network) the ``student``
  moves the learner values most are labelled;
- a label is the mover's afterstate observation (what the learner will
  value when it acts) with a **two-ply value**: the move is played in the
  real game, the other player answers with the heuristic's reply from its
  own view (its real tray: the trainer knows it, the learner never does),
  and the position is valued for the mover by the expected-score margin
  (``ai.fasteval.fast_margin``), or by the final score difference if the
  game ends, in tens of points.

``--target search`` labels instead with the root values of ``hard``'s
search (``search_labels``): every candidate of its root (and the move the
learner values most, made one), valued by the mean of its search over
worlds sampled from the mover's own view (no privileged information), the
mean (a winning value in 0..1) turned back into a margin in tens of
points.  It costs about ``search`` CPU-seconds a turn.

The learner reads only its own observation, so the most it can learn is
the value's expectation over what it cannot see, as a teacher that samples
many worlds would give.  The teacher is privileged, the student is not
(as in Suphx's "oracle guiding"); nothing here is an input of the network.
Labelling costs about 20 ms a turn on one core, so games are generated on
``jobs`` processes (``generate``).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing import get_context
from typing import TYPE_CHECKING

import numpy as np

from ..ai import make_agent
from ..ai.base import Agent
from ..ai.fasteval import fast_margin
from ..ai.mcts import MARGIN_SCALE, MctsAgent
from ..ai.simple import rank_moves
from ..core import Move
from ..core.game import Game
from ..core.moves import BOX
from ..core.rules import Rules
from .valueagent import AfterstateAgent, Exploring, afterstate_values, observe
from .valuenet import Sample, ValueNet

if TYPE_CHECKING:
    from multiprocessing.pool import AsyncResult, Pool

Labelled = tuple[Sample, float]
#: The labels of one turn: the moves of one position, told apart by the
#: learner's within-turn loss (``valuenet.ValueNet.loss_grad``, ``groups``).
Turn = list[Labelled]


def _lead(game: Game, seat: int) -> float:
    return (game.scores[seat] - game.scores[1 - seat]) / 10.0


def two_ply_value(
    game: Game, seat: int, move: Move, reply: Agent, rng: random.Random
) -> tuple[Sample | None, float]:
    """``seat``'s afterstate observation after ``move`` (None if the move
    ends the game) and its two-ply value (module doc)."""
    after = game.copy()
    after.play(move)
    if after.finished:
        return None, _lead(after, seat)
    sample = observe(after, seat)
    while not after.finished and after.to_move != seat:
        mover = after.to_move
        assert mover is not None
        after.play(reply.choose(after.view(mover), rng))
    if after.finished:
        return sample, _lead(after, seat)
    return sample, fast_margin(after, seat) / 10.0


def label_turn(
    game: Game,
    reply: Agent,
    rng: random.Random,
    top: int,
    extra: int,
    net: ValueNet | None = None,
    student: int = 0,
    box_its: bool = True,
) -> list[Labelled]:
    """The labels of the mover's turn in ``game`` (module doc); with
    ``net``, also the ``student`` moves it values most, where its errors
    decide what it plays."""
    seat = game.to_move
    assert seat is not None
    view = game.view(seat)
    moves = view.legal_moves()
    if len(moves) < 2:
        return []
    ranked = [m for _, m in rank_moves(view, moves, rng)]
    rest = ranked[top:]
    chosen = ranked[:top] + rng.sample(rest, min(extra, len(rest)))
    if box_its:
        # every box-it too: a turn offers few, and a learner that never saw
        # one valued took them when it should not have
        chosen += [m for m in moves if m.kind == BOX and m not in chosen]
    if net is not None and student:
        # the afterstate observation is the mover's own: the real game
        # gives the same one as any world the mover could sample
        values = afterstate_values(net, game, seat, moves)
        for i in np.argsort(-values)[:student]:
            if moves[i] not in chosen:
                chosen.append(moves[i])
    out: list[Labelled] = []
    for move in chosen:
        sample, value = two_ply_value(game, seat, move, reply, rng)
        if sample is not None:
            out.append((sample, value))
    return out


#: Search values are clipped to this distance from 0 and 1 before they are
#: turned back into margins (``search_labels``): about 106 points.
_CLIP = 0.005


def search_labels(
    game: Game, searcher: MctsAgent, rng: random.Random, net: ValueNet | None = None
) -> list[Labelled]:
    """The labels of the mover's turn in ``game`` from ``searcher``'s root
    candidates: each one's afterstate observation with its mean search
    value ``p`` as a margin, ``MARGIN_SCALE * ln(p / (1 - p))`` points
    (the inverse of the search's squashing), in tens of points.  Moves
    that end the game are left out (the agent scores them itself).  With
    ``net``, the move the learner values most is made a candidate too."""
    seat = game.to_move
    assert seat is not None
    view = game.view(seat)
    moves = view.legal_moves()
    if len(moves) < 2:
        return []
    favourite = None
    if net is not None:
        favourite = moves[int(np.argmax(afterstate_values(net, game, seat, moves)))]
    out: list[Labelled] = []
    for move, _visits, mean in searcher.search(view, rng, include=favourite):
        after = game.copy()
        after.play(move)
        if after.finished:
            continue
        p = min(max(mean, _CLIP), 1.0 - _CLIP)
        out.append((observe(after, seat), MARGIN_SCALE * math.log(p / (1.0 - p)) / 10.0))
    return out


@dataclass(frozen=True)
class GameOrder:
    """One game to play and label: its seed, who plays each seat (``None``:
    the behaviour agent; ``"net"``: the learner with ``params``), and the
    labelling settings (``search``: label with ``hard``'s search of that
    many CPU-seconds a turn, ``search_labels``, instead of the two-ply
    values)."""

    seed: int
    seats: tuple[str, str]
    behaviour: str
    explore: float
    top: int
    extra: int
    student: int = 0
    params: dict[str, np.ndarray] | None = None
    box_its: bool = True
    search: float = 0.0


def play_and_label(order: GameOrder) -> tuple[list[Turn], float]:
    """Play ``order``'s game, labelling every turn; each turn's labels (turns
    with fewer than two left out) and the CPU seconds spent (this process's)."""
    t0 = time.process_time()
    behaviour = Exploring(make_agent(order.behaviour), order.explore)
    reply = make_agent("heuristic")
    searcher: MctsAgent | None = None
    if order.search:
        hard = make_agent("hard", seconds=order.search, clock="cpu")
        assert isinstance(hard, MctsAgent)
        searcher = hard
    net = None if order.params is None else ValueNet(params=order.params)
    agents: list[Agent] = []
    for who in order.seats:
        if who == "net":
            assert net is not None
            agents.append(AfterstateAgent(net, explore=order.explore))
        else:
            agents.append(behaviour)
    game = Game.new(Rules(), 2, seed=order.seed)
    rng = random.Random(order.seed)
    labels: list[Turn] = []
    while not game.finished:
        seat = game.to_move
        assert seat is not None
        if searcher is not None:
            turn = search_labels(game, searcher, rng, net if order.student else None)
        else:
            turn = label_turn(
                game, reply, rng, order.top, order.extra, net, order.student, order.box_its
            )
        if len(turn) > 1:
            labels.append(turn)
        game.play(agents[seat].choose(game.view(seat), rng))
    return labels, time.process_time() - t0


class _InProcess:
    """Games to play in this process when ``get`` is called; their CPU time
    is this process's, so each is reported as 0.0 seconds of another."""

    def __init__(self, orders: Sequence[GameOrder]) -> None:
        self._orders = orders

    def get(self) -> list[tuple[list[Turn], float]]:
        return [(play_and_label(o)[0], 0.0) for o in self._orders]


class Generator:
    """Plays and labels games on ``jobs`` processes: ``start`` returns at
    once and ``get`` on what it returns gives each game's labels with the
    CPU seconds spent on it in another process.  With more than one job the
    games are played while the caller fits; with one, in ``get``."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._pool: Pool | None = get_context("fork").Pool(jobs) if jobs > 1 else None

    def start(
        self, orders: Sequence[GameOrder]
    ) -> _InProcess | AsyncResult[list[tuple[list[Turn], float]]]:
        if self._pool is None:
            return _InProcess(orders)
        return self._pool.map_async(play_and_label, orders, chunksize=1)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()


__all__ = [
    "GameOrder",
    "Generator",
    "Turn",
    "label_turn",
    "play_and_label",
    "search_labels",
    "two_ply_value",
]
