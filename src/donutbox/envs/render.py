"""Pictures of a game for the environments' ``render()``.

- ``ansi``: the ``donutbox show`` drawing as plain text (counter, scores,
  piles and the tray of the player to move).
- ``rgb_array``: the action window as an image, ``CELL`` pixels a cell: the
  flavour's colour, paler once delivered; a dark dot on a Cinnamon Roll; a
  stripe along the top in the owner's colour (none for the start card); thin
  lines on the card grid of Squared Away.  A strip along the top marks the
  player to move in their colour, or grey when the game is over.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from ..core.counter import DELIVERED_BIT, FLAVOUR_BITS, OWNER_SHIFT, ROLL_BIT
from ..core.game import Game
from ..core.geometry import OFFSET, STRIDE
from ..render.text import game_text

RENDER_MODES: Final = ("ansi", "rgb_array")
CELL: Final = 8
STRIP: Final = 6

#: C, S, H, B (RGB), close to the terminal drawing's colours.
FLAVOUR_RGB: Final = np.array(
    [[139, 69, 19], [255, 105, 180], [210, 160, 90], [65, 105, 225]], dtype=np.uint8
)
OWNER_RGB: Final = np.array(
    [[31, 58, 95], [160, 40, 40], [31, 120, 42], [150, 120, 20]], dtype=np.uint8
)
BACKGROUND: Final = np.array([245, 240, 232], dtype=np.uint8)
GRID: Final = np.array([225, 220, 210], dtype=np.uint8)
ORIGIN: Final = np.array([200, 190, 175], dtype=np.uint8)


def ansi(game: Game) -> str:
    """The ``donutbox show`` drawing without colour codes."""
    return game_text(game).plain


def rgb_array(game: Game, window: int) -> np.ndarray:
    """An ``(STRIP + window * CELL, window * CELL, 3)`` uint8 image."""
    size = window * CELL
    img = np.empty((STRIP + size, size, 3), dtype=np.uint8)
    img[:] = BACKGROUND
    board = img[STRIP:]
    lo = -(window // 2)
    if game.rules.squared:
        for k in range(0, window, 2):
            board[k * CELL, :] = GRID
            board[:, k * CELL] = GRID
    # The start card's cells (0..1, 0..1) framed, as a landmark.
    o = -lo * CELL
    board[o - 1 : o + 2 * CELL + 1, o - 1 : o + 2 * CELL + 1] = ORIGIN
    off = OFFSET + lo
    for c, code in game.counter.cells.items():
        row, col = divmod(c, STRIDE)
        r, k = row - off, col - off
        if not (0 <= r < window and 0 <= k < window):
            continue
        y0, x0 = r * CELL, k * CELL
        colour = FLAVOUR_RGB[code & FLAVOUR_BITS].astype(np.int16)
        if code & DELIVERED_BIT:
            colour = (colour + 2 * BACKGROUND.astype(np.int16)) // 3
        board[y0 + 1 : y0 + CELL, x0 + 1 : x0 + CELL] = colour.astype(np.uint8)
        owner = (code >> OWNER_SHIFT) - 1
        if owner >= 0:
            board[y0 + 1 : y0 + 3, x0 + 1 : x0 + CELL] = OWNER_RGB[owner]
        if code & ROLL_BIT:
            m = CELL // 2
            board[y0 + m - 1 : y0 + m + 2, x0 + m - 1 : x0 + m + 2] = (40, 20, 10)
    to_move = game.to_move
    img[:STRIP] = OWNER_RGB[to_move] if to_move is not None else (128, 128, 128)
    return img


def draw(game: Game, mode: str, window: int) -> str | np.ndarray:
    """The drawing both environments return from ``render()``."""
    return ansi(game) if mode == "ansi" else rgb_array(game, window)
