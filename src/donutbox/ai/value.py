"""A leaf evaluation fitted on self-play outcomes: each player's winning chance.

``win_values(position)`` estimates, for every player, the chance of winning
from a position, in (0, 1); a finished position gives exactly 1 to the
winner and 0 to the others (a win shared on a tie of score and boxes
delivered, docs/spec.md section 8, gives each of the k sharers 1/k).  MCTS
can back these values up instead of the squashed expected-score margin of
``fasteval.fast_scores`` (docs/ai.md, "The fitted evaluation").

**Two players.**  The model is a logistic regression from the side to move:
``P(mover wins) = 1 / (1 + exp(-z))`` with ``z = sum_i w_i x_i``, the
features ``x_i`` below, and the other player's value ``1 - P``.  The
features are public numbers only (banked scores, boxes delivered, the
counter's runs, whose turn it is, the cards left and the Final Lap), read
through ``evaluate.Position``: a ``PlayerView`` gives the same values as any
world sampled from it, so the evaluation never depends on a hidden card
(trays and piles are not read at all).  Per open run of 2 or more donuts
that someone holds (``value`` = its points, a run of 2 counting half a small
box as in ``evaluate.expected_scores``), the run's value goes to one of
these sums, by who leads it (most donuts held; ``hm``, ``ho`` the mover's
and the other's):

- ``mbox``: the mover leads or ties and holds at least half (could box it
  now); ``mbox_max``: the largest such value (one box it a turn);
  ``mbox_safe``: those of them the mover leads by 2 or more (safe from a
  one-card contest even if not boxed now);
- ``m1``: the mover leads and cannot box it; ``mopen``: value times open
  edges of the runs in ``m1``;
- ``obox``, ``obox_safe``, ``o1``, ``oopen``: the same for the other player;
- ``tie``: a tie that the mover cannot box; ``small``: runs of 2 (plus for
  the mover's lead, minus for the other's).

and ``banked`` (score difference), ``delivered`` (boxes delivered
difference: the tie-break), ``seat`` (+1 when the mover is the first
player, -1 otherwise), ``lap`` (1 in the Final Lap) and ``bias`` (1).
Every feature from ``banked`` on (``SCALED``) also enters multiplied by
``q = 1/sqrt(turns_left)`` (the weight named ``NAME*q``; ``turns_left`` as
in ``evaluate``: the Final Lap's turns, else the cards left per player, at
least 1, 20 in a free game), so that the same lead weighs more as the end
nears.

**Three or four players.**  A softmax over the expected scores of
``fasteval.fast_scores``: ``v_p = exp(k e_p) / sum_q exp(k e_q)`` with ``k
= a + b q`` fitted on the two-player positions as a one-feature model of
the margin (``multi`` in the weights file), so that for two players it
would be the logistic of ``k`` times the margin.  Not fitted on games of
more players (none were played): a documented guess that keeps the values
in (0, 1), summing to 1.

The weights are read once from ``data/value.json`` (written by
``python -m donutbox.lab.fit_value``; a malformed file raises ``InputError``
naming the field).  ``win_values`` is called once per MCTS iteration: one
loop over the runs with a multiply-add each, about 0.7-0.8 of the CPU time
of ``fast_scores`` on the same positions (docs/ai.md gives the figures).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Final

from ..core import InputError
from .evaluate import Position
from .fasteval import fast_scores, values_of

#: The weights file's format tag.
FORMAT: Final = "donutbox-value/1"
#: The base features, in the order ``features`` returns them.
BASE: Final = (
    "bias",
    "seat",
    "lap",
    "banked",
    "delivered",
    "mbox",
    "mbox_max",
    "mbox_safe",
    "m1",
    "mopen",
    "obox",
    "obox_safe",
    "o1",
    "oopen",
    "tie",
    "small",
)
#: The base features a weights file may also scale by ``q`` (``NAME*q``).
SCALED: Final = BASE[3:]
#: Every feature name a weights file may give.
NAMES: Final = BASE + tuple(f"{n}*q" for n in SCALED)
#: The one-feature model of the expected-score margin (for 3-4 players).
MULTI: Final = ("margin", "margin*q")


def turns_left(game: Position) -> float:
    """Turns left per player, as ``evaluate.expected_scores`` counts them."""
    lap = game.final_lap_turns
    if lap is not None:
        return float(lap)
    if game.free:
        return 20.0
    return max(1.0, game.cards_left / len(game.names))


def features(game: Position) -> list[float]:
    """The base features of an unfinished two-player position, from the
    side to move (``BASE`` order).  ``win_values`` computes the same sums
    inline; this is the readable version the fitter and the tests use."""
    me = game.to_move
    assert me is not None and len(game.names) == 2, "features: a two-player game in play"
    other = 1 - me
    s = game.scores
    d = game.boxes_delivered
    x = dict.fromkeys(BASE, 0.0)
    x["bias"] = 1.0
    x["seat"] = 1.0 if me == 0 else -1.0
    x["lap"] = 1.0 if game.final_lap_turns is not None else 0.0
    x["banked"] = float(s[me] - s[other])
    x["delivered"] = float(d[me] - d[other])
    scoring = game.rules.scoring_rule
    for r in game.counter.runs.values():
        size = len(r.cells)
        if size < 2:
            continue
        hm = r.held[me]
        ho = r.held[other]
        if hm == 0 and ho == 0:
            continue
        roll = r.rolls > 0
        if size < 3:
            value = 0.5 * scoring.points(3, roll)  # half the box of 3 it may become
            if hm != ho:
                x["small"] += value if hm > ho else -value
            continue
        value = float(scoring.points(size, roll))
        if hm >= ho and scoring.may_box(hm, size):
            x["mbox"] += value
            x["mbox_max"] = max(x["mbox_max"], value)
            if hm - ho >= 2:
                x["mbox_safe"] += value
        elif hm > ho:
            x["m1"] += value
            x["mopen"] += value * r.open
        elif ho > hm and scoring.may_box(ho, size):
            x["obox"] += value
            if ho - hm >= 2:
                x["obox_safe"] += value
        elif ho > hm:
            x["o1"] += value
            x["oopen"] += value * r.open
        else:
            x["tie"] += value
    return [x[n] for n in BASE]


def phase(game: Position) -> float:
    """``q = 1/sqrt(turns_left)``: 0.2 at the start, 1 at the end."""
    return 1.0 / math.sqrt(turns_left(game))


def finished_values(game: Position) -> list[float]:
    """A finished game's values: 1 to the winner, 0 to the others; a tie of
    score and boxes delivered shared (1/k each of k)."""
    s = game.scores
    d = game.boxes_delivered
    best = max(s)
    tied = [p for p in range(len(s)) if s[p] == best]
    most = max(d[p] for p in tied)
    won = [p for p in tied if d[p] == most]
    share = 1.0 / len(won)
    return [share if p in won else 0.0 for p in range(len(s))]


class ValueModel:
    """Fitted weights (``weights``: feature name -> weight, absent = 0;
    ``multi``: the margin model for 3-4 players)."""

    def __init__(self, weights: dict[str, float], multi: dict[str, float]) -> None:
        self.weights = {n: float(weights.get(n, 0.0)) for n in NAMES}
        self.multi = {n: float(multi.get(n, 0.0)) for n in MULTI}
        w = self.weights
        self._fixed = (w["bias"], w["seat"], w["lap"])
        self._pairs = tuple((w[n], w[f"{n}*q"]) for n in SCALED)

    def z(self, game: Position) -> float:
        """The logit for the side to move (the readable version)."""
        x = features(game)
        q = phase(game)
        w = self.weights
        total = 0.0
        for name, value in zip(BASE, x, strict=True):
            total += w[name] * value
            if name in SCALED:
                total += w[f"{name}*q"] * q * value
        return total

    def win_values(self, game: Position) -> list[float]:
        """Each player's estimated chance to win, in (0, 1) (exactly 1/0 once
        the game is finished)."""
        me = game.to_move
        if me is None:
            return finished_values(game)
        names = game.names
        if len(names) != 2:
            return self._multi(game)
        lap = game.final_lap_turns
        if lap is not None:
            t = float(lap)
        elif game.free:
            t = 20.0
        else:
            t = game.cards_left / 2
            if t < 1.0:
                t = 1.0
        q = 1.0 / math.sqrt(t)
        (
            (wb, wbq),
            (wd, wdq),
            (w_mbox, w_mboxq),
            (w_mmax, w_mmaxq),
            (w_msafe, w_msafeq),
            (w_m1, w_m1q),
            (w_mo, w_moq),
            (w_obox, w_oboxq),
            (w_osafe, w_osafeq),
            (w_o1, w_o1q),
            (w_oo, w_ooq),
            (w_tie, w_tieq),
            (w_small, w_smallq),
        ) = self._pairs
        c_mbox = w_mbox + w_mboxq * q
        c_msafe = w_msafe + w_msafeq * q
        c_m1 = w_m1 + w_m1q * q
        c_mo = w_mo + w_moq * q
        c_obox = w_obox + w_oboxq * q
        c_osafe = w_osafe + w_osafeq * q
        c_o1 = w_o1 + w_o1q * q
        c_oo = w_oo + w_ooq * q
        c_tie = w_tie + w_tieq * q
        c_small = w_small + w_smallq * q
        other = 1 - me
        z = 0.0
        best_box = 0.0
        counter = game.counter
        values = values_of(game.rules.scoring_rule, len(counter.cells))
        plain = values.plain
        rolled = values.rolled
        need = values.need
        small_plain = values.small_plain
        small_rolled = values.small_rolled
        for r in counter.runs.values():
            cells = r.cells
            size = len(cells)
            if size < 2:
                continue
            held = r.held
            hm = held[me]
            ho = held[other]
            if size < 3:
                if hm > ho:
                    z += c_small * (small_rolled if r.rolls else small_plain)
                elif ho > hm:
                    z -= c_small * (small_rolled if r.rolls else small_plain)
                continue
            value = float(rolled[size] if r.rolls else plain[size])
            if hm >= ho:
                if hm == 0:
                    continue
                if hm >= need[size]:
                    if hm - ho >= 2:
                        z += (c_mbox + c_msafe) * value
                    else:
                        z += c_mbox * value
                    if value > best_box:
                        best_box = value
                elif hm == ho:
                    z += c_tie * value
                else:
                    z += (c_m1 + c_mo * r.open) * value
            elif ho >= need[size]:
                if ho - hm >= 2:
                    z += (c_obox + c_osafe) * value
                else:
                    z += c_obox * value
            else:
                z += (c_o1 + c_oo * r.open) * value
        s = game.scores
        d = game.boxes_delivered
        w_bias, w_seat, w_lap = self._fixed
        z += (
            w_bias
            + (w_seat if me == 0 else -w_seat)
            + (w_lap if lap is not None else 0.0)
            + (wb + wbq * q) * (s[me] - s[other])
            + (wd + wdq * q) * (d[me] - d[other])
            + (w_mmax + w_mmaxq * q) * best_box
        )
        if z >= 0.0:
            v = 1.0 / (1.0 + math.exp(-z))
        else:
            e = math.exp(z)
            v = e / (1.0 + e)
        return [v, 1.0 - v] if me == 0 else [1.0 - v, v]

    def _multi(self, game: Position) -> list[float]:
        """Three or four players: a softmax of the expected scores."""
        est = fast_scores(game)
        k = self.multi["margin"] + self.multi["margin*q"] * phase(game)
        top = max(est)
        ex = [math.exp(k * (e - top)) for e in est]
        total = sum(ex)
        return [e / total for e in ex]


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{where}: a finite number is needed, not {value!r}")
    return float(value)


def parse_weights(data: Any, source: str = "value.json") -> ValueModel:
    """A ``ValueModel`` from a weights file's JSON, or ``InputError`` with
    one line naming the field at fault."""
    if not isinstance(data, dict):
        raise InputError(f"{source}: the top level must be an object")
    if data.get("format") != FORMAT:
        raise InputError(f"{source}: format: must be {FORMAT!r}, not {data.get('format')!r}")
    out: list[dict[str, float]] = []
    for key, allowed in (("features", NAMES), ("multi", MULTI)):
        block = data.get(key)
        if not isinstance(block, dict):
            raise InputError(f"{source}: {key}: must be an object of name -> weight")
        parsed: dict[str, float] = {}
        for name, value in block.items():
            if name not in allowed:
                raise InputError(f"{source}: {key}.{name}: unknown feature")
            parsed[name] = _number(value, f"{source}: {key}.{name}")
        out.append(parsed)
    return ValueModel(out[0], out[1])


def load_weights(path: str | Path | None = None) -> ValueModel:
    """The weights of ``path`` (default: the shipped ``data/value.json``)."""
    if path is None:
        text = (resources.files("donutbox.ai") / "data" / "value.json").read_text()
        source = "value.json"
    else:
        source = str(path)
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise InputError(f"{source}: cannot read: {e.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{source}: not JSON: {e.msg} (line {e.lineno})") from None
    return parse_weights(data, source)


_MODEL: ValueModel | None = None


def model() -> ValueModel:
    """The shipped model, loaded on first use."""
    global _MODEL
    if _MODEL is None:
        _MODEL = load_weights()
    return _MODEL


def win_values(world: Position) -> list[float]:
    """Each player's chance to win from ``world`` by the shipped model (see
    the module's docstring): in (0, 1), summing to 1 (exactly 1/0 finished).
    ``world`` may be a sampled world or a view: only public fields are read."""
    m = _MODEL
    if m is None:
        m = model()
    return m.win_values(world)


def logit(p: float) -> float:
    """The inverse of the logistic (for tests and the fitter's reports)."""
    return math.log(p / (1.0 - p))


def dot(weights: dict[str, float], x: Sequence[float], q: float) -> float:
    """``z`` from base features ``x`` and phase ``q`` (the fitter's form)."""
    total = 0.0
    for name, value in zip(BASE, x, strict=True):
        total += weights.get(name, 0.0) * value
        if name in SCALED:
            total += weights.get(f"{name}*q", 0.0) * q * value
    return total
