"""Observation tensors, built from one player's ``PlayerView`` only.

An observation is one flat ``float32`` vector: the **board** planes
(``planes x W x W``, the counter seen through the action window, row ``y - lo``
and column ``x - lo``) followed by the **features** vector.  Players are
numbered *relative to the observer*: seat 0 is the observer, seat 1 the next
player in turn order, and so on.

Board planes (1.0 where true, else 0.0):

====================  ====================================================
plane                 meaning
====================  ====================================================
0-3                   the cell's (locked) flavour is C, S, H, B
4                     the cell holds a Cinnamon Roll
5                     the cell's donut is delivered (frozen)
6                     the cell belongs to the start card (neutral)
7 .. 7+n-1            the cell belongs to seat k (k = 0 .. n-1)
7+n                   the cell is in an open box (a not-delivered run of 3+)
====================  ====================================================

Features (in this order; sizes for ``n`` players):

==================  =======  ================================================
name                size     meaning
==================  =======  ================================================
tray                80       the observer's tray: slot (4) x quadrant NW, NE,
                             SE, SW as printed (4) x letter C, S, H, B, R (5)
to_move             n        one-hot seat of the player to move (all 0 at the end)
scores              n        points per seat
delivered           n        boxes delivered per seat (the tie-break)
tray_sizes          n        cards in each seat's tray
pile_sizes          n        cards in each seat's pile
unseen              5n       per seat, the C, S, H, B, R donuts on that seat's
                             cards the observer has not seen (``view.unseen``)
final_lap           1        1 once the Final Lap has started
final_lap_turns     1        turns left in the Final Lap (0 before it)
swap_streak         1        consecutive swaps and passes (the deadlock guard)
cards_left          1        cards in all trays and piles
==================  =======  ================================================

Nothing here reads another player's tray or any pile's order: the encoder
only ever receives a view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..core.cards import FLAVOURS, LETTERS
from ..core.counter import DELIVERED_BIT, FLAVOUR_BITS, OWNER_SHIFT, ROLL_BIT
from ..core.game import Game
from ..core.geometry import OFFSET, STRIDE
from ..core.rules import GAME_INFO
from ..core.view import PlayerView

TRAY_SLOTS = GAME_INFO.tray_size
_LETTER = {ch: i for i, ch in enumerate(LETTERS)}


@dataclass(frozen=True)
class ObservationLayout:
    """Shapes and slices of the flat observation vector."""

    players: int
    window: int

    @property
    def planes(self) -> int:
        return 8 + self.players

    @property
    def board_shape(self) -> tuple[int, int, int]:
        return (self.planes, self.window, self.window)

    @property
    def board_size(self) -> int:
        return self.planes * self.window * self.window

    @cached_property
    def feature_slices(self) -> dict[str, slice]:
        n = self.players
        sizes = [
            ("tray", TRAY_SLOTS * 4 * len(LETTERS)),
            ("to_move", n),
            ("scores", n),
            ("delivered", n),
            ("tray_sizes", n),
            ("pile_sizes", n),
            ("unseen", len(LETTERS) * n),
            ("final_lap", 1),
            ("final_lap_turns", 1),
            ("swap_streak", 1),
            ("cards_left", 1),
        ]
        out = {}
        at = 0
        for name, size in sizes:
            out[name] = slice(at, at + size)
            at += size
        return out

    @property
    def feature_size(self) -> int:
        return int(self.feature_slices["cards_left"].stop)

    @property
    def size(self) -> int:
        return self.board_size + self.feature_size

    def board(self, obs: np.ndarray) -> np.ndarray:
        """The board planes of a flat observation, shaped ``(planes, W, W)``."""
        return obs[: self.board_size].reshape(self.board_shape)

    def features(self, obs: np.ndarray) -> np.ndarray:
        return obs[self.board_size :]

    def feature(self, obs: np.ndarray, name: str) -> np.ndarray:
        """One named part of the features (see the module doc)."""
        return self.features(obs)[self.feature_slices[name]]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of every entry (for a ``Box`` space)."""
        n = self.players
        deck = GAME_INFO.deck_size
        low = np.zeros(self.size, dtype=np.float32)
        high = np.ones(self.size, dtype=np.float32)
        f = self.features(high)
        s = self.feature_slices
        donuts = 4 * deck * n  # every donut of every deck
        f[s["scores"]] = 2 * donuts  # each donut scores once, doubled at most
        f[s["delivered"]] = donuts // 3
        f[s["tray_sizes"]] = TRAY_SLOTS
        f[s["pile_sizes"]] = deck
        per_letter = np.array([28, 28, 28, 28, 8], dtype=np.float32)  # a standard deck
        f[s["unseen"]] = np.tile(per_letter, n)
        f[s["final_lap_turns"]] = n - 1
        f[s["swap_streak"]] = deck * n
        f[s["cards_left"]] = deck * n
        return low, high


class ObservationEncoder:
    """Builds observation vectors of one layout from players' views."""

    def __init__(self, players: int, window: int) -> None:
        self.layout = ObservationLayout(players, window)
        self._lo = -(window // 2)

    def encode(self, view: PlayerView, private: bool = True) -> np.ndarray:
        """The observation of ``view.player``; ``private=False`` leaves out
        the observer's own tray (a public observation)."""
        layout = self.layout
        n = layout.players
        me = view.player
        if len(view.names) != n:
            raise ValueError(f"this encoder is for {n} players, not {len(view.names)}")
        obs = np.zeros(layout.size, dtype=np.float32)
        w = layout.window
        board = obs[: layout.board_size].reshape(layout.board_shape)
        counter = view.counter
        off = OFFSET + self._lo
        count = len(counter.cells)
        if count:
            cells = np.fromiter(counter.cells.keys(), dtype=np.int64, count=count)
            codes = np.fromiter(counter.cells.values(), dtype=np.int64, count=count)
            rows = cells // STRIDE - off
            cols = cells % STRIDE - off
            inside = (rows >= 0) & (rows < w) & (cols >= 0) & (cols < w)
            rows, cols, codes = rows[inside], cols[inside], codes[inside]
            board[codes & FLAVOUR_BITS, rows, cols] = 1.0
            roll = (codes & ROLL_BIT) != 0
            board[4, rows[roll], cols[roll]] = 1.0
            frozen = (codes & DELIVERED_BIT) != 0
            board[5, rows[frozen], cols[frozen]] = 1.0
            owner = (codes >> OWNER_SHIFT) - 1
            board[np.where(owner < 0, 6, 7 + (owner - me) % n), rows, cols] = 1.0
        boxed = [c for rid in counter.big for c in counter.runs[rid].cells]
        if boxed:
            cells = np.array(boxed, dtype=np.int64)
            rows = cells // STRIDE - off
            cols = cells % STRIDE - off
            inside = (rows >= 0) & (rows < w) & (cols >= 0) & (cols < w)
            board[7 + n, rows[inside], cols[inside]] = 1.0

        self.features_into(layout.features(obs), view, private)
        return obs

    def features_into(self, feats: np.ndarray, view: PlayerView, private: bool = True) -> None:
        """Write the features (module doc) of ``view`` into ``feats`` (zeros)."""
        layout = self.layout
        n = layout.players
        me = view.player
        s = layout.feature_slices
        if private:
            self._tray(feats[s["tray"]], view.tray)
        seats = [(me + k) % n for k in range(n)]
        if view.to_move is not None and not view.finished:
            feats[s["to_move"].start + (view.to_move - me) % n] = 1.0
        feats[s["scores"]] = [view.scores[p] for p in seats]
        feats[s["delivered"]] = [view.boxes_delivered[p] for p in seats]
        feats[s["tray_sizes"]] = [view.tray_sizes[p] for p in seats]
        feats[s["pile_sizes"]] = [view.pile_sizes[p] for p in seats]
        unseen = feats[s["unseen"]].reshape(n, len(LETTERS))
        if view.unseen:
            for k, p in enumerate(seats):
                unseen[k] = _letters(view.unseen[p])
        lap = view.final_lap_turns
        feats[s["final_lap"]] = 0.0 if lap is None else 1.0
        feats[s["final_lap_turns"]] = 0.0 if lap is None else float(lap)
        feats[s["swap_streak"]] = view.swap_streak
        feats[s["cards_left"]] = view.cards_left

    def features_from_game(self, feats: np.ndarray, game: Game, me: int) -> None:
        """``features_into(feats, game.view(me))`` without building the view
        (``game_features``).  Everything after the tray is written at once
        (its parts are contiguous, in the module doc's order)."""
        s = self.layout.feature_slices
        ones, values = self.game_features(game, me)
        if ones:
            feats[ones] = 1.0
        feats[s["to_move"].start : s["cards_left"].stop] = values

    def game_features(self, game: Game, me: int) -> tuple[list[int], list[float]]:
        """The features of seat ``me`` as the entries of the tray that are 1
        and the values of everything after the tray, read from the game:
        only the seat's own tray, public counts and the multisets of the
        cards ``me`` has not seen (never their order or whose tray)."""
        n = self.layout.players
        seats = [(me + k) % n for k in range(n)]
        to_move = game.to_move
        values = [0.0] * n
        if to_move is not None and not game.finished:
            values[(to_move - me) % n] = 1.0
        scores = game.scores
        delivered = game.boxes_delivered
        trays, piles = game.trays, game.piles
        values += [scores[p] for p in seats]
        values += [delivered[p] for p in seats]
        values += [len(trays[p]) for p in seats]
        values += [len(piles[p]) for p in seats]
        if game.free:
            values += [0] * (len(LETTERS) * n)
        else:
            for p in seats:
                faces = "".join(piles[p]) if p == me else "".join(piles[p]) + "".join(trays[p])
                values += [faces.count(ch) for ch in LETTERS]
        lap = game.final_lap_turns
        values.append(0.0 if lap is None else 1.0)
        values.append(0.0 if lap is None else float(lap))
        values.append(game.swap_streak)
        values.append(game.cards_left)
        return tray_ones(trays[me]), values

    def encode_tray_only(self, tray: Sequence[str]) -> np.ndarray:
        """An observation with nothing but a tray (before the start card is
        turned, in the OpenSpiel game's deal)."""
        obs = np.zeros(self.layout.size, dtype=np.float32)
        feats = self.layout.features(obs)
        self._tray(feats[self.layout.feature_slices["tray"]], tray)
        return obs

    @staticmethod
    def _tray(out: np.ndarray, tray: Sequence[str]) -> None:
        """One-hot the tray into ``out`` (zeros): slot x quadrant x letter."""
        ones = tray_ones(tray)
        if ones:
            out[ones] = 1.0


def tray_ones(tray: Sequence[str]) -> list[int]:
    """The entries of the tray feature (slot x quadrant x letter) that are 1."""
    width = 4 * len(LETTERS)
    ones: list[int] = []
    for slot, face in enumerate(tray[:TRAY_SLOTS]):
        at = _FACE_ONES.get(face)
        if at is None:
            at = _FACE_ONES[face] = tuple(
                q * len(LETTERS) + _LETTER[ch] for q, ch in enumerate(face) if ch in _LETTER
            )  # an unknown card ("????") stays all zero
        base = slot * width
        ones += [base + i for i in at]
    return ones


#: Per face, the entries of its tray row that are 1 (quadrant x letter).
_FACE_ONES: dict[str, tuple[int, ...]] = {}
_FACE_LETTERS: dict[str, tuple[int, ...]] = {}


def _letters(*groups: Sequence[str]) -> list[int]:
    """C, S, H, B, R counts over the faces of ``groups`` (unknown faces count nothing)."""
    c = s = h = b = r = 0
    memo = _FACE_LETTERS
    for faces in groups:
        for face in faces:
            v = memo.get(face)
            if v is None:
                v = memo[face] = tuple(face.count(ch) for ch in LETTERS)
            c += v[0]
            s += v[1]
            h += v[2]
            b += v[3]
            r += v[4]
    return [c, s, h, b, r]


__all__ = ["FLAVOURS", "ObservationEncoder", "ObservationLayout"]
