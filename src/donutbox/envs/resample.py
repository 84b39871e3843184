"""The hidden cards of one player, redrawn consistently with the history.

OpenSpiel's IS-MCTS searches worlds a player cannot tell from the real one
(``DonutboxState.resample_from_infostate``).  Another player's hidden cards
are not free: every card they placed was in their tray at that moment, and a
swap or a pass says that *no* card of their tray could be placed on the
counter as it then stood (rules, section 7).  ``sample_hidden`` replays one
player's turns with their cards as *tokens* whose faces are drawn lazily
from what their deck still holds:

- a placement of face F takes a tray token already drawn as F, or else gives
  F to a tray token not drawn yet;
- a swap or a pass first draws every undrawn tray token from the faces that
  could not be placed then, and fails if a token drawn earlier could have
  been; a swap then sends a random tray token to the bottom of the pile,
  where it comes back (with its face) once the cards above it are drawn;
- at the end the tokens left in the tray are drawn from what is left.

A failed replay is retried from the start.  The sample is consistent with
everything public, though not exactly the posterior (that would weigh each
world by the chance of every later placement); OpenSpiel's IS-MCTS asks only
for consistent worlds.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter as Multiset
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from ..core.cards import STANDARD_DECK
from ..core.counter import Counter
from ..core.moves import PASS, PLACE, SWAP, Move
from ..core.policy import MatchRule
from ..core.rules import GAME_INFO

TRAY: Final = GAME_INFO.tray_size
#: Tries before ``sample_hidden`` gives up.
TRIES: Final = 200


def placeable_faces(counter: Counter, match: MatchRule, faces: Iterable[str]) -> frozenset[str]:
    """The faces (of ``faces``) that fit somewhere on the counter."""
    keys = {pk & 0xFFFF for pk in counter.places.values()}
    fits = match.fits
    return frozenset(f for f in set(faces) if any(fits(f, key) for key in keys))


@dataclasses.dataclass(frozen=True)
class Hidden:
    """One player's redrawn hidden cards."""

    #: The faces of their hidden draws in order: the deal, then each draw
    #: from the pile that was a chance node (not the pending one).
    draws: tuple[str, ...]
    #: The face each of their swaps put back, by ply.
    swaps: Mapping[int, str]
    #: Their tray and pile now (``hidden`` where a card is still undrawn).
    tray: tuple[str, ...]
    pile: tuple[str, ...]
    #: What their deck still holds undrawn.
    undrawn: Multiset[str]


class _Conflict(Exception):
    """This replay cannot go on: start again."""


class _Replay:
    """One attempt of ``sample_hidden``."""

    def __init__(self, pool: Multiset[str], rng: random.Random) -> None:
        self.pool = Multiset(pool)
        self.rng = rng
        self.faces: list[str | None] = []  # by token
        self.drawn: list[int] = []  # tokens in the order they left the pile

    def new(self) -> int:
        self.faces.append(None)
        self.drawn.append(len(self.faces) - 1)
        return len(self.faces) - 1

    def give(self, token: int, allowed: frozenset[str] | None = None) -> None:
        """Draw a face for ``token`` from the pool (among ``allowed``)."""
        choices = [
            (f, c) for f, c in self.pool.items() if c > 0 and (allowed is None or f in allowed)
        ]
        if not choices:
            raise _Conflict
        faces, weights = zip(*choices, strict=True)
        face = self.rng.choices(faces, weights)[0]
        self.pool[face] -= 1
        self.faces[token] = face


def sample_hidden(
    player: int,
    players: int,
    moves: Sequence[Move],
    placeable: Mapping[int, frozenset[str]],
    dealt: int,
    pile_start: int,
    pending: bool,
    pool: Multiset[str],
    rng: random.Random,
    hidden: str,
) -> Hidden | None:
    """Redraw ``player``'s hidden cards (module doc), or None after
    ``TRIES`` failed replays.

    ``moves``: the game's moves so far (ply ``i`` by player ``i % players``);
    ``placeable``: by ply of each swap and pass, the faces that fitted then;
    ``dealt``: the tray cards dealt so far; ``pile_start``: the pile after
    the deal; ``pending``: their last draw is still to come (a chance node);
    ``pool``: the faces of their deck nobody else has seen (the deck less
    its public cards: the start card, for player 0); ``hidden``: how an
    undrawn card is written.
    """
    for _ in range(TRIES):
        try:
            return _replay(
                player, players, moves, placeable, dealt, pile_start, pending, pool, rng, hidden
            )
        except _Conflict:
            continue
    return None


def _replay(
    player: int,
    players: int,
    moves: Sequence[Move],
    placeable: Mapping[int, frozenset[str]],
    dealt: int,
    pile_start: int,
    pending: bool,
    pool: Multiset[str],
    rng: random.Random,
    hidden: str,
) -> Hidden:
    r = _Replay(pool, rng)
    faces = r.faces
    tray = [r.new() for _ in range(dealt)]
    pile: list[int | None] = [None] * pile_start  # None: not drawn yet
    swaps: dict[int, str] = {}

    def draw() -> None:
        top = pile.pop()
        tray.append(r.new() if top is None else top)

    for ply in range(player, len(moves), players):
        move = moves[ply]
        if move.kind == PLACE:
            token = next((t for t in tray if faces[t] == move.face), None)
            if token is None:
                blank = [t for t in tray if faces[t] is None]
                if not blank or r.pool[move.face] <= 0:
                    raise _Conflict
                token = rng.choice(blank)
                r.pool[move.face] -= 1
                faces[token] = move.face
            tray.remove(token)
            while len(tray) < TRAY and pile:
                draw()
        elif move.kind in (SWAP, PASS):
            fits = placeable[ply]
            stuck = frozenset(STANDARD_DECK) - fits
            for token in tray:
                face = faces[token]
                if face is None:
                    r.give(token, stuck)
                elif face in fits:
                    raise _Conflict
            if move.kind == SWAP:
                token = rng.choice(tray)
                tray.remove(token)
                pile.insert(0, token)
                draw()
                face = faces[token]
                assert face is not None
                swaps[ply] = face
    # the pending draw, if any, is the last token drawn and stays hidden
    waiting = r.drawn[-1] if pending else -1
    for token in tray:
        if faces[token] is None and token != waiting:
            r.give(token)
    drawn = r.drawn[:-1] if pending else r.drawn
    draws = []
    for token in drawn:
        face = faces[token]
        assert face is not None
        draws.append(face)
    return Hidden(
        draws=tuple(draws),
        swaps=swaps,
        tray=tuple(hidden if t == waiting else faces[t] or hidden for t in tray),
        pile=tuple(hidden if t is None else faces[t] or hidden for t in pile),
        undrawn=+r.pool,
    )
