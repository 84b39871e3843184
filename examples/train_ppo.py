"""Train a small PPO policy on the Gymnasium environment, then evaluate it.

    pip install '.[rl]' torch
    python examples/train_ppo.py --cpu-minutes 30 --out ppo.pt --log curve.csv

The policy (``donutbox.ai.ppo``) scores each legal action from that action's
own features, a pointer-style head, so its output follows the turn's action
list (``env.unwrapped.legal()``: action index -> move) rather than the
``Discrete`` space; the environment's mask is exactly that list.  Opponents:
``random`` and ``greedy`` (``donutbox.ai``), a seat drawn each episode.
Reward: the game's outcome (+1 / -1 / 0) plus a shaping of the score margin
(``margin / 20`` as a potential, so it sums to the final margin / 20).

The budget is CPU time of this process (``time.process_time``); the run
prints one CSV row per iteration (CPU seconds, games, training win rates
per opponent, losses) and finally plays 200 evaluation games against each
opponent (100 deals, each with the learner in both seats).
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import time
from typing import Any

import numpy as np
import torch

from donutbox.ai import make_agent
from donutbox.ai.ppo import action_features, build_net, global_features
from donutbox.core import Game, Rules
from donutbox.envs.gym_env import DonutboxEnv


def policy_step(net: Any, view: Any, legal: dict[int, Any], greedy: bool = False) -> tuple:
    actions = list(legal)
    moves = [legal[a] for a in actions]
    acts = np.asarray(action_features(view, moves), dtype=np.float32)
    glob = np.asarray(global_features(view), dtype=np.float32)
    with torch.no_grad():
        logits, value = net(
            torch.from_numpy(acts)[None],
            torch.from_numpy(glob)[None],
            torch.ones((1, len(actions)), dtype=torch.bool),
        )
        logits = logits[0]
        if greedy:
            i = int(torch.argmax(logits))
        else:
            i = int(torch.distributions.Categorical(logits=logits).sample())
        logp = float(torch.log_softmax(logits, 0)[i])
    return actions[i], i, logp, float(value[0]), acts, glob


def margin(game: Game, seat: int) -> float:
    s = game.scores
    return s[seat] - max(s[k] for k in range(len(s)) if k != seat)


def play_episode(env: DonutboxEnv, net: Any, seed: int) -> tuple[list[dict], float]:
    """One training game: the learner's decisions with rewards, and the outcome."""
    env.reset(seed=seed)
    u = env.unwrapped
    steps: list[dict] = []
    done = False
    reward = 0.0
    while not done:
        legal = u.legal()
        before = margin(u.game, u.seat)
        action, i, logp, value, acts, glob = policy_step(net, u.view(), legal)
        _, reward, term, trunc, _info = env.step(action)
        done = term or trunc
        shaped = (margin(u.game, u.seat) - before) / 20
        steps.append(
            {"acts": acts, "glob": glob, "i": i, "logp": logp, "value": value, "r": shaped}
        )
    steps[-1]["r"] += reward
    return steps, reward


def gae(steps: list[dict], gamma: float = 1.0, lam: float = 0.95) -> None:
    adv = 0.0
    for t in reversed(range(len(steps))):
        nxt = steps[t + 1]["value"] if t + 1 < len(steps) else 0.0
        delta = steps[t]["r"] + gamma * nxt - steps[t]["value"]
        adv = delta + gamma * lam * adv
        steps[t]["adv"] = adv
        steps[t]["ret"] = adv + steps[t]["value"]


def update(net: Any, opt: Any, batch: list[dict], epochs: int = 4, mb: int = 256) -> dict:
    advs = np.array([s["adv"] for s in batch], dtype=np.float32)
    advs = (advs - advs.mean()) / (advs.std() + 1e-8)
    for s, a in zip(batch, advs, strict=True):
        s["nadv"] = float(a)
    stats: dict[str, float] = {}
    for _ in range(epochs):
        order = np.random.permutation(len(batch))
        for start in range(0, len(batch), mb):
            part = [batch[k] for k in order[start : start + mb]]
            width = max(len(s["acts"]) for s in part)
            acts = np.zeros((len(part), width, part[0]["acts"].shape[1]), dtype=np.float32)
            mask = np.zeros((len(part), width), dtype=bool)
            for k, s in enumerate(part):
                acts[k, : len(s["acts"])] = s["acts"]
                mask[k, : len(s["acts"])] = True
            glob = torch.from_numpy(np.stack([s["glob"] for s in part]))
            logits, value = net(torch.from_numpy(acts), glob, torch.from_numpy(mask))
            idx = torch.tensor([s["i"] for s in part])
            logp_all = torch.log_softmax(logits, -1)
            logp = logp_all.gather(1, idx[:, None]).squeeze(1)
            old = torch.tensor([s["logp"] for s in part])
            adv = torch.tensor([s["nadv"] for s in part])
            ret = torch.tensor([s["ret"] for s in part], dtype=torch.float32)
            ratio = torch.exp(logp - old)
            pg = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()
            vloss = ((value - ret) ** 2).mean()
            safe = logp_all.masked_fill(~torch.from_numpy(mask), 0.0)
            ent = -(torch.exp(safe) * safe).masked_fill(~torch.from_numpy(mask), 0.0)
            ent = ent.sum(-1).mean()
            loss = pg + 0.5 * vloss - 0.01 * ent
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            opt.step()
            stats = {
                "pg": float(pg.detach()),
                "vloss": float(vloss.detach()),
                "entropy": float(ent.detach()),
            }
    return stats


def evaluate(net: Any, opponent: str, deals: int, seed: int = 10_000) -> dict[str, float]:
    """``2 * deals`` games (each deal in both seats), the policy playing its best move."""
    env = DonutboxEnv(opponent=opponent, seat=0)
    wins = draws = 0
    for d in range(deals):
        for seat in (0, 1):
            env.seat_option = env.seat = seat
            env.reset(seed=seed + d)
            done = False
            reward = 0.0
            while not done:
                u = env.unwrapped
                action, *_ = policy_step(net, u.view(), u.legal(), greedy=True)
                _, reward, term, trunc, _info = env.step(action)
                done = term or trunc
            wins += reward > 0
            draws += reward == 0
    games = 2 * deals
    return {"games": games, "wins": wins, "draws": draws, "rate": wins / games}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu-minutes", type=float, default=30.0)
    ap.add_argument("--iterations", type=int, default=0, help="stop after this many (0: no limit)")
    ap.add_argument("--games-per-iter", type=int, default=24)
    ap.add_argument("--greedy-share", type=float, default=0.6)
    ap.add_argument("--eval-deals", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="ppo.pt")
    ap.add_argument("--log", default="")
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--evaluate", default="", help="only evaluate these weights (a .pt file)")
    ap.add_argument("--against", default="random,greedy", help="opponents to evaluate against")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.evaluate:
        net = build_net(torch)
        net.load_state_dict(torch.load(args.evaluate, map_location="cpu", weights_only=True))
        out: dict[str, Any] = {}
        cpu = time.process_time()
        for name in args.against.split(","):
            out[f"eval_{name}"] = evaluate(net, name, args.eval_deals)
            print(name, out[f"eval_{name}"], flush=True)
        print(f"evaluation CPU seconds: {time.process_time() - cpu:.1f}", flush=True)
        return out
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    rng = random.Random(args.seed)
    net = build_net(torch)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    envs = {
        name: DonutboxEnv(Rules(), 2, opponent=name, seat=None) for name in ("random", "greedy")
    }
    for k, env in enumerate(envs.values()):
        env.reset(seed=args.seed + k)
    budget = args.cpu_minutes * 60
    cpu0 = time.process_time()
    wall0 = time.time()
    rows: list[dict[str, Any]] = []
    writer = None
    log = open(args.log, "w", newline="") if args.log else None  # noqa: SIM115
    games = 0
    it = 0
    while time.process_time() - cpu0 < budget:
        if args.iterations and it >= args.iterations:
            break
        it += 1
        batch: list[dict] = []
        results: dict[str, list[float]] = {"random": [], "greedy": []}
        for _ in range(args.games_per_iter):
            name = "greedy" if rng.random() < args.greedy_share else "random"
            steps, outcome = play_episode(envs[name], net, rng.randrange(2**62))
            gae(steps)
            batch.extend(steps)
            results[name].append(outcome)
            games += 1
        stats = update(net, opt, batch)
        row = {
            "iter": it,
            "cpu_s": round(time.process_time() - cpu0, 1),
            "wall_s": round(time.time() - wall0, 1),
            "games": games,
            "steps": len(batch),
            **{
                f"win_{k}": round(sum(r > 0 for r in v) / len(v), 3) if v else ""
                for k, v in results.items()
            },
            **{k: round(v, 4) for k, v in stats.items()},
        }
        rows.append(row)
        if log is not None:
            if writer is None:
                writer = csv.DictWriter(log, fieldnames=list(row))
                writer.writeheader()
            writer.writerow(row)
            log.flush()
        print(row, flush=True)
        torch.save(net.state_dict(), args.out)
    train_cpu = time.process_time() - cpu0
    result: dict[str, Any] = {"train_cpu_s": round(train_cpu, 1), "games": games, "rows": rows}
    if args.eval_deals:
        for name in ("random", "greedy"):
            result[f"eval_{name}"] = evaluate(net, name, args.eval_deals)
            print(name, result[f"eval_{name}"], flush=True)
    if log is not None:
        log.close()
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
    _ = make_agent
