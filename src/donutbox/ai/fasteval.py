"""The heuristic evaluation (``evaluate.py``), computed faster for MCTS.

MCTS evaluates a position at the end of every playout and for every move it
considers when it widens the tree: thousands of times a second.  These
functions give exactly the same numbers as ``expected_scores`` and
``margin`` (a test compares them on many positions) but specialise the
common two-player case.  Games with more players use the general code.
Like it, they read a position only through ``evaluate.Position``, and what
a box is worth and who scores it only through the rules' scoring rule
(``Rules.scoring_rule``: its tables, read once per evaluation, and its
``sealed_to`` / ``end_to`` where a box is delivered).
"""

from __future__ import annotations

from itertools import islice
from typing import Final

from ..core import Counter, Game, Move, Run
from ..core.counter import DELIVERED_BIT, FLAVOUR_BITS, ROLL_BIT
from ..core.game import card_codes
from ..core.geometry import OUTSIDE, cell
from ..core.rules import GAME_INFO, Rules
from ..core.scoring import TABLE_SIZE, ScoringRule
from .evaluate import Position, expected_scores

TRAY_SIZE = GAME_INFO.tray_size
#: How far ``PlaceEvaluator.estimate`` may be from ``margin`` (far above
#: its rounding error, far below any real difference of evaluations).
ESTIMATE_ERROR: Final = 1e-6


def fast_scores(game: Position) -> list[float]:
    """``expected_scores(game)``, the same values, faster for two players."""
    if len(game.names) != 2:
        return expected_scores(game)
    s = game.scores
    to_move = game.to_move
    if to_move is None:  # finished
        return [float(s[0]), float(s[1])]
    v = values_of(game.rules.scoring_rule, len(game.counter.cells))
    return _two(game, s[0], s[1], to_move, None, v)


#: Held counts below this are memo keys of ``Values`` (a dealt game has at
#: most 480 donuts); larger ones, in principle a free game's, ask the rule.
_HELD_KEY: Final = 1024


class Values:
    """A scoring rule's numbers as the evaluations read them, for runs of up
    to ``most`` donuts: ``plain[size]`` / ``rolled[size]`` a box's points
    without / with a Cinnamon Roll, ``need[size]`` the donuts to hold to box
    it, and ``small_plain`` / ``small_rolled`` what a run of 2 counts for
    (half a box of 3, ``evaluate.expected_scores``); and who scores a box
    of two players, the rule's answers memoised (``sealed_to``, ``end_to``:
    pure functions of their arguments, so a racy fill by two threads at
    worst asks the rule twice)."""

    __slots__ = (
        "_ended",
        "_sealed",
        "need",
        "plain",
        "rolled",
        "scoring",
        "small_plain",
        "small_rolled",
    )

    def __init__(self, scoring: ScoringRule, most: int) -> None:
        self.scoring = scoring
        self.plain, self.rolled, self.need = scoring.tables(most)
        self.small_plain = 0.5 * self.plain[3]
        self.small_rolled = 0.5 * self.rolled[3]
        self._sealed: dict[int, tuple[int, ...]] = {}
        self._ended: dict[int, tuple[int, ...]] = {}

    def sealed_to(self, h0: int, h1: int, closer: int) -> tuple[int, ...]:
        """``scoring.sealed_to((h0, h1), 2, closer)``."""
        if h0 >= _HELD_KEY or h1 >= _HELD_KEY:
            return self.scoring.sealed_to((h0, h1), 2, closer)
        key = (h0 * _HELD_KEY + h1) * 2 + closer
        found = self._sealed.get(key)
        if found is None:
            found = self._sealed[key] = self.scoring.sealed_to((h0, h1), 2, closer)
        return found

    def end_to(self, h0: int, h1: int) -> tuple[int, ...]:
        """``scoring.end_to((h0, h1), 2)``."""
        if h0 >= _HELD_KEY or h1 >= _HELD_KEY:
            return self.scoring.end_to((h0, h1), 2)
        key = h0 * _HELD_KEY + h1
        found = self._ended.get(key)
        if found is None:
            found = self._ended[key] = self.scoring.end_to((h0, h1), 2)
        return found


#: ``Values`` per scoring rule, for the runs of any counter of fewer than
#: ``TABLE_SIZE`` donuts (the rule's own tables).  Shared by threads: a pure
#: function of its key, so a racy fill at worst makes an equal value twice.
_VALUES: Final[dict[ScoringRule, Values]] = {}


#: ``scoring.TABLE_SIZE`` (Final: the compiled search keeps it in a C static).
_TABLE_SIZE: Final = TABLE_SIZE


def values_of(scoring: ScoringRule, donuts: int) -> Values:
    """``scoring``'s ``Values`` for a counter of ``donuts`` donuts (no run
    of it is larger)."""
    if donuts < _TABLE_SIZE:
        found = _VALUES.get(scoring)
        if found is None:
            found = _VALUES[scoring] = Values(scoring, _TABLE_SIZE - 1)
        return found
    return Values(scoring, donuts)


def _two(game: Position, s0: int, s1: int, to_move: int, skip: object, v: Values) -> list[float]:
    """Two players' expected scores with banked scores ``s0``, ``s1``, ``to_move``
    to move, and the run ``skip`` (an id, or None) left out (``v``: the
    rules' scoring values, ``values_of``)."""
    counter = game.counter
    plain = v.plain
    rolled = v.rolled
    need = v.need
    e0 = float(s0)
    e1 = float(s1)
    lap = game.final_lap_turns
    if lap is not None:
        turns_left = float(lap)
    elif game.free:
        turns_left = 20.0
    else:
        turns_left = max(1.0, game.cards_left / 2)
    m6 = min(turns_left, 6.0)
    for rid, r in counter.runs.items():
        if rid == skip:
            continue
        cells = r.cells
        size = len(cells)
        if size < 2:
            continue
        held = r.held
        h0 = held[0]
        h1 = held[1]
        if size >= 3:
            value = float(rolled[size] if r.rolls else plain[size])
        else:
            value = v.small_rolled if r.rolls else v.small_plain
        risk = (r.open * 0.08 + 0.1) * m6 / 6.0
        if risk > 1.0:
            risk = 1.0
        if h0 > h1:
            safety = 1.0 - risk / (1.0 + (h0 - h1))
            if to_move == 0 and size >= 3 and safety < 0.95 and h0 >= need[size]:
                safety = 0.95
            e0 += value * safety
        elif h1 > h0:
            safety = 1.0 - risk / (1.0 + (h1 - h0))
            if to_move == 1 and size >= 3 and safety < 0.95 and h1 >= need[size]:
                safety = 0.95
            e1 += value * safety
        elif h0:
            # A tie: margin 0, the share split between both.
            safety = 1.0 - risk / 1.0
            if size >= 3 and safety < 0.95 and held[to_move] >= need[size]:
                safety = 0.95
            share = value * safety / 2
            e0 += share
            e1 += share
    return [e0, e1]


def fast_margin(game: Position, player: int) -> float:
    """``margin(game, player)``, the same value, faster for two players."""
    est = fast_scores(game)
    mine = est[player]
    others = max(e for p, e in enumerate(est) if p != player)
    if game.finished:
        d = game.boxes_delivered
        mine += 0.01 * d[player]
        others += 0.01 * max(x for p, x in enumerate(d) if p != player)
    return mine - others


def box_margin(game: Game, box: Move, player: int) -> float:
    """``fast_margin`` after the player to move (``player``) plays the box-it
    ``box``, without playing it: the run's points are banked, the run leaves
    the evaluation and the turn passes.  (In the Final Lap the move may end
    the game, so it is played on a copy.)"""
    if len(game.names) != 2 or game.final_lap_turns is not None:
        g = game.copy()
        g.play(box)
        return fast_margin(g, player)
    counter = game.counter
    rid = counter.run_id_at(box.x, box.y)
    assert rid is not None, "box_margin needs a legal box-it"
    r = counter.runs[rid]
    v = values_of(game.rules.scoring_rule, len(counter.cells))
    size = len(r.cells)
    points = v.rolled[size] if r.rolls else v.plain[size]
    s = game.scores
    s0 = s[0] + (points if player == 0 else 0)
    s1 = s[1] + (points if player == 1 else 0)
    e0, e1 = _two(game, s0, s1, 1 - player, rid, v)
    return e0 - e1 if player == 0 else e1 - e0


class _After:
    """What ``_two`` reads of the position after a placement (see ``place_margin``)."""

    __slots__ = ("cards_left", "counter", "final_lap_turns", "free", "rules")

    def __init__(
        self, rules: Rules, counter: Counter, final_lap_turns: int | None, cards_left: int
    ) -> None:
        self.rules = rules
        self.counter = counter
        self.final_lap_turns = final_lap_turns
        self.free = False
        self.cards_left = cards_left


class PlaceEvaluator:
    """``fast_margin`` after each placement of one position, without copying
    and playing the whole game: only the counter is copied and the card put
    down (``Counter.place``, the engine's own), and ``Game.play``'s
    bookkeeping of a placement is redone here (sealed boxes scored, the
    tray's draw, the Final Lap's start).  The same numbers as
    ``fast_margin(g)`` after ``g = game.copy(); g.play(move)``
    (tests/ai/test_fasteval.py compares them on every placement of many
    games), so the heuristic agent picks the same moves.

    In the Final Lap of two players every move is the last: the game's end
    is redone too (open boxes to their majority holders, the tie-break
    on boxes delivered), as ``Game._finish`` and ``fast_margin`` of a
    finished game do.  ``applies`` is False where this shortcut is not
    taken (then copy and play): more than two players, a free game, or a
    Final Lap of more than one turn left.
    """

    def __init__(self, game: Game, player: int) -> None:
        self.game = game
        self.player = player
        lap = game.final_lap_turns
        self.applies = (
            len(game.names) == 2 and not game.free and lap in (None, 1) and game.to_move == player
        )
        if not self.applies:
            return
        self._ends = lap is not None  # this move ends the game
        delivered = game.boxes_delivered
        self._d0 = delivered[0]
        self._d1 = delivered[1]
        tray = game.trays[player]
        pile = len(game.piles[player])
        # the draw after the card leaves the tray (Game.play); the Final Lap
        # starts if it empties the pile
        draws = min(TRAY_SIZE - (len(tray) - 1), pile) if len(tray) - 1 < TRAY_SIZE else 0
        self._lap_after = 1 if draws > 0 and pile == draws else None
        self._cards_left = game.cards_left - 1
        scoring = game.rules.scoring_rule
        # (a card adds 4 donuts: no run after it is larger than this)
        self._values = values_of(scoring, len(game.counter.cells) + 4)
        scores = game.scores
        self._s0 = scores[0]
        self._s1 = scores[1]
        self._delivered_now = (self._d0, self._d1)
        self._terms: dict[int, tuple[Run, int, float]] | None = None
        self._m6 = 0.0
        self._index: dict[int, int] = {}
        self._prefix: list[tuple[float, float]] = []
        self._beside_memo: dict[
            int, tuple[Beside, tuple[int, int, int, int], dict[int, RunStats]]
        ] = {}
        self._base: dict[int, tuple[float, float]] = {}

    def margin(self, move: Move) -> float:
        """``fast_margin`` for ``player`` after the (legal) placement ``move``."""
        p = cell(move.x, move.y)
        if self._ends:
            return self._last(p, move)
        counter, s0, s1 = self._place(p, move)
        e0, e1 = self._score_pair(counter, p, s0, s1)
        return e0 - e1 if self.player == 0 else e1 - e0

    def _last(self, p: int, move: Move) -> float:
        """``fast_margin`` after a placement that ends the game."""
        _, s0, s1, d0, d1 = self._end(p, move)
        if self.player == 0:
            mine, others, dm, do = float(s0), float(s1), d0, d1
        else:
            mine, others, dm, do = float(s1), float(s0), d1, d0
        mine += 0.01 * dm
        others += 0.01 * do
        return mine - others

    def _end(self, p: int, move: Move) -> tuple[Counter, int, int, int, int]:
        """The placement, then the end scoring (``Game._finish``): scores
        and boxes delivered."""
        counter, s0, s1 = self._place(p, move)
        d0, d1 = self._delivered_now
        runs = counter.runs
        v = self._values
        for rid in counter.box_ids:
            r = runs[rid]
            size = len(r.cells)
            points = v.rolled[size] if r.rolls else v.plain[size]
            held = r.held
            for p in v.end_to(held[0], held[1]):
                if p == 0:
                    s0 += points
                else:
                    s1 += points
        return counter, s0, s1, d0, d1

    def gain(self, move: Move) -> float:
        """The points ``player`` scores with the (legal) placement ``move``
        (``g.scores[player] - game.scores[player]`` after playing it on a copy)."""
        p = cell(move.x, move.y)
        if self._ends:
            s0, s1 = self._end(p, move)[1:3]
        else:
            s0, s1 = self._after(p, card_codes(move, self.player))[:2]
        return float(s0 - self._s0) if self.player == 0 else float(s1 - self._s1)

    def estimate(self, move: Move) -> float:
        """``margin(move)`` to within ``ESTIMATE_ERROR``, faster: the prefix
        sum of every run now, minus the terms of the runs beside the card
        (once per place), plus the terms of the runs that replace them or
        hold the card's donuts, worked out (``_after``) without copying the
        counter or putting the card down.  The same terms as ``margin``
        summed in another order, so it differs from it only by rounding:
        each sum has at most a few hundred terms of at most a few hundred
        points, an error below 1e-10."""
        p = cell(move.x, move.y)
        if self._ends:
            return self._last(p, move)
        if self._terms is None:
            self._setup()
        s0, s1, after = self._after(p, card_codes(move, self.player))
        base = self._base.get(p)
        if base is None:
            terms = self._terms
            assert terms is not None
            e0, e1 = self._prefix[-1]
            runs = self.game.counter.runs
            for rid in self._beside_memo[p][2]:
                side, amount = terms[id(runs[rid])][1:]
                if side == 0:
                    e0 -= amount
                elif side == 1:
                    e1 -= amount
                elif side == 2:
                    e0 -= amount
                    e1 -= amount
            base = self._base[p] = (e0, e1)
        e0, e1 = base
        e0 += s0 - self._s0
        e1 += s1 - self._s1
        to_move = 1 - self.player
        m6 = self._m6
        v = self._values
        for size, opens, rolls, h0, h1 in after:
            side, amount = _term_of(size, opens, rolls, h0, h1, to_move, m6, v)
            if side == 0:
                e0 += amount
            elif side == 1:
                e1 += amount
            elif side == 2:
                e0 += amount
                e1 += amount
        return e0 - e1 if self.player == 0 else e1 - e0

    def _beside(self, p: int) -> tuple[Beside, tuple[int, int, int, int], dict[int, RunStats]]:
        """What a card at ``p`` would touch (memoised per place): the
        not-delivered donuts beside it as ``(quadrant, flavour, run id)``,
        the empty cells beside each quadrant, and per run beside it
        ``(size, open once the card closes its edges, rolls, held 0, held
        1)``, as ``Counter.place`` counts them."""
        counter = self.game.counter
        cells = counter.cells
        run_of = counter.run_of
        runs = counter.runs
        beside: list[tuple[int, int, int]] = []
        opens = [0, 0, 0, 0]
        closed: dict[int, int] = {}
        for i, a, b in _OUTSIDE_BY_QUADRANT:
            for n in (p + a, p + b):
                v = cells.get(n)
                if v is None:
                    opens[i] += 1
                elif not v & DELIVERED_BIT:
                    rid = run_of[n]
                    closed[rid] = closed.get(rid, 0) + 1
                    beside.append((i, v & FLAVOUR_BITS, rid))
        stats: dict[int, RunStats] = {}
        for rid, count in closed.items():
            r = runs[rid]
            stats[rid] = (len(r.cells), r.open - count, r.rolls, r.held[0], r.held[1])
        found = self._beside_memo[p] = (
            tuple(beside),
            (opens[0], opens[1], opens[2], opens[3]),
            stats,
        )
        return found

    def _after(self, p: int, codes: tuple[int, int, int, int]) -> tuple[int, int, list[RunStats]]:
        """What ``Counter.place(p, codes)`` would do to the runs, without
        doing it: the banked scores after the boxes it seals, and
        ``(size, open, rolls, held 0, held 1)`` of every run it leaves that
        holds a donut of the card or lay beside it (sealed boxes delivered,
        so left out).  The same merging as ``Counter.place``: each donut of
        the card joins its same-flavour neighbours' runs and the
        same-flavour donuts of the card beside it."""
        found = self._beside_memo.get(p)
        beside, opens, stats = self._beside(p) if found is None else found
        f = (
            codes[0] & FLAVOUR_BITS,
            codes[1] & FLAVOUR_BITS,
            codes[2] & FLAVOUR_BITS,
            codes[3] & FLAVOUR_BITS,
        )
        group = _CARD_GROUPS[f[0] | f[1] << 2 | f[2] << 4 | f[3] << 6]
        label = [0, 1, 2, 3]  # union-find over the card's groups
        joined: dict[int, int] = {}  # run id -> a group it joins
        for i, flavour, rid in beside:
            if flavour != f[i]:
                continue
            g = group[i]
            while label[g] != g:
                g = label[g]
            h = joined.get(rid)
            if h is None:
                joined[rid] = g
                continue
            while label[h] != h:
                h = label[h]
            if h != g:
                label[h] = g
        me = self.player
        sums: dict[int, list[int]] = {}
        for i in range(4):
            g = group[i]
            while label[g] != g:
                g = label[g]
            t = sums.get(g)
            if t is None:
                t = sums[g] = [0, 0, 0, 0, 0]
            t[0] += 1
            t[1] += opens[i]
            if codes[i] & ROLL_BIT:
                t[2] += 1
            t[3 + me] += 1
        after: list[RunStats] = []
        for rid, st in stats.items():
            h = joined.get(rid)
            if h is None:
                after.append(st)
                continue
            while label[h] != h:
                h = label[h]
            t = sums[h]
            t[0] += st[0]
            t[1] += st[1]
            t[2] += st[2]
            t[3] += st[3]
            t[4] += st[4]
        for t in sums.values():
            after.append((t[0], t[1], t[2], t[3], t[4]))
        s0 = self._s0
        s1 = self._s1
        if any(run[1] == 0 and run[0] >= 3 for run in after):
            kept: list[RunStats] = []
            v = self._values
            for run in after:
                size, opened, rolls, h0, h1 = run
                if opened or size < 3:
                    kept.append(run)
                    continue
                points = v.rolled[size] if rolls else v.plain[size]
                for p in v.sealed_to(h0, h1, me):
                    if p == 0:
                        s0 += points
                    else:
                        s1 += points
            after = kept
        return s0, s1, after

    def _place(self, p: int, move: Move) -> tuple[Counter, int, int]:
        """The counter after the placement and the banked scores (the boxes
        delivered by it in ``_delivered``)."""
        me = self.player
        counter = self.game.counter.copy()
        sealed = counter.place(p, card_codes(move, me))
        s0 = self._s0
        s1 = self._s1
        d0 = self._d0
        d1 = self._d1
        v = self._values
        for r in sealed:
            size = len(r.cells)
            if size < 3:
                continue
            points = v.rolled[size] if r.rolls else v.plain[size]
            held = r.held
            for p in v.sealed_to(held[0], held[1], me):
                if p == 0:
                    s0 += points
                    d0 += 1
                else:
                    s1 += points
                    d1 += 1
        self._delivered_now = (d0, d1)
        return counter, s0, s1

    def _setup(self) -> None:
        lap = self._lap_after
        turns_left = float(lap) if lap is not None else max(1.0, self._cards_left / 2)
        self._m6 = min(turns_left, 6.0)
        # the sums of _two over every prefix of the runs as they are now
        # (in the counter's order), and each run id's place in that order
        terms = self._terms = {}
        runs = self.game.counter.runs
        self._index = {rid: i for i, rid in enumerate(runs)}
        e0 = float(self._s0)
        e1 = float(self._s1)
        prefix = [(e0, e1)]
        v = self._values
        for r in runs.values():
            t = terms[id(r)] = (r, *_term(r, 1 - self.player, self._m6, v))
            side = t[1]
            if side == 0:
                e0 += t[2]
            elif side == 1:
                e1 += t[2]
            elif side == 2:
                share = t[2]
                e0 += share
                e1 += share
            prefix.append((e0, e1))
        self._prefix = prefix

    def _score_pair(self, counter: Counter, p: int, s0: int, s1: int) -> tuple[float, float]:
        """``_two(after, s0, s1, 1 - player, None)`` for the counter after a
        placement at ``p``: the same sums in the same order.  A placement
        changes (replaces or removes) only runs with a donut beside the card
        and adds new ones at the end of the runs' order, so the runs before
        the first of those in the order are the same objects as before it:
        their sum is taken from the prefix sums (when no box was sealed, so
        the banked scores are the same), the rest summed here with each
        run's term from a memo when it is a run the placement left alone (a
        run is an immutable value: the same object has the same term)."""
        if self._terms is None:
            self._setup()
        terms = self._terms
        assert terms is not None
        to_move = 1 - self.player
        m6 = self._m6
        v = self._values
        start = 0
        if s0 == self._s0 and s1 == self._s1:
            run_of = self.game.counter.run_of
            index = self._index
            start = len(index)
            for off in _AROUND:
                rid = run_of.get(p + off)
                if rid is not None:
                    i = index[rid]
                    if i < start:
                        start = i
            e0, e1 = self._prefix[start]
        else:
            e0 = float(s0)
            e1 = float(s1)
        for r in islice(counter.runs.values(), start, None):
            t = terms.get(id(r))
            if t is None or t[0] is not r:
                t = terms[id(r)] = (r, *_term(r, to_move, m6, v))
            side = t[1]
            if side == 0:
                e0 += t[2]
            elif side == 1:
                e1 += t[2]
            elif side == 2:
                share = t[2]
                e0 += share
                e1 += share
        return e0, e1


#: The cells beside a card, from its NW cell (two per quadrant).
_AROUND: Final = tuple(off for pair in OUTSIDE for off in pair)
#: Per quadrant of a card: its index and the two cells beside it.
_OUTSIDE_BY_QUADRANT: Final = tuple((i, a, b) for i, (a, b) in enumerate(OUTSIDE))


def _card_groups(key: int) -> tuple[int, int, int, int]:
    """Per card donut (NW, NE, SE, SW), a label shared by the donuts of the
    card that join each other: same flavour, side by side (flavours packed
    two bits each in ``key``)."""
    f = [(key >> (2 * i)) & 3 for i in range(4)]
    label = [0, 1, 2, 3]
    for a, b in ((0, 1), (1, 2), (2, 3), (3, 0)):
        if f[a] == f[b] and label[a] != label[b]:
            old = label[b]
            label = [label[a] if x == old else x for x in label]
    return label[0], label[1], label[2], label[3]


_CARD_GROUPS: Final = tuple(_card_groups(key) for key in range(256))
#: A run's numbers as ``_term_of`` reads them: size, open, rolls, held 0, held 1.
RunStats = tuple[int, int, int, int, int]
#: The donuts beside a place: (quadrant, flavour, run id).
Beside = tuple[tuple[int, int, int], ...]


def _term_of(
    size: int, opens: int, rolls: int, h0: int, h1: int, to_move: int, m6: float, v: Values
) -> tuple[int, float]:
    """``_term`` of a run given by its numbers: its size, open edges, Cinnamon
    Rolls and the quadrants each player holds in it (``v``: the scoring
    rule's values)."""
    if size < 2:
        return -1, 0.0
    if size >= 3:
        value = float(v.rolled[size] if rolls else v.plain[size])
    else:
        value = v.small_rolled if rolls else v.small_plain
    risk = (opens * 0.08 + 0.1) * m6 / 6.0
    if risk > 1.0:
        risk = 1.0
    # (the box-it table read last: the cheaper tests rule most runs out)
    if h0 > h1:
        safety = 1.0 - risk / (1.0 + (h0 - h1))
        if to_move == 0 and size >= 3 and safety < 0.95 and h0 >= v.need[size]:
            safety = 0.95
        return 0, value * safety
    if h1 > h0:
        safety = 1.0 - risk / (1.0 + (h1 - h0))
        if to_move == 1 and size >= 3 and safety < 0.95 and h1 >= v.need[size]:
            safety = 0.95
        return 1, value * safety
    if h0:
        safety = 1.0 - risk / 1.0
        if size >= 3 and safety < 0.95 and (h0 if to_move == 0 else h1) >= v.need[size]:
            safety = 0.95
        return 2, value * safety / 2
    return -1, 0.0


def _term(r: Run, to_move: int, m6: float, v: Values) -> tuple[int, float]:
    """One run's term of ``_two``: who gets it (0, 1, 2 for both halves of a
    tie, -1 nobody) and how much (``_term_of`` on the run's numbers)."""
    held = r.held
    return _term_of(len(r.cells), r.open, r.rolls, held[0], held[1], to_move, m6, v)
