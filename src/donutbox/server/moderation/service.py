"""Moderation (docs/community.md, "Moderation"): a server operator bans and
unbans accounts and voids games (``donutbox admin``, on the server's
database); players report one another (``POST /api/players/{name}/report``).
Every action is a row of ``moderation_log``.

- **Ban**: the account's sessions end, it leaves its table or the
  quick-match queue, it is not paired by quick match and not listed on the
  leaderboard.  Unban lifts all of that but the sessions (it signs in
  again).
- **Void**: a settled lobby game counts for no rating; every rating is then
  recomputed from the remaining games (``ratings.replay.recompute``).
- **Report**: at most ``REPORTS_PER_DAY`` a reporter in 24 hours, one per
  (reporter, player, game).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from ..accounts import SessionRow, User, UserRow, now
from ..errors import Busy, Conflict, Invalid, NoSuchGame
from ..lobby.store import LobbyStore
from ..moderation.rows import MAX_REASON, BanRow, ModerationLogRow, ReportRow
from ..ratings.replay import recompute
from ..ratings.service import CommunityGameRow, CommunitySeatRow

REPORTS_PER_DAY = 10


def _log(db: Session, actor: str, action: str, target: str, detail: str) -> None:
    db.add(
        ModerationLogRow(
            at=now(),
            actor=actor[:40],
            action=action[:20],
            target=target[:80],
            detail=detail[:MAX_REASON],
        )
    )


def _user(db: Session, name: str) -> UserRow:
    row = db.scalars(select(UserRow).where(UserRow.name_key == name.lower()[:20])).first()
    if row is None:
        raise NoSuchGame(f"name: no player called {name[:20]!r}")
    return row


def _reason(reason: str) -> str:
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON:
        raise Invalid(f"reason: at most {MAX_REASON} characters")
    return reason


class Moderation:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # -- the operator's actions ---------------------------------------------------

    def ban(self, name: str, reason: str, actor: str) -> str:
        reason = _reason(reason)
        with Session(self.engine) as db, db.begin():
            user = _user(db, name)
            if db.get(BanRow, user.id) is not None:
                raise Conflict(f"name: {user.name} is banned already")
            db.add(BanRow(user_id=user.id, reason=reason, at=now()))
            ended = db.execute(delete(SessionRow).where(SessionRow.user_id == user.id))
            sessions = int(getattr(ended, "rowcount", 0) or 0)
            _log(db, actor, "ban", user.name, reason)
            who = User(user.id, user.name)
        LobbyStore(self.engine).forget(who)
        return f"banned {who.name}: {sessions} session(s) ended, out of the lobby"

    def unban(self, name: str, actor: str) -> str:
        with Session(self.engine) as db, db.begin():
            user = _user(db, name)
            if db.get(BanRow, user.id) is None:
                raise Conflict(f"name: {user.name} is not banned")
            db.execute(delete(BanRow).where(BanRow.user_id == user.id))
            _log(db, actor, "unban", user.name, "")
            return f"unbanned {user.name}"

    def void(self, game_id: str, reason: str, actor: str) -> str:
        reason = _reason(reason)
        with Session(self.engine) as db, db.begin():
            game = db.get(CommunityGameRow, game_id[:32])
            if game is None:
                raise NoSuchGame(f"game: no lobby game {game_id[:32]!r}")
            if not game.settled:
                raise Conflict(f"game: {game.game_id} has not ended; void it once it has")
            if game.voided:
                raise Conflict(f"game: {game.game_id} is void already")
            db.execute(
                update(CommunityGameRow)
                .where(CommunityGameRow.game_id == game.game_id)
                .values(voided=True)
            )
            replayed = recompute(db)
            _log(db, actor, "void", game.game_id, reason)
            return f"voided {game.game_id}; ratings recomputed from {replayed} game(s)"

    def is_banned(self, user_id: int) -> bool:
        with Session(self.engine) as db:
            return db.get(BanRow, user_id) is not None

    def banned_ids(self, db: Session, ids: list[int]) -> set[int]:
        return set(db.scalars(select(BanRow.user_id).where(BanRow.user_id.in_(ids))))

    # -- players' reports ---------------------------------------------------------

    def report(self, reporter: User, name: str, game_id: str | None, reason: str) -> None:
        reason = _reason(reason)
        if not reason:
            raise Invalid("reason: say what happened (at most 500 characters)")
        with Session(self.engine) as db, db.begin():
            target = _user(db, name)
            if target.id == reporter.id:
                raise Invalid("name: you cannot report yourself")
            if game_id is not None:
                seated = set(
                    db.scalars(
                        select(CommunitySeatRow.user_id).where(
                            CommunitySeatRow.game_id == game_id[:32]
                        )
                    )
                )
                if not {reporter.id, target.id} <= seated:
                    raise Invalid(f"game: not a lobby game of you and {target.name}")
            recent = db.scalar(
                select(func.count())
                .select_from(ReportRow)
                .where(
                    ReportRow.reporter_id == reporter.id,
                    ReportRow.at > now() - timedelta(days=1),
                )
            )
            if int(recent or 0) >= REPORTS_PER_DAY:
                raise Busy(f"report: at most {REPORTS_PER_DAY} reports a day")
            same = select(func.count()).select_from(ReportRow)
            same = same.where(
                ReportRow.reporter_id == reporter.id,
                ReportRow.target_id == target.id,
                ReportRow.game_id.is_(None)
                if game_id is None
                else ReportRow.game_id == game_id[:32],
            )
            if int(db.scalar(same) or 0):
                raise Conflict("report: you have reported this already")
            db.add(
                ReportRow(
                    at=now(),
                    reporter_id=reporter.id,
                    target_id=target.id,
                    game_id=game_id,
                    reason=reason,
                )
            )
            detail = f"game {game_id}: {reason}" if game_id else reason
            _log(db, reporter.name, "report", target.name, detail)

    # -- what the operator reads --------------------------------------------------

    def reports(self, limit: int = 100) -> list[dict[str, Any]]:
        """The newest reports first, with each reported player's ban."""
        with Session(self.engine) as db:
            rows = db.scalars(select(ReportRow).order_by(ReportRow.id.desc()).limit(limit)).all()
            ids = {r.reporter_id for r in rows} | {r.target_id for r in rows}
            found = db.execute(select(UserRow.id, UserRow.name).where(UserRow.id.in_(ids)))
            names = {uid: name for uid, name in found}
            banned = self.banned_ids(db, list(ids))
            return [
                {
                    "id": r.id,
                    "at": r.at.isoformat(timespec="seconds"),
                    "reporter": names.get(r.reporter_id, "?"),
                    "player": names.get(r.target_id, "?"),
                    "banned": r.target_id in banned,
                    "game": r.game_id,
                    "reason": r.reason,
                }
                for r in rows
            ]

    def log(self, limit: int = 100) -> list[dict[str, Any]]:
        with Session(self.engine) as db:
            rows = db.scalars(
                select(ModerationLogRow).order_by(ModerationLogRow.id.desc()).limit(limit)
            ).all()
            return [
                {
                    "at": r.at.isoformat(timespec="seconds"),
                    "actor": r.actor,
                    "action": r.action,
                    "target": r.target,
                    "detail": r.detail,
                }
                for r in rows
            ]
