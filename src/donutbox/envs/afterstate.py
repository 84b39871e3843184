"""A learned baseline: an afterstate value network, TD-Gammon style, in numpy.

    python -m donutbox.envs.afterstate [--target teacher|search|outcome] [--jobs 2]
        [--row-layers 1|2] [--init net.npz] [--cpu-minutes 60] [--out value.npz]
        [--eval-every 10] [--eval-deals 20]
    python -m donutbox.envs.afterstate --evaluate value.npz --deals 100
        [--first-deal 0] [--opponent heuristic]

**Acting.**  The agent (``AfterstateAgent``, ``make_agent("learned")``)
samples one world consistent with its view (``core.worlds.sample_world``:
the other player's tray and every pile order are guesses), plays each legal
move in a copy of it, and encodes the result with the environment's own
encoder from its own seat (``CentredEncoder.encode_game``: the counter, its
own tray and public counts - never another tray or a pile's order).  It
plays the move whose observation the value network (``valuenet.py``) values
most; a move that ends the game is valued by its final score difference.
No move features: the agent calls nothing of ``ai/``.

**Learning** is in rounds: play ``--games`` games, keep labelled
observations, fit the network to the kept ones by Adam (``--steps``
minibatches).  The games are ``--teacher`` (default ``heuristic``) against
itself with a ``--explore`` share of uniformly random moves (so the network
also sees bad moves' results), and a ``--self-share`` of games with the
learner itself (``--explore``-greedy) against the teacher, so that it
learns what its own choices lead to.  What a kept observation learns is
``--target``:

- ``teacher`` (the default; ``teacher.py``): at every turn, the mover's
  afterstate observations of ``--top`` moves of the one-ply ranking,
  ``--extra`` random ones, every box-it (``--no-box-its``: not) and the
  ``--student`` moves the learner values most, each with its two-ply
  value (the heuristic's reply played, the position valued); a minibatch
  is turns (``--batch`` observations in all), and the loss adds
  ``--within`` times the loss of the errors less their turn's mean, which
  is what tells a turn's moves apart.  The games are
  played and labelled on ``--jobs`` processes while the network fits.
- ``search`` (``teacher.search_labels``): the same, but a turn's labels
  are the root candidates of ``hard``'s search from the mover's own view
  (``--search-seconds`` CPU-seconds a turn) and the learner's favourite,
  each with its mean search value as a margin.  The reference run of
  docs/research.md learns with ``teacher``, then with ``search`` from that
  network (``--init``).
- ``outcome``: every mover's observation after each of its moves, with the
  game's final score difference from its side (tens of points); minibatches
  of ``--batch``, mean squared error.  One process.

Both keep the last ``--buffer`` observations.  Every ``--eval-every`` CPU
minutes (of every process) it plays ``--eval-deals`` paired deals (each
deal from both seats) against ``--opponent`` and prints the win rate
(shared wins count half) with its 95% Wilson interval: the learning curve.
Numpy runs on one thread (``OMP_NUM_THREADS=1``); ``nice`` it on a shared
machine.  Two players, default rules.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Generic, TypeVar

import numpy as np

from ..ai import make_agent
from ..ai.base import Agent
from ..core.game import Game
from ..core.rules import Rules
from .common import wilson
from .teacher import GameOrder, Generator, Turn
from .valueagent import (
    SHIPPED,
    AfterstateAgent,
    Exploring,
    afterstate_values,
    final_lead,
    make,
    observe,
)
from .valuenet import Sample, ValueNet, batch

#: The agent's part (``valueagent.py``) is reachable from here too:
#: ``make_agent("learned")`` calls ``afterstate.make``.
__all__ = [
    "SHIPPED",
    "AfterstateAgent",
    "Exploring",
    "afterstate_values",
    "evaluate",
    "evaluate_file",
    "final_lead",
    "fit",
    "fit_turns",
    "main",
    "make",
    "observe",
    "record_game",
]

T = TypeVar("T")


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


def _evaluate_share(job: tuple[str, str, int, int]) -> tuple[float, float]:
    """Deals ``first`` to ``first + count - 1`` of ``evaluate`` for the network
    at ``path``: the wins and the CPU seconds (this process's)."""
    path, opponent, first, count = job
    t0 = time.process_time()
    score = evaluate(AfterstateAgent(ValueNet.load(path)), opponent, count, 500_000 + first)
    return score.wins, time.process_time() - t0


def evaluate_file(
    path: str, opponent: str, deals: int, jobs: int, first: int = 0
) -> tuple[Score, float]:
    """``evaluate`` of the network at ``path`` on deals ``first`` to
    ``first + deals - 1`` (the same deals and draws as ``evaluate``), on
    ``jobs`` processes; the score and the CPU seconds of all of them."""
    shares = [
        (path, opponent, first + k * deals // jobs, first + (k + 1) * deals // jobs)
        for k in range(jobs)
    ]
    work = [(p, o, a, b - a) for p, o, a, b in shares if b > a]
    if jobs == 1:
        results = [_evaluate_share(w) for w in work]
    else:
        with get_context("fork").Pool(jobs) as pool:
            results = pool.map(_evaluate_share, work, chunksize=1)
    return Score(sum(w for w, _ in results), 2 * deals), sum(c for _, c in results)


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


def fit_turns(
    net: ValueNet,
    turns: Sequence[Sequence[tuple[Sample, float]]],
    steps: int,
    size: int,
    lr: float,
    within: float,
    rng: np.random.Generator,
) -> float:
    """``steps`` Adam steps, each on ``size`` random turns with all their
    labelled moves, with the within-turn loss weighed ``within``
    (``ValueNet.loss_grad``); the mean loss."""
    total = 0.0
    for _ in range(steps):
        pick = rng.integers(0, len(turns), size=min(size, len(turns)))
        samples: list[Sample] = []
        targets: list[float] = []
        groups: list[int] = []
        for g, i in enumerate(pick):
            for sample, target in turns[i]:
                samples.append(sample)
                targets.append(target)
                groups.append(g)
        loss, grads = net.loss_grad(batch(samples), np.array(targets), np.array(groups), within)
        net.step(grads, lr)
        total += loss
    return total / max(1, steps)


def _bounded(args: argparse.Namespace, names: Sequence[str], top: float) -> str | None:
    for name in names:
        value = getattr(args, name)
        if not 0 <= value <= top:
            return f"--{name.replace('_', '-')} must be from 0 to {top:g}"
    return None


class _Buffer(Generic[T]):
    """The last ``size`` items, a ring."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self.items: list[T] = []
        self._at = 0

    def add(self, kept: T) -> None:
        if len(self.items) < self.size:
            self.items.append(kept)
        else:
            self.items[self._at] = kept
            self._at = (self._at + 1) % self.size


def _seats(learner_plays: bool, games: int) -> tuple[str, str]:
    """Who plays a recorded game: the behaviour agent twice, or the learner
    against it (the learner's seat alternates)."""
    if not learner_plays:
        return ("behaviour", "behaviour")
    return ("net", "behaviour") if games % 2 == 0 else ("behaviour", "net")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m donutbox.envs.afterstate", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--cpu-minutes", type=float, default=60.0, help="training budget")
    ap.add_argument(
        "--target",
        choices=("teacher", "search", "outcome"),
        default="teacher",
        help="what a kept observation learns: the two-ply teacher's value, hard's search "
        "values (teacher.py) or the game's final score difference",
    )
    ap.add_argument(
        "--search-seconds",
        type=float,
        default=0.5,
        help="CPU-seconds of hard's search a labelled turn (--target search)",
    )
    ap.add_argument(
        "--jobs", type=int, default=1, help="processes playing games (teacher, --evaluate)"
    )
    ap.add_argument("--top", type=int, default=6, help="best moves labelled a turn (teacher)")
    ap.add_argument("--extra", type=int, default=2, help="random moves labelled a turn (teacher)")
    ap.add_argument(
        "--student", type=int, default=2, help="moves the learner values most, labelled (teacher)"
    )
    ap.add_argument(
        "--within",
        type=float,
        default=4.0,
        help="weight of the within-turn loss (teacher; valuenet.ValueNet.loss_grad)",
    )
    ap.add_argument(
        "--box-its",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="label every box-it of a turn (teacher)",
    )
    ap.add_argument("--games", type=int, default=20, help="games a round")
    ap.add_argument("--steps", type=int, default=40, help="minibatches a round")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--buffer", type=int, default=200_000, help="observations kept")
    ap.add_argument("--teacher", default="heuristic", help="the agent playing the recorded games")
    ap.add_argument("--explore", type=float, default=0.05)
    ap.add_argument("--self-share", type=float, default=0.25)
    ap.add_argument("--opponent", default="heuristic")
    ap.add_argument("--eval-every", type=float, default=10.0, help="CPU minutes")
    ap.add_argument("--eval-deals", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--row-layers",
        type=int,
        choices=(1, 2),
        default=1,
        help="layers of each place and box row before the sum (valuenet.py)",
    )
    ap.add_argument("--init", default=None, help="start from this network (.npz)")
    ap.add_argument("--out", default=None, help="save the network (.npz) at every evaluation")
    ap.add_argument("--evaluate", metavar="NPZ", default=None, help="only evaluate this network")
    ap.add_argument("--deals", type=int, default=100, help="paired deals of --evaluate")
    ap.add_argument(
        "--first-deal",
        type=int,
        default=0,
        help="the first of --evaluate's deals (the curve's are 0 to --eval-deals - 1)",
    )
    args = ap.parse_args(argv)
    problem = (
        _bounded(args, ("games", "steps", "batch", "buffer", "eval_deals", "deals"), 1_000_000)
        or _bounded(args, ("first_deal",), 1_000_000)
        or _bounded(args, ("explore", "self_share"), 1.0)
        or _bounded(args, ("top", "extra", "student", "within"), 1_000)
        or _bounded(args, ("jobs",), 64)
    )
    if problem is None and not 0 < args.cpu_minutes <= 10_000:
        problem = "--cpu-minutes must be above 0 and at most 10000"
    if problem is None and not 0 < args.eval_every <= 10_000:
        problem = "--eval-every must be above 0 and at most 10000"
    if problem is None and not 0 < args.search_seconds <= 60:
        problem = "--search-seconds must be above 0 and at most 60"
    if problem is None and args.jobs < 1:
        problem = "--jobs must be from 1 to 64"
    if problem is None and args.top + args.extra + args.student < 1:
        problem = "--top and --extra label no move"
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
        score, cpu = evaluate_file(
            args.evaluate, args.opponent, args.deals, args.jobs, args.first_deal
        )
        print(f"{args.evaluate} vs {args.opponent}: {score.text()}  ({cpu / 60:.1f} CPU min)")
        return 0
    net = start_net or ValueNet(seed=args.seed, row_layers=args.row_layers)
    train = _outcome_rounds if args.target == "outcome" else _teacher_rounds
    train(net, args)
    return 0


def _report(
    net: ValueNet, args: argparse.Namespace, done: str, eval_cpu: float, loss: float
) -> float:
    """Evaluate ``net``, print the curve's line (``done``: the training so
    far) and save the network; the evaluation CPU seconds, ``eval_cpu`` included."""
    t0 = time.process_time()
    score = evaluate(AfterstateAgent(net), args.opponent, args.eval_deals)
    eval_cpu += time.process_time() - t0
    print(f"{done} {eval_cpu / 60:6.1f} {loss:.4f} {score.text()}", flush=True)
    if args.out:
        net.save(args.out)
    return eval_cpu


def _header(args: argparse.Namespace) -> None:
    print(
        "round games observations train_cpu_min eval_cpu_min loss "
        f"vs_{args.opponent} (95% Wilson) games",
        flush=True,
    )


def _outcome_rounds(net: ValueNet, args: argparse.Namespace) -> None:
    """``--target outcome``: learn the final score difference (module doc)."""
    learner = AfterstateAgent(net, explore=args.explore)
    teacher = Exploring(make_agent(args.teacher), args.explore)
    data: _Buffer[tuple[Sample, float]] = _Buffer(args.buffer)
    rng = np.random.default_rng(args.seed)
    pick = random.Random(args.seed)
    train_cpu = eval_cpu = 0.0
    games = rounds = 0
    loss = float("nan")
    next_eval = 0.0
    _header(args)
    while True:
        if train_cpu / 60 >= next_eval or train_cpu / 60 >= args.cpu_minutes:
            done = f"{rounds:5d} {games:7d} {len(data.items):7d} {train_cpu / 60:7.1f}"
            eval_cpu = _report(net, args, done, eval_cpu, loss)
            next_eval += args.eval_every
            if train_cpu / 60 >= args.cpu_minutes:
                break
        t0 = time.process_time()
        for _ in range(args.games):
            seed = 1_000_000 + args.seed * 10_000_000 + games
            learner_plays = bool(rounds) and pick.random() < args.self_share
            seats = [learner if s == "net" else teacher for s in _seats(learner_plays, games)]
            for kept in record_game(seats, seed):
                data.add(kept)
            games += 1
        loss = fit(net, data.items, args.steps, args.batch, args.lr, rng)
        rounds += 1
        train_cpu += time.process_time() - t0


def _teacher_rounds(net: ValueNet, args: argparse.Namespace) -> None:
    """``--target teacher`` or ``search``: learn the two-ply teacher's
    values or the search's (teacher.py).  The next round's games are played
    on ``--jobs`` processes while this one fits; the budget counts every
    process's CPU time."""
    search = args.search_seconds if args.target == "search" else 0.0
    # the search labels its root's candidates (16, ``root_width``, and one)
    per_turn = 17 if search else args.top + args.extra + args.student
    data: _Buffer[Turn] = _Buffer(args.buffer // per_turn)
    turns_a_batch = max(1, args.batch // per_turn)
    rng = np.random.default_rng(args.seed)
    pick = random.Random(args.seed)
    generator = Generator(args.jobs)
    train_cpu = eval_cpu = 0.0
    games = rounds = 0
    loss = float("nan")
    next_eval = 0.0

    def orders() -> list[GameOrder]:
        nonlocal games
        out = []
        params = {k: v.copy() for k, v in net.params.items()}
        for _ in range(args.games):
            learner_plays = bool(rounds) and pick.random() < args.self_share
            out.append(
                GameOrder(
                    seed=1_000_000 + args.seed * 10_000_000 + games,
                    seats=_seats(learner_plays, games),
                    behaviour=args.teacher,
                    explore=args.explore,
                    top=args.top,
                    extra=args.extra,
                    student=args.student,
                    box_its=args.box_its,
                    params=params if learner_plays or args.student else None,
                    search=search,
                )
            )
            games += 1
        return out

    _header(args)
    pending = generator.start(orders())
    try:
        while True:
            if train_cpu / 60 >= next_eval or train_cpu / 60 >= args.cpu_minutes:
                kept = sum(len(t) for t in data.items)
                done = f"{rounds:5d} {games:7d} {kept:7d} {train_cpu / 60:7.1f}"
                eval_cpu = _report(net, args, done, eval_cpu, loss)
                next_eval += args.eval_every
                if train_cpu / 60 >= args.cpu_minutes:
                    break
            t0 = time.process_time()
            for turns, cpu in pending.get():
                for turn in turns:
                    data.add(turn)
                train_cpu += cpu
            pending = generator.start(orders())
            loss = fit_turns(net, data.items, args.steps, turns_a_batch, args.lr, args.within, rng)
            rounds += 1
            train_cpu += time.process_time() - t0
    finally:
        generator.close()


if __name__ == "__main__":
    sys.exit(main())
