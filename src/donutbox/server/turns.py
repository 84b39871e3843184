"""Games waiting for a player's move (docs/online.md, "Turn-based games"):
an account's lobby games whose human seat to move is theirs, read from the
games' stored index (``games.to_move``, ``games.deadline_at``) without
loading any game."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, aliased

from .accounts import UserRow
from .ratings.service import CommunityGameRow, CommunitySeatRow
from .storage import GameRow

#: At most this many games listed (the most urgent first).
MAX_LISTED = 50


def waiting_for(engine: Engine, user_id: int, limit: int = MAX_LISTED) -> list[dict[str, Any]]:
    """The user's unfinished lobby games in which it is their move: the
    nearest deadline first (games without one, real-time ones, after),
    each with the user's own seat link and the opponents' names."""
    with Session(engine) as db:
        rows = db.execute(
            select(CommunitySeatRow, CommunityGameRow.rules_label, CommunityGameRow.rated, GameRow)
            .join(CommunityGameRow, CommunityGameRow.game_id == CommunitySeatRow.game_id)
            .join(GameRow, GameRow.id == CommunitySeatRow.game_id)
            .where(
                CommunitySeatRow.user_id == user_id,
                GameRow.finished.is_(False),
                GameRow.to_move == CommunitySeatRow.seat,
            )
            .order_by(GameRow.deadline_at.is_(None), GameRow.deadline_at, GameRow.updated)
            .limit(limit)
        ).all()
        ids = [row[0].game_id for row in rows]
        other = aliased(CommunitySeatRow)
        names: dict[str, list[tuple[int, str]]] = {}
        if ids:
            for game_id, at, name in db.execute(
                select(other.game_id, other.seat, UserRow.name)
                .join(UserRow, UserRow.id == other.user_id)
                .where(other.game_id.in_(ids))
            ):
                names.setdefault(game_id, []).append((at, name))
    out = []
    for seat, label, rated, game in rows:
        out.append(
            {
                "game": seat.game_id,
                "seat": seat.seat,
                "rules_label": label,
                "rated": rated,
                "opponents": [n for s, n in sorted(names.get(seat.game_id, [])) if s != seat.seat],
                "deadline_at": game.deadline_at,
                "link": f"/#/online/{seat.game_id}/{seat.token}",
            }
        )
    return out
