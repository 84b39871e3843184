"""Information-set Monte Carlo tree search (single-observer ISMCTS).

The searching player cannot see the other trays or any pile's order.  Each
iteration samples one *world* consistent with its view (``sample_world``),
then walks one shared tree of moves, using only the children whose moves are
legal in that world (each child counts how often it was available, for the
UCB exploration term: Cowling, Powley & Whitehouse 2012).

- Root: every legal move is ranked by the one-ply heuristic; the best
  ``root_width`` are the candidates (the rest are rarely worth a simulation
  and would spread a one-second budget thin).
- Below the root, children are added by progressive widening; each new
  child is the best of a few moves drawn by ``sample_move`` (no full move
  list) and every possible box-it, judged by the evaluation
  (``fasteval.py``: the heuristic's numbers, computed faster).
  With ``full_replies`` N, a new child in the first N plies below the root
  is instead the best of *all* the legal moves by the one-ply evaluation
  (the heuristic's choice with the sampled cards; each node keeps its
  moves' values, which do not depend on the hidden cards).  With
  ``ranked_replies``, a new child there is the best legal move that is not a
  child yet (progressive widening in the heuristic's order), so the tree
  also models the opponent's second and third best replies.
- Playouts: ``playout_depth`` (2) sampled moves, then the position is scored by
  the heuristic evaluation: a squashed expected-score margin per player
  (``leaf="fitted"``: ``value.win_values``, fitted on self-play outcomes).
- Early stopping (off by default): ``stop_lead`` (when the choice can no
  longer change) or ``stop_z`` / ``stop_delta`` (when no candidate can be
  better than the choice by ``stop_delta`` in value, with ``stop_z``
  standard errors to spare).

Budget: ``seconds`` or ``iterations``, whichever is given.  ``clock`` says how
seconds are measured: ``wall`` (default, for interactive play) or ``cpu``
(the thread's CPU time: results independent of the machine's load).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from ..core import Game, InputError, Move, PlayerView
from ..core.moves import BOX, PLACE
from ..core.sampling import sample_move
from ..core.worlds import sample_world
from .fasteval import ESTIMATE_ERROR, PlaceEvaluator, box_margin, fast_margin, fast_scores
from .simple import rank_moves
from .value import win_values

EXPLORATION = 0.7
#: How often a playout move boxes a run when it can (sample_move never does).
BOX_RATE = 0.2
#: Scale of the squashing of expected-score margins into (0, 1).
MARGIN_SCALE = 20.0
#: How the ``seconds`` budget is measured: ``wall`` (elapsed time, for
#: interactive play) or ``cpu`` (CPU time of the searching thread, so that a
#: loaded machine does not weaken the agent: for benchmarks and the lab).
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}
#: Leaf evaluations (the ``leaf`` option).
LEAVES = ("margin", "fitted")


class Node:
    __slots__ = (
        "avail",
        "children",
        "exact",
        "move",
        "mover",
        "parent",
        "replies",
        "sq",
        "total",
        "visits",
    )

    def __init__(self, move: Move | None, parent: Node | None, mover: int) -> None:
        self.move = move
        self.parent = parent
        self.mover = mover  # the player who made ``move``
        self.children: dict[Move, Node] = {}
        self.visits = 0
        self.total = 0.0
        self.sq = 0.0  # sum of the squared values (for the confidence stop)
        self.avail = 1
        #: One-ply values of the moves tried here by ``_best_reply`` (the
        #: same in every world: below).
        self.replies: dict[Move, float] | None = None
        self.exact: dict[Move, float] | None = None


class MctsAgent:
    name = "mcts"

    def __init__(
        self,
        seconds: float | None = None,
        iterations: int | None = None,
        root_width: int = 16,
        playout_depth: int = 2,
        widening: float = 1.5,
        expand_samples: int = 4,
        prior_visits: int = 3,
        margin_scale: float = MARGIN_SCALE,
        clock: str = "wall",
        exploration: float = EXPLORATION,
        stop_lead: float | None = None,
        min_iterations: int = 64,
        playout_samples: int = 1,
        # The options below are checked here and refused with an InputError
        # naming them, so they are typed ``object``: a compiled (mypyc)
        # function would refuse a wrong type itself, with a TypeError that
        # names no option, before the check could run.
        full_replies: object = 0,
        stop_z: object = None,
        stop_delta: object = 0.0,
        leaf: object = "margin",
        ranked_replies: object = False,
    ) -> None:
        if seconds is None and iterations is None:
            seconds = 1.0
        self.seconds = seconds
        self.iterations = iterations
        self.root_width = root_width
        self.playout_depth = playout_depth
        self.widening = widening
        self.expand_samples = expand_samples
        self.prior_visits = prior_visits
        self.margin_scale = margin_scale
        self.exploration = exploration
        if stop_lead is not None and not 0.0 < stop_lead <= 1.0:
            raise InputError(f"stop_lead must be in (0, 1], not {stop_lead!r}")
        #: Early stopping: stop when the most visited root move leads the
        #: runner-up by more than ``stop_lead`` times the iterations left
        #: (1.0: only when the choice can no longer change).  None: never.
        self.stop_lead = stop_lead
        self.min_iterations = min_iterations
        #: Moves a playout step chooses from (1: a random move; more: the best
        #: of that many sampled moves and the box-its, by the evaluation).
        self.playout_samples = playout_samples
        if isinstance(full_replies, bool) or not isinstance(full_replies, int) or full_replies < 0:
            raise InputError(f"full_replies must be a whole number >= 0, not {full_replies!r}")
        #: Tree plies below the root (1: the first reply to our move) where a
        #: new child is the best of *all* the legal moves in the sampled world
        #: by the one-ply evaluation (the heuristic's choice), not the best of
        #: ``expand_samples`` sampled ones.
        self.full_replies: int = full_replies
        if stop_z is not None and not (isinstance(stop_z, (int, float)) and 0.0 < stop_z < 100.0):
            raise InputError(f"stop_z must be a number in (0, 100), not {stop_z!r}")
        #: Confidence stop: stop when the most visited root move's mean value
        #: exceeds every other candidate's by more than ``stop_z`` standard
        #: errors of the difference (after ``min_iterations``).  None: never.
        self.stop_z: float | None = None if stop_z is None else float(stop_z)
        if not (isinstance(stop_delta, (int, float)) and 0.0 <= stop_delta < 0.5):
            raise InputError(f"stop_delta must be a number in [0, 0.5), not {stop_delta!r}")
        #: With ``stop_z``: also stop when no other candidate can be better
        #: than the most visited by more than ``stop_delta`` (in value, 0..1):
        #: its mean minus the leader's, plus ``stop_z`` standard errors, is
        #: below ``stop_delta`` for every candidate.  0: only a clear best.
        self.stop_delta: float = float(stop_delta)
        if not isinstance(leaf, str) or leaf not in LEAVES:
            raise InputError(f"leaf must be one of {', '.join(LEAVES)}, not {str(leaf)[:40]!r}")
        #: How a leaf is scored: ``margin`` (the squashed expected-score
        #: margin of ``fasteval``) or ``fitted`` (``value.win_values``: each
        #: player's winning chance, fitted on self-play outcomes).
        self.leaf: str = leaf
        if not isinstance(ranked_replies, bool):
            raise InputError(
                f"ranked_replies must be true or false, not {str(ranked_replies)[:40]!r}"
            )
        #: With ``full_replies``: a new child at those plies is the best legal
        #: move (by the one-ply evaluation) that is not a child yet, instead of
        #: the best legal move (which is usually a child already, so that the
        #: tree there holds only the heuristic's choice for each tray).
        self.ranked_replies: bool = ranked_replies
        if clock not in CLOCKS:
            raise InputError(f"clock must be one of {', '.join(CLOCKS)}, not {clock!r}")
        self.clock = clock
        self._now = CLOCKS[clock]
        self.last_iterations = 0

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        moves = view.legal_moves()
        if len(moves) == 1:
            return moves[0]
        root = self._search(view, moves, rng, None)
        best = max(root.children.values(), key=lambda c: (c.visits, c.total))
        assert best.move is not None
        return best.move

    def search(
        self, view: PlayerView, rng: random.Random, include: Move | None = None
    ) -> list[tuple[Move, int, float]]:
        """The root's candidates after a search from ``view`` (budget as for
        ``choose``), best first (most visits, then most value, as ``choose``
        picks): (move, visits, mean value for ``view.player`` in 0..1).
        ``include``: a legal move made a candidate even if the heuristic's
        ranking leaves it out (game analysis asks about the move played).
        A position with one legal move is searched too (its value is asked
        for)."""
        root = self._search(view, view.legal_moves(), rng, include)
        ranked = sorted(root.children.values(), key=lambda c: (c.visits, c.total), reverse=True)
        return [(c.move, c.visits, c.total / c.visits) for c in ranked if c.move is not None]

    def _search(
        self, view: PlayerView, moves: list[Move], rng: random.Random, include: Move | None
    ) -> Node:
        now = self._now
        start = now()
        ranked = rank_moves(view, moves, rng)
        candidates = ranked[: self.root_width]
        if include is not None and all(m != include for _, m in candidates):
            candidates += [(v, m) for v, m in ranked if m == include]
        root = Node(None, None, -1)
        world = sample_world(view, rng) if self.leaf == "fitted" else None
        for value, move in candidates:
            child = root.children[move] = Node(move, root, view.player)
            # Prior knowledge: start each candidate from the heuristic's
            # opinion, worth ``prior_visits`` simulations, so that a small
            # budget never does worse than the heuristic alone (with the
            # fitted leaf: that evaluation of the position after the move).
            child.visits = self.prior_visits
            if world is not None:
                after = world.copy()
                after.play(move)
                prior = win_values(after)[view.player]
            else:
                prior = _squash(value, self.margin_scale)
            child.total = self.prior_visits * prior
            child.sq = self.prior_visits * prior * prior
            root.visits += self.prior_visits
        deadline = None if self.seconds is None else start + self.seconds
        done = 0
        stop_lead = self.stop_lead
        stop_z = self.stop_z
        while True:
            if self.iterations is not None and done >= self.iterations:
                break
            if deadline is not None and done and now() >= deadline:
                break
            if (
                stop_lead is not None
                and done >= self.min_iterations
                and done % 16 == 0
                and self._settled(root, done, now() - start, stop_lead)
            ):
                break
            if (
                stop_z is not None
                and done >= self.min_iterations
                and done % 16 == 0
                and _clear(root, stop_z, self.stop_delta)
            ):
                break
            self._iterate(root, view, rng)
            done += 1
        self.last_iterations = done
        return root

    def _settled(self, root: Node, done: int, spent: float, stop_lead: float) -> bool:
        """Whether the most visited root move leads the runner-up by more
        than ``stop_lead`` times the iterations the budget has left (at the
        rate so far, for a time budget)."""
        if len(root.children) < 2:
            return True
        left = math.inf
        if self.iterations is not None:
            left = float(self.iterations - done)
        if self.seconds is not None:
            rate = done / spent if spent > 0 else math.inf
            left = min(left, (self.seconds - spent) * rate)
        first = second = 0
        for c in root.children.values():
            v = c.visits
            if v > first:
                first, second = v, first
            elif v > second:
                second = v
        return first - second > stop_lead * left

    # One iteration: sample a world, select/expand, play out, back up.
    def _iterate(self, root: Node, view: PlayerView, rng: random.Random) -> None:
        world = sample_world(view, rng)
        explore = self.exploration
        node = root
        depth = 0  # the tree ply of ``node`` (0: the root)
        while not world.finished:
            mover = world.to_move
            assert mover is not None
            if node is root:
                legal = list(root.children.values())
            else:
                legal = [c for c in node.children.values() if world.is_legal(c.move)]  # type: ignore[arg-type]
                if len(node.children) < self.widening * math.sqrt(node.visits + 1) or not legal:
                    if depth <= self.full_replies:
                        move = self._best_reply(world, node)
                    else:
                        move = self._candidate(world, rng)
                    child = node.children.get(move)
                    if child is None:
                        child = node.children[move] = Node(move, node, mover)
                        world.play(move)
                        node = child
                        break
                    if child not in legal:
                        legal.append(child)
            for c in legal:
                c.avail += 1
            # max(legal, key=UCB) written out (the first of equal best ones):
            # mypyc cannot compile a lambda that closes over this loop's
            # variables.
            node = legal[0]
            best = _ucb(node, rng, explore)
            for c in legal[1:]:
                value = _ucb(c, rng, explore)
                if value > best:
                    node, best = c, value
            world.play(node.move)  # type: ignore[arg-type]
            depth += 1
        values = self._playout(world, rng)
        up: Node | None = node
        while up is not None:
            up.visits += 1
            if up.mover >= 0:
                v = values[up.mover]
                up.total += v
                up.sq += v * v
            up = up.parent

    def _best_reply(self, world: Game, node: Node) -> Move:
        """The move of the player to move in ``world`` after which the
        one-ply evaluation is best for them: the heuristic agent's choice
        with ``world``'s cards (as ``simple.best_moves``: placements
        estimated by ``PlaceEvaluator``, those within twice
        ``ESTIMATE_ERROR`` of the best evaluated exactly; the first of
        equal ones).

        The evaluation reads only public numbers (the counter, scores, the
        sizes of trays and piles), which the moves from the root fix: a
        move's value at ``node`` is the same in every world, so it is kept
        in ``node.replies`` and only the legal moves (which depend on the
        world's tray) are listed again."""
        mover = world.to_move
        assert mover is not None
        known = node.replies
        if known is None:
            known = node.replies = {}
        moves = world.legal_moves()
        if self.ranked_replies:
            # The best move that is not a child yet (all of them children:
            # the best of all, an existing child).
            fresh = [m for m in moves if m not in node.children]
            if fresh:
                moves = fresh
        places: PlaceEvaluator | None = None
        values = []
        for move in moves:
            value = known.get(move)
            if value is None:
                if places is None:
                    places = PlaceEvaluator(world, mover)
                kind = move.kind
                if places.applies and kind == PLACE:
                    value = places.estimate(move)
                elif kind == BOX:
                    value = box_margin(world, move, mover)
                else:
                    g = world.copy()
                    g.play(move)
                    value = fast_margin(g, mover)
                known[move] = value
            values.append(value)
        top = max(values)
        close = [i for i, v in enumerate(values) if v >= top - 2 * ESTIMATE_ERROR]
        if len(close) == 1:
            return moves[close[0]]
        # Estimates this close: the exact values decide (kept too).
        exact = node.exact
        if exact is None:
            exact = node.exact = {}
        best = moves[close[0]]
        best_value = -math.inf
        for i in close:
            move = moves[i]
            value = exact.get(move)
            if value is None:
                if places is None:
                    places = PlaceEvaluator(world, mover)
                exact_place = places.applies and move.kind == PLACE
                value = places.margin(move) if exact_place else values[i]
                exact[move] = value
            if value > best_value:
                best, best_value = move, value
        return best

    def _candidate(self, world: Game, rng: random.Random) -> Move:
        """A plausible move for the player to move: the best of a few sampled
        ones by the heuristic evaluation (so the tree models opponents who
        contest boxes and take what is on offer, not random ones)."""
        return self._best_of(world, rng, self.expand_samples)

    def _best_of(self, world: Game, rng: random.Random, samples: int) -> Move:
        """The best by the evaluation, for the player to move, of every
        box-it and ``samples`` moves drawn by ``sample_move``."""
        mover = world.to_move
        assert mover is not None
        best: Move | None = None
        best_gain = -math.inf
        # Box-its are never drawn by sample_move: offer them explicitly, or the
        # tree would never see an opponent bank a contested box.
        for move in world.box_moves():
            gain = box_margin(world, move, mover)
            if gain > best_gain:
                best, best_gain = move, gain
        for _ in range(samples):
            move = sample_move(world, rng)
            g = world.copy()
            g.play(move)
            gain = fast_margin(g, mover)
            if gain > best_gain:
                best, best_gain = move, gain
        assert best is not None
        return best

    def _playout(self, world: Game, rng: random.Random) -> list[float]:
        for _ in range(self.playout_depth):
            if world.finished:
                break
            if self.playout_samples > 1:
                world.play(self._best_of(world, rng, self.playout_samples))
                continue
            boxes = world.box_moves() if rng.random() < BOX_RATE else None
            world.play(boxes[rng.randrange(len(boxes))] if boxes else sample_move(world, rng))
        if self.leaf == "fitted":
            return win_values(world)
        est = fast_scores(world)
        n = len(est)
        out = []
        for p in range(n):
            other = max(e for q, e in enumerate(est) if q != p)
            out.append(_squash(est[p] - other, self.margin_scale))
        return out


def _clear(root: Node, z: float, delta: float) -> bool:
    """Whether no other root candidate can be better than the most visited
    (``choose``'s pick) by ``delta`` or more: for each, its mean value minus
    the leader's, plus ``z`` standard errors of that difference, is below
    ``delta`` (with ``delta`` 0: the leader has the best mean, ahead of
    every other by more than ``z`` standard errors)."""
    children = list(root.children.values())
    if len(children) < 2:
        return True
    lead = max(children, key=lambda c: (c.visits, c.total))
    n = lead.visits
    if any(c.visits < 2 for c in children):  # no spread yet (prior_visits=0)
        return False
    mean = lead.total / n
    var = max(lead.sq / n - mean * mean, 1e-6) / n
    for c in children:
        if c is lead:
            continue
        m = c.visits
        other = c.total / m
        se = math.sqrt(var + max(c.sq / m - other * other, 1e-6) / m)
        if other - mean + z * se >= delta:
            return False
    return True


def _squash(margin: float, scale: float) -> float:
    """An expected-score margin as a value in (0, 1)."""
    return 1.0 / (1.0 + math.exp(-margin / scale))


def _ucb(c: Node, rng: random.Random, explore: float) -> float:
    """Mean value plus exploration by availability: a child counts the
    iterations in which its move was legal (``avail``), not its parent's
    visits (single-observer ISMCTS)."""
    if c.visits == 0:
        return 1e9 + rng.random()
    return c.total / c.visits + explore * math.sqrt(math.log(c.avail + 1) / c.visits)
