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

    def rows(self, counter: Counter, places: list[int], me: int) -> list[float]:
        """``compact.run_rows(counter, places, me)``, the same numbers."""
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
        numbers_of: dict[int, tuple[int, int, int, int]] = {}
        fresh: dict[int, tuple[int, ...]] = {}
        out: list[float] = []
        for p in places:
            rids = known.get(p)
            while True:
                if rids is None:
                    found = {get(p + d) for d in _AROUND}
                    found.discard(None)
                    rids = tuple(found)  # type: ignore[arg-type]
                row = [0.0] * RUN_FEATURES
                for rid in rids:
                    numbers = numbers_of.get(rid)
                    if numbers is None:
                        run = runs.get(rid)
                        if run is None:  # merged or delivered: read again
                            break
                        numbers = numbers_of[rid] = (
                            cells[run.cells[0]] & FLAVOUR_BITS,
                            len(run.cells),
                            run.held[me],
                            run.open,
                        )
                    f, size, held, free = numbers
                    row[f] += size
                    row[4 + f] += held
                    row[8 + f] += free
                else:
                    break
                rids = None
            fresh[p] = rids
            out += row
        self.rids = fresh
        return out


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
        # place rows: game, index, packed cell, requirement key, run numbers
        p_game: list[int] = []
        p_index: list[int] = []
        p_cells: list[int] = []
        p_keys: list[int] = []
        p_runs: list[float] = []
        centre: list[tuple[int, int]] = []  # per game: packed row, column of the NW corner
        # fitting choices: flat row of ``_choices``, 16-bit set
        c_at: list[int] = []
        c_bits: list[int] = []
        # everything else: flat indices into obs / mask, and values
        o_at: list[int] = []
        o_val: list[float] = []
        m_at: list[int] = []
        rest: list[list[float]] = []
        for i, game in enumerate(games):
            me = game.to_move
            assert me is not None
            counter = game.counter
            turn = codec.turn(counter, game.trays[me])
            self.turns[i] = turn
            slots, columns, others, _ = codec.legal_parts(game, turn)
            places = turn.places
            n = len(places)
            if columns:
                for s in slots:
                    at = i * k_places * TRAY_SLOTS + s
                    c_at += range(at, at + TRAY_SLOTS * n, TRAY_SLOTS)
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
            if n:
                reqs = counter.places
                p_game += [i] * n
                p_index += range(n)
                p_cells += places
                p_keys += [reqs[p] & 0xFFFF for p in places]
                p_runs += self._around[i].rows(counter, places, me)
            if turn.boxes:
                runs = counter.runs
                run_of = counter.run_of
                seats = [(me + k) % n_players for k in range(n_players)]
                values: list[float] = []
                for first in turn.boxes:
                    run = runs[run_of[first]]
                    held = run.held
                    values += (
                        1.0,
                        ((first >> 22) - offr) / w,
                        ((first & _COL) - offc) / w,
                        len(run.cells) / 10,
                        1.0 if run.rolls else 0.0,
                    )
                    values += [held[p] / 10 for p in seats]
                at = i * size + box_start
                o_at += range(at, at + len(values))
                o_val += values
            ones, feature_values = self.features.game_features(game, me)
            at = i * size + tray_at
            o_at += [at + k for k in ones]
            o_val += [1.0] * len(ones)
            rest.append(feature_values)
        obs = self.obs
        mask = self.mask
        obs.fill(0.0)
        mask.fill(0)
        count = len(p_game)
        if count:
            g = np.fromiter(p_game, dtype=np.intp, count=count)
            rows = _PLACE_ROWS[p_keys]  # present, 0, 0, the requirement bits
            cells = np.fromiter(p_cells, dtype=np.int64, count=count)
            offsets = np.array(centre, dtype=np.int64)[g]
            # the same float64 divisions as the single-game encoder's
            rows[:, 1] = ((cells >> 22) - offsets[:, 0]) / w
            rows[:, 2] = ((cells & _COL) - offsets[:, 1]) / w
            block = np.empty((count, self.width), dtype=np.float32)
            block[:, :PLACE_FEATURES] = rows
            block[:, PLACE_FEATURES:] = np.fromiter(
                p_runs, dtype=np.float32, count=count * RUN_FEATURES
            ).reshape(count, RUN_FEATURES)
            block[:, PLACE_FEATURES:] /= 10.0
            self._rows[g, p_index] = block
        if c_at:
            choices = self._choices
            choices.fill(0)
            choices[np.fromiter(c_at, dtype=np.intp, count=len(c_at))] = _BITS8[c_bits]
            mask[:, : codec.box_base] = choices.reshape(self.num_envs, codec.box_base)
        if o_at:
            obs.reshape(-1)[o_at] = o_val
        if m_at:
            mask.reshape(-1)[m_at] = 1
        obs[:, rest_at:] = rest
