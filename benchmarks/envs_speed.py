"""Steps per second of the research environments, side by side with reference games.

    pip install pygame   # PettingZoo's connect_four_v3 imports it
    python benchmarks/envs_speed.py [--steps 3000] [--rounds 3]

Every figure is measured in this one run, with CPU time of this process
(``time.process_time``, so other load on a shared machine matters less), by
a uniformly random player that samples from the action mask (as a learner
would).  Rounds are interleaved and the best round is kept.

- PettingZoo AEC: ``connect_four_v3`` against donutbox (``places`` encoding
  with the compact observation, the default; with ``observation="board"``;
  and the older ``window`` encoding); a step is one ``last()`` + ``step()``.
- The batched environment (``donutbox.envs.vector``, 64 games a call): a
  step is one game's move, observation and mask (a call of 64 games is 64
  steps); the random player samples the whole batch in one call
  (``vector.random_actions``, as a batched learner samples), and again
  row by row as the AEC loop does (``per-row sampling``).
- Gymnasium: one learner step, including the opponent's reply, against
  ``random``, ``greedy`` and ``heuristic``.
- OpenSpiel: ``connect_four`` and ``tic_tac_toe`` (C++) and
  ``python_donutbox``; a step is one ``legal_actions()`` +
  ``apply_action()`` (chance nodes included).

The header says which rules core ran (``donutbox.core.compiled``: the
mypyc-compiled core a ``pip install`` builds, or the pure-Python source
under ``PYTHONPATH=src``) and the load average before and after.

``--parts`` instead times the parts of a step (CPU microseconds per step,
``time.thread_time`` around each function, so the totals include a little
timer overhead): the PettingZoo step under random play, the Gymnasium
step against ``heuristic`` and the batched environment's step, each after
a warm-up run of the same games (the memos of fitting cards filled, as in
a long training run and in the benchmark's later rounds).  ``rest`` is the
step minus the parts named.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np


def aec_steps(make: Callable[[], object], steps: int) -> float:
    env = make()
    rng = np.random.default_rng(0)
    env.reset(seed=0)  # type: ignore[attr-defined]
    done = 0
    t = time.process_time()
    while done < steps:
        for _agent in env.agent_iter():  # type: ignore[attr-defined]
            obs, _, term, trunc, _ = env.last()  # type: ignore[attr-defined]
            action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)  # type: ignore[attr-defined]
            done += 1
            if done >= steps:
                break
        else:
            env.reset()  # type: ignore[attr-defined]
    return steps / (time.process_time() - t)


def vector_steps(steps: int, games: int = 64, per_row: bool = False) -> float:
    """Steps a second of ``VectorEnv(games)``, timed after ``WARM_CALLS``
    untimed calls and over at least ``TIMED_CALLS`` (so that, as in the
    AEC loop, games at every stage and their new deals are measured, not
    only the first plies of 64 games dealt at once)."""
    from donutbox.envs import vector

    env = vector.VectorEnv(games)
    rng = np.random.default_rng(0)
    _, mask, _ = env.reset(seed=0)
    batch = getattr(vector, "random_actions", None)  # absent before it was added

    def sample(mask: np.ndarray) -> np.ndarray:
        if per_row or batch is None:  # as the AEC loop samples: one game at a time
            return np.array([int(rng.choice(np.flatnonzero(row))) for row in mask])
        return batch(mask, rng)  # type: ignore[no-any-return]

    for _ in range(WARM_CALLS):
        _, mask, _, _, _ = env.step(sample(mask))
    calls = max(TIMED_CALLS, -(-steps // games))
    t = time.process_time()
    for _ in range(calls):
        _, mask, _, _, _ = env.step(sample(mask))
    return calls * games / (time.process_time() - t)


#: ``vector_steps``: untimed calls first (about two game lengths), then at
#: least this many timed ones (games of two players last ~50-70 plies).
WARM_CALLS = 120
TIMED_CALLS = 70


def gym_steps(opponent: str, steps: int) -> float:
    import gymnasium

    import donutbox.envs  # noqa: F401

    env = gymnasium.make("donutbox/Donutbox-v0", opponent=opponent)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    t = time.process_time()
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, term, trunc, info = env.step(action)
        if term or trunc:
            _, info = env.reset()
    return steps / (time.process_time() - t)


def spiel_steps(name: str, steps: int) -> float:
    import pyspiel

    if name == "python_donutbox":
        from donutbox.envs import register_openspiel

        register_openspiel()
    game = pyspiel.load_game(name)
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    t = time.process_time()
    for _ in range(steps):
        if state.is_terminal():
            state = game.new_initial_state()
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return steps / (time.process_time() - t)


@contextmanager
def timed(parts: dict[str, tuple[Any, str]], spent: dict[str, float]) -> Iterator[None]:
    """Wrap each ``(owner, attribute)`` of ``parts`` to add its CPU time to
    ``spent[name]`` (undone on exit)."""
    saved = []
    for name, (owner, attr) in parts.items():
        f = getattr(owner, attr)
        saved.append((owner, attr, f))

        def wrapper(*a: Any, _f: Any = f, _name: str = name, **k: Any) -> Any:
            t = time.thread_time()
            try:
                return _f(*a, **k)
            finally:
                spent[_name] += time.thread_time() - t

        setattr(owner, attr, wrapper)
    try:
        yield
    finally:
        for owner, attr, f in saved:
            setattr(owner, attr, f)


def step_parts(steps: int) -> None:
    """Print where a step's time goes (see the module doc)."""
    from donutbox.ai import simple
    from donutbox.core.game import Game
    from donutbox.envs import aec_env, encoding, gym_env, observation

    def show(title: str, total: float, spent: dict[str, float], n: int) -> None:
        print(f"{title}: {1e6 * total / n:,.1f} us a step")
        for name, t in spent.items():
            print(f"  {name:<44} {1e6 * t / n:8.1f}")
        print(f"  {'rest':<44} {1e6 * (total - sum(spent.values())) / n:8.1f}")

    aec_steps(aec_env, steps)  # warm the memos
    aec: dict[str, tuple[Any, str]] = {
        "Game.play (the engine)": (Game, "play"),
        "candidate lists (PlacesCodec.turn)": (encoding.PlacesCodec, "turn"),
        "legal actions + mask (legal_actions)": (encoding.PlacesCodec, "legal_actions"),
        "bounding box (Encoder.origin)": (encoding.Encoder, "origin"),
        "board planes + candidates (_board)": (encoding.CentredEncoder, "_board"),
        "features (features_from_game)": (observation.ObservationEncoder, "features_from_game"),
        "the benchmark's sampling (np.flatnonzero)": (np, "flatnonzero"),
    }
    spent = dict.fromkeys(aec, 0.0)
    with timed(aec, spent):
        t = time.thread_time()
        aec_steps(aec_env, steps)
        total = time.thread_time() - t
    show("PettingZoo AEC, random play", total, spent, steps)

    from donutbox.ai import fasteval
    from donutbox.core.view import PlayerView

    gym: dict[str, tuple[Any, str]] = {
        "heuristic's move (HeuristicAgent.choose)": (simple.HeuristicAgent, "choose"),
        "Game.view (the opponent's view)": (Game, "view"),
        "observation, legal actions (Encoder.observe)": (encoding.Encoder, "observe"),
        "info: mask, overflow (DonutboxEnv._info)": (gym_env.DonutboxEnv, "_info"),
    }
    inside: dict[str, tuple[Any, str]] = {
        "its legal moves (PlayerView.legal_moves)": (PlayerView, "legal_moves"),
        "its world sampling (sample_world)": (simple, "sample_world"),
        "its estimates (PlaceEvaluator.estimate, each placement)": (
            fasteval.PlaceEvaluator,
            "estimate",
        ),
        "its exact values (PlaceEvaluator.margin, the close ones)": (
            fasteval.PlaceEvaluator,
            "margin",
        ),
    }
    n = max(steps // 10, 50)
    gym_steps("heuristic", n)  # warm the memos on these games
    spent = dict.fromkeys(gym, 0.0)
    within = dict.fromkeys(inside, 0.0)
    calls = {"estimate": 0}
    original = fasteval.PlaceEvaluator.estimate

    def counting(self: Any, move: Any) -> float:
        calls["estimate"] += 1
        return original(self, move)

    fasteval.PlaceEvaluator.estimate = counting  # type: ignore[method-assign]
    try:
        with timed(gym, spent), timed(inside, within):
            t = time.thread_time()
            gym_steps("heuristic", n)
            total = time.thread_time() - t
    finally:
        fasteval.PlaceEvaluator.estimate = original  # type: ignore[method-assign]
    show("Gymnasium vs heuristic", total, spent, n)
    for name, t in within.items():
        print(f"    {name:<58} {1e6 * t / n:8.1f}")
    print(f"    (estimates a step: {calls['estimate'] / n:.0f})")
    vector_parts()


def vector_parts() -> None:
    """Where a step of the batched environment goes (64 games a call, random
    play, after ``WARM_CALLS`` untimed calls; the writer's parts inside it)."""
    from donutbox.core.game import Game
    from donutbox.envs import batched, encoding, observation, vector

    env = vector.VectorEnv(64)
    rng = np.random.default_rng(0)
    _, mask, _ = env.reset(seed=0)
    for _ in range(WARM_CALLS):
        _, mask, _, _, _ = env.step(vector.random_actions(mask, rng))
    parts: dict[str, tuple[Any, str]] = {
        "Game.play (the engine)": (Game, "play"),
        "whole batch write (BatchWriter.write)": (batched.BatchWriter, "write"),
        "- candidate lists (PlacesCodec.turn)": (encoding.PlacesCodec, "turn"),
        "- legal actions (PlacesCodec.legal_parts)": (encoding.PlacesCodec, "legal_parts"),
        "- runs around each place (_RunsAround.pairs)": (batched._RunsAround, "pairs"),
        "- features (game_features)": (observation.ObservationEncoder, "game_features"),
        "- bounding box (_Spread.sync)": (batched._Spread, "sync"),
        "sampling (random_actions)": (vector, "random_actions"),
    }
    spent = dict.fromkeys(parts, 0.0)
    calls = TIMED_CALLS
    with timed(parts, spent):
        t = time.thread_time()
        for _ in range(calls):
            _, mask, _, _, _ = env.step(vector.random_actions(mask, rng))
        total = time.thread_time() - t
    n = calls * 64
    print(f"VectorEnv, 64 games a call, random play: {1e6 * total / n:,.1f} us a step")
    for name, t in spent.items():
        print(f"  {name:<50} {1e6 * t / n:8.1f}")


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--slow-steps", type=int, default=300, help="steps vs greedy/heuristic")
    ap.add_argument("--parts", action="store_true", help="where a step's time goes instead")
    ap.add_argument(
        "--only",
        default="",
        help="run only the cases whose name contains one of these (comma-separated)",
    )
    args = ap.parse_args(argv)
    if args.parts:
        step_parts(args.steps)
        return {}
    from pettingzoo.classic import connect_four_v3

    from donutbox.envs import aec_env

    cases: dict[str, Callable[[], float]] = {
        "pettingzoo connect_four_v3": lambda: aec_steps(connect_four_v3.env, args.steps),
        "pettingzoo donutbox (places)": lambda: aec_steps(aec_env, args.steps),
        "pettingzoo donutbox (places, board)": lambda: aec_steps(
            lambda: aec_env(observation="board"), args.steps
        ),
        "vector donutbox (64 games a call)": lambda: vector_steps(args.steps),
        "vector donutbox (64 games a call, per-row sampling)": lambda: vector_steps(
            args.steps, per_row=True
        ),
        "pettingzoo donutbox (window)": lambda: aec_steps(
            lambda: aec_env(encoding="window"), args.steps
        ),
        "gymnasium donutbox vs random": lambda: gym_steps("random", args.steps),
        "gymnasium donutbox vs greedy": lambda: gym_steps("greedy", args.slow_steps),
        "gymnasium donutbox vs heuristic": lambda: gym_steps("heuristic", args.slow_steps),
        "openspiel connect_four (C++)": lambda: spiel_steps("connect_four", args.steps * 10),
        "openspiel tic_tac_toe (C++)": lambda: spiel_steps("tic_tac_toe", args.steps * 10),
        "openspiel python_donutbox": lambda: spiel_steps("python_donutbox", args.steps),
    }
    wanted = [part.strip() for part in args.only.split(",")]
    cases = {name: case for name, case in cases.items() if any(w in name for w in wanted)}
    import donutbox.core

    core = "compiled (mypyc)" if donutbox.core.compiled else "pure Python"
    print(
        f"donutbox core: {core}; python {platform.python_version()}; "
        f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, case in cases.items():
            best[name] = max(best.get(name, 0.0), case())
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    width = max(map(len, best))
    print(f"{'environment':<{width}}  steps/s (CPU)")
    for name, rate in best.items():
        print(f"{name:<{width}}  {rate:>10,.0f}")
    return best


if __name__ == "__main__":
    main()
