"""A learned baseline from the compact observation, in numpy.

    python -m donutbox.envs.train [--teacher-games 200] [--rl-games 400]
        [--opponent heuristic] [--eval-games 100] [--out policy.npz]
    python -m donutbox.envs.train --method afterstate [options of afterstate.py]

``--method afterstate`` (first) runs the afterstate value learner of
``afterstate.py`` instead, the stronger of the two (docs/research.md).

The policy (``policy.py``) reads only the compact observation: each legal
action's slice of it, no move features.  Two phases, both on two-player
default-rule games:

1. **Imitation** (``--teacher-games``): the policy learns to pick the
   moves a teacher agent (``--teacher``, default ``heuristic``) picked in
   games against itself (cross-entropy over the legal actions, one pass).
2. **Reinforcement** (``--rl-games``): REINFORCE against ``--opponent``
   (default ``heuristic``), seats alternating, reward +1 / -1 / 0 at the end,
   minus a running mean of the rewards as baseline.

Every ``--eval-every`` games of phase 2 (and after phase 1) it plays
``--eval-games`` paired games (each deal from both seats) against
``--opponent`` with the policy's most likely action, and prints the win
rate with its 95% Wilson interval: the learning curve.  It runs on one core;
``nice -n 10`` it on a shared machine.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterator

import numpy as np

from ..ai import make_agent
from ..core.game import Game
from ..core.rules import Rules
from .common import outcome, wilson
from .encoding import Encoder, PlacesCodec
from .policy import Policy, action_inputs, action_size, choose


def _encoder() -> Encoder:
    return Encoder(Rules(), 2)


def _codec(enc: Encoder) -> PlacesCodec:
    assert isinstance(enc.codec, PlacesCodec)
    return enc.codec


def teacher_steps(teacher: str, games: int, seed: int) -> Iterator[tuple[np.ndarray, int]]:
    """(action inputs, index of the teacher's action) per move of
    ``games`` games of ``teacher`` against itself."""
    enc = _encoder()
    agent = make_agent(teacher)
    lay = enc.centred.layout
    for g in range(games):
        game = Game.new(Rules(), 2, seed=seed + g)
        rng = random.Random(seed + g)
        while not game.finished:
            seat = game.to_move
            assert seat is not None
            legal = enc.legal(game)
            actions = sorted(legal)
            move = agent.choose(game.view(seat), rng)
            played = game.check(move)
            taken = enc.encode(game, played)
            if len(actions) > 1:
                x = action_inputs(enc.observe(game, seat), lay, _codec(enc), actions)
                yield x, actions.index(taken)
            game.play(played)


def play(
    policy: Policy,
    opponent: str,
    seed: int,
    seat: int,
    rng: np.random.Generator | None = None,
) -> tuple[float, list[tuple[np.ndarray, int]]]:
    """One game of the policy at ``seat`` against ``opponent``: the policy's
    result (+1 / -1 / 0) and its (inputs, choice) per decision.  ``rng``:
    sample the policy's actions (else its most likely)."""
    enc = _encoder()
    lay = enc.centred.layout
    other = make_agent(opponent)
    game = Game.new(Rules(), 2, seed=seed)
    orng = random.Random(seed * 2 + seat)
    taken: list[tuple[np.ndarray, int]] = []
    while not game.finished:
        p = game.to_move
        assert p is not None
        if p == seat:
            legal = enc.legal(game)
            actions = sorted(legal)
            i, x = choose(policy, enc.observe(game, seat), lay, _codec(enc), actions, rng)
            if len(actions) > 1:
                taken.append((x, i))
            game.play(legal[actions[i]])
        else:
            game.play(other.choose(game.view(p), orng))
    return outcome(game)[seat], taken


def evaluate(
    policy: Policy, opponent: str, games: int, seed: int = 10_000
) -> tuple[float, float, float]:
    """Win rate of the greedy policy in ``games`` paired games (shared wins
    count half) and its 95% Wilson interval."""
    wins = 0.0
    for g in range(games):
        result, _ = play(policy, opponent, seed + g // 2, g % 2)
        wins += 1.0 if result > 0 else 0.5 if result == 0 else 0.0
    lo, hi = wilson(wins, games)
    return wins / games, lo, hi


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:2] == ["--method", "afterstate"] or args_in[:1] == ["--method=afterstate"]:
        from . import afterstate  # the stronger recipe (its module doc)

        return afterstate.main(args_in[1 if args_in[0].startswith("--method=") else 2 :])
    ap = argparse.ArgumentParser(
        prog="python -m donutbox.envs.train", description=__doc__.splitlines()[0]
    )
    ap.add_argument(
        "--method",
        choices=("policy", "afterstate"),
        default="policy",
        help="policy: this module's; afterstate: python -m donutbox.envs.afterstate "
        "(give --method afterstate first, then its options)",
    )
    ap.add_argument("--teacher", default="heuristic")
    ap.add_argument("--teacher-games", type=int, default=200)
    ap.add_argument("--opponent", default="heuristic")
    ap.add_argument("--rl-games", type=int, default=400)
    ap.add_argument("--eval-games", type=int, default=100)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="save the policy (.npz)")
    args = ap.parse_args(args_in)
    if args.method == "afterstate":
        print("python -m donutbox.envs.train: give --method afterstate first", file=sys.stderr)
        return 2
    for name in ("teacher_games", "rl_games", "eval_games", "eval_every", "hidden"):
        if not 0 <= getattr(args, name) <= 1_000_000:
            print(f"--{name.replace('_', '-')} must be from 0 to 1000000", file=sys.stderr)
            return 2
    try:
        make_agent(args.teacher)
        make_agent(args.opponent)
    except ValueError as err:
        print(f"python -m donutbox.envs.train: {err}", file=sys.stderr)
        return 2
    enc = _encoder()
    policy = Policy(action_size(enc.centred.layout), args.hidden, args.seed)
    start = time.process_time()

    def report(phase: str, games: int) -> None:
        if not args.eval_games:
            return
        rate, lo, hi = evaluate(policy, args.opponent, args.eval_games)
        cpu = (time.process_time() - start) / 60
        print(
            f"{phase} {games:6d} games  cpu {cpu:6.1f} min  vs {args.opponent}: "
            f"{rate:.1%} ({lo:.1%}-{hi:.1%}) of {args.eval_games}",
            flush=True,
        )

    hits = seen = 0
    for x, taken in teacher_steps(args.teacher, args.teacher_games, args.seed):
        p, _ = policy.probs(x)
        hits += int(np.argmax(p) == taken)
        seen += 1
        policy.step(policy.grad(x, taken), args.lr)
    if seen:
        print(
            f"imitation: {seen} moves, the teacher's move ranked first {hits / seen:.1%} (online)"
        )
    report("imitation", args.teacher_games)
    rng = np.random.default_rng(args.seed)
    baseline = 0.0
    for g in range(1, args.rl_games + 1):
        result, taken_steps = play(policy, args.opponent, 1_000_000 + g, g % 2, rng)
        advantage = result - baseline
        baseline += 0.05 * (result - baseline)
        for x, i in taken_steps:
            policy.step(policy.grad(x, i, advantage / max(1, len(taken_steps)) ** 0.5), args.lr)
        if g % args.eval_every == 0 or g == args.rl_games:
            report("reinforce", g)
    if args.out:
        policy.save(args.out)
        print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
