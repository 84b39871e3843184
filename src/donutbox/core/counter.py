"""The counter: the shared table of cards, its runs and its open places.

"The counter" is the game's own word for the table (docs/spec.md,
'Components'), so the class keeps that name although it shadows
``collections.Counter``: code that needs both imports the multiset as
``Multiset``.

Everything that changes between moves is kept up to date incrementally
instead of being rescanned:

- ``cells``: occupied cell -> packed donut code (flavour, roll, owner, delivered);
  the same codes are kept in a grid (``_g``, one int per cell of a window
  that grows as cards go down) that the hot paths read by index;
- ``run_of`` / ``runs``: each not-delivered cell's run id, each run as a
  ``Run`` (its cells, how many empty-cell edges it still has open, rolls
  and holdings), changed in place by the counter that owns it and copied on
  write between copies (see ``Run``).  Runs merge small-into-large on
  placement; a run whose open-edge count reaches 0 is sealed;
- ``places``: every card position that is empty and touches a not-delivered
  donut, mapped to ``(pid << 16) | requirement``: the requirement (see
  ``matching``) is its low 16 bits, and ``pid`` is a small dense number of
  the (position, requirement) pair, its *place id*, by which move
  generation indexes its memo lists (no hashing).  Only the positions near
  a change are refreshed.

Place ids are numbered per thread (``Numbering``, one per thread, fetched
once per ``place`` or listing): the core is used from several threads at
once, each playing its own games, and a game built in one thread may be
played on in another.  Each counter remembers the numbering its ids are in
(``_epoch``) and, used in a thread with another one (or after
``reset_place_ids``, or unpickled from another process), renumbers its
places first.  Nothing of a numbering is shared between threads, so the
hot paths take no lock.  A counter itself is used by one thread at a time
(copying reads and changes its source's token).

Copying is a handful of shallow ``dict.copy()`` calls and one list copy
(the grid): the dicts hold ints, and the runs are shared until one side
changes one.  The counter knows nothing of players' turns or scores.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, Final, NamedTuple

from .cards import FLAVOURS
from .geometry import EAST, OUTSIDE, SOUTH, STRIDE, cell, xy
from .moves import Move
from .policy import LayoutRule

# Packed donut code: bits 0-1 flavour index, bit 2 roll, bit 3 delivered,
# bits 4-6 owner + 1 (0 = neutral start card).
FLAVOUR_BITS: Final = 3
ROLL_BIT: Final = 4
DELIVERED_BIT: Final = 8
OWNER_SHIFT: Final = 4

# geometry.OUTSIDE written out as Final constants (the compiled core then
# uses them as C constants, not module attributes); checked here.
_A0: Final = -EAST
_B0: Final = -SOUTH
_A1: Final = 2 * EAST
_B1: Final = EAST - SOUTH
_A2: Final = 2 * EAST + SOUTH
_B2: Final = EAST + 2 * SOUTH
_A3: Final = SOUTH - EAST
_B3: Final = 2 * SOUTH
_SE: Final = EAST + SOUTH
assert OUTSIDE == ((_A0, _B0), (_A1, _B1), (_A2, _B2), (_A3, _B3))


#: Packed cell -> column, row (geometry.cell: x + OFFSET + (y + OFFSET) * STRIDE).
_COL_MASK: Final = STRIDE - 1
_ROW_SHIFT: Final = 22
assert 1 << _ROW_SHIFT == STRIDE
#: Cells of the grid kept beyond every occupied cell (a refreshed place reads
#: at most 3 cells beyond the card that changed it), and the room added when
#: the grid grows.
_MARGIN: Final = 4
#: A grid entry: the packed code (7 bits) | ``_OCC``, or 0 for an empty cell.
_OCC: Final = 0x80
_CODE_BITS: Final = 0x7F
_PAD: Final = 12
_HALF: Final = STRIDE // 2


def _outs(w: int) -> tuple[tuple[int, int, int], ...]:
    """The two cells beside each quadrant of a card (``OUTSIDE``) as
    ``(quadrant, offset, offset in a grid of width w)``."""
    found = []
    for i, pair in enumerate(OUTSIDE):
        for off in pair:
            dy = (off + _HALF) >> _ROW_SHIFT
            found.append((i, off, off - dy * STRIDE + dy * w))
    return tuple(found)


#: ``_outs`` per grid width met (shared by threads: a pure function of the
#: width, so a racy fill at worst makes an equal tuple twice; each dict
#: operation is atomic under the interpreter lock).
_OUTS_BY_WIDTH: Final[dict[int, tuple[tuple[int, int, int], ...]]] = {}


class Run:
    """A maximal connected set of not-delivered same-flavour cells.

    A run is changed in place by the one counter that owns it (``_token``
    equal to the counter's): a donut joining it is appended to its
    ``cells``.  A counter and its copies share the runs that neither has
    changed since the copy; whichever changes one first changes its own
    copy of it (``Counter.copy`` gives both new tokens), so a run seen
    through one counter never changes under another."""

    __slots__ = ("_token", "box_move", "cells", "first", "held", "open", "rolls")

    def __init__(
        self, cells: list[int], open: int, rolls: int, held: list[int], first: int, token: int
    ) -> None:
        self.cells = cells  # in the order they joined
        self.open = open  # edges from a cell of the run to an empty cell
        self.rolls = rolls  # Cinnamon Rolls in it
        self.held = held  # donuts per player, 4 ints (start card: nobody)
        self.first = first  # its first cell in reading order (the smallest)
        self._token = token
        #: Move generation's box-it move naming ``first`` (None: not made
        #: yet, or ``first`` changed since).  A cache only: ``box_moves``
        #: may set it on a run it shares with a copy (``first`` cannot
        #: change there without a copy of the run first).
        self.box_move: Move | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickling (views sent to AI worker processes): the compiled core's
        # native class is built only through ``__init__``, so name it and
        # its arguments (the ``box_move`` cache is left behind).
        return (_unpickle_run, (self.cells, self.open, self.rolls, self.held, self.first))

    @property
    def size(self) -> int:
        return len(self.cells)

    def __repr__(self) -> str:
        return (
            f"Run(cells={self.cells}, open={self.open}, rolls={self.rolls}, "
            f"held={self.held}, first={self.first})"
        )


#: How many place ids a numbering gives out before its thread starts a new
#: one (at its next call: a call under way keeps the numbering it fetched,
#: so a counter's places are never numbered under two): bounds its tables,
#: which grow with every (position, requirement) pair met.
PID_LIMIT: Final = 200_000


class Numbering:
    """One thread's numbering of open places (see ``places`` in the module
    doc) and move generation's memo tables indexed by it.

    ``ids``: ``(p << 16) | requirement`` -> the value ``Counter.places``
    holds for it, ``(pid << 16) | requirement``; ``place_of[pid]`` is
    ``p``.  The pair's position and requirement are numbered too (dense,
    from 0): ``pos_of[pid]`` / ``req_of[pid]``, by which move generation
    indexes its tables of moves per position and of fitting slots per
    requirement (no hashing).  Only its own thread reads or changes it, so
    none of this is locked."""

    __slots__ = ("epoch", "ids", "place_of", "pos_ids", "pos_of", "req_ids", "req_of", "tables")

    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.place_of: list[int] = []
        self.pos_of: list[int] = []
        self.req_of: list[int] = []
        self.pos_ids: dict[int, int] = {}
        self.req_ids: dict[int, int] = {}
        #: Move generation's memo tables by these ids (matching rule ->
        #: face -> ``movegen._FaceTable``; typed loosely: movegen imports
        #: this module, not the other way round).
        self.tables: dict[Any, Any] = {}
        #: The numbering's identity, held by every counter numbered under it
        #: (``Counter._epoch``): a bare object, so that a counter outliving
        #: the numbering keeps none of its tables alive.
        self.epoch = object()

    def place_id(self, full: int) -> int:
        """The ``places`` value of ``full`` = ``(p << 16) | requirement``."""
        v = self.ids.get(full)
        if v is None:
            key = full & 0xFFFF
            p = full >> 16
            v = self.ids[full] = (len(self.place_of) << 16) | key
            self.place_of.append(p)
            n = self.pos_ids.get(p)
            if n is None:
                n = self.pos_ids[p] = len(self.pos_ids)
            self.pos_of.append(n)
            n = self.req_ids.get(key)
            if n is None:
                n = self.req_ids[key] = len(self.req_ids)
            self.req_of.append(n)
            if len(self.place_of) == PID_LIMIT:
                # This thread's next call fetches a new numbering (only
                # this thread numbers under this one).
                _LOCAL.numbering = Numbering()
        return v


#: Each thread's ``Numbering`` (attribute ``numbering``; a plain
#: ``threading.local``, not a subclass: the compiled core's classes cannot
#: subclass it).  Freed with its thread.
_LOCAL: Final = threading.local()
#: The ``_epoch`` of a counter not numbered in this process yet (a new one,
#: or one unpickled from another process, whose ids mean other places
#: here): it matches no numbering, so the counter numbers its places on
#: first use.
_UNNUMBERED: Final = object()


def numbering() -> Numbering:
    """The calling thread's numbering (a new one the first time, and after
    the last one gave out ``PID_LIMIT`` ids).  Fetched once per call of the
    hot paths (``Counter.place``, ``movegen.placements``), not per place."""
    # (the attribute read directly: ``getattr`` with a default costs the
    # compiled core a slower call)
    try:
        nb: Numbering = _LOCAL.numbering
    except AttributeError:
        nb = _LOCAL.numbering = Numbering()
    return nb


def place_id(full: int) -> int:
    """The ``places`` value of ``full`` = ``(p << 16) | requirement`` in the
    calling thread's numbering."""
    return numbering().place_id(full)


def reset_place_ids() -> None:
    """Number the calling thread's open places again from 0 (each counter
    renumbers its own when next used in this thread, and move generation's
    memo lists start empty).  Other threads' numberings are untouched."""
    _LOCAL.numbering = Numbering()


#: Counter and run tokens (``_new_token``): ``next`` of an
#: ``itertools.count`` is one C call, atomic under the interpreter lock,
#: so no two threads get the same token.
_TOKENS: Final = itertools.count(1)


def _new_token() -> int:
    return next(_TOKENS)


class Donut(NamedTuple):
    """One occupied cell, unpacked for readers outside the hot paths."""

    x: int
    y: int
    flavour: str  # locked flavour
    roll: bool
    owner: int | None  # None for the neutral start card
    delivered: bool


def pack(flavour: int, roll: bool, owner: int | None) -> int:
    return (
        flavour | (ROLL_BIT if roll else 0) | ((0 if owner is None else owner + 1) << OWNER_SHIFT)
    )


def unpack(c: int, code: int) -> Donut:
    x, y = xy(c)
    owner = (code >> OWNER_SHIFT) - 1
    return Donut(
        x,
        y,
        FLAVOURS[code & FLAVOUR_BITS],
        bool(code & ROLL_BIT),
        None if owner < 0 else owner,
        bool(code & DELIVERED_BIT),
    )


class Counter:
    """The counter: the shared table (the game's own name for it, kept
    although it shadows ``collections.Counter``).  Mutated only through
    ``place`` and ``deliver``."""

    __slots__ = (
        "_c0",
        "_epoch",
        "_g",
        "_h",
        "_r0",
        "_token",
        "_w",
        "_zone",
        "box_ids",
        "cells",
        "layout",
        "places",
        "run_of",
        "runs",
    )

    def __init__(self, layout: LayoutRule, source: Counter | None = None) -> None:
        """An empty counter, or (``source`` given: used by ``copy``) a copy
        of ``source``.  (No ``Counter.__new__`` trick: the compiled core's
        native classes are built only through ``__init__``.)"""
        self.layout = layout
        self._zone = layout.place_zone
        if source is None:
            self.cells: dict[int, int] = {}
            self.run_of: dict[int, int] = {}
            self.runs: dict[int, Run] = {}
            #: Ids (in ``runs``) of the open boxes: not-delivered runs of 3 or more.
            self.box_ids: set[int] = set()
            self.places: dict[int, int] = {}
            # The grid: ``cells`` again, as one int per cell (code | ``_OCC``,
            # 0 empty) of a window ``_w`` x ``_h`` whose first cell is at
            # column ``_c0``, row ``_r0`` of the packed coordinates.  Hot
            # reads use it (an index, no hashing); it grows as cards go down,
            # keeping every occupied cell at least ``_MARGIN`` inside it.
            self._g: list[int] = []
            self._c0 = 0
            self._r0 = 0
            self._w = 0
            self._h = 0
            self._epoch = _UNNUMBERED
            self._token = _new_token()
        else:
            self.cells = source.cells.copy()
            self.run_of = source.run_of.copy()
            self.runs = source.runs.copy()
            self.box_ids = source.box_ids.copy()
            self.places = source.places.copy()
            self._g = source._g.copy()
            self._c0 = source._c0
            self._r0 = source._r0
            self._w = source._w
            self._h = source._h
            self._epoch = source._epoch
            # Both share the runs now: neither may change one in place.
            self._token = _new_token()
            source._token = _new_token()

    def copy(self) -> Counter:
        return Counter(self.layout, self)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickling (the server sends views to its AI worker processes): the
        # compiled core's native class is built only through ``__init__``,
        # so rebuild it with ``_unpickle_counter``.  The place ids are not
        # the other process's: the rebuilt counter renumbers on first use.
        return (
            _unpickle_counter,
            (
                self.layout,
                self.cells,
                self.run_of,
                self.runs,
                self.box_ids,
                self.places,
                self._g,
                (self._c0, self._r0, self._w, self._h),
            ),
        )

    @property
    def big(self) -> set[int]:
        """Deprecated name of ``box_ids`` (still read by envs/observation.py)."""
        return self.box_ids

    # -- reading -----------------------------------------------------------

    def numbered_places(self, nb: Numbering | None = None) -> dict[int, int]:
        """``places``, its values (``(pid << 16) | requirement``) in the
        calling thread's numbering ``nb`` (``numbering()`` if not given)."""
        if nb is None:
            nb = numbering()
        if self._epoch is not nb.epoch:
            self._renumber(nb)
        return self.places

    def _renumber(self, nb: Numbering) -> None:
        """Number ``places`` under ``nb``: the counter was numbered under
        another numbering (another thread's, an older one of this thread,
        another process's, or none yet)."""
        places = self.places
        for p in places:
            places[p] = nb.place_id((p << 16) | (places[p] & 0xFFFF))
        self._epoch = nb.epoch

    def donuts(self) -> list[Donut]:
        """Every occupied cell, in reading order."""
        return [unpack(c, self.cells[c]) for c in sorted(self.cells)]

    def donut_at(self, x: int, y: int) -> Donut | None:
        c = cell(x, y)
        code = self.cells.get(c)
        return None if code is None else unpack(c, code)

    def run_at(self, x: int, y: int) -> Run | None:
        """The not-delivered run at a cell, or None."""
        rid = self.run_of.get(cell(x, y))
        return None if rid is None else self.runs[rid]

    def run_id_at(self, x: int, y: int) -> int | None:
        """The id (a key of ``runs``) of the not-delivered run at a cell, or None."""
        return self.run_of.get(cell(x, y))

    def boxes(self) -> list[Run]:
        """Open boxes (not-delivered runs of 3 or more), in reading order of first cell."""
        found = [self.runs[rid] for rid in self.box_ids]
        found.sort(key=lambda r: r.first)
        return found

    def is_empty(self, p: int) -> bool:
        return (
            self.code_at(p) < 0
            and self.code_at(p + EAST) < 0
            and self.code_at(p + _SE) < 0
            and self.code_at(p + SOUTH) < 0
        )

    def touches(self, p: int) -> bool:
        """Does a card at ``p`` touch any occupied cell edge to edge?"""
        return any(self.code_at(p + off) >= 0 for pair in OUTSIDE for off in pair)

    def code_at(self, c: int) -> int:
        """The packed code at cell ``c``, or -1 if it is empty (``cells.get(c,
        -1)``, read from the grid)."""
        col = (c & _COL_MASK) - self._c0
        row = (c >> _ROW_SHIFT) - self._r0
        if 0 <= col < self._w and 0 <= row < self._h:
            v = self._g[col + row * self._w]
            if v:
                return v & _CODE_BITS
        return -1

    # -- changing ----------------------------------------------------------

    def _cover(self, p: int) -> None:
        """Grow the grid so that the card at ``p`` and ``_MARGIN`` cells
        around it are inside it."""
        col = p & _COL_MASK
        row = p >> _ROW_SHIFT
        c0 = self._c0
        r0 = self._r0
        w = self._w
        h = self._h
        if (
            w
            and c0 <= col - _MARGIN
            and col + 2 + _MARGIN <= c0 + w
            and r0 <= row - _MARGIN
            and row + 2 + _MARGIN <= r0 + h
        ):
            return
        if not w:
            nc0 = col - _MARGIN - _PAD
            nr0 = row - _MARGIN - _PAD
            nc1 = col + 2 + _MARGIN + _PAD
            nr1 = row + 2 + _MARGIN + _PAD
        else:
            nc0 = min(c0, col - _MARGIN - _PAD)
            nr0 = min(r0, row - _MARGIN - _PAD)
            nc1 = max(c0 + w, col + 2 + _MARGIN + _PAD)
            nr1 = max(r0 + h, row + 2 + _MARGIN + _PAD)
        nw = nc1 - nc0
        nh = nr1 - nr0
        g = [0] * (nw * nh)
        old = self._g
        for r in range(h):
            start = (r + r0 - nr0) * nw + (c0 - nc0)
            g[start : start + w] = old[r * w : (r + 1) * w]
        self._g = g
        self._c0 = nc0
        self._r0 = nr0
        self._w = nw
        self._h = nh

    def _index(self, c: int) -> int:
        """The grid index of a cell inside the grid."""
        return (c & _COL_MASK) - self._c0 + ((c >> _ROW_SHIFT) - self._r0) * self._w

    def _refresh(self, p: int, nb: Numbering) -> None:
        # ``nb``: the calling thread's numbering, which ``places`` is
        # numbered under (see ``place``).
        # Every position refreshed lies within ``_MARGIN`` of the card just
        # placed (or of a run's cells): all its reads are inside the grid.
        g = self._g
        w = self._w
        i = (p & _COL_MASK) - self._c0 + ((p >> _ROW_SHIFT) - self._r0) * w
        if g[i] or g[i + 1] or g[i + 1 + w] or g[i + w]:
            # (not ``places.pop(p, None)``: the compiled core calls that as
            # a Python method, ``in`` and ``del`` as C functions)
            pb: Any = p  # boxed once (see ``place``)
            if pb in self.places:
                del self.places[pb]
            return
        key = 0
        v = g[i - 1]
        if v and not v & DELIVERED_BIT:
            key |= 1 << (v & FLAVOUR_BITS)
        v = g[i - w]
        if v and not v & DELIVERED_BIT:
            key |= 1 << (v & FLAVOUR_BITS)
        v = g[i + 2]
        if v and not v & DELIVERED_BIT:
            key |= 16 << (v & FLAVOUR_BITS)
        v = g[i + 1 - w]
        if v and not v & DELIVERED_BIT:
            key |= 16 << (v & FLAVOUR_BITS)
        v = g[i + 2 + w]
        if v and not v & DELIVERED_BIT:
            key |= 256 << (v & FLAVOUR_BITS)
        v = g[i + 1 + 2 * w]
        if v and not v & DELIVERED_BIT:
            key |= 256 << (v & FLAVOUR_BITS)
        v = g[i + w - 1]
        if v and not v & DELIVERED_BIT:
            key |= 4096 << (v & FLAVOUR_BITS)
        v = g[i + 2 * w]
        if v and not v & DELIVERED_BIT:
            key |= 4096 << (v & FLAVOUR_BITS)
        if key:
            # (the int object ``place_id`` holds: none is made here)
            pv: Any = nb.ids.get((p << 16) | key)
            if pv is None:
                pv = nb.place_id((p << 16) | key)
            self.places[p] = pv
        elif p in self.places:
            del self.places[p]

    def place(self, p: int, codes: tuple[int, int, int, int]) -> list[Run]:
        """Put a card's four packed donuts (NW, NE, SE, SW) at position ``p``.

        The caller has checked legality.  Returns the runs this placement
        sealed (no empty cell left beside them), in reading order of their
        first cell; sealed runs of 3 or more are delivered here.
        """
        # The places refreshed below are numbered in this thread's
        # numbering: the others first, if the counter comes from another.
        nb = numbering()
        if self._epoch is not nb.epoch:
            self._renumber(nb)
        # Any: the compiled core then keeps the cells and run ids it passes
        # between these dicts as the int objects they are, instead of
        # unboxing each one and boxing it again (a new object: packed cells
        # are too big for the small-int cache).
        cells: dict[Any, int] = self.cells
        run_of: dict[Any, Any] = self.run_of
        runs: dict[Any, Run] = self.runs
        # (The four donuts in locals, not indexed by a variable: the compiled
        # core would build a tuple object from ``codes`` for each such index.)
        c0, c1, c2, c3 = codes
        n0: Any = p
        n1: Any = p + EAST
        n2: Any = p + _SE
        n3: Any = p + SOUTH
        cells[n0] = c0
        cells[n1] = c1
        cells[n2] = c2
        cells[n3] = c3
        self._cover(p)
        g = self._g
        w = self._w
        gi = self._index(p)
        g[gi] = c0 | _OCC
        g[gi + 1] = c1 | _OCC
        g[gi + 1 + w] = c2 | _OCC
        g[gi + w] = c3 | _OCC
        f0 = c0 & FLAVOUR_BITS
        f1 = c1 & FLAVOUR_BITS
        f2 = c2 & FLAVOUR_BITS
        f3 = c3 & FLAVOUR_BITS
        flavours = [f0, f1, f2, f3]

        # Close the edges between neighbours and the new cells; note which
        # neighbour runs each new donut joins.
        # (Each closed edge is taken off its run at once: no dict of counts
        # per run id; ``closed`` lists the run ids, repeats and all.)
        closed: list[Any] = []
        joins: list[list[Any]] = [[], [], [], []]
        opens = [0, 0, 0, 0]
        outs = _OUTS_BY_WIDTH.get(w)
        if outs is None:
            outs = _OUTS_BY_WIDTH[w] = _outs(w)
        token = self._token
        for i, off, goff in outs:
            v = g[gi + goff]
            if not v:
                opens[i] = opens[i] + 1
            elif not v & DELIVERED_BIT:
                n: Any = p + off
                rid = run_of[n]
                r = runs[rid]
                if r._token != token:
                    r = runs[rid] = _own(r, token)
                r.open -= 1
                closed.append(rid)
                if v & FLAVOUR_BITS == flavours[i]:
                    joins[i].append(n)  # a cell: its run id may change below

        # Add the new donuts one by one, each joining the runs of its
        # same-flavour neighbours (outside, and earlier ones on the card).
        self._join(n0, c0, opens[0], [run_of[n] for n in joins[0]])
        targets: list[Any] = [run_of[n] for n in joins[1]]
        if f1 == f0:
            targets.append(run_of[n0])
        self._join(n1, c1, opens[1], targets)
        targets = [run_of[n] for n in joins[2]]
        if f2 == f1:
            targets.append(run_of[n1])
        self._join(n2, c2, opens[2], targets)
        targets = [run_of[n] for n in joins[3]]
        if f3 == f2:
            targets.append(run_of[n2])
        if f3 == f0:
            targets.append(run_of[n0])
        self._join(n3, c3, opens[3], targets)

        # Refresh the open places near the new card.
        for off in self._zone:
            self._refresh(p + off, nb)

        # The sealed runs among the new donuts' and the closed edges' (a run
        # merged into another is no longer in ``runs``); each once.
        sealed: list[Run] = []
        for c in (n0, n1, n2, n3):
            r = runs[run_of[c]]
            if r.open == 0 and r not in sealed:
                sealed.append(r)
        for rid in closed:
            found = runs.get(rid)
            if found is not None and found.open == 0 and found not in sealed:
                sealed.append(found)
        if len(sealed) > 1:
            by_first(sealed)
        for r in sealed:
            if len(r.cells) >= 3:
                self._freeze(r, None)
        return sealed

    def _join(self, c: Any, code: int, opens: int, targets: list[Any]) -> None:
        # Any: see ``place``.
        runs: dict[Any, Run] = self.runs
        run_of: dict[Any, Any] = self.run_of
        token = self._token
        roll = 1 if code & ROLL_BIT else 0
        owner = (code >> OWNER_SHIFT) - 1
        if not targets:
            held = [0, 0, 0, 0]
            if owner >= 0:
                held[owner] = 1
            runs[c] = Run([c], opens, roll, held, c, token)
            run_of[c] = c
            return
        rid = targets[0]
        unique: set[Any] | None = None  # the other runs (a set made only to merge)
        if len(targets) > 1:
            unique = set(targets)
            if len(unique) > 1:
                rid = max(unique, key=lambda r: len(runs[r].cells))
            unique.discard(rid)
        base = runs[rid]
        if base._token != token:
            base = runs[rid] = _own(base, token)
        cells = base.cells
        held = base.held
        # Merging (rare): the other runs' cells follow the base's, in the
        # order of ``unique``, then the new donut.
        for other in unique or ():
            r = runs.pop(other)
            self.box_ids.discard(other)
            cells.extend(r.cells)
            for oc in r.cells:
                run_of[oc] = rid
            opens += r.open
            roll += r.rolls
            if r.first < base.first:
                base.first = r.first
                base.box_move = None
            h = r.held
            held[0] += h[0]
            held[1] += h[1]
            held[2] += h[2]
            held[3] += h[3]
        cells.append(c)
        base.open += opens
        base.rolls += roll
        if owner >= 0:
            held[owner] += 1
        if c < base.first:
            base.first = c
            base.box_move = None
        run_of[c] = rid
        if len(cells) >= 3:
            self.box_ids.add(rid)

    def deliver(self, r: Run) -> None:
        """Freeze an open run that was boxed (docs/spec.md, 'Delivery')."""
        nb = numbering()
        if self._epoch is not nb.epoch:
            self._renumber(nb)
        self._freeze(r, nb)

    def _freeze(self, r: Run, nb: Numbering | None) -> None:
        """Freeze a run; ``nb`` (this thread's numbering, which ``places``
        is numbered under) given: refresh the places near it."""
        # Any: see ``place``.
        cells: dict[Any, int] = self.cells
        run_of: dict[Any, Any] = self.run_of
        members: list[Any] = r.cells
        rid = run_of[members[0]]
        g = self._g
        for c in members:
            cells[c] |= DELIVERED_BIT
            g[self._index(c)] |= DELIVERED_BIT
            del run_of[c]
        del self.runs[rid]
        self.box_ids.discard(rid)
        if nb is not None:
            # Frozen donuts form no pairs: nearby requirements change.  (A
            # sealed run has no empty cell beside it, so no place can see it.)
            zone: set[int] = set()
            for c in r.cells:
                zone.update(self.layout.cell_zone(c))
            for q in zone:
                self._refresh(q, nb)


def by_first(found: list[Run]) -> None:
    """Sort runs in reading order of their first cells (distinct), in place:
    an insertion sort (a handful of runs; ``list.sort(key=...)`` is a
    Python-level call with a key function from the compiled core)."""
    for i in range(1, len(found)):
        r = found[i]
        first = r.first
        j = i - 1
        while j >= 0 and found[j].first > first:
            found[j + 1] = found[j]
            j -= 1
        found[j + 1] = r


def _own(r: Run, token: int) -> Run:
    """A copy of ``r`` owned by the counter of ``token`` (to change in place)."""
    copy = Run(r.cells[:], r.open, r.rolls, r.held[:], r.first, token)
    copy.box_move = r.box_move
    return copy


__all__ = ["Counter", "Donut", "Run", "pack", "unpack"]


def _unpickle_counter(
    layout: LayoutRule,
    cells: dict[int, int],
    run_of: dict[int, int],
    runs: dict[int, Run],
    box_ids: set[int],
    places: dict[int, int],
    grid: list[int],
    window: tuple[int, int, int, int],
) -> Counter:
    """A counter from ``Counter.__reduce__``'s parts (another process's)."""
    c = Counter(layout)
    c.cells = cells
    c.run_of = run_of
    c.runs = runs
    c.box_ids = box_ids
    c.places = places
    c._g = grid
    c._c0, c._r0, c._w, c._h = window
    # (``c`` has a token of this process; its runs have other ones, so it
    # copies each before changing it, as after a copy.)
    c._epoch = _UNNUMBERED  # its ids are the other process's: renumber on first use
    return c


def _unpickle_run(cells: list[int], open: int, rolls: int, held: list[int], first: int) -> Run:
    """A run from ``Run.__reduce__``'s parts.  Its token is a new one that
    no counter holds (the other process's token could be a counter's here),
    so every counter holding it copies it before a change."""
    return Run(cells, open, rolls, held, first, _new_token())
