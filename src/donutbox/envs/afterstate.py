"""A learned baseline: an afterstate value network, TD-Gammon style, in numpy.

    python -m donutbox.envs.afterstate [--cpu-minutes 60] [--out value.npz]
        [--log curve.txt] [--eval-every 10] [--eval-deals 20]
    python -m donutbox.envs.afterstate --evaluate value.npz --deals 100
        [--opponent heuristic]

**Acting.**  The agent (``AfterstateAgent``, ``make_agent("learned")``)
samples one world consistent with its view (``core.worlds.sample_world``:
the other player's tray and every pile order are guesses), plays each legal
move in a copy of it, and encodes the result with the environment's own
encoder from its own seat (``CentredEncoder.encode_game``: the counter, its
own tray and public counts - never another tray or a pile's order).  It
plays the move whose observation the value network (``valuenet.py``) values
most; a move that ends the game is valued by its final score difference.
No move features, no call into ``ai/evaluate.py``.

**Learning.**  Rounds of: play ``--games`` games, keep every mover's
observation after each of its moves with the game's final score difference
from that mover's side (tens of points) as its target, and fit the network
to the kept observations (the last ``--buffer``) by mean squared error
(Adam, ``--steps`` minibatches of ``--batch``).  The games are ``--teacher``
(default ``heuristic``) against itself with a ``--explore`` share of
uniformly random moves (so the network also sees bad moves' results), and
a ``--self-share`` of games with the learner itself (``--explore``-greedy)
against the teacher, so that it learns what its own choices lead to.

Every ``--eval-every`` CPU minutes it plays ``--eval-deals`` paired deals
(each deal from both seats) against ``--opponent`` and prints the win rate
(shared wins count half) with its 95% Wilson interval: the learning curve.
It runs on one core (``OMP_NUM_THREADS=1``); ``nice -n 10`` it on a shared
machine.  Two players, default rules.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..ai import make_agent
from ..ai.base import Agent
from ..core import Move, PlayerView
from ..core.game import Game
from ..core.rules import Rules
from ..core.worlds import sample_world
from .common import wilson
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


class _Exploring:
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


def record_game(agents: Sequence[Agent], seed: int) -> list[tuple[Sample, float]]:
    """One game: each mover's observation after each of its moves that did
    not end the game, with the final score difference from its side."""
    game = Game.new(Rules(), 2, seed=seed)
    rng = random.Random(seed)
    kept: list[tuple[Sample, int]] = []
    while not game.finished:
        seat = game.to_move
        assert seat is not None
        game.play(agents[seat].choose(game.view(seat), rng))
        if not game.finished:
            kept.append((observe(game, seat), seat))
    return [(s, final_lead(game, seat)) for s, seat in kept]


@dataclass
class Score:
    wins: float
    games: int

    @property
    def rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def text(self) -> str:
        lo, hi = wilson(self.wins, self.games)
        return f"{self.rate:.1%} ({lo:.1%}-{hi:.1%}) of {self.games}"


def evaluate(agent: Agent, opponent: str, deals: int, seed: int = 500_000) -> Score:
    """``deals`` paired deals against ``opponent``: each deal played twice,
    the agent at seat 0 then seat 1; a shared win counts half."""
    other = make_agent(opponent)
    wins = 0.0
    for d in range(deals):
        for seat in (0, 1):
            game = Game.new(Rules(), 2, seed=seed + d)
            rng = random.Random((seed + d) * 2 + seat)
            while not game.finished:
                p = game.to_move
                assert p is not None
                who = agent if p == seat else other
                game.play(who.choose(game.view(p), rng))
            winners = game.winners
            if seat in winners:
                wins += 1.0 / len(winners)
    return Score(wins, 2 * deals)


def fit(
    net: ValueNet,
    data: Sequence[tuple[Sample, float]],
    steps: int,
    size: int,
    lr: float,
    rng: np.random.Generator,
) -> float:
    """``steps`` Adam steps on random minibatches of ``data``; the mean loss."""
    total = 0.0
    for _ in range(steps):
        pick = rng.integers(0, len(data), size=min(size, len(data)))
        chosen = [data[i] for i in pick]
        loss, grads = net.loss_grad(batch([s for s, _ in chosen]), np.array([t for _, t in chosen]))
        net.step(grads, lr)
        total += loss
    return total / max(1, steps)


def _bounded(args: argparse.Namespace, names: Sequence[str], top: float) -> str | None:
    for name in names:
        value = getattr(args, name)
        if not 0 <= value <= top:
            return f"--{name.replace('_', '-')} must be from 0 to {top:g}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m donutbox.envs.afterstate", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--cpu-minutes", type=float, default=60.0, help="training budget")
    ap.add_argument("--games", type=int, default=20, help="games a round")
    ap.add_argument("--steps", type=int, default=40, help="minibatches a round")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--buffer", type=int, default=200_000, help="observations kept")
    ap.add_argument("--teacher", default="heuristic")
    ap.add_argument("--explore", type=float, default=0.05)
    ap.add_argument("--self-share", type=float, default=0.25)
    ap.add_argument("--opponent", default="heuristic")
    ap.add_argument("--eval-every", type=float, default=10.0, help="CPU minutes")
    ap.add_argument("--eval-deals", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init", default=None, help="start from this network (.npz)")
    ap.add_argument("--out", default=None, help="save the network (.npz) at every evaluation")
    ap.add_argument("--evaluate", metavar="NPZ", default=None, help="only evaluate this network")
    ap.add_argument("--deals", type=int, default=100, help="paired deals of --evaluate")
    args = ap.parse_args(argv)
    problem = _bounded(
        args, ("games", "steps", "batch", "buffer", "eval_deals", "deals"), 1_000_000
    ) or _bounded(args, ("explore", "self_share"), 1.0)
    if problem is None and not 0 < args.cpu_minutes <= 10_000:
        problem = "--cpu-minutes must be above 0 and at most 10000"
    if problem is None and not 0 < args.eval_every <= 10_000:
        problem = "--eval-every must be above 0 and at most 10000"
    if problem is not None:
        print(f"python -m donutbox.envs.afterstate: {problem}", file=sys.stderr)
        return 2
    try:
        make_agent(args.teacher)
        make_agent(args.opponent)
        start_net = (
            ValueNet.load(args.init or args.evaluate) if (args.init or args.evaluate) else None
        )
    except (ValueError, OSError) as err:
        print(f"python -m donutbox.envs.afterstate: {err}", file=sys.stderr)
        return 2
    if args.evaluate:
        assert start_net is not None
        t0 = time.process_time()
        score = evaluate(AfterstateAgent(start_net), args.opponent, args.deals)
        cpu = (time.process_time() - t0) / 60
        print(f"{args.evaluate} vs {args.opponent}: {score.text()}  ({cpu:.1f} CPU min)")
        return 0
    net = start_net or ValueNet(seed=args.seed)
    learner = AfterstateAgent(net, explore=args.explore)
    teacher = _Exploring(make_agent(args.teacher), args.explore)
    data: list[tuple[Sample, float]] = []  # a ring of the last --buffer
    at = 0
    rng = np.random.default_rng(args.seed)
    pick = random.Random(args.seed)
    train_cpu = eval_cpu = 0.0
    games = rounds = 0
    loss = float("nan")
    next_eval = 0.0
    print(
        "round games observations train_cpu_min eval_cpu_min loss "
        f"vs_{args.opponent} (95% Wilson) games",
        flush=True,
    )
    while True:
        if train_cpu / 60 >= next_eval or train_cpu / 60 >= args.cpu_minutes:
            t0 = time.process_time()
            score = evaluate(AfterstateAgent(net), args.opponent, args.eval_deals)
            eval_cpu += time.process_time() - t0
            print(
                f"{rounds:5d} {games:7d} {len(data):7d} {train_cpu / 60:7.1f} "
                f"{eval_cpu / 60:6.1f} {loss:.4f} {score.text()}",
                flush=True,
            )
            if args.out:
                net.save(args.out)
            next_eval += args.eval_every
            if train_cpu / 60 >= args.cpu_minutes:
                break
        t0 = time.process_time()
        for _ in range(args.games):
            seed = 1_000_000 + args.seed * 10_000_000 + games
            if rounds and pick.random() < args.self_share:
                seats: list[Agent] = [learner, teacher]
                if games % 2:
                    seats.reverse()
            else:
                seats = [teacher, teacher]
            for kept in record_game(seats, seed):
                if len(data) < args.buffer:
                    data.append(kept)
                else:
                    data[at] = kept
                    at = (at + 1) % args.buffer
            games += 1
        loss = fit(net, data, args.steps, args.batch, args.lr, rng)
        rounds += 1
        train_cpu += time.process_time() - t0
    return 0


if __name__ == "__main__":
    sys.exit(main())
