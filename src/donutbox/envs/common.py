"""Small pieces shared by the environments: rules, outcomes, seeds."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from ..core.decks import Composition, parse_composition
from ..core.game import Game
from ..core.rng import SEED_LIMIT
from ..core.rules import GAME_INFO, Rules

#: Reward modes: ``win`` pays only at the end (see ``outcome``); ``points``
#: pays every player the points they scored since their previous reward.
REWARDS: Final = ("win", "points")


def make_rules(rules: Rules | Mapping[str, Any] | None) -> Rules:
    """A ``Rules`` from a ``Rules``, a dict like a record's ``rules`` or None."""
    if rules is None:
        return Rules()
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, Mapping):
        return Rules(**dict(rules))
    raise TypeError(f"rules must be a donutbox.Rules or a dict, not {type(rules).__name__}")


def check_players(players: int) -> int:
    if isinstance(players, bool) or not isinstance(players, int):
        raise TypeError("players must be an integer")
    if not GAME_INFO.min_players <= players <= GAME_INFO.max_players:
        raise ValueError(f"a game has 2 to 4 players, not {players}")
    return players


def check_reward(reward: str) -> str:
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
    return reward


def outcome(game: Game) -> list[float]:
    """Zero-sum results of a finished game, each in [-1, 1].

    With ``k`` winners (highest score, then most boxes delivered) among ``n``
    players, each winner gets ``1/k`` and each other player ``-1/(n-k)``; a
    tie of everybody gives 0 to all.  Two players: +1 / -1, or 0 and 0.
    """
    n = game.players
    if not game.finished:
        return [0.0] * n
    winners = set(game.winners)
    k = len(winners)
    if k == n:
        return [0.0] * n
    return [1.0 / k if p in winners else -1.0 / (n - k) for p in range(n)]


def game_seed(seed: int) -> int:
    """Check a seed given to ``reset(seed=...)``: it deals ``Game.new(seed=seed)``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"seed must be an integer from 0 to {SEED_LIMIT - 1}")
    return seed


def make_deck(
    deck: Composition | Mapping[str, Any] | None, encoding: str = "places"
) -> Composition | None:
    """A deck composition (docs/deck-lab.md) from a ``Composition``, a dict
    like a composition file's, or None (the standard deck).  The ``window``
    encoding's bounds count the standard deck's donuts (28 of each flavour
    and 8 R a deck): a deck with more of one is refused there."""
    if deck is not None and not isinstance(deck, Composition):
        if not isinstance(deck, Mapping):
            raise TypeError(f"deck must be a Composition or a dict, not {type(deck).__name__}")
        deck = parse_composition(deck, "deck")
    if deck is not None and encoding == "window":
        limits = {"C": 28, "S": 28, "H": 28, "B": 28, "R": 8}
        for i in range(len(deck.decks)):
            over = [f"{n} {k}" for k, n in deck.flavours(i).items() if n > limits[k]]
            if over:
                raise ValueError(
                    f"deck: the window encoding allows at most 28 donuts of a flavour and "
                    f"8 R a deck; deck {i} of '{deck.name}' has {', '.join(over)}"
                )
    return deck


def deal(rules: Rules, players: int, seed: int, deck: Composition | None) -> Game:
    """``Game.new(rules, players, seed=seed)``, or the same from ``deck``."""
    if deck is None:
        return Game.new(rules, players, seed=seed)
    return deck.new_game(rules, players, seed)


def wilson(wins: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (as ``lab/stats.py``)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
