"""The ``places`` encoding: actions against the open places, a board centred on the play.

This is the default encoding of every environment (``encoding="places"``);
the older fixed-window encoding (``codec.py``, ``observation.py``) stays
available as ``encoding="window"`` for comparison.

**Actions.**  Each turn the counter has a list of *candidate places*: every
open place (an empty card position touching a not-delivered donut, the
engine's ``Counter.places``) sorted in reading order (smallest ``y``, then
smallest ``x``), at most ``K`` of them (with more open, the **keep rule**:
the places where a card of the observer's tray fits come first, the others
fill what is left of ``K`` in reading order, and the ``K`` kept are listed in
reading order); and a list of *candidate boxes*: every
open box (a not-delivered run of 3+) named by its first cell in reading
order, sorted the same way, at most ``B``.  Both lists are public (they come
from the counter only).  Indices, in order:

1. **place** (``64 * K``): ``k * 64 + slot * 16 + rot_index * 4 + lock``:
   candidate place ``k``, tray ``slot`` 0-3 (only the first slot of a face is
   ever legal), rotation 0/90/180/270, Cinnamon Roll lock C/S/H/B (0 for a
   card without an R).  A policy's place logits reshape to ``(K, 4, 4, 4)``.
2. **box** (``B``): box-it the candidate box ``b``.
3. **swap** (4): swap the card in that tray slot.
4. **pass** (1).
5. **overflow** (1, the last): legal only if the player has legal moves but
   every one of them lies beyond the ``K``/``B`` bounds; it plays the first
   of them.  It never happened in random play (docs/research.md).

``K`` defaults to 128 / 192 / 256 for 2 / 3 / 4 players on Squared Away,
above the most open places ever measured, also in adversarial play that
always extends the counter in one direction; on Splitzkies (open places
twice as many: a card may sit at any cell) to 136 / 192 / 256, above the
most places where a card of the tray fits in random play, so that two
players' observation stays within 5,000 floats (``DEFAULT_PLACES``); in
one-direction play the keep rule leaves fitting places out.
``B`` defaults to a proven bound (``default_boxes``).  A position with a
fitting place or a box beyond them sets ``overflow`` in the environments'
``info`` and warns once, instead of hiding it.

**Observation.**  ``observation="compact"`` (the default): a candidate
block (what each place/box index means, each place with the run summaries
of ``compact.py``), then the features of ``observation.py``: 4,632 floats
for two players (4,880 on Splitzkies).  ``observation="board"`` puts ``planes x W x W`` board
cells centred on the bounding box of the occupied cells first (so the play
can drift anywhere: only the spread matters) and leaves the run summaries
out.  The default board width is a proven
bound (``default_board``: 112 / 168 / 216 cells for 2 / 3 / 4 players), so
every card and every open place of every game is on it; a smaller
``window=`` is checked, and anything it misses is flagged in ``info``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from typing import Final

import numpy as np

from ..core.cards import FLAVOUR_INDEX, ROTATIONS
from ..core.counter import DELIVERED_BIT, FLAVOUR_BITS, OWNER_SHIFT, ROLL_BIT, Counter
from ..core.game import Game
from ..core.geometry import OFFSET, STRIDE
from ..core.matching import SLOT_LOCK, SLOT_ROT, fit_slots
from ..core.moves import BOX, PASS, PLACE, SWAP, Move
from ..core.policy import MatchRule
from ..core.rules import GAME_INFO, Rules
from ..core.view import PlayerView
from .codec import (  # one tray/index reading for both encodings
    ActionCodec,
    _face,
    _index,
    _slot,
    card_channel,
    channel_card,
)
from .compact import RUN_FEATURES, run_summaries
from .observation import ObservationEncoder, ObservationLayout

TRAY_SLOTS: Final = GAME_INFO.tray_size
CHOICES: Final = 16
CHANNELS: Final = TRAY_SLOTS * CHOICES  # 64 per candidate place

#: Default ``K`` (candidate places) by (Splitzkies?, players).  Squared
#: Away: above the most open places ever measured, also in one-direction
#: play (102 / 152 / 202 for 2 / 3 / 4 players).  Splitzkies, whose open
#: places (a card at any cell) are twice as many: 136 for two players, the
#: largest multiple of 8 that keeps the observation within 5,000 floats,
#: above the most places where a tray card fits in random play (127 /
#: 175 / 188); the keep rule decides beyond it (docs/research.md, Bounds).
DEFAULT_PLACES: Final = {
    (False, 2): 128,
    (False, 3): 192,
    (False, 4): 256,
    (True, 2): 136,
    (True, 3): 192,
    (True, 4): 256,
}


def default_boxes(players: int) -> int:
    """Default ``B``: a proven bound.  Open boxes are disjoint runs of 3 or
    more donuts, and a game never has more than ``4 * 30 * players`` donuts
    on the counter, so at most ``40 * players`` boxes are open at once."""
    return 4 * GAME_INFO.deck_size * players // 3


def default_board(players: int) -> int:
    """Default board width (cells) of the centred observation: a proven bound.

    A card must touch a donut already down, so it widens (or heightens) the
    occupied area by at most 2 cells, and a game has at most ``26 n - 1``
    placements (``length.py``: ``25 n`` before the Final Lap, ``n - 1`` in
    it), so the occupied area spreads over at most ``s = 2 + 2 (26 n - 1)``
    cells.  The board centred on it (NW corner rounded to even) holds every
    cell and every open place's NW cell when ``W >= s + 5``; rounded up to a
    multiple of 8: 112 / 168 / 216 cells for 2 / 3 / 4 players.
    """
    spread = 2 + 2 * (26 * players - 1)
    return -(-(spread + 5) // 8) * 8


#: The default board of two players (``default_board(2)``).
DEFAULT_BOARD: Final = 112

_ROT_INDEX: Final = {rot: i for i, rot in enumerate(ROTATIONS)}
_WARNED: set[str] = set()


def overflow_warning(what: str) -> None:
    """Warn once per kind of overflow (the environments also flag it in ``info``)."""
    if what not in _WARNED:
        _WARNED.add(what)
        warnings.warn(
            f"donutbox.envs: a position exceeds the encoding's {what} bound; "
            "see info['overflow'] and docs/research.md",
            RuntimeWarning,
            stacklevel=3,
        )


def _pack(x: int, y: int) -> int:
    return x + OFFSET + (y + OFFSET) * STRIDE


@dataclass
class Turn:
    """The candidate lists of one position (public), and a tray."""

    places: list[int]  # packed cells, reading order, at most K
    place_index: dict[int, int]
    boxes: list[int]  # first cells of open boxes, reading order, at most B
    box_index: dict[int, int]
    tray: tuple[str, ...]
    lost_places: int = 0  # open places beyond K where a card of the tray fits
    lost_boxes: int = 0


@dataclass(frozen=True)
class PlacesCodec:
    """Action indices <-> moves against a position's candidate lists (module doc)."""

    rules: Rules = field(default_factory=Rules)
    players: int = 2
    max_places: int | None = None
    max_boxes: int | None = None

    def __post_init__(self) -> None:
        k = self.max_places
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise ValueError(f"max_places must be a positive integer, not {k!r}")
        b = self.max_boxes
        if b is not None and (isinstance(b, bool) or not isinstance(b, int) or b < 1):
            raise ValueError(f"max_boxes must be a positive integer, not {b!r}")

    @cached_property
    def places(self) -> int:
        """``K``: how many candidate places the actions can name."""
        if self.max_places is not None:
            return self.max_places
        return DEFAULT_PLACES[(not self.rules.squared, self.players)]

    @cached_property
    def boxes(self) -> int:
        """``B``: how many candidate boxes the actions can name."""
        return default_boxes(self.players) if self.max_boxes is None else self.max_boxes

    @cached_property
    def box_base(self) -> int:
        return CHANNELS * self.places

    @cached_property
    def swap_base(self) -> int:
        return self.box_base + self.boxes

    @cached_property
    def pass_action(self) -> int:
        return self.swap_base + TRAY_SLOTS

    @cached_property
    def overflow_action(self) -> int:
        return self.pass_action + 1

    @cached_property
    def size(self) -> int:
        return self.overflow_action + 1

    # -- the candidate lists --------------------------------------------------

    def turn(self, counter: Counter, tray: Sequence[str]) -> Turn:
        """The candidate lists of a counter, for a player holding ``tray``."""
        places = sorted(counter.places)
        lost_p = 0
        if len(places) > self.places:
            places, lost_p = self._keep(counter, places, tray)
        runs = counter.runs
        boxes = sorted(runs[rid].first for rid in counter.box_ids)
        lost_b = max(0, len(boxes) - self.boxes)
        if lost_b:
            boxes = boxes[: self.boxes]
        return Turn(
            places,
            {p: i for i, p in enumerate(places)},
            boxes,
            {c: i for i, c in enumerate(boxes)},
            tuple(tray),
            lost_p,
            lost_b,
        )

    def _keep(
        self, counter: Counter, places: list[int], tray: Sequence[str]
    ) -> tuple[list[int], int]:
        """The keep rule (module doc) for more than ``K`` open ``places`` (in
        reading order): the ``K`` kept, in reading order, and how many places
        where a card of ``tray`` fits are left out."""
        k = self.places
        memo = _FITBITS.get(self.rules.match_rule)
        if memo is None:
            memo = _FITBITS[self.rules.match_rule] = {}
        fits = []
        for face in dict.fromkeys(tray[:TRAY_SLOTS]):
            if "?" in face:
                continue  # a card not seen (OpenSpiel's deal) fits nowhere known
            bits = memo.get(face)
            if bits is None:
                bits = memo[face] = _FitMemo(self.rules.match_rule, face)
            fits.append(bits)
        reqs = counter.places
        fitting: list[int] = []
        other: list[int] = []
        for p in places:
            key = reqs[p] & 0xFFFF
            (fitting if any(f[key] for f in fits) else other).append(p)
        if len(fitting) >= k:
            return fitting[:k], len(fitting) - k
        return sorted(fitting + other[: k - len(fitting)]), 0

    # -- moves <-> indices ----------------------------------------------------

    def encode(self, move: Move, turn: Turn) -> int:
        """The index of ``move`` in this turn; ValueError naming why if none."""
        kind = move.kind
        tray = turn.tray
        if kind == PLACE:
            channel = card_channel(move, tray)
            k = turn.place_index.get(_pack(move.x, move.y))
            if k is None:
                raise ValueError(f"{move}: {move.x},{move.y} is not a candidate place")
            return k * CHANNELS + channel
        if kind == BOX:
            b = turn.box_index.get(_pack(move.x, move.y))
            if b is None:
                raise ValueError(f"{move}: no candidate box starts at {move.x},{move.y}")
            return self.box_base + b
        if kind == SWAP:
            return self.swap_base + _slot(move.face, tray)
        if kind == PASS:
            return self.pass_action
        raise ValueError(f"unknown move kind {kind!r}")

    def decode(self, action: int, turn: Turn) -> Move:
        """The move an index stands for in this turn (ValueError if none)."""
        a = _index(action, self.size)
        tray = turn.tray
        if a < self.box_base:
            k, channel = divmod(a, CHANNELS)
            if k >= len(turn.places):
                raise ValueError(f"action {a}: there is no candidate place {k} now")
            face, rot, lock_letter = channel_card(channel, tray, a)
            row, col = divmod(turn.places[k], STRIDE)
            return Move(PLACE, face, col - OFFSET, row - OFFSET, rot, lock_letter)
        if a < self.swap_base:
            b = a - self.box_base
            if b >= len(turn.boxes):
                raise ValueError(f"action {a}: there is no candidate box {b} now")
            row, col = divmod(turn.boxes[b], STRIDE)
            return Move(BOX, "", col - OFFSET, row - OFFSET)
        if a < self.pass_action:
            return Move(SWAP, _face(a - self.swap_base, tray))
        if a == self.pass_action:
            return Move(PASS)
        raise ValueError(f"action {a} (overflow) stands for a move beyond the bounds")

    def to_notation(self, action: int, turn: Turn) -> str:
        return str(self.decode(action, turn))

    def from_notation(self, text: str, turn: Turn) -> int:
        return self.encode(Move.parse(text), turn)

    def describe(self, action: int) -> str:
        """An index in words, without a position: ``place3 slot1/90 lock2``."""
        a = _index(action, self.size)
        if a < self.box_base:
            k, channel = divmod(a, CHANNELS)
            slot, choice = divmod(channel, CHOICES)
            rot_index, lock = divmod(choice, 4)
            return f"place{k} slot{slot}/{ROTATIONS[rot_index]} lock{lock}"
        if a < self.swap_base:
            return f"box{a - self.box_base}"
        if a < self.pass_action:
            return f"swap slot{a - self.swap_base}"
        return PASS if a == self.pass_action else "overflow"

    def legal(self, moves: Iterable[Move], turn: Turn) -> tuple[dict[int, Move], int]:
        """The engine's legal moves as ``action -> move``, and how many legal
        moves lie beyond the bounds (0 in every measured game)."""
        out: dict[int, Move] = {}
        slots: dict[str, int] = {}
        for i, face in enumerate(turn.tray[:TRAY_SLOTS]):
            slots.setdefault(face, i)
        place_index = turn.place_index
        box_index = turn.box_index
        rot_index = _ROT_INDEX
        lock_index = FLAVOUR_INDEX
        lost = 0
        first_lost: Move | None = None
        for move in moves:
            kind = move.kind
            if kind == PLACE:
                k = place_index.get(move.x + OFFSET + (move.y + OFFSET) * STRIDE)
                if k is None:
                    lost += 1
                    first_lost = first_lost or move
                    continue
                lock = move.lock
                out[
                    k * CHANNELS
                    + slots[move.face] * CHOICES
                    + rot_index[move.rot] * 4
                    + (lock_index[lock] if lock else 0)
                ] = move
            elif kind == BOX:
                b = box_index.get(move.x + OFFSET + (move.y + OFFSET) * STRIDE)
                if b is None:
                    lost += 1
                    first_lost = first_lost or move
                    continue
                out[self.box_base + b] = move
            elif kind == SWAP:
                out[self.swap_base + slots[move.face]] = move
            else:
                out[self.pass_action] = move
        if not out and first_lost is not None:
            out[self.overflow_action] = first_lost
        return out, lost

    def legal_parts(
        self, game: Game, turn: Turn, keys: list[int] | None = None
    ) -> tuple[list[int], list[int], list[int], int]:
        """The legal actions of the player to move in parts, before any
        mask is built (``legal_actions`` builds one, the batched
        environment writes many at once): the tray slot of each distinct
        face; per face (in that order), per candidate place, the fitting
        (rotation, lock) choices as a 16-bit set (``[]`` if none fits
        anywhere); the other legal actions (boxes, swaps or pass,
        overflow); and how many legal moves lie beyond the bounds.
        ``keys``: the candidate places' requirement keys, if the caller has
        them."""
        match = game.rules.match_rule
        counter = game.counter
        places = counter.places
        me = game.to_move
        assert me is not None
        faces: list[str] = []
        slots: list[int] = []
        for i, face in enumerate(turn.tray[:TRAY_SLOTS]):
            if face not in faces:
                faces.append(face)
                slots.append(i)
        memo = _FITBITS.get(match)
        if memo is None:
            memo = _FITBITS[match] = {}
        columns: list[int] = []  # face by face, place by place
        if turn.places and faces:
            # Per distinct face, the fitting (rotation, lock) choices of every
            # candidate place as a 16-bit set, read from a per-face memo.
            if keys is None:
                keys = [places[p] & 0xFFFF for p in turn.places]
            for face in faces:
                fits = memo.get(face)
                if fits is None:
                    fits = memo[face] = _FitMemo(match, face)
                columns += map(fits.__getitem__, keys)
            if not any(columns):
                columns = []
        placed = bool(columns)
        lost = 0
        if turn.lost_places:
            # fitting places beyond K: count (never build) their legal placements
            for p in places:
                if p not in turn.place_index:
                    key = places[p] & 0xFFFF
                    for face in faces:
                        lost += len(match.fits(face, key))
            placed = placed or lost > 0
        runs = counter.runs
        box_index = turn.box_index
        may_box = game.rules.scoring_rule.may_box
        others = []
        for rid in counter.box_ids:
            r = runs[rid]
            if may_box(r.held[me], len(r.cells)):
                b = box_index.get(r.first)
                if b is None:
                    lost += 1
                else:
                    others.append(self.box_base + b)
        if not placed:
            if game.piles[me]:
                others += [self.swap_base + i for i in slots]
            else:
                others.append(self.pass_action)
        if lost and not columns and not others:
            others.append(self.overflow_action)
        return slots, columns, others, lost

    def legal_actions(self, game: Game, turn: Turn) -> tuple[LegalActions, int]:
        """The legal actions of the player to move, straight from the open
        places and the matching rule (the same rule ``Game.legal_moves``
        applies; a test checks they agree move for move), and how many legal
        moves lie beyond the bounds.  Built as a mask with numpy; moves are
        decoded only when asked for."""
        slots, columns, others, lost = self.legal_parts(game, turn)
        mask = np.zeros(self.size, dtype=np.int8)
        if columns:
            n = len(turn.places)
            f = len(slots)
            bits = np.fromiter(columns, dtype=np.intp, count=f * n).reshape(f, n).T
            block = mask[: self.box_base].reshape(self.places, TRAY_SLOTS, CHOICES)
            if slots[-1] == f - 1:  # the faces are slots 0 .. f-1
                block[:n, :f] = _BITS8[bits]
            else:
                block[:n, slots] = _BITS8[bits]
        if others:
            mask[others] = 1
        return LegalActions(self, turn, game, mask), lost

    def mask(self, legal: Iterable[int], out: np.ndarray | None = None) -> np.ndarray:
        """An int8 mask of length ``size`` (written into ``out`` if given)."""
        if isinstance(legal, LegalActions):
            if out is None:
                return legal.mask.copy()
            out[:] = legal.mask
            return out
        if out is None:
            out = np.zeros(self.size, dtype=np.int8)
        else:
            out.fill(0)
        idx = list(legal)
        if idx:
            out[idx] = 1
        return out


#: Per matching rule, per face, requirement -> the fitting (rotation, lock)
#: choices as a 16-bit set (bit ``rot_index * 4 + lock``).
_FITBITS: Final[dict[object, dict[str, _FitMemo]]] = {}
#: The 16 bits of every 16-bit set, as int8 rows (a mask's 16 choices of a slot).
_BITS8: Final = ((np.arange(1 << 16)[:, None] >> np.arange(CHOICES)) & 1).astype(np.int8)


class _FitMemo(dict[int, int]):
    """One face's requirement -> fitting choices as a 16-bit set, each
    worked out (from the matching rule) the first time it is asked for."""

    def __init__(self, match: MatchRule, face: str) -> None:
        super().__init__()
        self.match = match
        self.face = face

    def __missing__(self, key: int) -> int:
        # ``match.fits(face, key)`` as bits: the same slots, read straight
        # from the matching tables (no tuple of choices built)
        bits = 0
        for slot in fit_slots(self.face, key, self.match.accept_table()):
            bits |= _SLOT_BIT[slot]
        self[key] = bits
        return bits


#: Per (rotation, lock) slot of ``matching``, its bit in a 16-bit choice set.
_SLOT_BIT: Final = tuple(
    1 << (_ROT_INDEX[rot] * 4 + (FLAVOUR_INDEX[lock] if lock else 0))
    for rot, lock in zip(SLOT_ROT, SLOT_LOCK, strict=True)
)


class LegalActions(Mapping[int, Move]):
    """The legal actions of one turn as a read-only ``action -> Move``
    mapping over its mask; a move is decoded only when looked up."""

    __slots__ = ("_actions", "_codec", "_game", "_turn", "mask")

    def __init__(self, codec: PlacesCodec, turn: Turn, game: Game, mask: np.ndarray) -> None:
        self._codec = codec
        self._turn = turn
        self._game = game
        self.mask = mask  # int8, read-only by convention: copy before changing
        self._actions: list[int] | None = None

    def __getitem__(self, action: int) -> Move:
        if action not in self:
            raise KeyError(action)
        if action == self._codec.overflow_action:
            return _first_lost(self._game, self._turn, self._codec)
        return self._codec.decode(action, self._turn)

    def __contains__(self, action: object) -> bool:
        if isinstance(action, bool) or not isinstance(action, int | np.integer):
            return False
        return 0 <= int(action) < len(self.mask) and bool(self.mask[int(action)])

    def get(self, action: object, default: Move | None = None) -> Move | None:  # type: ignore[override]
        """``self[action]``, or ``default`` if it is not legal (one check)."""
        if isinstance(action, bool) or not isinstance(action, int | np.integer):
            return default
        a = int(action)
        if not (0 <= a < len(self.mask) and self.mask[a]):
            return default
        if a == self._codec.overflow_action:
            return _first_lost(self._game, self._turn, self._codec)
        return self._codec.decode(a, self._turn)

    def __iter__(self) -> Iterator[int]:
        return iter(self.actions())

    def __len__(self) -> int:
        return len(self.actions())

    def actions(self) -> list[int]:
        """The legal action indices, in increasing order."""
        if self._actions is None:
            self._actions = np.flatnonzero(self.mask).tolist()
        return self._actions


def _first_lost(game: Game, turn: Turn, codec: PlacesCodec) -> Move:
    for move in game.legal_moves():
        try:
            codec.encode(move, turn)
        except ValueError:
            return move
    raise KeyError(codec.overflow_action)


# -- observations ---------------------------------------------------------------

#: Per candidate place: present, row, column (window cells, / W), then the
#: place's requirement (16 bits: quadrant NW, NE, SE, SW x flavour C, S, H, B
#: of the not-delivered neighbours it must match).
PLACE_FEATURES: Final = 3 + 16


def box_features(players: int) -> int:
    """Per candidate box: present, row, column (/ W), size / 10, has an R,
    then donuts held per seat (relative to the observer) / 10."""
    return 5 + players


def box_rows(
    counter: Counter, boxes: Sequence[int], me: int, players: int, offr: int, offc: int, w: int
) -> list[float]:
    """The ``boxes`` rows of the candidate boxes (each given by its first
    packed cell), laid out as ``box_features`` says, one after the other;
    ``offr``/``offc`` are the view's corner and ``w`` its width."""
    runs = counter.runs
    run_of = counter.run_of
    seats = [(me + k) % players for k in range(players)]
    col = STRIDE - 1
    values: list[float] = []
    for first in boxes:
        run = runs[run_of[first]]
        held = run.held
        values += (
            1.0,
            ((first >> 22) - offr) / w,
            ((first & col) - offc) / w,
            len(run.cells) / 10,
            1.0 if run.rolls else 0.0,
        )
        values += [held[p] / 10 for p in seats]
    return values


#: The observations of the ``places`` encoding (module doc).
OBSERVATIONS: Final = ("compact", "board")


@dataclass(frozen=True)
class CentredLayout:
    """Shapes of the ``places`` observation: ``board`` (planes x W x W; not
    in the compact observation), ``places`` (K x 19, or K x 31 with the run
    summaries of the compact one), ``boxes`` (B x (5 + n)), ``features`` (as
    ``observation.py``).  The flat vector is those parts, in that order."""

    players: int
    board: int
    places: int
    boxes: int
    show_board: bool = True

    @property
    def place_features(self) -> int:
        """Numbers per candidate place."""
        return PLACE_FEATURES if self.show_board else PLACE_FEATURES + RUN_FEATURES

    @property
    def planes(self) -> int:
        # C S H B, roll, delivered, start card, seat 0..n-1, open box, open place
        return 9 + self.players

    @property
    def board_shape(self) -> tuple[int, int, int]:
        return (self.planes, self.board, self.board)

    @cached_property
    def feature_layout(self) -> ObservationLayout:
        """The features' layout (``observation.py``, without its board)."""
        return ObservationLayout(self.players, 0)

    @cached_property
    def slices(self) -> dict[str, slice]:
        sizes = [("board", self.planes * self.board * self.board)] if self.show_board else []
        sizes += [
            ("places", self.places * self.place_features),
            ("boxes", self.boxes * box_features(self.players)),
            ("features", self.feature_layout.feature_size),
        ]
        out, at = {}, 0
        for name, size in sizes:
            out[name] = slice(at, at + size)
            at += size
        return out

    @property
    def size(self) -> int:
        return int(self.slices["features"].stop)

    def part(self, obs: np.ndarray, name: str) -> np.ndarray:
        """``board``, ``places``, ``boxes`` or ``features`` of a flat observation, shaped."""
        if name not in self.slices:
            raise ValueError(f"the observation has no {name!r} part: {', '.join(self.slices)}")
        flat = obs[self.slices[name]]
        if name == "board":
            return flat.reshape(self.board_shape)
        if name == "places":
            return flat.reshape(self.places, self.place_features)
        if name == "boxes":
            return flat.reshape(self.boxes, box_features(self.players))
        return flat

    def feature(self, obs: np.ndarray, name: str) -> np.ndarray:
        return self.part(obs, "features")[self.feature_layout.feature_slices[name]]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        low = np.zeros(self.size, dtype=np.float32)
        high = np.ones(self.size, dtype=np.float32)
        # sizes and holdings: at most every donut of every deck, / 10
        # a candidate's row and column may lie a little outside the board
        for name in ("places", "boxes"):
            self.part(low, name)[:, 1:3] = -1.0
            self.part(high, name)[:, 1:3] = 2.0
        if not self.show_board:  # run summaries: at most every donut (and 4 edges each)
            self.part(high, "places")[:, PLACE_FEATURES:] = (
                16 * GAME_INFO.deck_size * self.players / 10
            )
        boxes = self.part(high, "boxes")
        boxes[:, 3] = 4 * GAME_INFO.deck_size * self.players / 10
        boxes[:, 5:] = 4 * GAME_INFO.deck_size / 10
        _, fhigh = self.feature_layout.bounds()
        high[self.slices["features"]] = fhigh[self.feature_layout.board_size :]
        return low, high


#: The board's NW cell (x0, y0), occupied cells outside it, and the occupied
#: cells' rows, columns (on the board) and packed codes (None when empty),
#: and whether the occupied area comes near the board's edge.
Origin = tuple[int, int, int, np.ndarray | None, np.ndarray | None, np.ndarray | None, bool]
_MIN: Final = np.minimum.reduce
_MAX: Final = np.maximum.reduce


def _cell_planes(players: int, board: int, me: int) -> np.ndarray:
    """Per packed cell code (``counter.py``), the flat offsets of its four
    planes seen by seat ``me``: flavour, roll, delivered, owner (a plane that
    does not apply repeats the flavour's, so one write sets them all)."""
    ww = board * board
    table = np.zeros((128, 4), dtype=np.intp)
    for code in range(128):
        flavour = code & FLAVOUR_BITS
        owner = (code >> OWNER_SHIFT) - 1
        if owner >= players:
            continue
        table[code] = (
            flavour * ww,
            (4 if code & ROLL_BIT else flavour) * ww,
            (5 if code & DELIVERED_BIT else flavour) * ww,
            (6 if owner < 0 else 7 + (owner - me) % players) * ww,
        )
    return table


class _CellTrack:
    """The occupied cells of one counter as numpy arrays (packed cell, its
    row, column, code; in the order of ``counter.cells``) and their bounding
    box, kept up to date from one ply to the next instead of rebuilt: a
    counter only ever gains cells (appended to ``cells``, which keeps
    insertion order) and marks cells delivered (then the codes are
    re-read).  ``origin`` is ``CentredEncoder._origin`` from them."""

    __slots__ = ("c0", "c1", "codes", "cols", "counter", "delivered", "n", "r0", "r1", "rows")

    def __init__(self) -> None:
        self.counter: Counter | None = None
        self.n = 0
        self.delivered = 0
        self.rows = np.zeros(0, dtype=np.int64)
        self.cols = np.zeros(0, dtype=np.int64)
        self.codes = np.zeros(0, dtype=np.int64)
        self.r0 = self.r1 = self.c0 = self.c1 = 0

    def sync(self, counter: Counter) -> int:
        """Catch up with ``counter``; the number of its cells."""
        cells = counter.cells
        n = len(cells)
        if counter is not self.counter or n < self.n:
            self.counter = counter
            self.n = 0
            self.delivered = 0
        if n > self.n:
            if n > len(self.rows):
                size = max(2 * n, 64)
                for name in ("rows", "cols", "codes"):
                    grown = np.zeros(size, dtype=np.int64)
                    old = getattr(self, name)
                    grown[: len(old)] = old
                    setattr(self, name, grown)
            new = list(islice(cells, self.n, None))
            rows = [c >> 22 for c in new]  # STRIDE = 1 << 22
            cols = [c & (STRIDE - 1) for c in new]
            if self.n:
                r0, r1, c0, c1 = min(rows), max(rows), min(cols), max(cols)
                self.r0 = min(self.r0, r0)
                self.r1 = max(self.r1, r1)
                self.c0 = min(self.c0, c0)
                self.c1 = max(self.c1, c1)
            else:
                self.r0, self.r1, self.c0, self.c1 = min(rows), max(rows), min(cols), max(cols)
            self.rows[self.n : n] = rows
            self.cols[self.n : n] = cols
            self.codes[self.n : n] = [cells[c] for c in new]
            self.n = n
        delivered = n - len(counter.run_of)  # every cell not delivered has a run
        if delivered != self.delivered:
            self.codes[:n] = np.fromiter(cells.values(), dtype=np.int64, count=n)
            self.delivered = delivered
        return n


class CentredEncoder:
    """Observations of the ``places`` encoding (module doc), from a view or
    from a game and a seat (reading only what that seat's view holds)."""

    def __init__(
        self, players: int, board: int, codec: PlacesCodec, show_board: bool = True
    ) -> None:
        if isinstance(board, bool) or not isinstance(board, int) or board < 8 or board % 2:
            raise ValueError(f"board must be an even integer of at least 8, not {board!r}")
        self.codec = codec
        self.layout = CentredLayout(players, board, codec.places, codec.boxes, show_board)
        self._features = ObservationEncoder(players, 0)
        self._cell_planes = [_cell_planes(players, board, me) for me in range(players)]

    def origin(self, counter: Counter) -> tuple[int, int, int]:
        """The window's NW cell (x0, y0) and how many occupied cells fall
        outside it (0 unless the play spreads wider than the board)."""
        return self._origin(counter)[:3]

    def _tracked_origin(self, counter: Counter, track: _CellTrack) -> Origin:
        """``_origin(counter)``, the same values, from ``track`` (synced
        here): no pass over every cell unless the play comes near the edge."""
        n = track.sync(counter)
        w = self.layout.board
        if not n:
            return -(w // 2), -(w // 2), 0, None, None, None, False
        r0, r1, c0, c1 = track.r0, track.r1, track.c0, track.c1
        if r1 - r0 >= w - 8 or c1 - c0 >= w - 8:
            return self._origin(counter)  # near the edge: counted exactly there
        y0 = ((r0 + r1 + 1) // 2 - w // 2) & ~1
        x0 = ((c0 + c1 + 1) // 2 - w // 2) & ~1
        return (
            x0 - OFFSET,
            y0 - OFFSET,
            0,
            track.rows[:n] - y0,
            track.cols[:n] - x0,
            track.codes[:n],
            False,
        )

    def _origin(self, counter: Counter) -> Origin:
        cells = counter.cells
        w = self.layout.board
        if not cells:
            return -(w // 2), -(w // 2), 0, None, None, None, False
        count = len(cells)
        c = np.fromiter(cells.keys(), dtype=np.int64, count=count)
        codes = np.fromiter(cells.values(), dtype=np.int64, count=count)
        rows = c >> 22  # STRIDE = 1 << 22
        cols = c & (STRIDE - 1)
        r0, r1 = int(_MIN(rows)), int(_MAX(rows))
        c0, c1 = int(_MIN(cols)), int(_MAX(cols))
        # centre, on even coordinates so that Squared Away's grid stays put
        y0 = ((r0 + r1 + 1) // 2 - w // 2) & ~1
        x0 = ((c0 + c1 + 1) // 2 - w // 2) & ~1
        rows -= y0
        cols -= x0
        lost = 0
        # Not near the edge, the occupied area lies 3 or more cells inside
        # the board on every side, and so does every open place.
        near = r1 - r0 >= w - 8 or c1 - c0 >= w - 8
        if near:  # count exactly
            inside = (rows >= 0) & (rows < w) & (cols >= 0) & (cols < w)
            lost = int(count - inside.sum())
            rows, cols, codes = rows[inside], cols[inside], codes[inside]
        return x0 - OFFSET, y0 - OFFSET, lost, rows, cols, codes, near

    def encode(
        self, view: PlayerView, turn: Turn | None = None, private: bool = True
    ) -> tuple[np.ndarray, int]:
        """The observation of ``view.player`` and how many occupied cells it
        could not show (0 unless the board bound is exceeded)."""
        if turn is None:
            turn = self.codec.turn(view.counter, view.tray if private else ())
        obs = np.zeros(self.layout.size, dtype=np.float32)
        lost = self._board(obs, view.counter, view.player, turn)
        feats = obs[self.layout.slices["features"]]
        self._features.features_into(feats, view, private)
        return obs, lost

    def encode_game(
        self, game: Game, seat: int, turn: Turn | None = None, origin: Origin | None = None
    ) -> tuple[np.ndarray, int]:
        """``encode(game.view(seat))`` without building the view: reads the
        counter, the seat's own tray and public counts only (``origin``:
        ``_origin(game.counter)`` if the caller has it)."""
        if turn is None:
            turn = self.codec.turn(game.counter, game.trays[seat])
        obs = np.zeros(self.layout.size, dtype=np.float32)
        lost = self._board(obs, game.counter, seat, turn, origin)
        feats = obs[self.layout.slices["features"]]
        self._features.features_from_game(feats, game, seat)
        return obs, lost

    def _board(
        self,
        obs: np.ndarray,
        counter: Counter,
        me: int,
        turn: Turn,
        origin: Origin | None = None,
    ) -> int:
        layout = self.layout
        n = layout.players
        w = layout.board
        ww = w * w
        drawn = layout.show_board
        # the board planes, flat: plane * W * W + row * W + col (a dummy if not drawn)
        flat = obs[: layout.planes * ww] if drawn else np.zeros(1, dtype=np.float32)
        x0, y0, lost, rows, cols, codes, near = self._origin(counter) if origin is None else origin
        offr = y0 + OFFSET
        offc = x0 + OFFSET
        if not drawn:
            pass
        elif rows is not None and cols is not None and codes is not None:
            # one write: each cell's four planes (flavour, roll, delivered,
            # owner; a plane that does not apply repeats the flavour's)
            planes = self._cell_planes[me]
            flat[(planes[codes] + (rows * w + cols)[:, None]).ravel()] = 1.0
        runs = counter.runs
        mask = STRIDE - 1
        ones: list[int] = []  # board entries set to 1 besides the cells' (when not near)
        if counter.box_ids and drawn:
            if near:
                boxed = [cc for rid in counter.box_ids for cc in runs[rid].cells]
                bc = np.array(boxed, dtype=np.int64)
                br = (bc >> 22) - offr
                bk = (bc & mask) - offc
                ok = (br >= 0) & (br < w) & (bk >= 0) & (bk < w)
                flat[(7 + n) * ww + br[ok] * w + bk[ok]] = 1.0
            else:
                base = (7 + n) * ww - offr * w - offc
                ones = [
                    base + (cc >> 22) * w + (cc & mask)
                    for rid in counter.box_ids
                    for cc in runs[rid].cells
                ]
        tplaces = turn.places
        if tplaces:
            count = len(tplaces)
            reqs = counter.places
            width = layout.place_features
            block = obs[layout.slices["places"]].reshape(layout.places, width)[:count]
            # present and the requirement bits in one gather, then row and column
            block[:, :PLACE_FEATURES] = _PLACE_ROWS[[reqs[p] & 0xFFFF for p in tplaces]]
            block[:, 1:3] = [(((p >> 22) - offr) / w, ((p & mask) - offc) / w) for p in tplaces]
            if not drawn:
                block[:, PLACE_FEATURES:] = run_summaries(counter, tplaces, me)
            elif near:
                pc = np.array(tplaces, dtype=np.int64)
                pr = (pc >> 22) - offr
                pk = (pc & mask) - offc
                ok = (pr >= 0) & (pr < w) & (pk >= 0) & (pk < w)
                flat[(8 + n) * ww + pr[ok] * w + pk[ok]] = 1.0
            else:
                base = (8 + n) * ww - offr * w - offc
                ones += [base + (p >> 22) * w + (p & mask) for p in tplaces]
        if ones and drawn:
            flat[ones] = 1.0
        if turn.boxes:
            values = box_rows(counter, turn.boxes, me, n, offr, offc, w)
            table = obs[layout.slices["boxes"]]
            table[: len(values)] = values
        return lost


#: Per requirement key, a candidate place's row of the observation:
#: ``present`` set, row and column 0 (written after), the 16 requirement bits.
_PLACE_ROWS: Final = np.zeros((1 << 16, PLACE_FEATURES), dtype=np.float32)
_PLACE_ROWS[:, 0] = 1.0
_PLACE_ROWS[:, 3:] = (np.arange(1 << 16)[:, None] >> np.arange(16)) & 1


# -- what the environments use ---------------------------------------------------

ENCODINGS: Final = ("places", "window")


class Encoder:
    """One environment's encoding: ``places`` (default) or ``window`` (the
    older fixed window of ``codec.py``/``observation.py``), with the
    per-turn cache every step needs (legal actions, candidate lists)."""

    def __init__(
        self,
        rules: Rules,
        players: int,
        encoding: str = "places",
        window: int | None = None,
        max_places: int | None = None,
        max_boxes: int | None = None,
        observation: str = "compact",
    ) -> None:
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding must be places or window, not {encoding!r}")
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation must be compact or board, not {observation!r}")
        self.name = encoding
        #: ``compact`` or ``board`` (the ``window`` encoding always has its board).
        self.observation = observation if encoding == "places" else "board"
        self.players = players
        if encoding == "places":
            self.codec: PlacesCodec | ActionCodec = PlacesCodec(
                rules, players, max_places, max_boxes
            )
            self.board = default_board(players) if window is None else window
            self.centred = CentredEncoder(
                players, self.board, self.codec, show_board=observation == "board"
            )
            self.size = self.centred.layout.size
            self.bounds = self.centred.layout.bounds
        else:
            from .codec import default_window

            self.board = default_window(players) if window is None else window
            self.codec = ActionCodec(rules, self.board)
            self.window_encoder = ObservationEncoder(players, self.board)
            self.size = self.window_encoder.layout.size
            self.bounds = self.window_encoder.layout.bounds
        self.actions = self.codec.size
        self._key: tuple[int, int, int] | None = None
        self._turn: Turn | None = None
        self._legal: Mapping[int, Move] = {}
        self._lost = 0
        # the last origin (``CentredEncoder._origin``), with the game it is of
        # (held, so that its id is not reused) and the ply
        self._origin_game: Game | None = None
        self._origin_ply = -1
        self._origin: Origin | None = None
        self._track = _CellTrack()

    def _refresh(self, game: Game) -> None:
        key = (id(game), game.ply, -1 if game.finished else (game.to_move or 0))
        if key == self._key:
            return
        self._key = key
        to_move = game.to_move
        if game.finished or to_move is None:
            self._turn = None
            self._legal = {}
            self._lost = 0
            return
        tray = game.trays[to_move]
        if isinstance(self.codec, PlacesCodec):
            turn = self.codec.turn(game.counter, tray)
            self._turn = turn
            self._legal, self._lost = self.codec.legal_actions(game, turn)
        else:
            moves = game.legal_moves()
            self._turn = None
            self._legal = self.codec.legal(moves, tray)
            self._lost = len(moves) - len(self._legal)
            if self.codec.outside_action in self._legal:
                self._lost += 1

    def legal(self, game: Game) -> Mapping[int, Move]:
        """The player to move's legal actions (cached per turn)."""
        self._refresh(game)
        return self._legal

    def turn(self, game: Game) -> Turn | None:
        """The candidate lists of the player to move (``places`` only)."""
        self._refresh(game)
        return self._turn

    def lost_cells(self, game: Game) -> int:
        """Occupied cells the board cannot show (0 in every measured game)."""
        if isinstance(self.codec, PlacesCodec):
            return self.origin(game)[2]
        lo, w = -(self.board // 2), self.board
        lost = 0
        for c in game.counter.cells:
            row, col = divmod(c, STRIDE)
            if not (lo <= row - OFFSET < lo + w and lo <= col - OFFSET < lo + w):
                lost += 1
        return lost

    def origin(self, game: Game) -> Origin:
        """``CentredEncoder._origin`` of the game's counter, cached per ply
        (a move is the only way the counter changes)."""
        ply = len(game.history)
        if game is not self._origin_game or ply != self._origin_ply or self._origin is None:
            self._origin = self.centred._tracked_origin(game.counter, self._track)
            self._origin_game = game
            self._origin_ply = ply
        return self._origin

    def overflow(self, game: Game, seat: int) -> dict[str, int]:
        """What this position's encoding could not show or name (all 0 in
        every measured game): ``cells`` of the board, legal ``moves``,
        candidate ``places`` and ``boxes`` beyond the bounds."""
        self._refresh(game)
        out = {"cells": self.lost_cells(game), "moves": 0, "places": 0, "boxes": 0}
        if game.to_move == seat:
            out["moves"] = self._lost
            if self._turn is not None:
                out["places"] = self._turn.lost_places
                out["boxes"] = self._turn.lost_boxes
        for what, count in out.items():
            if count:
                overflow_warning(what)
        return out

    def observe(self, game: Game, seat: int) -> np.ndarray:
        """The observation of ``seat`` (only what its view holds)."""
        if isinstance(self.codec, PlacesCodec):
            self._refresh(game)
            turn = self._turn if game.to_move == seat and self._turn is not None else None
            return self.centred.encode_game(game, seat, turn, self.origin(game))[0]
        return self.window_encoder.encode(game.view(seat))

    def mask(self, game: Game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        legal = self.legal(game) if game.to_move == seat and not game.finished else {}
        return self.codec.mask(legal, out)

    def describe(self, action: int) -> str:
        return self.codec.describe(action)

    def encode(self, game: Game, move: Move | str) -> int:
        """The action index of a move of the player to move (ValueError if
        the encoding cannot name it)."""
        if isinstance(move, str):
            move = Move.parse(move)
        to_move = game.to_move
        if to_move is None:
            raise ValueError("the game is over")
        if isinstance(self.codec, PlacesCodec):
            turn = self.turn(game)
            assert turn is not None
            return self.codec.encode(move, turn)
        return self.codec.encode(move, game.trays[to_move])

    def decode(self, game: Game, action: int) -> Move:
        """The move an action index stands for now (ValueError if none)."""
        to_move = game.to_move
        if to_move is None:
            raise ValueError("the game is over")
        if isinstance(self.codec, PlacesCodec):
            turn = self.turn(game)
            assert turn is not None
            return self.codec.decode(action, turn)
        return self.codec.decode(action, game.trays[to_move])


def tray_only(enc: Encoder, tray: Sequence[str]) -> np.ndarray:
    """An observation with nothing but a tray (during the OpenSpiel deal)."""
    if enc.name != "places":
        return enc.window_encoder.encode_tray_only(tray)
    layout = enc.centred.layout
    obs = np.zeros(layout.size, dtype=np.float32)
    feats = obs[layout.slices["features"]]
    fl = layout.feature_layout
    enc.centred._features._tray(feats[fl.feature_slices["tray"]], tray)
    return obs
