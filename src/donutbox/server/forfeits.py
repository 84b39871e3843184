"""Forfeits: how an online game ends, or a player leaves it, outside the
rules of play (docs/online.md, "Resigning, running out of time, aborting").

The rules (RULES.md) end a game only by the Final Lap or the deadlock
guard; a platform also ends games when a player resigns or, in a rated
game, runs out of time, and aborts a rated game nobody started.  Those
decisions live here, not in the engine, and travel in the game record's
metadata (RULES.md section 9: other top-level keys are kept, not
interpreted), so the record stays a record of the moves that any reader
replays as before:

- ``"forfeits": [{"seat": 1, "how": "resign", "ply": 14}, ...]``, in the
  order they happened; ``how`` is ``resign`` or ``time``;
- ``"aborted": true``: a rated game whose players did not all arrive in
  time (``ABORT_SECONDS``); it ends unrated;
- ``"absent": [1]``: with ``aborted``, the seats whose players never
  arrived (a no-show: ``ratings/no_shows.py`` pauses repeated no-shows'
  rated play).

A forfeiting player drops out and ranks last (after every player still
playing; of two who forfeited, the later ranks higher).  Once at most one
player has not forfeited, the game is over: in a game of two, a forfeit
ends it at once.  Otherwise (a game of three or four) the others play on and
the forfeited seat is played by the server's stand-in agent (``STAND_IN``)
so that the deal the others face is unchanged, as Board Game Arena's
"zombie" players do; its score still counts for the boxes it holds, but
never its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ..core import Game

#: Why a player forfeits.
HOW: Final = ("resign", "time")
#: The agent that plays a forfeited seat (and, in a casual game, the move
#: of a player whose clock ran out): the server's medium level.
STAND_IN: Final = "heuristic"
#: A rated game whose human seats have not all joined this many seconds
#: after it was made is aborted (over, unrated).
ABORT_SECONDS: Final = 120.0


@dataclass(frozen=True)
class Forfeit:
    seat: int
    how: str
    ply: int

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "how": self.how, "ply": self.ply}


def of(game: Game) -> list[Forfeit]:
    """The game's forfeits, in order (what its metadata holds; entries that
    are not well formed are ignored, as any metadata a reader does not
    understand)."""
    raw = game.meta.get("forfeits")
    out: list[Forfeit] = []
    seen: set[int] = set()
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        seat, how, ply = item.get("seat"), item.get("how"), item.get("ply")
        if (
            isinstance(seat, int)
            and not isinstance(seat, bool)
            and 0 <= seat < game.players
            and seat not in seen
            and how in HOW
            and isinstance(ply, int)
        ):
            seen.add(seat)
            out.append(Forfeit(seat, str(how), ply))
    return out


def aborted(game: Game) -> bool:
    return game.meta.get("aborted") is True


def out(game: Game) -> set[int]:
    """The seats that have forfeited."""
    return {f.seat for f in of(game)}


def playing(game: Game) -> list[int]:
    """The seats still playing (not forfeited)."""
    gone = out(game)
    return [p for p in range(game.players) if p not in gone]


def over(game: Game) -> bool:
    """Over: by the rules, aborted, or with at most one player left."""
    return game.finished or aborted(game) or len(playing(game)) <= 1


def with_forfeit(game: Game, seat: int, how: str) -> Game:
    """A copy of ``game`` in which ``seat`` has forfeited now."""
    assert how in HOW
    new = game.copy()
    done = [f.to_dict() for f in of(game)]
    new.meta["forfeits"] = [*done, Forfeit(seat, how, len(game.history)).to_dict()]
    return new


def with_abort(game: Game, absent: list[int]) -> Game:
    """``game`` aborted because the players of the seats ``absent`` never
    arrived."""
    new = game.copy()
    new.meta["aborted"] = True
    new.meta["absent"] = sorted(set(absent))
    return new


def absent(game: Game) -> list[int]:
    """The seats whose players never arrived in an aborted game (none in
    any other; entries that are not seats are ignored)."""
    if not aborted(game):
        return []
    raw = game.meta.get("absent")
    if not isinstance(raw, list):
        return []
    return sorted({x for x in raw if type(x) is int and 0 <= x < game.players})


def places(game: Game) -> list[int]:
    """Each seat's place (1 = first) in a game that is over: the players
    still playing by score, then boxes delivered (the rules' tie-break,
    RULES.md section 8), equal on both sharing a place; then the forfeited,
    the latest to forfeit first."""
    left = playing(game)
    keys = {p: (game.scores[p], game.boxes_delivered[p]) for p in left}
    place = [0] * game.players
    for p in left:
        place[p] = 1 + sum(1 for q in left if keys[q] > keys[p])
    for i, f in enumerate(reversed(of(game))):
        place[f.seat] = len(left) + 1 + i
    return place


def winners(game: Game) -> list[int]:
    """The seats in first place once the game is over (none before, and
    none in an aborted game)."""
    if not over(game) or aborted(game):
        return []
    if game.finished and not of(game):
        return list(game.winners)
    return [p for p, n in enumerate(places(game)) if n == 1]


def ended_by(game: Game) -> str | None:
    """Why the game is over: the rules' reason, ``aborted``, or how the last
    player to forfeit did (``resign``, ``time``); None while it goes on."""
    if game.finished:
        return game.ended_by
    if aborted(game):
        return "aborted"
    if over(game):
        return of(game)[-1].how
    return None
