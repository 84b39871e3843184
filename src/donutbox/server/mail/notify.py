"""What puts a reminder in the outbox (docs/community.md, "Email"):

- **your turn**: after any change of a turn-based lobby game (a move, the
  AI's, one made at a missed deadline), the player now to move, once per
  deadline (``turn:<game>:<seat>:<deadline>``);
- **game over**: when a turn-based lobby game ends, each of its players,
  once (``over:<game>:<account>``);
- **invitation**: an invitation to a table, once per table and player.

Real-time games send no reminders: their players are at the page.  Only
lobby games have accounts behind their seats; an invite-link game has
none, and sends nothing.

Every hook is called on the event loop after the change is stored and
only *starts* a task (the hub's): the database work runs in a thread, and a
failure there is logged, never the mover's answer.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from .. import forfeits
from ..accounts import UserRow
from ..lobby.store import LobbyTableRow
from ..ratings.service import CommunityGameRow, CommunitySeatRow
from ..session import GameSession
from . import compose
from .outbox import Outbox

if TYPE_CHECKING:
    from ..hub import Hub

log = logging.getLogger("donutbox.server.mail")


def _ordinal(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


class Notifier:
    def __init__(self, hub: Hub, outbox: Outbox) -> None:
        self.hub = hub
        self.outbox = outbox

    def link(self, game_id: str) -> str:
        """Opens the game in the page for its signed-in player (their seat's
        secret link is never in an email)."""
        return self.outbox.link(f"/#/play/{game_id}")

    def _spawn(self, work: object, *args: object) -> None:
        async def run() -> None:
            try:
                await asyncio.to_thread(work, *args)  # type: ignore[arg-type]
            except Exception as err:
                log.error("mail: a reminder was not stored (%s)", str(err).splitlines()[0][:200])

        self.hub.spawn(run())

    def game_changed(self, s: GameSession) -> None:
        clock = s.clock
        if not s.online or clock is None or clock.days is None:
            return
        if s.over:
            places = forfeits.places(s.game)
            self._spawn(self._over, s.id, places, forfeits.ended_by(s.game) or "")
            return
        seat = s.human_seat_to_act()
        if seat is not None and clock.deadline_at is not None:
            self._spawn(self._turn, s.id, seat, clock.deadline_at)

    def _seats(self, game_id: str) -> tuple[str, dict[int, tuple[int, str]]] | None:
        """The game's rules label and, per seat, its account and name (None
        for a game that is not a lobby game)."""
        with Session(self.outbox.engine) as db:
            label = db.scalar(
                select(CommunityGameRow.rules_label).where(CommunityGameRow.game_id == game_id)
            )
            if label is None:
                return None
            rows = db.execute(
                select(CommunitySeatRow.seat, CommunitySeatRow.user_id, UserRow.name)
                .join(UserRow, UserRow.id == CommunitySeatRow.user_id)
                .where(CommunitySeatRow.game_id == game_id)
            ).all()
        return label, {seat: (uid, name) for seat, uid, name in rows}

    def _turn(self, game_id: str, seat: int, deadline: float) -> None:
        found = self._seats(game_id)
        if found is None or seat not in found[1]:
            return
        label, seats = found
        user_id = seats[seat][0]
        others = [name for s, (_, name) in sorted(seats.items()) if s != seat]
        self.outbox.enqueue(
            user_id,
            "turn",
            f"turn:{game_id}:{seat}:{deadline:.3f}",
            lambda unsub: compose.your_turn(label, others, deadline, self.link(game_id), unsub),
        )

    def _over(self, game_id: str, places: list[int], ended_by: str) -> None:
        found = self._seats(game_id)
        if found is None:
            return
        label, seats = found
        for seat, (user_id, _) in seats.items():
            others = [name for s, (_, name) in sorted(seats.items()) if s != seat]
            place = places[seat] if seat < len(places) else 0
            how = {"time": " (on time)", "resign": " (by resignation)"}.get(ended_by, "")
            result = (
                "it was aborted"
                if ended_by == "aborted"
                else f"you placed {_ordinal(place)} of {len(places)}{how}"
            )

            def write(
                unsub: str, others: list[str] = others, result: str = result
            ) -> compose.Letter:
                return compose.game_over(label, others, result, self.link(game_id), unsub)

            self.outbox.enqueue(user_id, "over", f"over:{game_id}:{user_id}", write)

    def invited(self, sender: str, to_id: int, table_id: str) -> None:
        self._spawn(self._invited, sender, to_id, table_id)

    def _invited(self, sender: str, to_id: int, table_id: str) -> None:
        with Session(self.outbox.engine) as db:
            label = db.scalar(select(LobbyTableRow.rules_label).where(LobbyTableRow.id == table_id))
        if label is None:
            return
        self.outbox.enqueue(
            to_id,
            "invite",
            f"invite:{table_id}:{to_id}",
            lambda unsub: compose.invitation(sender, label, self.outbox.link("/"), unsub),
        )
