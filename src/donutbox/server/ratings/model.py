"""The rating rules, as pure functions (docs/community.md, "Rating
integrity"): openskill's Plackett-Luce update scaled by a weight per seat,
the weight of a game from the pair's recent history, when a rating is
provisional, and the 1500-based number players see.

Nothing here reads the database: ``ratings/service.py`` gathers the history and
stores the result, and a replay of every settled game (voiding one) calls
the same functions in the same order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
MU = MODEL.mu
SIGMA = MODEL.sigma

#: Display points per unit of mu: between two settled players (sigma -> 0)
#: Plackett-Luce gives the first P = 1 / (1 + exp(-d / c)), c = sqrt(2) beta;
#: Elo and Glicko give P = 1 / (1 + 10 ** (-D / 400)).  Equal odds for
#: D = K d: K = 400 / (ln 10 * sqrt(2) * beta) = 29.48, so 400 points are
#: 10:1 odds here as on lichess.
SCALE = 400 / (math.log(10) * math.sqrt(2) * MODEL.beta)
#: A new player's shown rating.
START = 1500

#: Provisional while sigma is above this (openskill's sigma in the role of
#: Glicko-2's RD: lichess marks RD > 110, which a new lichess player passes
#: after about ten games; Plackett-Luce's sigma reaches 6.5 after about ten
#: two-player games against other new players).
PROVISIONAL_SIGMA = 6.5
#: ... or until the player's counted games were against this many different
#: accounts (sigma falls as fast against one opponent as against ten).
PROVISIONAL_OPPONENTS = 5

#: Repeated games: the k-th rated game of the same two accounts within
#: ``PAIR_WINDOW_DAYS`` (any rules) counts with weight ``PAIR_WEIGHTS[k-1]``,
#: and nothing from the sixth on.
PAIR_WINDOW_DAYS = 7
PAIR_WEIGHTS = (1.0, 1.0, 1.0, 0.5, 0.25)
#: Quick match pairs no two accounts whose next game would count less than
#: fully (they can still meet at a table of their own).
QUICK_MATCH_PAIR_LIMIT = 3


@dataclass(frozen=True)
class Skill:
    """A rating in the model's own units, and what makes it provisional."""

    mu: float
    sigma: float
    #: counted games (weight > 0) and the different accounts they were against
    games: int = 0
    opponents: int = 0


NEW = Skill(MU, SIGMA)


def display(mu: float) -> int:
    """The rating players see: 1500 for a new player, 400 points for 10:1
    odds (``SCALE``)."""
    return round(START + SCALE * (mu - MU))


def deviation(sigma: float) -> int:
    """sigma on the shown scale (a new player's: 246)."""
    return round(SCALE * sigma)


def provisional(s: Skill) -> bool:
    return s.sigma > PROVISIONAL_SIGMA or s.opponents < PROVISIONAL_OPPONENTS


def pair_weight(earlier: int) -> float:
    """The weight of a game between two accounts that have played
    ``earlier`` rated games together within the window."""
    return PAIR_WEIGHTS[earlier] if earlier < len(PAIR_WEIGHTS) else 0.0


def seat_weights(
    users: Sequence[int], earlier: dict[frozenset[int], int], before: Sequence[Skill]
) -> list[float]:
    """Each seat's weight: the smallest pair weight against its opponents,
    and 0 against a provisional opponent once its own rating is established
    (a guess must not move a settled rating: new accounts cannot feed one).
    ``earlier``: rated games together within the window, per pair."""
    out = []
    for i, me in enumerate(users):
        w = 1.0
        for j, other in enumerate(users):
            if j == i or other == me:
                continue
            w = min(w, pair_weight(earlier.get(frozenset((me, other)), 0)))
            if not provisional(before[i]) and provisional(before[j]):
                w = 0.0
        out.append(w)
    return out


def rate(
    before: Sequence[Skill], places: Sequence[int], weights: Sequence[float]
) -> list[tuple[float, float]]:
    """(mu, sigma) after the game: Plackett-Luce's update of each seat,
    scaled by its weight (1: the whole update, 0: none)."""
    teams = [[MODEL.rating(mu=s.mu, sigma=s.sigma)] for s in before]
    full = MODEL.rate(teams, ranks=[float(p) for p in places])
    out = []
    for s, team, w in zip(before, full, weights, strict=True):
        new = team[0]
        out.append((s.mu + w * (new.mu - s.mu), s.sigma + w * (new.sigma - s.sigma)))
    return out
