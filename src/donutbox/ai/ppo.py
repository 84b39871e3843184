"""A learned agent: a small policy trained with PPO (examples/train_ppo.py).

The policy scores each legal move from the move's own features (a
pointer-style head: one score per candidate action, then a softmax over the
legal ones), so its output always matches the turn's action list, whatever
its length.  The features are computed from the player's view only (the
public counter, the player's own tray and the public scores):

- for a placement, what it does to the runs it touches: the points it
  scores now by sealing runs (for the player and for the others), the open
  boxes it leaves that the player / another player could box next, the size
  and open edges of the largest run it joins, how many neighbours it
  matches, whether it spends a Cinnamon Roll;
- for a box-it, its points and size; swap and pass are flags.

Points, who scores a sealed box and who may box one come from the rules'
scoring rule (``Rules.scoring_rule``).

``make_agent("ppo")`` loads the shipped weights (``data/ppo.pt``, a few
kilobytes) lazily and needs PyTorch (``pip install torch``); it plays the
highest-scoring move (``sample=True``: draws from the softmax).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from importlib import resources
from typing import Any, Final

from ..core import Move, PlayerView
from ..core.counter import DELIVERED_BIT, FLAVOUR_BITS, ROLL_BIT, Counter
from ..core.errors import DonutboxError
from ..core.game import card_codes
from ..core.geometry import OFFSET, OUTSIDE, STRIDE
from ..core.moves import BOX, PLACE, SWAP
from ..core.scoring import ScoringRule

#: Per-action features (see ``action_features``) and per-position features.
ACTION_FEATURES: Final = 16
GLOBAL_FEATURES: Final = 8
WEIGHTS: Final = "ppo.pt"
HIDDEN: Final = 64

#: Card-internal neighbours: NW-NE, NE-SE, SE-SW, SW-NW.
_INNER: Final = ((0, 1), (1, 2), (2, 3), (3, 0))


def _sealed_shares(
    scoring: ScoringRule, held: Sequence[int], players: int, me: int
) -> tuple[bool, bool]:
    """Does a box sealed by ``me`` score for ``me``, and for another player?
    (A box nobody holds counts for everyone: the features were trained so.)"""
    to = scoring.sealed_to(held, players, me)
    if not to:
        return True, players > 1
    return me in to, any(k != me for k in to)


def _place_features(
    counter: Counter, move: Move, me: int, players: int, scoring: ScoringRule
) -> list[float]:
    p = move.x + OFFSET + (move.y + OFFSET) * STRIDE
    codes = card_codes(move, me)
    cells = counter.cells
    run_of = counter.run_of
    runs = counter.runs
    # union-find over the card's 4 quadrants and the runs they join
    parent = [0, 1, 2, 3]

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in _INNER:
        if codes[a] & FLAVOUR_BITS == codes[b] & FLAVOUR_BITS:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[ra] = rb
    touched: dict[int, int] = {}  # run id -> edges the card covers
    joins: dict[int, int] = {}  # run id -> quadrant it joins
    empty = [0, 0, 0, 0]
    matches = 0
    neighbours = 0
    for q in range(4):
        flavour = codes[q] & FLAVOUR_BITS
        for off in OUTSIDE[q]:
            c = p + off
            code = cells.get(c)
            if code is None:
                empty[q] += 1
                continue
            neighbours += 1
            if code & DELIVERED_BIT:
                continue
            rid = run_of[c]
            touched[rid] = touched.get(rid, 0) + 1
            if code & FLAVOUR_BITS == flavour:
                matches += 1
                other = joins.get(rid)
                if other is None:
                    joins[rid] = q
                else:
                    ra, rb = find(other), find(q)
                    if ra != rb:
                        parent[ra] = rb
    # components: size, mine, others' best, rolls, open edges
    comp: dict[int, list[int]] = {}
    for q in range(4):
        r = find(q)
        part = comp.setdefault(r, [0, 0, 0, 0, 0, 0])  # size, -, -, -, rolls, open
        part[0] += 1
        part[4] += 1 if codes[q] & ROLL_BIT else 0
        part[5] += empty[q]
    held_by: dict[int, list[int]] = {r: [0] * players for r in comp}
    for r in comp:
        held_by[r][me] += comp[r][0]
    for rid, q in joins.items():
        run = runs[rid]
        r = find(q)
        part = comp[r]
        part[0] += len(run.cells)
        part[4] += run.rolls
        part[5] += run.open - touched[rid]
        h = held_by[r]
        for k in range(players):
            h[k] += run.held[k]
    mine_now = others_now = mine_next = others_next = 0.0
    biggest = 0
    biggest_open = 0
    for r, part in comp.items():
        size, rolls, open_ = part[0], part[4], part[5]
        h = held_by[r]
        points = scoring.points(size, rolls > 0)
        if size > biggest:
            biggest, biggest_open = size, open_
        if size < 3:
            continue
        if open_ <= 0:  # sealed by this card
            mine, others = _sealed_shares(scoring, h, players, me)
            if mine:
                mine_now += points
            if others:
                others_now += points
        else:
            if scoring.may_box(h[me], size):
                mine_next += points
            if any(scoring.may_box(h[k], size) for k in range(players) if k != me):
                others_next += points
    # runs touched but not joined may be sealed too
    for rid, edges in touched.items():
        if rid in joins:
            continue
        run = runs[rid]
        if run.open - edges <= 0 and len(run.cells) >= 3:
            points = scoring.run_points(run)
            mine, others = _sealed_shares(scoring, run.held, players, me)
            if mine:
                mine_now += points
            if others:
                others_now += points
    roll = 1.0 if "R" in move.face else 0.0
    return [
        1.0,
        0.0,
        0.0,
        mine_now / 10,
        others_now / 10,
        mine_next / 10,
        others_next / 10,
        biggest / 10,
        min(biggest_open, 12) / 12,
        matches / 8,
        neighbours / 8,
        len(joins) / 4,
        roll,
        0.0,
        0.0,
        0.0,
    ]


def action_features(view: PlayerView, moves: Sequence[Move]) -> list[list[float]]:
    """One feature row per move (``ACTION_FEATURES`` numbers), from the view only."""
    counter = view.counter
    me = view.player
    players = len(view.names)
    scoring = view.rules.scoring_rule
    out: list[list[float]] = []
    memo: dict[tuple[str, int, int, int, str], list[float]] = {}
    runs = counter.runs
    run_of = counter.run_of
    for move in moves:
        kind = move.kind
        if kind == PLACE:
            key = (move.face, move.x, move.y, move.rot, move.lock)
            row = memo.get(key)
            if row is None:
                row = memo[key] = _place_features(counter, move, me, players, scoring)
            out.append(row)
        elif kind == BOX:
            c = move.x + OFFSET + (move.y + OFFSET) * STRIDE
            run = runs[run_of[c]]
            held = run.held[:players]
            others = max((held[k] for k in range(players) if k != me), default=0)
            out.append(
                [
                    0.0,
                    1.0,
                    0.0,
                    scoring.run_points(run) / 10,
                    0.0,
                    0.0,
                    0.0,
                    len(run.cells) / 10,
                    min(run.open, 12) / 12,
                    held[me] / 10,
                    others / 10,
                    0.0,
                    1.0 if run.rolls else 0.0,
                    0.0,
                    0.0,
                    0.0,
                ]
            )
        else:
            row = [0.0] * ACTION_FEATURES
            row[13 if kind == SWAP else 14] = 1.0
            out.append(row)
    return out


def global_features(view: PlayerView) -> list[float]:
    """What the value head sees: score margin, cards left, Final Lap, open boxes."""
    me = view.player
    n = len(view.names)
    scores = view.scores
    best_other = max(scores[k] for k in range(n) if k != me)
    counter = view.counter
    scoring = view.rules.scoring_rule
    mine = others = 0.0
    for rid in counter.box_ids:
        run = counter.runs[rid]
        size = len(run.cells)
        points = scoring.run_points(run)
        if scoring.may_box(run.held[me], size):
            mine += points
        if any(scoring.may_box(run.held[k], size) for k in range(n) if k != me):
            others += points
    lap = view.final_lap_turns
    return [
        (scores[me] - best_other) / 20,
        view.cards_left / (30 * n),
        0.0 if lap is None else 1.0,
        mine / 20,
        others / 20,
        view.swap_streak / 10,
        1.0 if view.to_move == me else 0.0,
        1.0,
    ]


def build_net(torch: Any) -> Any:
    """The policy/value network (a ``torch.nn.Module``)."""
    nn = torch.nn

    class PointerPolicy(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.score = nn.Sequential(
                nn.Linear(ACTION_FEATURES + GLOBAL_FEATURES, HIDDEN),
                nn.Tanh(),
                nn.Linear(HIDDEN, HIDDEN),
                nn.Tanh(),
                nn.Linear(HIDDEN, 1),
            )
            self.value = nn.Sequential(
                nn.Linear(GLOBAL_FEATURES + ACTION_FEATURES, HIDDEN),
                nn.Tanh(),
                nn.Linear(HIDDEN, 1),
            )

        def forward(self, acts: Any, glob: Any, mask: Any) -> tuple[Any, Any]:
            """``acts`` (B, A, F), ``glob`` (B, G), ``mask`` (B, A) bool ->
            logits (B, A) with -inf off the mask, and values (B,)."""
            g = glob.unsqueeze(1).expand(-1, acts.shape[1], -1)
            logits = self.score(torch.cat([acts, g], dim=-1)).squeeze(-1)
            logits = logits.masked_fill(~mask, float("-inf"))
            m = mask.unsqueeze(-1).float()
            best = (acts * m).amax(dim=1)
            value = self.value(torch.cat([glob, best], dim=-1)).squeeze(-1)
            return logits, value

    return PointerPolicy()


def _torch() -> Any:
    try:
        import torch
    except ImportError as err:
        raise DonutboxError("the ppo agent needs PyTorch: pip install torch") from err
    return torch


class PPOAgent:
    """The trained pointer policy (module doc)."""

    name = "ppo"

    def __init__(self, weights: str | None = None, sample: bool = False) -> None:
        torch = _torch()
        self._torch = torch
        self.net = build_net(torch)
        if weights is None:
            ref = resources.files("donutbox.ai") / "data" / WEIGHTS
            with resources.as_file(ref) as path:
                state = torch.load(path, map_location="cpu", weights_only=True)
        else:
            state = torch.load(weights, map_location="cpu", weights_only=True)
        self.net.load_state_dict(state)
        self.net.eval()
        self.sample = sample

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        moves = view.legal_moves()
        if len(moves) == 1:
            return moves[0]
        torch = self._torch
        with torch.no_grad():
            acts = torch.tensor([action_features(view, moves)], dtype=torch.float32)
            glob = torch.tensor([global_features(view)], dtype=torch.float32)
            mask = torch.ones(acts.shape[:2], dtype=torch.bool)
            logits, _ = self.net(acts, glob, mask)
            logits = logits[0]
            if self.sample:
                probs = torch.softmax(logits, 0).tolist()
                return rng.choices(moves, weights=probs)[0]
            best = float(logits.max())
            top = [m for m, v in zip(moves, logits.tolist(), strict=True) if v == best]
        return top[0] if len(top) == 1 else rng.choice(top)


def make(**options: Any) -> PPOAgent:
    """``make_agent("ppo", **options)``: ``weights`` (a path; default the
    shipped ones), ``sample`` (draw from the policy instead of its best move)."""
    return PPOAgent(**options)


__all__ = ["ACTION_FEATURES", "GLOBAL_FEATURES", "PPOAgent", "action_features", "build_net", "make"]
