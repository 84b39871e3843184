"""The compact observations and masks of many games, written a batch at a time.

``VectorEnv`` (``vector.py``) uses this for the compact observation (the
default).  Each row is what ``Encoder.observe`` and ``Encoder.mask`` give
the player to move (the same values: ``tests/envs/test_env_vector.py``
checks them against the PettingZoo environment, step for step), but the
work is split so that the fixed cost of numpy calls is paid once per batch
instead of once per game:

- per game, in Python, only what has to read the engine's dicts: the
  candidate lists (``PlacesCodec.turn``), the fitting choices of each place
  and the other legal actions (``PlacesCodec.legal_parts``), the run
  summaries (``compact.run_rows``), the boxes' numbers and the features
  (``ObservationEncoder.game_features``), all as plain lists;
- per batch, a handful of numpy writes into preallocated arrays: every
  game's place rows in one gather, its fitting choices in another, the
  rest as flat indices.

The centre of the play (for the row and column numbers) comes from a
bounding box kept up to date from one ply to the next: a counter only ever
gains cells, so only the new ones are read.
"""

from __future__ import annotations

from itertools import islice

import numpy as np

from ..core.counter import FLAVOUR_BITS, Counter
from ..core.game import Game
from ..core.geometry import OFFSET, STRIDE
from .compact import _AROUND, RUN_FEATURES
from .encoding import (
    _BITS8,
    _PLACE_ROWS,
    CHOICES,
    PLACE_FEATURES,
    TRAY_SLOTS,
    Encoder,
    PlacesCodec,
    Turn,
    box_rows,
)

_COL: int = STRIDE - 1  # a packed cell's column bits (row: ``>> 22``)


class _Spread:
    """The bounding box (packed rows and columns) of one counter's cells,
    caught up with it ply by ply."""

    __slots__ = ("c0", "c1", "counter", "n", "r0", "r1")

    def __init__(self) -> None:
        self.counter: Counter | None = None
        self.n = 0
        self.r0 = self.r1 = self.c0 = self.c1 = 0

    def sync(self, counter: Counter) -> int:
        """Catch up with ``counter``; its number of cells."""
        cells = counter.cells
        n = len(cells)
        if counter is not self.counter or n < self.n:
            self.counter = counter
            self.n = 0
        if n > self.n:
            new = list(islice(cells, self.n, None))
            rows = [c >> 22 for c in new]
            cols = [c & _COL for c in new]
            r0, r1, c0, c1 = min(rows), max(rows), min(cols), max(cols)
            if self.n:
                r0, r1 = min(r0, self.r0), max(r1, self.r1)
                c0, c1 = min(c0, self.c0), max(c1, self.c1)
            self.r0, self.r1, self.c0, self.c1 = r0, r1, c0, c1
            self.n = n
        return n


class _RunsAround:
    """Per candidate place of one game, the distinct runs next to it (run
    ids, ``compact.py``), kept from one ply to the next: reading them is
    most of the run summaries' cost, and a ply changes them for few places.

    A place's runs change only when a cell next to it is newly occupied
    (the counter's new cells, the places around each are forgotten) or
    when one of its runs leaves ``counter.runs`` (merged into another, or
    delivered; then they are read again).  A run id is the cell the run
    started at, so it is never reused for another run."""

    __slots__ = ("counter", "n", "rids")

    def __init__(self) -> None:
        self.counter: Counter | None = None
        self.n = 0
        self.rids: dict[int, tuple[int, ...]] = {}

    def pairs(
        self,
        counter: Counter,
        places: list[int],
        me: int,
        counts: list[int],
        index: list[int],
        numbers: list[int],
    ) -> None:
        """The runs around each of ``places``: per place, how many (appended
        to ``counts``) and which (their rows in ``numbers``, appended to
        ``index``); each run's numbers once (flavour, size, the observer's
        donuts, open edges: appended to ``numbers``, 4 a run).  Summed per
        place and flavour, they are ``compact.run_rows(counter, places, me)``."""
        cells = counter.cells
        n = len(cells)
        known = self.rids
        if counter is not self.counter or n < self.n:
            self.counter = counter
            known.clear()
        elif n > self.n:
            for c in islice(cells, self.n, None):
                for d in _AROUND:
                    known.pop(c - d, None)
        self.n = n
        get = counter.run_of.get
        runs = counter.runs
        row_of: dict[int, int] = {}
        fresh: dict[int, tuple[int, ...]] = {}
        for p in places:
            rids = known.get(p)
            while True:
                if rids is None:
                    found = {get(p + d) for d in _AROUND}
                    found.discard(None)
                    rids = tuple(found)  # type: ignore[arg-type]
                at = len(index)
                for rid in rids:
                    row = row_of.get(rid)
                    if row is None:
                        run = runs.get(rid)
                        if run is None:  # merged or delivered: read again
                            break
                        row = row_of[rid] = len(numbers) >> 2
                        # a run's cells share its (locked) flavour
                        numbers += (
                            cells[run.cells[0]] & FLAVOUR_BITS,
                            len(run.cells),
                            run.held[me],
                            run.open,
                        )
                    index.append(row)
                else:
                    break
                del index[at:]
                rids = None
            fresh[p] = rids
            counts.append(len(rids))
        self.rids = fresh


class BatchWriter:
    """Writes the compact observation and the mask of the player to move of
    ``num_envs`` games into ``obs`` and ``mask`` (module doc)."""

    def __init__(self, num_envs: int, encoder: Encoder) -> None:
        codec = encoder.codec
        if not isinstance(codec, PlacesCodec) or encoder.observation != "compact":
            raise ValueError("the batch writer is for the compact observation of places")
        self.codec = codec
        self.players = encoder.players
        layout = encoder.centred.layout
        self.board = layout.board
        self.size = layout.size
        self.width = layout.place_features
        self.box_start = layout.slices["boxes"].start
        self.feature_start = layout.slices["features"].start
        self.tray_size = layout.feature_layout.feature_slices["tray"].stop
        self.features = encoder.centred._features
        self.num_envs = num_envs
        self.obs = np.zeros((num_envs, self.size), dtype=np.float32)
        self.mask = np.zeros((num_envs, codec.size), dtype=np.int8)
        # every game's place rows, written through
        self._rows = self.obs[:, : layout.slices["places"].stop].reshape(
            num_envs, codec.places, self.width
        )
        assert np.shares_memory(self._rows, self.obs)
        # the place actions, one row of 16 choices per (game, place, slot),
        # contiguous so that a flat index reaches each (copied into ``mask``)
        self._choices = np.zeros((num_envs * codec.places * TRAY_SLOTS, CHOICES), dtype=np.int8)
        self._spread = [_Spread() for _ in range(num_envs)]
        self._around = [_RunsAround() for _ in range(num_envs)]
        #: Per game, the candidate lists of the position last written.
        self.turns: list[Turn | None] = [None] * num_envs

    @staticmethod
    def _run_sums(
        count: int, r_count: list[int], r_index: list[int], run_numbers: list[int]
    ) -> np.ndarray:
        """``count x 12`` run summaries (``compact.py``) from the runs around
        each place (``_RunsAround.pairs``): per place and flavour, the sums
        of size, the observer's donuts and open edges, / 10."""
        sums: np.ndarray = np.zeros(count * RUN_FEATURES, dtype=np.float64)
        if r_index:
            numbers = np.fromiter(run_numbers, dtype=np.int64, count=len(run_numbers))
            near = numbers.reshape(-1, 4)[np.fromiter(r_index, dtype=np.intp, count=len(r_index))]
            place = np.repeat(np.arange(count), np.fromiter(r_count, dtype=np.intp, count=count))
            at = place * RUN_FEATURES + near[:, 0]
            sums = np.bincount(
                np.concatenate((at, at + 4, at + 8)),
                weights=near[:, 1:].T.ravel(),
                minlength=count * RUN_FEATURES,
            )
        # sums of integers, exact; then / 10 in float32 as run_summaries does
        out = sums.astype(np.float32).reshape(count, RUN_FEATURES)
        out /= 10.0
        return out

    def write(self, games: list[Game]) -> None:
        """The observation and mask of every game's player to move."""
        codec = self.codec
        n_players = self.players
        w = self.board
        size = self.size
        actions = codec.size
        box_start = self.box_start
        tray_at = self.feature_start
        rest_at = self.feature_start + self.tray_size
        k_places = codec.places
        # place rows: how many a game, packed cells, requirement keys, the
        # runs around each (counts, rows of run_numbers) and the centres
        p_count: list[int] = []
        p_cells: list[int] = []
        p_keys: list[int] = []
        r_count: list[int] = []
        r_index: list[int] = []
        run_numbers: list[int] = []
        centre: list[tuple[int, int]] = []  # per game: packed row, column of the NW corner
        # fitting choices: per (game, slot) its first row of ``_choices``
        # (then one every TRAY_SLOTS rows, a place each), and the 16-bit sets
        c_first: list[int] = []
        c_count: list[int] = []
        c_bits: list[int] = []
        # everything else: flat indices into obs / mask, and values
        o_at: list[int] = []
        o_val: list[float] = []
        m_at: list[int] = []
        rest: list[float] = []  # the features after the tray, game after game
        for i, game in enumerate(games):
            me = game.to_move
            assert me is not None
            counter = game.counter
            turn = codec.turn(counter, game.trays[me])
            self.turns[i] = turn
            places = turn.places
            n = len(places)
            reqs = counter.places
            keys = [reqs[p] & 0xFFFF for p in places]
            slots, columns, others, _ = codec.legal_parts(game, turn, keys)
            if columns:
                at = i * k_places * TRAY_SLOTS
                c_first += [at + s for s in slots]
                c_count += [n] * len(slots)
                c_bits += columns
            base = i * actions
            m_at += [base + a for a in others]
            spread = self._spread[i]
            if spread.sync(counter):
                offr = ((spread.r0 + spread.r1 + 1) // 2 - w // 2) & ~1
                offc = ((spread.c0 + spread.c1 + 1) // 2 - w // 2) & ~1
            else:  # not in a dealt game: the start card is always down
                offr = offc = -(w // 2) + OFFSET
            centre.append((offr, offc))
            p_count.append(n)
            if n:
                p_cells += places
                p_keys += keys
                self._around[i].pairs(counter, places, me, r_count, r_index, run_numbers)
            if turn.boxes:
                values = box_rows(counter, turn.boxes, me, n_players, offr, offc, w)
                at = i * size + box_start
                o_at += range(at, at + len(values))
                o_val += values
            ones, feature_values = self.features.game_features(game, me)
            at = i * size + tray_at
            o_at += [at + k for k in ones]
            o_val += [1.0] * len(ones)
            rest += feature_values
        obs = self.obs
        mask = self.mask
        obs.fill(0.0)
        mask.fill(0)
        count = len(p_keys)
        if count:
            per_game = np.fromiter(p_count, dtype=np.intp, count=len(p_count))
            g = np.repeat(np.arange(len(p_count)), per_game)
            k = np.arange(count) - np.repeat(np.cumsum(per_game) - per_game, per_game)
            block = np.empty((count, self.width), dtype=np.float32)
            key_array = np.fromiter(p_keys, dtype=np.intp, count=count)
            block[:, :PLACE_FEATURES] = _PLACE_ROWS[key_array]  # present, 0, 0, requirement
            cells = np.fromiter(p_cells, dtype=np.int64, count=count)
            offsets = np.array(centre, dtype=np.int64)[g]
            # the same float64 divisions as the single-game encoder's
            block[:, 1] = ((cells >> 22) - offsets[:, 0]) / w
            block[:, 2] = ((cells & _COL) - offsets[:, 1]) / w
            block[:, PLACE_FEATURES:] = self._run_sums(count, r_count, r_index, run_numbers)
            self._rows[g, k] = block
        if c_bits:
            choices = self._choices
            choices.fill(0)
            total = len(c_bits)
            runs_of = np.fromiter(c_count, dtype=np.intp, count=len(c_count))
            step = np.arange(total) - np.repeat(np.cumsum(runs_of) - runs_of, runs_of)
            starts = np.repeat(np.array(c_first, dtype=np.intp), runs_of)
            bits = np.fromiter(c_bits, dtype=np.intp, count=total)
            choices[starts + TRAY_SLOTS * step] = _BITS8[bits]
            mask[:, : codec.box_base] = choices.reshape(self.num_envs, codec.box_base)
        if o_at:
            entries = len(o_at)
            obs.reshape(-1)[np.fromiter(o_at, dtype=np.intp, count=entries)] = np.fromiter(
                o_val, dtype=np.float32, count=entries
            )
        if m_at:
            mask.reshape(-1)[np.fromiter(m_at, dtype=np.intp, count=len(m_at))] = 1
        obs[:, rest_at:] = np.fromiter(rest, dtype=np.float32, count=len(rest)).reshape(
            len(games), -1
        )
