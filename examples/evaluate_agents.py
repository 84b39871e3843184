"""Evaluate policies through the research environments.

1. **The environment is the engine.**  A ``donutbox.ai`` agent (heuristic)
   plays a random agent, once through the PettingZoo environment (each agent
   reads its own view, its move is turned into an action with ``encode`` and
   must be in the mask) and once directly on the engine, with the same seeds.
   Every game must end with the same scores, move for move.
2. **A policy that sees only tensors.**  In the Gymnasium environment, a
   policy that reads nothing but the action mask ("box it whenever you can,
   else any legal action") and a uniformly random masked policy each play
   the random agent; their win rates are printed with a 95% interval.

    python examples/evaluate_agents.py --games 20
"""

from __future__ import annotations

import argparse
import math
import random

import numpy as np

from donutbox.ai import make_agent
from donutbox.core import Game, Rules
from donutbox.envs import DonutboxEnv, aec_env

SEATS = ("heuristic", "random")


def engine_game(rules: Rules, seed: int) -> list[int]:
    """Heuristic (seat 0) against random (seat 1) on the engine."""
    game = Game.new(rules, 2, seed=seed)
    agents = [make_agent(name) for name in SEATS]
    rng = random.Random(seed)
    while not game.finished:
        p = game.to_move
        assert p is not None
        game.play(agents[p].choose(game.view(p), rng))
    return game.scores


def env_game(rules: Rules, seed: int) -> list[int]:
    """The same players through the PettingZoo environment."""
    env = aec_env(rules=rules, players=2)
    env.reset(seed=seed)
    raw = env.unwrapped
    agents = {f"player_{i}": make_agent(name) for i, name in enumerate(SEATS)}
    rng = random.Random(seed)
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        view = raw.view(agent)  # type: ignore[attr-defined]
        action = raw.encode(agents[agent].choose(view, rng))  # type: ignore[attr-defined]
        assert obs["action_mask"][action] == 1, "the agent's move is not in the mask"
        env.step(action)
    return raw.game.scores  # type: ignore[attr-defined, no-any-return]


def box_first(mask: np.ndarray, codec: object, rng: np.random.Generator) -> int:
    """Box it when the mask allows, else any legal action."""
    legal = np.flatnonzero(mask)
    boxes = legal[(legal >= codec.box_base) & (legal < codec.swap_base)]  # type: ignore[attr-defined]
    pool = boxes if boxes.size else legal
    return int(rng.choice(pool))


def uniform(mask: np.ndarray, codec: object, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def win_rate(policy_name: str, rules: Rules, games: int) -> tuple[float, float]:
    policy = {"box-first": box_first, "uniform": uniform}[policy_name]
    env = DonutboxEnv(rules=rules, players=2, opponent="random", seat=None)
    rng = np.random.default_rng(0)
    total = 0.0
    for seed in range(games):
        _, info = env.reset(seed=seed)
        terminated = False
        reward = 0.0
        while not terminated:
            mask = info["action_mask"]
            _, reward, terminated, _, info = env.step(policy(mask, env.codec, rng))
        total += (float(reward) + 1.0) / 2.0  # win 1, shared 0.5, loss 0
    rate = total / games
    return rate, 1.96 * math.sqrt(max(rate * (1 - rate), 1e-9) / games)


def main(games: int = 20, quiet: bool = False) -> dict[str, object]:
    rules = Rules()
    same = 0
    heuristic_wins = 0.0
    for seed in range(games):
        a, b = engine_game(rules, seed), env_game(rules, seed)
        assert a == b, f"seed {seed}: engine {a} but environment {b}"
        same += 1
        heuristic_wins += 1.0 if a[0] > a[1] else 0.5 if a[0] == a[1] else 0.0
    rates = {name: win_rate(name, rules, games) for name in ("box-first", "uniform")}
    if not quiet:
        print(f"{same}/{games} games identical through the environment and the engine")
        print(f"heuristic beats random in {heuristic_wins / games:.0%} of them (by score)")
        for name, (rate, half) in rates.items():
            print(f"{name:>9} policy vs random agent: wins {rate:.0%} +/- {half:.0%}")
    return {"identical": same, "rates": rates}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    main(parser.parse_args().games)
