"""What a profile says about results (docs/community.md, "Profiles and
history"): a player's games, wins, draws and losses, and the head-to-head
record of two players.

Counted over finished lobby games (settled, not voided), rated or not:
a **win** is a first place held alone, a **draw** a first place shared,
anything else a **loss** (places as ``ratings.places`` gives them: score,
then boxes delivered; a player who resigned or lost on time ranks last).
Head to head, a game counts for the one of the two who placed higher (a
game of 3 or 4 too: only the two players' places are compared), equal
places a draw.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, aliased

from .service import CommunityGameRow, CommunitySeatRow

#: Games listed in a head-to-head answer, newest first.
MAX_LISTED = 50


def results(engine: Engine, user_id: int) -> dict[str, int]:
    """``{games, wins, draws, losses}`` of a player's finished lobby games."""
    seat, other, game = CommunitySeatRow, aliased(CommunitySeatRow), CommunityGameRow
    firsts = (
        select(func.count())
        .select_from(other)
        .where(other.game_id == seat.game_id, other.place == 1)
        .scalar_subquery()
    )
    with Session(engine) as db:
        rows = db.execute(
            select(seat.place, firsts)
            .join(game, game.game_id == seat.game_id)
            .where(
                seat.user_id == user_id,
                game.settled.is_(True),
                game.voided.is_(False),
                seat.place.is_not(None),
            )
        ).all()
    wins = sum(1 for place, n in rows if place == 1 and n == 1)
    draws = sum(1 for place, n in rows if place == 1 and n > 1)
    return {"games": len(rows), "wins": wins, "draws": draws, "losses": len(rows) - wins - draws}


def head_to_head(engine: Engine, a: int, b: int) -> dict[str, Any]:
    """The finished lobby games ``a`` and ``b`` both played: a's wins,
    draws and losses against b, and the games (newest first)."""
    sa, sb, game = aliased(CommunitySeatRow), aliased(CommunitySeatRow), CommunityGameRow
    with Session(engine) as db:
        rows = db.execute(
            select(game.game_id, game.rules_label, game.rated, game.ended, sa.place, sb.place)
            .join(sa, sa.game_id == game.game_id)
            .join(sb, sb.game_id == game.game_id)
            .where(
                sa.user_id == a,
                sb.user_id == b,
                game.settled.is_(True),
                game.voided.is_(False),
                sa.place.is_not(None),
                sb.place.is_not(None),
            )
            .order_by(game.ended.desc())
        ).all()
    counts = {"win": 0, "draw": 0, "loss": 0}
    listed: list[dict[str, Any]] = []
    for gid, label, rated, ended, pa, pb in rows:
        a_place, b_place = int(pa or 0), int(pb or 0)  # both set: filtered above
        result = "win" if a_place < b_place else "loss" if a_place > b_place else "draw"
        counts[result] += 1
        if len(listed) < MAX_LISTED:
            listed.append(
                {
                    "game": gid,
                    "rules_label": label,
                    "rated": rated,
                    "date": None if ended is None else ended.isoformat(),
                    "result": result,
                    "places": [a_place, b_place],
                }
            )
    return {
        "games": len(rows),
        "wins": counts["win"],
        "draws": counts["draw"],
        "losses": counts["loss"],
        "list": listed,
    }
