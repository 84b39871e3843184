"""Fit the leaf evaluation of ``ai/value.py`` on self-play outcomes.

    python -m donutbox.lab.fit_value --games N --seed S --out FILE

plays ``N`` two-player games (One Good Match, Squared Away; deal seeds ``S``
to ``S + N - 1``), records the features (``value.features``) of every
position before a move with the mover's final result (1 win, 0 loss, 1/2
for a shared win), and fits ``P(mover wins)`` by L2-regularised logistic
regression (Newton's method on standardised features).  Every fifth game
(by index) is held out: the split is by game, never by position, since
the positions of one game share its outcome.  The weights file gets the
held-out log-loss and Brier score of the fit and of today's MCTS leaf
(``_squash(fast margin, 20)``), and the provenance (games, seeds, agents,
commit, date).

Agents (so that the positions look like those MCTS meets): most games are
``heuristic`` against ``heuristic``, each move with probability
``--epsilon`` replaced by a random one of the heuristic's best three (a
little randomness, so that the games differ and both sides make the
near-best moves a search explores); one game in ``--mcts-every`` puts a
cheap ``mcts`` (``--mcts-iterations`` a move, the hard level's options
otherwise: no playout moves, 10 sampled replies) against that heuristic,
seats alternating.

``--save-games FILE`` writes every game as one JSON row (seed, agents,
moves, winners, held out or not); ``--from FILE ...`` fits from saved games
(``.jsonl`` or ``.jsonl.gz``) instead of playing (replaying them is fast), so
games played by several processes can be fitted together.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import math
import random
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..ai.fasteval import fast_scores
from ..ai.mcts import MctsAgent
from ..ai.simple import HeuristicAgent, rank_moves
from ..ai.value import BASE, FORMAT, MULTI, NAMES, SCALED, features, phase
from ..core import Game, InputError, Move, PlayerView, Rules
from .match import agent_seed

Array = npt.NDArray[np.float64]

#: Deal seeds used by measurements elsewhere (docs/ai.md): never fitted on.
RESERVED: tuple[tuple[int, int], ...] = (
    (10001, 10200),
    (20001, 20100),
    (60000, 62000),
    (70001, 70400),
    (80001, 80400),
    (90001, 90400),
    (95001, 95400),
)
DEFAULT_SEED = 300_000
HELD_OUT_EVERY = 5
BASELINE_SCALE = 20.0


class NoisyHeuristic:
    """``heuristic``, except that with probability ``epsilon`` a move is a
    random one of the heuristic's best three (by ``rank_moves``)."""

    name = "noisy-heuristic"

    def __init__(self, epsilon: float) -> None:
        self.epsilon = epsilon
        self._plain = HeuristicAgent()

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        if rng.random() < self.epsilon:
            moves = view.legal_moves()
            ranked = rank_moves(view, moves, rng)[:3]
            return ranked[rng.randrange(len(ranked))][1]
        return self._plain.choose(view, rng)


def _agent(label: str, epsilon: float, iterations: int) -> NoisyHeuristic | MctsAgent:
    if label == "mcts":
        return MctsAgent(iterations=iterations, playout_depth=0, expand_samples=10)
    return NoisyHeuristic(epsilon)


def seats_of(index: int, mcts_every: int) -> list[str]:
    """The agents of game ``index``: an mcts game every ``mcts_every`` games
    (0: never), seats alternating."""
    if mcts_every > 0 and index % mcts_every == 0:
        return ["mcts", "heuristic"] if (index // mcts_every) % 2 == 0 else ["heuristic", "mcts"]
    return ["heuristic", "heuristic"]


def play_one(seed: int, seats: list[str], epsilon: float, iterations: int) -> dict[str, Any]:
    """One game; its row (moves in notation, so it can be replayed)."""
    agents = [_agent(s, epsilon, iterations) for s in seats]
    rngs = [random.Random(agent_seed(seed, i)) for i in range(2)]
    game = Game.new(Rules(), ["a", "b"], seed=seed)
    moves: list[str] = []
    while not game.finished:
        p = game.to_move
        assert p is not None
        move = game.play(agents[p].choose(game.view(p), rngs[p]))
        moves.append(str(move))
    return {"seed": seed, "seats": seats, "moves": moves, "winners": game.winners}


def check_seeds(first: int, count: int) -> None:
    """Refuse deal seeds that overlap a measurement's (``RESERVED``)."""
    for lo, hi in RESERVED:
        if first <= hi and first + count - 1 >= lo:
            raise InputError(
                f"deal seeds {first}-{first + count - 1} overlap the measurement seeds {lo}-{hi}"
            )


def positions(row: dict[str, Any]) -> Iterable[tuple[list[float], float, float, float]]:
    """Replay a game row: per position before a move, (base features, q,
    fast margin of the mover, the mover's result)."""
    game = Game.new(Rules(), ["a", "b"], seed=row["seed"])
    winners = row["winners"]
    for text in row["moves"]:
        me = game.to_move
        assert me is not None
        est = fast_scores(game)
        result = 1.0 / len(winners) if me in winners else 0.0
        yield features(game), phase(game), est[me] - est[1 - me], result
        game.play(text)
    if not game.finished or game.winners != winners:
        raise InputError(f"game {row['seed']}: the moves do not replay to its result")


def design(rows: Sequence[dict[str, Any]]) -> tuple[Array, Array, Array, Array]:
    """The fitting matrix (columns ``NAMES``), the outcomes, the margin
    model's matrix (columns ``MULTI``) and the baseline's margins."""
    xs: list[list[float]] = []
    ms: list[list[float]] = []
    margins: list[float] = []
    ys: list[float] = []
    scaled = [BASE.index(n) for n in SCALED]
    for row in rows:
        for x, q, m, y in positions(row):
            xs.append(x + [x[i] * q for i in scaled])
            ms.append([m, m * q])
            margins.append(m)
            ys.append(y)
    return (
        np.array(xs, dtype=np.float64).reshape(-1, len(NAMES)),
        np.array(ys, dtype=np.float64),
        np.array(ms, dtype=np.float64).reshape(-1, len(MULTI)),
        np.array(margins, dtype=np.float64),
    )


def sigmoid(z: Array) -> Array:
    out: Array = 0.5 * (1.0 + np.tanh(0.5 * z))
    return out


def fit_logistic(
    x: Array, y: Array, l2: float = 1.0, free: Sequence[int] = (), iterations: int = 50
) -> Array:
    """Weights ``w`` maximising ``sum y log p + (1-y) log(1-p) - l2/2 |w'|^2``
    with ``p = sigmoid(x w)``: Newton's method on standardised columns
    (``w'`` the standardised weights; the columns in ``free`` are neither
    penalised nor standardised, and the first of them, if any, must be a
    constant: it takes back the columns' means).  ``y`` may be fractional."""
    n, k = x.shape
    if n == 0:
        raise InputError("no positions to fit")
    # centre the columns only when a constant (the first free column) can
    # take the means back; scale every column that is not free
    mean = x.mean(axis=0) if free else np.zeros(k)
    std = x.std(axis=0)
    for i in free:
        mean[i] = 0.0
        std[i] = 1.0
    std[std == 0.0] = 1.0  # a constant column carries nothing: left as it is
    xs = (x - mean) / std
    penalty = np.full(k, l2)
    for i in free:
        penalty[i] = 0.0
    ridge = np.diag(penalty + 1e-9)
    w = np.zeros(k)
    for _ in range(iterations):
        p = sigmoid(xs @ w)
        grad = xs.T @ (y - p) - penalty * w
        h = (xs * (p * (1 - p))[:, None]).T @ xs + ridge
        step = np.linalg.solve(h, grad)
        w += step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    # back to the raw columns: xs @ w = x @ (w / std) - mean @ (w / std)
    raw: Array = w / std
    if free:
        raw[free[0]] -= float(mean @ raw)
    return raw


def log_loss(p: Array, y: Array) -> float:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def brier(p: Array, y: Array) -> float:
    return float(np.mean((p - y) ** 2))


def baseline(margins: Array) -> Array:
    """Today's MCTS leaf: ``_squash(margin, 20)``."""
    out: Array = 1.0 / (1.0 + np.exp(-margins / BASELINE_SCALE))
    return out


def commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            check=False,
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def fit(rows: Sequence[dict[str, Any]], l2: float) -> dict[str, Any]:
    """Fit on the rows not held out; the weights file's content."""
    train = [r for r in rows if not r["held_out"]]
    test = [r for r in rows if r["held_out"]]
    if not train or not test:
        raise InputError("need games both to fit and to hold out (at least 2 games)")
    x, y, mx, _ = design(train)
    w = fit_logistic(x, y, l2, free=(0,))
    # the margin model: no constant (a softmax of scores has none)
    mw = fit_logistic(mx, y, l2=0.0)
    tx, ty, tmx, tm = design(test)
    p_fit = sigmoid(tx @ w)
    p_margin = sigmoid(tmx @ mw)
    p_base = baseline(tm)
    metrics = {
        "positions": len(ty),
        "games": len(test),
        "fitted": {"log_loss": log_loss(p_fit, ty), "brier": brier(p_fit, ty)},
        "margin_refit": {"log_loss": log_loss(p_margin, ty), "brier": brier(p_margin, ty)},
        "squash20": {"log_loss": log_loss(p_base, ty), "brier": brier(p_base, ty)},
    }
    return {
        "format": FORMAT,
        "features": {n: round(float(v), 8) for n, v in zip(NAMES, w, strict=True)},
        "multi": {n: round(float(v), 8) for n, v in zip(MULTI, mw, strict=True)},
        "held_out": metrics,
        "train": {"positions": len(y), "games": len(train)},
    }


def read_games(paths: Sequence[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        try:
            if path.endswith(".gz"):
                with gzip.open(path, "rt") as f:
                    lines = f.read().splitlines()
            else:
                lines = Path(path).read_text().splitlines()
        except OSError as e:
            raise InputError(f"{path}: cannot read: {e.strerror}") from None
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{path}:{n}: not JSON: {e.msg}") from None
            for key in ("seed", "seats", "moves", "winners", "held_out"):
                if key not in row:
                    raise InputError(f"{path}:{n}: no {key!r}")
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m donutbox.lab.fit_value", description=__doc__)
    ap.add_argument("--games", type=int, default=200, help="games to play (default 200)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="first deal seed")
    ap.add_argument("--out", help="write the weights (JSON) here")
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--mcts-every", type=int, default=10, help="an mcts game every K (0: none)")
    ap.add_argument("--mcts-iterations", type=int, default=100)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--save-games", help="append each game's row (JSON lines) here")
    ap.add_argument("--from", dest="sources", nargs="+", help="fit from saved games, play none")
    args = ap.parse_args(argv)
    try:
        return _run(args)
    except InputError as e:
        print(f"fit_value: {e}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.games < 0 or not 0.0 <= args.epsilon <= 1.0 or args.mcts_iterations < 1:
        raise InputError("--games >= 0, --epsilon in [0, 1] and --mcts-iterations >= 1 please")
    if args.l2 < 0 or not math.isfinite(args.l2):
        raise InputError("--l2 must be a finite number >= 0")
    started = time.process_time()
    if args.sources:
        rows = read_games(args.sources)
    else:
        check_seeds(args.seed, args.games)
        rows = []
        save = open(args.save_games, "a") if args.save_games else None  # noqa: SIM115
        try:
            for i in range(args.games):
                seats = seats_of(i, args.mcts_every)
                row = play_one(args.seed + i, seats, args.epsilon, args.mcts_iterations)
                row["held_out"] = i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1
                row["agents"] = {
                    "heuristic": f"noisy heuristic, epsilon {args.epsilon}",
                    "mcts": f"mcts {args.mcts_iterations} iterations, depth 0, 10 samples",
                }
                rows.append(row)
                if save is not None:
                    save.write(json.dumps(row) + "\n")
                    save.flush()
                print(f"fit_value: game {i + 1} of {args.games}", file=sys.stderr)
        finally:
            if save is not None:
                save.close()
    result = fit(rows, args.l2)
    seeds = sorted(r["seed"] for r in rows)
    seat_counts: dict[str, int] = {}
    for r in rows:
        key = " vs ".join(r["seats"])
        seat_counts[key] = seat_counts.get(key, 0) + 1
    result["provenance"] = {
        "games": len(rows),
        "deal_seeds": f"{seeds[0]}-{seeds[-1]}" if seeds else "",
        "rules": "One Good Match, Squared Away (the defaults)",
        "agents": seat_counts,
        "options": {
            "epsilon": args.epsilon,
            "mcts_every": args.mcts_every,
            "mcts_iterations": args.mcts_iterations,
            "l2": args.l2,
            "held_out": f"every {HELD_OUT_EVERY}th game",
        },
        "sources": list(args.sources or []),
        "commit": commit(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu_seconds": round(time.process_time() - started, 1),
    }
    text = json.dumps(result, indent=1) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    held = result["held_out"]
    for name in ("fitted", "margin_refit", "squash20"):
        m = held[name]
        print(f"{name}: log-loss {m['log_loss']:.4f}, Brier {m['brier']:.4f}")
    if not args.out:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
