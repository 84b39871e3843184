"""Playing games between agents, reproducibly.

Each game is defined by (rules, seats, deal seed, game index): the deck
shuffle comes from the deal seed and each agent's generator from a seed
derived from it, so results do not depend on which process plays the game.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from ..ai import make_agent
from ..core import Game, Rules
from ..core.decks import Composition
from ..core.record import dump
from ..core.scoring import ROLL_BOX


@dataclass
class GameResult:
    seed: int
    seats: list[str]
    rules: Rules
    scores: list[int]
    winners: list[int]
    delivered: list[int]
    plies: int
    swaps: int
    passes: int
    points_by_source: dict[str, list[int]]
    boxes: dict[str, int]
    roll_points: list[int]  # points from boxes holding a Cinnamon Roll (``ROLL_BOX``)
    seconds: float
    ended_by: str = ""  # "final-lap" or "deadlock"
    deck: str = "standard"  # the deck composition's name
    record: dict[str, Any] = field(repr=False, default_factory=dict)


def agent_seed(deal_seed: int, seat: int) -> int:
    return (deal_seed * 1_000_003 + seat * 7_919 + 12_345) % (1 << 63)


def play_game(
    seats: list[str],
    rules: Rules,
    seed: int,
    options: dict[str, dict[str, Any]] | None = None,
    keep_record: bool = True,
    deck: Composition | None = None,
) -> GameResult:
    """One game: ``seats[i]`` names the agent (or level) of player i;
    ``deck``: the deck composition (default: the standard deck; the
    standard composition deals exactly the same games)."""
    options = options or {}
    agents = [make_agent(name, **options.get(name, {})) for name in seats]
    rngs = [random.Random(agent_seed(seed, i)) for i in range(len(seats))]
    names = [f"{name} ({i + 1})" for i, name in enumerate(seats)]
    game = Game.new(rules, names, seed) if deck is None else deck.new_game(rules, names, seed)
    start = time.perf_counter()
    swaps = passes = 0
    while not game.finished:
        p = game.to_move
        assert p is not None
        move = agents[p].choose(game.view(p), rngs[p])
        game.play(move)
        swaps += move.kind == "swap"
        passes += move.kind == "pass"
    record = dump(game) if keep_record else {}
    if keep_record:
        record["agents"] = list(seats)
        record["result"] = {"scores": game.scores, "winners": game.winners}
    return result_of(
        game,
        seed=seed,
        seats=seats,
        swaps=swaps,
        passes=passes,
        seconds=time.perf_counter() - start,
        record=record,
        deck=deck.name if deck is not None else "standard",
    )


def result_of(
    game: Game,
    *,
    seed: int,
    seats: list[str],
    swaps: int,
    passes: int,
    seconds: float,
    record: dict[str, Any],
    deck: str = "standard",
) -> GameResult:
    """The figures of a finished ``game`` (where its points came from, its
    boxes by how they were delivered), for a game just played or one
    replayed from its record (``balance.result_from_record``)."""
    n = len(game.names)
    by_source = {"sealed": [0] * n, "boxed": [0] * n, "end": [0] * n}
    boxes = {"sealed": 0, "boxed": 0, "end": 0}
    roll_points = [0] * n
    source = game.rules.scoring_rule.source
    for d in game.deliveries:
        boxes[d.how] += 1
        for p in d.to:
            by_source[d.how][p] += d.points
            if source(d.size, d.roll) == ROLL_BOX:  # the scoring rule's word
                roll_points[p] += d.points
    return GameResult(
        seed=seed,
        seats=list(seats),
        rules=game.rules,
        scores=game.scores,
        winners=game.winners,
        delivered=game.boxes_delivered,
        plies=game.ply,
        swaps=swaps,
        passes=passes,
        points_by_source=by_source,
        boxes=boxes,
        roll_points=roll_points,
        seconds=seconds,
        ended_by=game.ended_by or "",
        deck=deck,
        record=record,
    )
