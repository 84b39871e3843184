"""Run summaries per candidate place: what the compact observation adds.

The compact observation (``encoding.py``, ``observation="compact"``) drops
the board planes and instead tells, for each candidate place, what the runs
it touches are: a card put there joins (or blocks) exactly those runs.  Per
flavour C, S, H, B, over the distinct not-delivered runs of that flavour
with a cell orthogonally next to the place's four cells (a Cinnamon Roll
counts as its locked flavour):

- ``size``: their donuts together / 10;
- ``mine``: the observer's donuts in them / 10;
- ``open``: their edges to empty cells together / 10 (a run with few left is
  close to being sealed and delivered).

Twelve numbers a place, in the order size C S H B, mine C S H B, open C S H B.
They come from the public counter only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from ..core.counter import FLAVOUR_BITS, Counter
from ..core.geometry import STRIDE

#: Numbers per place (module doc).
RUN_FEATURES: Final = 12

#: The cells next to a card at packed NW cell ``p``, as offsets from ``p``
#: (two per quadrant, outside the card).
_AROUND: Final = (
    -1,
    -STRIDE,
    2,
    1 - STRIDE,
    2 + STRIDE,
    1 + 2 * STRIDE,
    -1 + STRIDE,
    2 * STRIDE,
)
_W, _N, _E, _NE, _SE, _S, _SW, _SS = _AROUND


def run_rows(counter: Counter, places: Sequence[int], me: int) -> list[float]:
    """The run summaries of ``places`` (module doc) as one flat list, 12
    numbers a place, not yet divided by 10.  Each run's numbers are read
    once (a run touches several places) and summed per place over the
    distinct runs around it (sums of integers: exact in any order)."""
    get = counter.run_of.get
    runs = counter.runs
    cells = counter.cells
    seen: dict[int, tuple[int, int, int, int]] = {}
    out: list[float] = []
    for p in places:
        row = [0.0] * RUN_FEATURES  # Python floats: numpy item writes cost more
        for rid in {
            get(p + _W),
            get(p + _N),
            get(p + _E),
            get(p + _NE),
            get(p + _SE),
            get(p + _S),
            get(p + _SW),
            get(p + _SS),
        }:
            if rid is None:
                continue
            numbers = seen.get(rid)
            if numbers is None:
                run = runs[rid]
                # a run's cells share its (locked) flavour
                numbers = seen[rid] = (
                    cells[run.cells[0]] & FLAVOUR_BITS,
                    len(run.cells),
                    run.held[me],
                    run.open,
                )
            f, size, held, free = numbers
            row[f] += size
            row[4 + f] += held
            row[8 + f] += free
        out += row
    return out


def run_summaries(counter: Counter, places: Sequence[int], me: int) -> np.ndarray:
    """``len(places) x 12``: the run summary of each place (module doc)."""
    out = np.array(run_rows(counter, places, me), dtype=np.float32)
    out = out.reshape(len(places), RUN_FEATURES)
    out /= 10.0
    return out
