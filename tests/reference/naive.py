"""A naive reference implementation of the game, written straight from docs/spec.md.

This is a test oracle.  It is deliberately slow and simple: it imports nothing
from ``donutbox`` and shares no code with it.

- The counter is a dict ``{(x, y): (flavour, roll, owner, delivered)}`` where
  ``flavour`` is the locked flavour for a Cinnamon Roll.
- Runs are recomputed by flood fill every time they are needed.
- Legal placements are found by brute force over every position in a bounding
  box around the counter, every rotation and every lock.

Entry points: ``NaiveGame.from_record(record)``, ``replay(record)`` (returns the
``donutbox replay --json`` object) and ``legal_moves(record, cards)`` (the
``donutbox moves --json`` list).
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

FLAVOURS = "CSHB"
LETTERS = "CSHBR"
ROTATIONS = (0, 90, 180, 270)
# NW, NE, SE, SW offsets of a card placed at (x, y), in face order.
QUADRANTS = ((0, 0), (1, 0), (1, 1), (0, 1))
STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1))
TRAY_SIZE = 4

PLACE_RE = re.compile(r"^([A-Z]{4})@(-?\d+),(-?\d+)/(\d+)(?:=([A-Z]))?$")
BOX_RE = re.compile(r"^box@(-?\d+),(-?\d+)$")
SWAP_RE = re.compile(r"^swap ([A-Z]{4})$")

GAME_OVER = "the game is over"

# docs/spec.md, 'Components': every colour has the same 30 cards.
STANDARD_DECK = [
    *("CCSS", "CCSS", "CCHH", "CCHH", "CCBB", "CCBB"),  # halves
    *("SSHH", "SSHH", "SSBB", "SSBB", "HHBB", "HHBB"),
    *("CCSH", "SSHB", "HHBC", "BBCS", "CCBH", "SSBH"),  # threes
    *("CSHB", "CSBH", "CHSB", "CHBS"),  # rainbows
    *("RCSH", "RHSC", "RCSB", "RBCS", "RCHB", "RBHC", "RSHB", "RBSH"),  # rolls
]


class NaiveIllegal(Exception):
    """A move that breaks a rule."""


def valid_face(face: str) -> bool:
    return (
        isinstance(face, str)
        and len(face) == 4
        and all(ch in LETTERS for ch in face)
        and face.count("R") <= 1
    )


def rotate(face: str, rot: int) -> str:
    """Turn a face clockwise by ``rot`` degrees: 90 turns ``abcd`` into ``dabc``."""
    turned = face
    for _ in range((rot // 90) % 4):
        turned = turned[3] + turned[:3]
    return turned


def card_cells(x: int, y: int) -> list[tuple[int, int]]:
    return [(x + dx, y + dy) for dx, dy in QUADRANTS]


def neighbours(cell: tuple[int, int]) -> list[tuple[int, int]]:
    x, y = cell
    return [(x + dx, y + dy) for dx, dy in STEPS]


def reading_key(cell: tuple[int, int]) -> tuple[int, int]:
    return (cell[1], cell[0])


class NaiveGame:
    def __init__(
        self,
        *,
        match: str = "one-good-match",
        layout: str = "squared-away",
        closers: bool = False,
        players: int = 2,
    ) -> None:
        assert match in ("one-good-match", "perfect-match")
        assert layout in ("squared-away", "splitzkies")
        self.match = match
        self.layout = layout
        self.closers = bool(closers)
        self.n = players
        self.free = False
        self.counter: dict[tuple[int, int], tuple[str, bool, int | None, bool]] = {}
        self.trays: list[list[str]] = [[] for _ in range(players)]
        self.piles: list[list[str]] = [[] for _ in range(players)]  # index 0 = top
        self.scores = [0] * players
        self.delivered = [0] * players
        self.deliveries: list[dict[str, Any]] = []
        self.to_move = 0
        self.finished = False
        self.ply = 0
        self.final_lap_left: int | None = None
        self.streak = 0

    # ------------------------------------------------------------------ setup

    @classmethod
    def from_rules_dict(cls, rules: dict[str, Any] | None, players: int) -> NaiveGame:
        rules = dict(rules or {})
        return cls(
            match=rules.get("match", "one-good-match"),
            layout=rules.get("layout", "squared-away"),
            closers=rules.get("closers", False),
            players=players,
        )

    def put_start(self, face: str) -> None:
        assert valid_face(face), face
        for i, cell in enumerate(card_cells(0, 0)):
            letter = face[i]
            if letter == "R":
                # locks to the next quadrant clockwise on the same card
                self.counter[cell] = (face[(i + 1) % 4], True, None, False)
            else:
                self.counter[cell] = (letter, False, None, False)

    @classmethod
    def dealt(cls, decks: list[list[str]], rules: dict[str, Any] | None = None) -> NaiveGame:
        game = cls.from_rules_dict(rules, len(decks))
        for p, deck in enumerate(decks):
            assert all(valid_face(f) for f in deck)
            game.trays[p] = list(deck[:TRAY_SIZE])
            game.piles[p] = list(deck[TRAY_SIZE:])
        start = game.piles[0].pop(0)
        game.put_start(start)
        return game

    @classmethod
    def free_game(
        cls, start: str, rules: dict[str, Any] | None = None, players: int = 2
    ) -> NaiveGame:
        game = cls.from_rules_dict(rules, players)
        game.free = True
        game.trays = []
        game.piles = []
        game.put_start(start)
        return game

    @classmethod
    def setup(cls, record: dict[str, Any]) -> NaiveGame:
        players = record["players"]
        count = players if isinstance(players, int) else len(players)
        if "start" in record:
            return cls.free_game(record["start"], record.get("rules"), count)
        decks = record["decks"]
        assert len(decks) == count
        return cls.dealt(decks, record.get("rules"))

    # ------------------------------------------------------------------ runs

    def runs(self) -> list[set[tuple[int, int]]]:
        """Every run (maximal same-flavour connected set of not-delivered cells)."""
        seen: set[tuple[int, int]] = set()
        result = []
        for start in sorted(self.counter, key=reading_key):
            flavour, _roll, _owner, delivered = self.counter[start]
            if delivered or start in seen:
                continue
            run = {start}
            queue = deque([start])
            while queue:
                cell = queue.popleft()
                for nb in neighbours(cell):
                    if nb in run or nb not in self.counter:
                        continue
                    f2, _r2, _o2, d2 = self.counter[nb]
                    if not d2 and f2 == flavour:
                        run.add(nb)
                        queue.append(nb)
            seen |= run
            result.append(run)
        return result

    def run_at(self, cell: tuple[int, int]) -> set[tuple[int, int]] | None:
        for run in self.runs():
            if cell in run:
                return run
        return None

    def is_open(self, run: set[tuple[int, int]]) -> bool:
        return any(nb not in self.counter for cell in run for nb in neighbours(cell))

    def value(self, run: set[tuple[int, int]]) -> int:
        doubled = any(self.counter[c][1] for c in run)
        return len(run) * (2 if doubled else 1)

    def held(self, run: set[tuple[int, int]], player: int) -> int:
        return sum(1 for c in run if self.counter[c][2] == player)

    def majority(self, run: set[tuple[int, int]]) -> list[int]:
        counts = [self.held(run, p) for p in range(self.n)]
        best = max(counts)
        if best == 0:
            return []
        return [p for p in range(self.n) if counts[p] == best]

    @staticmethod
    def first_cell(run: set[tuple[int, int]]) -> tuple[int, int]:
        return min(run, key=reading_key)

    # ------------------------------------------------------------ placement

    def spot_ok(self, x: int, y: int) -> bool:
        """Layout, no overlap and edge contact: the parts that ignore the face."""
        if self.layout == "squared-away" and (x % 2 != 0 or y % 2 != 0):
            return False
        cells = card_cells(x, y)
        if any(c in self.counter for c in cells):
            return False
        own = set(cells)
        # edge contact with any occupied cell (delivered or not)
        return any(nb in self.counter for c in cells for nb in neighbours(c) if nb not in own)

    def placement(self, face: str, x: int, y: int, rot: int) -> list[str] | None:
        """None if the card cannot go there; else the lock choices ([""] without R)."""
        if rot not in ROTATIONS or not self.spot_ok(x, y):
            return None
        return self.matching(face, x, y, rot)

    def matching(self, face: str, x: int, y: int, rot: int) -> list[str] | None:
        """The matching rule for a card on a free, touching spot (see ``placement``)."""
        cells = card_cells(x, y)
        own = set(cells)
        turned = rotate(face, rot)
        any_agree = False
        for i, c in enumerate(cells):
            mine = turned[i]
            partners = []
            for nb in neighbours(c):
                if nb in own or nb not in self.counter:
                    continue
                flavour, _roll, _owner, delivered = self.counter[nb]
                if delivered:
                    continue
                partners.append(flavour)
            if not partners:
                continue
            agrees = [mine == "R" or mine == f for f in partners]
            if any(agrees):
                any_agree = True
            elif self.match == "perfect-match":
                return None
        if not any_agree:
            return None
        if "R" not in face:
            return [""]
        i = turned.index("R")
        touched = set()
        for nb in neighbours(cells[i]):
            if nb in own or nb not in self.counter:
                continue
            flavour, _roll, _owner, delivered = self.counter[nb]
            if not delivered:
                touched.add(flavour)
        if not touched:
            # touches nothing it can lock to: its two neighbours on its own card
            touched = {turned[(i + 1) % 4], turned[(i - 1) % 4]}
        return sorted(touched)

    def bounds(self) -> tuple[int, int, int, int]:
        xs = [c[0] for c in self.counter]
        ys = [c[1] for c in self.counter]
        return min(xs), max(xs), min(ys), max(ys)

    def placements(self, faces: list[str]) -> list[str]:
        """Every legal placement of every distinct face, as notation."""
        minx, maxx, miny, maxy = self.bounds()
        out = []
        for x in range(minx - 2, maxx + 2):
            for y in range(miny - 2, maxy + 2):
                if not self.spot_ok(x, y):
                    continue
                for face in sorted(set(faces)):
                    for rot in ROTATIONS:
                        locks = self.matching(face, x, y, rot)
                        if locks is None:
                            continue
                        for lock in locks:
                            text = f"{face}@{x},{y}/{rot}"
                            if lock:
                                text += f"={lock}"
                            out.append(text)
        return out

    def can_place(self, faces: list[str]) -> bool:
        return bool(self.placements(faces))

    def boxable(self, player: int) -> list[set[tuple[int, int]]]:
        return [
            run
            for run in self.runs()
            if len(run) >= 3 and self.is_open(run) and 2 * self.held(run, player) >= len(run)
        ]

    def legal_moves(self, cards: list[str] | None = None) -> list[str]:
        if self.finished:
            return []
        p = self.to_move
        faces = list(cards or []) if self.free else list(self.trays[p])
        placements = self.placements(faces)
        moves = list(placements)
        for run in self.boxable(p):
            x, y = self.first_cell(run)
            moves.append(f"box@{x},{y}")
        if not self.free and not placements:
            if self.piles[p]:
                moves.extend(f"swap {face}" for face in sorted(set(self.trays[p])))
            else:
                moves.append("pass")
        return moves

    # ----------------------------------------------------------------- play

    def play(self, text: str) -> None:
        if self.finished:
            raise NaiveIllegal(GAME_OVER)
        p = self.to_move
        m = PLACE_RE.match(text)
        if m:
            self._place(
                p, m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(5) or ""
            )
            self._end_turn(p, passive=False)
            return
        m = BOX_RE.match(text)
        if m:
            self._box(p, (int(m.group(1)), int(m.group(2))))
            self._end_turn(p, passive=False)
            return
        m = SWAP_RE.match(text)
        if m:
            self._swap(p, m.group(1))
            self._end_turn(p, passive=True)
            return
        if text == "pass":
            if self.free:
                raise NaiveIllegal("no pass in a free game")
            if self.placements(self.trays[p]):
                raise NaiveIllegal("a card can be placed")
            if self.piles[p]:
                raise NaiveIllegal("pile not empty")
            self._end_turn(p, passive=True)
            return
        raise NaiveIllegal(f"malformed move {text!r}")

    def _place(self, p: int, face: str, x: int, y: int, rot: int, lock: str) -> None:
        if not valid_face(face):
            raise NaiveIllegal("bad face")
        if not self.free and face not in self.trays[p]:
            raise NaiveIllegal("not in tray")
        locks = self.placement(face, x, y, rot)
        if locks is None:
            raise NaiveIllegal("cannot place there")
        if "R" in face:
            if lock:
                if lock not in locks:
                    raise NaiveIllegal("bad lock")
            elif len(locks) == 1:
                lock = locks[0]
            else:
                raise NaiveIllegal("lock required")
        elif lock:
            raise NaiveIllegal("lock without roll")
        turned = rotate(face, rot)
        new_cells = card_cells(x, y)
        for i, cell in enumerate(new_cells):
            if turned[i] == "R":
                self.counter[cell] = (lock, True, p, False)
            else:
                self.counter[cell] = (turned[i], False, p, False)
        # sealing
        new = set(new_cells)
        near = new | {nb for c in new_cells for nb in neighbours(c)}
        affected = [run for run in self.runs() if run & near]
        affected.sort(key=lambda run: reading_key(self.first_cell(run)))
        for run in affected:
            if self.is_open(run) or len(run) < 3:
                continue
            to = [p] if self.closers else self.majority(run)
            points = self.value(run)
            for q in to:
                self.scores[q] += points
                self.delivered[q] += 1
            for c in run:
                f, r, o, _d = self.counter[c]
                self.counter[c] = (f, r, o, True)
            self.deliveries.append(
                {
                    "ply": self.ply,
                    "how": "sealed",
                    "size": len(run),
                    "points": points,
                    "to": sorted(to),
                }
            )
        if not self.free:
            self.trays[p].remove(face)
            while len(self.trays[p]) < TRAY_SIZE and self.piles[p]:
                self.trays[p].append(self.piles[p].pop(0))
                if not self.piles[p] and self.final_lap_left is None:
                    self.final_lap_left = -1  # set to n-1 at the end of this turn

    def _box(self, p: int, cell: tuple[int, int]) -> None:
        if cell not in self.counter or self.counter[cell][3]:
            raise NaiveIllegal("no open run there")
        run = self.run_at(cell)
        assert run is not None
        if len(run) < 3:
            raise NaiveIllegal("not a box")
        if not self.is_open(run):
            raise NaiveIllegal("sealed")
        if 2 * self.held(run, p) < len(run):
            raise NaiveIllegal("not half held")
        points = self.value(run)
        self.scores[p] += points
        self.delivered[p] += 1
        for c in run:
            f, r, o, _d = self.counter[c]
            self.counter[c] = (f, r, o, True)
        self.deliveries.append(
            {"ply": self.ply, "how": "boxed", "size": len(run), "points": points, "to": [p]}
        )

    def _swap(self, p: int, face: str) -> None:
        if self.free:
            raise NaiveIllegal("no swap in a free game")
        if face not in self.trays[p]:
            raise NaiveIllegal("not in tray")
        if self.placements(self.trays[p]):
            raise NaiveIllegal("a card can be placed")
        if not self.piles[p]:
            raise NaiveIllegal("pile empty")
        self.trays[p].remove(face)
        self.piles[p].append(face)
        self.trays[p].append(self.piles[p].pop(0))

    def _end_turn(self, p: int, *, passive: bool) -> None:
        self.ply += 1
        self.streak = self.streak + 1 if passive else 0
        end = False
        if self.final_lap_left == -1:
            self.final_lap_left = self.n - 1
        elif self.final_lap_left is not None:
            self.final_lap_left -= 1
            if self.final_lap_left <= 0:
                end = True
        if not self.free and self.streak > 0:
            cards = sum(len(t) for t in self.trays) + sum(len(q) for q in self.piles)
            if self.streak >= cards:
                end = True
        if end:
            self.end()
        else:
            self.to_move = (p + 1) % self.n

    def end(self) -> None:
        """End scoring: every remaining box scores to its majority holders."""
        boxes = [run for run in self.runs() if len(run) >= 3]
        boxes.sort(key=lambda run: reading_key(self.first_cell(run)))
        for run in boxes:
            to = self.majority(run)
            points = self.value(run)
            for q in to:
                self.scores[q] += points
            self.deliveries.append(
                {"ply": None, "how": "end", "size": len(run), "points": points, "to": to}
            )
        self.finished = True

    # --------------------------------------------------------------- output

    def winners(self) -> list[int]:
        if not self.finished:
            return []
        best = max(self.scores)
        tied = [p for p in range(self.n) if self.scores[p] == best]
        most = max(self.delivered[p] for p in tied)
        return [p for p in tied if self.delivered[p] == most]

    def summary(self, error: dict[str, Any] | None = None) -> dict[str, Any]:
        cells = []
        for x, y in sorted(self.counter, key=reading_key):
            flavour, roll, owner, delivered = self.counter[(x, y)]
            cells.append(
                {
                    "x": x,
                    "y": y,
                    "flavour": flavour,
                    "roll": roll,
                    "owner": owner,
                    "delivered": delivered,
                }
            )
        return {
            "scores": list(self.scores),
            "delivered": list(self.delivered),
            "finished": self.finished,
            "winners": self.winners(),
            "to_move": None if self.finished else self.to_move,
            "cells": cells,
            "deliveries": [dict(d, to=list(d["to"])) for d in self.deliveries],
            "error": error,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> tuple[NaiveGame, dict[str, Any] | None]:
        """Set up and play a record's moves up to the first illegal one."""
        game = cls.setup(record)
        for ply, text in enumerate(record.get("moves", [])):
            try:
                game.play(text)
            except NaiveIllegal as exc:
                return game, {"ply": ply, "move": text, "reason": str(exc)}
        if game.free and record.get("end") and not game.finished:
            game.end()
        return game, None


def replay(record: dict[str, Any]) -> dict[str, Any]:
    """The object ``donutbox replay RECORD --json`` prints."""
    game, error = NaiveGame.from_record(record)
    return game.summary(error)


def legal_moves(record: dict[str, Any], cards: list[str] | None = None) -> list[str]:
    """The list ``donutbox moves RECORD --json`` prints under ``"moves"``."""
    game, _error = NaiveGame.from_record(record)
    return game.legal_moves(cards)
