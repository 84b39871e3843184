"""``donutbox tournament``: a round robin of agents with a rating table.

Every pair of agents plays ``games`` two-player games on paired deals (each
deal twice, once from each seat: ``sim.specs``), so a pair's result does
not depend on who drew the better cards.  A game won counts 1, shared 1/2.

**Ratings.**  A Bradley-Terry model: agent ``i`` beats ``j`` with
probability ``p_i / (p_i + p_j)``.  The strengths are the maximum-likelihood
fit (Hunter's MM iteration) to every pair's wins, with one virtual drawn
game added to every pair that played (half a win each way), so that an
agent that won every game still has a finite rating.  Ratings are on the
Elo scale, ``400 log10(p_i / p_anchor)``, with the anchor (``random`` if it
plays, else the first agent) at 0: 200 points apart is a 76% expected
score.  The **95% interval** is the 2.5th to 97.5th percentile of the
rating over ``boots`` bootstrap refits, each resampling every pair's deals
(with both their games) with replacement; so it reflects the games played,
not the virtual one.

**Extending a ladder** (``--extend DIR``).  An agent is placed on a ladder
played before without replaying it: the earlier games are read back from
``DIR/games.csv`` (``read_games``), the new agents play each earlier agent
(or those of ``--against``) and each other on the same deal seeds
(``extension``), and the fit runs over all the games.  Bradley-Terry needs
no complete round robin, only a connected one.
"""

from __future__ import annotations

import csv
import math
import random
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from ..core import Rules
from ..core.errors import DonutboxError
from .match import GameResult
from .sim import GameSpec, specs

#: Bootstrap refits for the intervals.
BOOTS = 200


def round_robin(
    agents: Sequence[str],
    games: int,
    rules: Rules,
    seed: int,
    options: dict[str, dict[str, Any]] | None = None,
) -> list[GameSpec]:
    """``games`` paired games for every pair of ``agents`` (the same deal
    seeds for every pair), indexed 0 up in pair order."""
    out: list[GameSpec] = []
    for a, b in combinations(agents, 2):
        for spec in specs([a, b], games, rules, seed, options):
            out.append(GameSpec(len(out), spec.seats, rules, spec.seed, spec.options))
    return out


def extension(
    old: Sequence[str],
    new: Sequence[str],
    games: int,
    rules: Rules,
    seed: int,
    options: dict[str, dict[str, Any]] | None = None,
    against: Sequence[str] | None = None,
) -> list[GameSpec]:
    """``games`` paired games for each new agent against each of
    ``against`` (default: every agent of ``old``) and each other new agent,
    on the deal seeds a round robin from ``seed`` uses, indexed 0 up."""
    pairs = [(n, o) for n in new for o in (old if against is None else against)]
    pairs += list(combinations(new, 2))
    out: list[GameSpec] = []
    for a, b in pairs:
        for spec in specs([a, b], games, rules, seed, options):
            out.append(GameSpec(len(out), spec.seats, rules, spec.seed, spec.options))
    return out


class LadderFileError(DonutboxError):
    """An earlier ladder's games.csv that cannot be read back."""


def read_games(path: Path) -> list[GameResult]:
    """The two-player games of a ``games.csv`` that ``tournament --out``
    wrote (``sim.write_games``), as results with what the ladder reads:
    seats, deal seed, scores, winners (their records are not in it)."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as err:
        raise LadderFileError(f"{path}: {err.strerror or err}") from None
    out = []
    for n, row in enumerate(rows, 2):
        try:
            winners = [int(w) for w in row["winners"].split()]
            seats = [row["seat0"], row["seat1"]]
            if not all(seats) or row.get("seat2") or not set(winners) <= {0, 1}:
                raise ValueError("not a two-player game")
            out.append(
                GameResult(
                    seed=int(row["seed"]),
                    seats=seats,
                    rules=Rules.from_key(row["rules"]),
                    scores=[int(row["score0"]), int(row["score1"])],
                    winners=winners,
                    delivered=[],
                    plies=int(row["plies"]),
                    swaps=int(row["swaps"]),
                    passes=int(row["passes"]),
                    points_by_source={},
                    boxes={
                        "sealed": int(row["sealed_boxes"]),
                        "boxed": int(row["boxed_boxes"]),
                        "end": int(row["end_boxes"]),
                    },
                    roll_points=[],
                    seconds=float(row["seconds"]),
                )
            )
        except (KeyError, ValueError, TypeError, AttributeError, DonutboxError) as err:
            raise LadderFileError(f"{path} line {n}: {err}") from None
    if not out:
        raise LadderFileError(f"{path}: no games")
    return out


def agents_of(results: Sequence[GameResult]) -> list[str]:
    """The agents of ``results``, in the order they first appear."""
    seen: dict[str, None] = {}
    for r in results:
        for a in r.seats:
            seen.setdefault(a, None)
    return list(seen)


#: Per pair (a, b) in agent order, per deal seed: (a's wins, games).
Deals = dict[tuple[str, str], dict[int, tuple[float, int]]]


def deals_of(results: Sequence[GameResult], agents: Sequence[str]) -> Deals:
    """The results grouped by pair and deal (module doc)."""
    order = {a: i for i, a in enumerate(agents)}
    out: dict[tuple[str, str], dict[int, tuple[float, int]]] = defaultdict(dict)
    for r in results:
        x, y = r.seats
        a, b = (x, y) if order[x] < order[y] else (y, x)
        seat_a = r.seats.index(a)
        won = 1.0 / len(r.winners) if seat_a in r.winners else 0.0
        w, n = out[(a, b)].get(r.seed, (0.0, 0))
        out[(a, b)][r.seed] = (w + won, n + 1)
    return dict(out)


def fit(agents: Sequence[str], wins: dict[tuple[str, str], tuple[float, int]]) -> list[float]:
    """Bradley-Terry strengths (MM iteration), one virtual draw a pair,
    normalised to a geometric mean of 1.  ``wins[(a, b)]``: a's wins over b
    and the games they played."""
    k = len(agents)
    idx = {a: i for i, a in enumerate(agents)}
    w = [[0.0] * k for _ in range(k)]
    n = [[0.0] * k for _ in range(k)]
    for (a, b), (won, games) in wins.items():
        i, j = idx[a], idx[b]
        w[i][j] += won + 0.5
        w[j][i] += games - won + 0.5
        n[i][j] += games + 1
        n[j][i] += games + 1
    p = [1.0] * k
    for _ in range(10_000):
        new = []
        for i in range(k):
            total = sum(w[i])
            denom = sum(n[i][j] / (p[i] + p[j]) for j in range(k) if n[i][j])
            new.append(total / denom if denom else p[i])
        g = math.exp(sum(math.log(x) for x in new) / k)
        new = [x / g for x in new]
        if max(abs(math.log(x / y)) for x, y in zip(new, p, strict=True)) < 1e-10:
            return new
        p = new
    return p


def elo(p: Sequence[float], anchor: int) -> list[float]:
    return [400 * math.log10(x / p[anchor]) for x in p]


@dataclass(frozen=True)
class Row:
    """One agent's line of the ladder."""

    agent: str
    rating: float
    low: float
    high: float
    games: int
    score: float  # share of its games won (shared wins count half)


def ladder(
    results: Sequence[GameResult], agents: Sequence[str], boots: int = BOOTS, seed: int = 0
) -> list[Row]:
    """The rating table (module doc), strongest first."""
    deals = deals_of(results, agents)
    anchor = agents.index("random") if "random" in agents else 0

    def totals(pick: dict[tuple[str, str], list[tuple[float, int]]]) -> Any:
        return {
            pair: (sum(w for w, _ in got), sum(g for _, g in got)) for pair, got in pick.items()
        }

    every = {pair: list(d.values()) for pair, d in deals.items()}
    rating = elo(fit(agents, totals(every)), anchor)
    rng = random.Random(seed)
    samples: list[list[float]] = [[] for _ in agents]
    for _ in range(boots):
        pick = {pair: rng.choices(got, k=len(got)) for pair, got in every.items()}
        for i, r in enumerate(elo(fit(agents, totals(pick)), anchor)):
            samples[i].append(r)
    rows = []
    for i, a in enumerate(agents):
        s = sorted(samples[i]) or [rating[i]]
        lo, hi = s[int(0.025 * (len(s) - 1))], s[math.ceil(0.975 * (len(s) - 1))]
        won = played = 0.0
        for (x, y), d in deals.items():
            for w, g in d.values():
                if x == a:
                    won, played = won + w, played + g
                elif y == a:
                    won, played = won + g - w, played + g
        rows.append(Row(a, rating[i], lo, hi, int(played), won / played if played else 0.0))
    return sorted(rows, key=lambda r: -r.rating)


def pair_table(results: Sequence[GameResult], agents: Sequence[str]) -> dict[str, dict[str, float]]:
    """Row agent's share of the games won against each column agent."""
    out: dict[str, dict[str, float]] = {a: {} for a in agents}
    for (a, b), d in deals_of(results, agents).items():
        won = sum(w for w, _ in d.values())
        games = sum(g for _, g in d.values())
        out[a][b] = won / games
        out[b][a] = 1 - won / games
    return out


def ladder_lines(rows: Sequence[Row], pairs: dict[str, dict[str, float]]) -> Iterator[str]:
    """The ladder as a Markdown table, then the pairwise scores (``·``: the
    pair did not play, as after ``--extend ... --against``)."""
    yield "| rank | agent | rating | 95% interval | games | score |"
    yield "| ---: | --- | ---: | --- | ---: | ---: |"
    for k, r in enumerate(rows, 1):
        yield (
            f"| {k} | {r.agent} | {r.rating:+.0f} | {r.low:+.0f} to {r.high:+.0f} | "
            f"{r.games} | {r.score:.1%} |"
        )
    names = [r.agent for r in rows]
    yield ""
    yield "| row's score vs column | " + " | ".join(names) + " |"
    yield "| --- |" + " ---: |" * len(names)
    for a in names:
        cells = [
            "-" if a == b else "·" if b not in pairs[a] else f"{pairs[a][b]:.0%}" for b in names
        ]
        yield f"| {a} | " + " | ".join(cells) + " |"
