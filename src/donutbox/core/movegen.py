"""Move generation: the legal actions of a position, shared by ``Game`` and
``PlayerView`` (both ask ``legal_moves`` here, neither imports the other).

This is the hot path of every AI and of move listing, so placements are
looked up in memo tables that are pure functions of their keys (bounded in
size):

- per matching rule, face and requirement, the fitting (rotation, lock)
  choices (``MatchRule.fits``);
- per face and place, each move object once, in a list by slot (reused
  whenever the place's requirement changes back and forth);
- per face and (place, requirement), that requirement's fitting slots and
  the place's list of moves by slot, which most places keep from one ply to
  the next: lists indexed by the pair's place id (see ``Counter.places``),
  bounded by the ids' renumbering.  Listing picks the moves out by slot:
  no list is kept per (face, place, requirement).

The tables are keyed by the matching rule object (``rules.match_rule``).
Those indexed by place, position and requirement ids belong to the
calling thread's numbering of them (``counter.Numbering.tables``: one per
thread, fetched once per listing), so threads listing moves at once share
none and take no lock.  The memo tables shared by the process
(``MatchRule.fits``, ``fit_slots_of``'s, the box-it moves, ``matching``'s)
hold pure functions of their keys: two threads may both fill an entry,
with equal values, and each dict operation is atomic under the
interpreter lock, so a reader sees an entry whole or not at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter
from typing import Any, Final

from .counter import Counter, Numbering, Run, numbering
from .geometry import OFFSET, STRIDE, xy
from .matching import SLOT_LOCK, SLOT_ROT, SLOTS, fit_slots
from .moves import BOX, PASS, PLACE, SWAP, Move
from .policy import MatchRule
from .scoring import ScoringRule


def legal_moves(
    counter: Counter,
    match: MatchRule,
    scoring: ScoringRule,
    faces: list[str],
    player: int,
    pile: int | None,
) -> list[Move]:
    """Every legal action of ``player`` (to move) holding ``faces`` (distinct,
    in tray order): placements, box-its (``scoring`` says which boxes a
    player may box), and when nothing can be placed a swap per face or a
    pass.  ``pile``: the size of the player's pile, or None in a free game
    (no swaps or passes)."""
    out = placements(counter, faces, match)
    placed = bool(out)
    out += box_moves(counter, player, scoring)
    if pile is not None and not placed:
        if pile:
            out.extend(Move(SWAP, f) for f in faces)
        else:
            out.append(_PASS)
    return out


def distinct(faces: list[str]) -> list[str]:
    """The faces each once, in order of first appearance (as
    ``list(dict.fromkeys(faces))``, which the compiled core calls as a
    Python-level class method: a tray holds a handful)."""
    out: list[str] = []
    for face in faces:
        if face not in out:
            out.append(face)
    return out


def can_place(counter: Counter, match: MatchRule, faces: Iterable[str]) -> bool:
    """Can any of ``faces`` be placed anywhere on the counter?"""
    faces = set(faces)
    fits = match.fits
    for key in {pk & 0xFFFF for pk in counter.places.values()}:
        for face in faces:
            if fits(face, key):
                return True
    return False


def placements(counter: Counter, faces: list[str], match: MatchRule) -> list[Move]:
    """Every legal placement of these faces on the counter, lock choices included."""
    out: list[Move] = []
    if not faces:
        return out
    # The counter's places in this thread's numbering, whose memo lists
    # are indexed by them (a new numbering starts with none).
    # (a list: the compiled core walks a dict's values far more slowly, and
    # this is walked once per face)
    nb = numbering()
    places = list(counter.numbered_places(nb).values())
    tables: dict[str, _FaceTable] | None = nb.tables.get(match)
    if tables is None:
        tables = nb.tables[match] = {}
    n = len(nb.place_of)
    for face in faces:
        table = tables.get(face)
        if table is None:
            table = tables[face] = _FaceTable(face, match, nb)
        # Per place id (an index, not a hash look-up, per (face, place)):
        # the fitting slots (None: not looked up yet) and the position's
        # moves by slot.  No list is kept per (face, place id): the moves
        # are picked out of the position's list by slot, so a new pair
        # makes no object the collector would then walk.
        if table.seen != n:
            table.grow(n)
        slots_at = table.slots_at
        made_at = table.made_at
        for pk in places:
            pid = pk >> 16
            options = slots_at[pid]
            if options is None:
                options = table.build(pk)
            if options:
                made = made_at[pid]
                for slot in options:
                    out.append(made[slot])
    return out


def fit_slots_of(match: MatchRule, face: str, key: int) -> tuple[int, ...]:
    """``match.fits(face, key)`` as slots (``matching.SLOT_ROT`` /
    ``SLOT_LOCK``), memoised per rule, face and requirement for the
    process (a pure function; ``setdefault``: two threads adding a rule or
    a face at once keep one entry)."""
    memo = _FIT_SLOTS.get(match)
    if memo is None:
        memo = _FIT_SLOTS.setdefault(match, _RuleSlots(match))
    by_key = memo.by_face.get(face)
    if by_key is None:
        by_key = memo.by_face.setdefault(face, {})
    options = by_key.get(key)
    if options is None:
        options = by_key[key] = fit_slots(face, key, memo.accept)
    return options


class _RuleSlots:
    """``fit_slots_of``'s memo of one matching rule: its accept table, and
    per face the fitting slots per requirement (bounded by faces x
    requirements)."""

    __slots__ = ("accept", "by_face")

    def __init__(self, match: MatchRule) -> None:
        self.accept = match.accept_table()
        self.by_face: dict[str, dict[int, tuple[int, ...]]] = {}


class _FaceTable:
    """Memo tables of one face under one matching rule, indexed by the ids
    of one thread's numbering ``nb`` (see the module doc)."""

    __slots__ = ("accept", "by_pos", "by_req", "face", "made_at", "nb", "seen", "slots_at")

    def __init__(self, face: str, match: MatchRule, nb: Numbering) -> None:
        self.face = face
        self.accept = match.accept_table()
        self.nb = nb
        #: Per place id (``Counter.places``): the fitting slots of its
        #: requirement (None: not looked up yet) ...
        self.slots_at: list[tuple[int, ...] | None] = []
        #: ... and its position's moves by slot (``by_pos``; ``_NO_MOVES``
        #: where no slot fits).
        self.made_at: list[list[Move]] = []
        #: Per requirement id (``nb.req_of``), its fitting slots (None:
        #: not computed yet).
        self.by_req: list[tuple[int, ...] | None] = []
        #: Per position id (``nb.pos_of``), its moves by slot
        #: (``_UNMADE``: not made yet; the list None: none made yet).
        self.by_pos: list[list[Move] | None] = []
        #: How many place ids there were when the lists were last grown.
        self.seen = -1

    def grow(self, n: int) -> None:
        """Make room in the lists for ``n`` place ids and their positions'
        and requirements' ids."""
        self.seen = n
        if len(self.slots_at) < n:
            more = n - len(self.slots_at) + _GROW
            self.slots_at += [None] * more
            self.made_at += [_NO_MOVES] * more
        positions = len(self.nb.pos_ids)
        if len(self.by_pos) < positions:
            self.by_pos += [None] * (positions - len(self.by_pos) + _GROW_IDS)
        requirements = len(self.nb.req_ids)
        if len(self.by_req) < requirements:
            self.by_req += [None] * (requirements - len(self.by_req) + _GROW_IDS)

    def build(self, pk: int) -> tuple[int, ...]:
        """The fitting slots of this face at a packed place (not yet in
        ``slots_at``), its moves made; both noted by the place id.  (The
        requirement's and the position's tables by their ids: list
        indexes, no boxed int hashed.)"""
        pid = pk >> 16
        nb = self.nb
        rq = nb.req_of[pid]
        options = self.by_req[rq]
        if options is None:
            options = self.by_req[rq] = fit_slots(self.face, pk & 0xFFFF, self.accept)
        self.slots_at[pid] = options
        if options:
            pos = nb.pos_of[pid]
            made = self.by_pos[pos]
            if made is None:
                made = self.by_pos[pos] = [_UNMADE] * SLOTS
            self.made_at[pid] = made
            for slot in options:
                if made[slot] is _UNMADE:
                    made[slot] = self.move(nb.place_of[pid], slot)
        return options

    def move(self, p: int, slot: int) -> Move:
        """The move putting this face at position ``p`` in this slot."""
        y = p // STRIDE
        x = p - y * STRIDE - OFFSET
        return _new_move(Move, (PLACE, self.face, x, y - OFFSET, SLOT_ROT[slot], SLOT_LOCK[slot]))


_PASS: Final = Move(PASS)
#: A slot whose move is not made yet (compared by identity).
_UNMADE: Final = Move(PASS, "unmade")
#: The moves of a place id where no slot fits (never read).
_NO_MOVES: Final[list[Move]] = []
#: ``fit_slots_of``'s memo per matching rule.
_FIT_SLOTS: Final[dict[MatchRule, _RuleSlots]] = {}
#: Room added to a face's memo lists when the place ids outgrow them, and
#: when the position or requirement ids do.
_GROW: Final = 1024
_GROW_IDS: Final = 256
#: ``Move(...)`` without its generated (interpreted) ``__new__``; Final: the
#: compiled core keeps it in a C static, not the module's dict.
_new_move: Final = tuple.__new__


def box_moves(counter: Counter, player: int, scoring: ScoringRule) -> list[Move]:
    """Box-its open to ``player`` (``scoring.may_box``), each naming its
    run's first cell in reading order."""
    # Any: the run ids stay the int objects they are (the compiled core
    # would unbox and box each again).
    box_ids: set[Any] = counter.box_ids
    if not box_ids:
        return []
    found: list[Run] = []
    runs: dict[Any, Run] = counter.runs
    # The rule's table, read once (no call per box; its length a native int)
    need: tuple[int, ...] = scoring.box_need
    limit = len(need)
    for rid in box_ids:
        r = runs[rid]
        size = len(r.cells)
        if size < limit:
            if r.held[player] >= need[size]:
                found.append(r)
        elif scoring.may_box(r.held[player], size):
            found.append(r)
    if len(found) > 1:
        found.sort(key=_FIRST)  # (first cells are distinct)
    # Each run keeps its box-it move while its first cell stays (``Run.box_move``).
    out: list[Move] = []
    for r in found:
        move = r.box_move
        if move is None:
            move = r.box_move = _box_move(r.first)
        out.append(move)
    return out


def _box_move(c: Any) -> Move:
    # (a memo for the process: two threads may both make a cell's move,
    # equal values; moves are compared by value, never by identity)
    found = _BOX_MEMO.get(c)
    if found is None:
        found = _BOX_MEMO[c] = Move(BOX, "", *xy(c))
    return found


_FIRST: Final = attrgetter("first")
_BOX_MEMO: Final[dict[Any, Move]] = {}
