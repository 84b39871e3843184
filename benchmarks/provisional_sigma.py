"""Where the provisional threshold comes from (docs/community.md, "Rating
integrity"): a new player's sigma after n two-player rated games, each
won or lost at random (a fair coin), against opponents of a given sigma
(mu 25), averaged over many simulated players.

    python3 benchmarks/provisional_sigma.py [--players 200] [--seed 2]
"""

from __future__ import annotations

import argparse
import random
from statistics import mean

from donutbox.server.ratings.model import MODEL, NEW, Skill, rate

GAMES = (5, 10, 20, 30, 40, 60)


def sigma_after(games: int, opponent_sigma: float, rng: random.Random) -> dict[int, float]:
    me = NEW
    seen: dict[int, float] = {}
    for g in range(1, games + 1):
        places = [1, 2] if rng.random() < 0.5 else [2, 1]
        ((mu, sigma), _) = rate([me, Skill(MODEL.mu, opponent_sigma)], places, [1.0, 1.0])
        me = Skill(mu, sigma)
        if g in GAMES:
            seen[g] = sigma
    return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print("opponent sigma | " + " | ".join(f"after {g}" for g in GAMES))
    for opponent in (MODEL.sigma, 5.0, 3.0):
        runs = [sigma_after(max(GAMES), opponent, rng) for _ in range(args.players)]
        cells = " | ".join(f"{mean(r[g] for r in runs):.2f}" for g in GAMES)
        print(f"{opponent:14.2f} | {cells}")


if __name__ == "__main__":
    main()
