"""No-shows: a player paired for a rated game who never arrives.

A rated game whose players have not all arrived within
``forfeits.ABORT_SECONDS`` is aborted, unrated (docs/community.md); the
seats that never arrived are marked ``no_show`` when the game is settled.
Each no-show costs the others who came the wait, and a player who queues,
sees the opponent's name and stays away can pick whom to play.  So, as
lichess's "playban" does, repeated no-shows pause the player's rated play:
the first no-show within ``WINDOW`` is forgiven (a closed laptop, a lost
connection), each further one pauses rated play for longer (``PAUSES``),
counted from that last no-show.  Casual play stays open.

The policy is a pure function of the no-shows' times, here; the service
(``service.Ratings.no_shows``) reads them and ``rated_refusal`` says no.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Final

#: No-shows older than this are forgotten.
WINDOW: Final = timedelta(hours=24)
#: The pause after the 1st, 2nd, 3rd, 4th and any later no-show in ``WINDOW``.
PAUSES: Final = (
    timedelta(0),
    timedelta(minutes=15),
    timedelta(hours=1),
    timedelta(hours=4),
    timedelta(hours=24),
)


def _recent(no_shows: Sequence[datetime], now: datetime) -> list[datetime]:
    return sorted(t for t in no_shows if now - WINDOW < t <= now)


def paused_until(no_shows: Sequence[datetime], now: datetime) -> datetime | None:
    """When the player's rated play opens again, given the times of their
    no-shows (any order; those outside ``WINDOW`` before ``now`` do not
    count), or None if it is open now."""
    recent = _recent(no_shows, now)
    if not recent:
        return None
    pause = PAUSES[min(len(recent), len(PAUSES)) - 1]
    until = recent[-1] + pause
    return until if until > now else None


def refusal(no_shows: Sequence[datetime], now: datetime) -> str | None:
    """The one-line reason rated play is refused (409), or None."""
    until = paused_until(no_shows, now)
    if until is None:
        return None
    count = len(_recent(no_shows, now))
    minutes = max(1, -(-int((until - now).total_seconds()) // 60))
    return (
        f"rated: you did not arrive for {count} rated games you were paired for in the last "
        f"24 hours; rated play opens again in {minutes} minutes (at {until:%H:%M} UTC)"
    )
