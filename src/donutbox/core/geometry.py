"""Cells of the counter and the cards that cover them (docs/spec.md, 'Geometry').

A cell ``(x, y)`` is packed into one int, ``x + OFFSET + (y + OFFSET) * STRIDE``:
ints hash and compare much faster than tuples in the hot paths, neighbours are
plain additions, and the smallest packed value of a set of cells is its first
cell in reading order (smallest y, then smallest x).
"""

from __future__ import annotations

from typing import Final

#: Coordinates written in records are limited to this magnitude; real games
#: stay within a few hundred cells of the start card.
COORD_LIMIT: Final = 1_000_000
OFFSET: Final = 1 << 21
STRIDE: Final = 1 << 22

EAST: Final = 1
SOUTH: Final = STRIDE

#: Offsets from a card's position (its NW cell) to the cells it covers: NW, NE, SE, SW.
QUADRANTS: Final = (0, EAST, EAST + SOUTH, SOUTH)
QUADRANT_NAMES: Final = ("NW", "NE", "SE", "SW")

#: For each quadrant, the offsets of its two neighbours outside the card.
OUTSIDE: Final = (
    (-EAST, -SOUTH),
    (2 * EAST, EAST - SOUTH),
    (2 * EAST + SOUTH, EAST + 2 * SOUTH),
    (SOUTH - EAST, 2 * SOUTH),
)


def cell(x: int, y: int) -> int:
    """Pack a cell."""
    return x + OFFSET + (y + OFFSET) * STRIDE


def xy(c: int) -> tuple[int, int]:
    """Unpack a cell."""
    row, col = divmod(c, STRIDE)
    return col - OFFSET, row - OFFSET


def _zone_xy(cells: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """Offsets of every card position whose card covers one of ``cells`` or a
    neighbour of one: the positions whose openness or requirement can change
    when those cells change."""
    found: set[tuple[int, int]] = set()
    for cx, cy in cells:
        for nx, ny in ((cx, cy), (cx + 1, cy), (cx - 1, cy), (cx, cy + 1), (cx, cy - 1)):
            for qx, qy in ((0, 0), (1, 0), (0, 1), (1, 1)):
                found.add((nx - qx, ny - qy))
    return sorted(found, key=lambda p: (p[1], p[0]))


_CARD_ZONE: Final = _zone_xy(((0, 0), (1, 0), (1, 1), (0, 1)))
_CELL_ZONE: Final = tuple(_zone_xy(((0, 0),)))


def card_zone(step: int) -> tuple[int, ...]:
    """Offsets (from a newly placed card's position) of the positions on a
    grid of ``step`` to refresh after a placement.  The new card sits on the
    grid, so an offset is on it when both its coordinates are multiples of
    ``step``."""
    return tuple(x + y * STRIDE for x, y in _CARD_ZONE if x % step == 0 and y % step == 0)


def cell_zone_offsets() -> tuple[tuple[int, int], ...]:
    """Offsets (x, y) from a cell of the positions whose card covers it or a
    neighbour of it (whether one is on a layout's grid depends on the cell)."""
    return _CELL_ZONE
