"""Behaviour cloning from a game dataset, in numpy.

    python -m donutbox.envs.bc --data games.jsonl [--epochs 2] [--hidden 64]
        [--holdout 0.1] [--eval-games 0] [--opponent random] [--out bc.npz]

Reads a dataset of ``donutbox dataset export`` (``dataset.py``), replays
each two-player default-rule game in the compact observation, and fits the
policy of ``policy.py`` to the moves played (cross-entropy over the legal
actions; Adam).  It prints the share of held-out moves (the last
``--holdout`` of the games) where the policy's most likely action is the one
played, next to what guessing uniformly among the legal actions would get;
with ``--eval-games``, the greedy policy's win rate against ``--opponent``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from ..core.rules import Rules
from . import dataset
from .encoding import Encoder, PlacesCodec
from .policy import Policy, action_inputs, action_size


def examples(rows: list[dict[str, object]], enc: Encoder) -> list[tuple[np.ndarray, int]]:
    """(action inputs, index of the move played) per decision with a choice."""
    codec = enc.codec
    assert isinstance(codec, PlacesCodec)
    lay = enc.centred.layout
    out = []
    for row in rows:
        for obs, actions, taken, _seat in dataset.steps(row, enc):
            if len(actions) > 1:
                out.append((action_inputs(obs, lay, codec, actions), actions.index(taken)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m donutbox.envs.bc", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--data", required=True, help="a dataset file (.jsonl or .parquet)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--holdout", type=float, default=0.1)
    ap.add_argument("--eval-games", type=int, default=0)
    ap.add_argument("--opponent", default="random")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="save the policy (.npz)")
    args = ap.parse_args(argv)
    if not 0 <= args.holdout < 1 or not 0 <= args.epochs <= 1000:
        print("--holdout must be from 0 to under 1 and --epochs from 0 to 1000", file=sys.stderr)
        return 2
    try:
        rows = dataset.load(args.data)
    except (OSError, ValueError) as err:
        print(f"python -m donutbox.envs.bc: --data {args.data}: {err}", file=sys.stderr)
        return 2
    default = Rules().to_dict()
    rows = [r for r in rows if r["players"] == 2 and r["rules"] == default]
    if not rows:
        print("python -m donutbox.envs.bc: no two-player default-rule games", file=sys.stderr)
        return 2
    enc = Encoder(Rules(), 2)
    cut = len(rows) - int(len(rows) * args.holdout)
    train, held = examples(rows[:cut], enc), examples(rows[cut:], enc)
    policy = Policy(action_size(enc.centred.layout), args.hidden, args.seed)
    rng = np.random.default_rng(args.seed)

    def accuracy(data: list[tuple[np.ndarray, int]]) -> tuple[float, float]:
        if not data:
            return 0.0, 0.0
        hits = sum(int(np.argmax(policy.probs(x)[0]) == t) for x, t in data)
        return hits / len(data), float(np.mean([1 / len(x) for x, _ in data]))

    print(f"{len(rows)} games: {len(train)} decisions to learn, {len(held)} held out")
    for epoch in range(1, args.epochs + 1):
        for k in rng.permutation(len(train)):
            x, taken = train[k]
            policy.step(policy.grad(x, taken), args.lr)
        acc, chance = accuracy(held)
        print(f"epoch {epoch}: held-out moves matched {acc:.1%} (uniform guessing {chance:.1%})")
    if args.eval_games:
        from .train import evaluate

        rate, lo, hi = evaluate(policy, args.opponent, args.eval_games)
        print(f"vs {args.opponent}: {rate:.1%} ({lo:.1%}-{hi:.1%}) of {args.eval_games} games")
    if args.out:
        policy.save(args.out)
        print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
