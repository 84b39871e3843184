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


def run_summaries(counter: Counter, places: Sequence[int], me: int) -> np.ndarray:
    """``len(places) x 12``: the run summary of each place (module doc)."""
    run_of = counter.run_of
    runs = counter.runs
    cells = counter.cells
    rows: list[list[float]] = []
    for p in places:
        seen: list[int] = []
        row = [0.0] * RUN_FEATURES  # Python floats: numpy item writes cost more
        for d in _AROUND:
            c = p + d
            rid = run_of.get(c)
            if rid is None or rid in seen:
                continue
            seen.append(rid)
            run = runs[rid]
            f = cells[c] & FLAVOUR_BITS
            row[f] += len(run.cells)
            row[4 + f] += run.held[me]
            row[8 + f] += run.open
        rows.append(row)
    out = np.array(rows, dtype=np.float32).reshape(len(places), RUN_FEATURES)
    out /= 10.0
    return out
