"""Ratings and the games the lobby made: openskill's Plackett-Luce model, a
rating per player per rule set (``Rules.key()``), updated once when a rated
game ends (docs/community.md says why Plackett-Luce).

A lobby game is stored in ``community_games`` (its rules, whether it is
rated, whether its ratings were settled) with one ``community_seats`` row
per seat: the user, the seat's token (so the player can open the game from
another device; only that user is ever shown it), and once settled the
place, the score and the rating before and after.

Settling is idempotent: one transaction sets ``settled`` from false to
true with a conditional UPDATE, and only the transaction that changed the
row writes the ratings.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from openskill.models import PlackettLuce
from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    select,
    update,
)
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Mapped, Session, mapped_column

from ..core import Game
from . import forfeits
from .accounts import CommunityBase, now
from .storage import GameRow, Store

MODEL = PlackettLuce()
MU = MODEL.mu
SIGMA = MODEL.sigma


class RatingRow(CommunityBase):
    __tablename__ = "ratings"
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    rules_key: Mapped[str] = mapped_column(String(40), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    updated: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class CommunityGameRow(CommunityBase):
    __tablename__ = "community_games"
    game_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    rules_key: Mapped[str] = mapped_column(String(40), index=True)
    rules_label: Mapped[str] = mapped_column(String(200))
    rated: Mapped[bool] = mapped_column(Boolean)
    settled: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ended: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class CommunitySeatRow(CommunityBase):
    __tablename__ = "community_seats"
    game_id: Mapped[str] = mapped_column(
        ForeignKey("community_games.game_id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token: Mapped[str] = mapped_column(String(64))
    place: Mapped[int | None] = mapped_column(Integer, nullable=True)
    score: Mapped[int | None] = mapped_column(Integer, nullable=True)
    mu_before: Mapped[float | None] = mapped_column(Float, nullable=True)
    sigma_before: Mapped[float | None] = mapped_column(Float, nullable=True)
    mu_after: Mapped[float | None] = mapped_column(Float, nullable=True)
    sigma_after: Mapped[float | None] = mapped_column(Float, nullable=True)


def ordinal(mu: float, sigma: float) -> float:
    """The shown rating: mu - 3 sigma (0 for a new player), so that a player
    climbs by playing, and a lucky first win does not top the board."""
    return mu - 3 * sigma


def places(game: Game) -> list[int]:
    """Each seat's place (1 = first): by score, then boxes delivered (the
    game's tie-break, docs/spec.md 'The end'); equal on both share a place."""
    keys = [(game.scores[p], game.boxes_delivered[p]) for p in range(game.players)]
    return [1 + sum(1 for k in keys if k > mine) for mine in keys]


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float
    games: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "rating": round(ordinal(self.mu, self.sigma), 2),
            "mu": round(self.mu, 3),
            "sigma": round(self.sigma, 3),
            "games": self.games,
        }


NEW = Rating(MU, SIGMA, 0)


class Ratings:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine
        # Two games sharing a player may end together (settle runs from the
        # lobby's tick and from GETs, in threads): one settlement at a time
        # in this process, and the rating rows locked (FOR UPDATE) across
        # processes on PostgreSQL, so no update of a player's rating is lost.
        self._settling = threading.Lock()

    def record_game(
        self,
        game_id: str,
        rules_key: str,
        rules_label: str,
        rated: bool,
        seats: list[tuple[int, str]],
    ) -> None:
        """A lobby game just made: (user id, seat token) per seat."""
        with Session(self.engine) as db, db.begin():
            db.add(
                CommunityGameRow(
                    game_id=game_id,
                    rules_key=rules_key,
                    rules_label=rules_label[:200],
                    rated=rated,
                    settled=False,
                    created=now(),
                )
            )
            db.flush()
            for seat, (user_id, token) in enumerate(seats):
                db.add(CommunitySeatRow(game_id=game_id, seat=seat, user_id=user_id, token=token))

    def rating(self, user_id: int, rules_key: str) -> Rating:
        with Session(self.engine) as db:
            row = db.get(RatingRow, (user_id, rules_key))
            return NEW if row is None else Rating(row.mu, row.sigma, row.games)

    def all_of(self, user_id: int) -> dict[str, Rating]:
        with Session(self.engine) as db:
            rows = db.scalars(select(RatingRow).where(RatingRow.user_id == user_id))
            return {r.rules_key: Rating(r.mu, r.sigma, r.games) for r in rows}

    def unsettled(self) -> list[str]:
        """Lobby games that have ended and are not settled yet (one query:
        the games still being played cost nothing)."""
        with Session(self.engine) as db:
            q = (
                select(CommunityGameRow.game_id)
                .join(GameRow, GameRow.id == CommunityGameRow.game_id)
                .where(CommunityGameRow.settled.is_(False), GameRow.finished.is_(True))
            )
            return list(db.scalars(q.limit(500)))

    def settle_all(self) -> int:
        """Settle every lobby game that has ended since (cheap: one query,
        then one per ended game)."""
        return sum(1 for g in self.unsettled() if self.settle(g))

    def settle(self, game_id: str) -> bool:
        """If the game has ended and is not settled yet: its places, scores
        and (if rated) new ratings, in one transaction.  True if this call
        settled it."""
        with self._settling:
            return self._settle(game_id)

    def _settle(self, game_id: str) -> bool:
        stored = self.store.get(game_id)
        if stored is None or not stored.finished:
            return False
        game = Game.from_record(stored.record)
        if not forfeits.over(game):
            return False
        place = forfeits.places(game)
        with Session(self.engine) as db, db.begin():
            changed = cast(
                "CursorResult[Any]",
                db.execute(
                    update(CommunityGameRow)
                    .where(CommunityGameRow.game_id == game_id, CommunityGameRow.settled.is_(False))
                    .values(settled=True, ended=stored.updated)
                ),
            )
            if changed.rowcount != 1:
                return False
            info = db.get(CommunityGameRow, game_id)
            assert info is not None
            seats = list(
                db.scalars(
                    select(CommunitySeatRow)
                    .where(CommunitySeatRow.game_id == game_id)
                    .order_by(CommunitySeatRow.seat)
                )
            )
            # Rated only if every seat is a human of the lobby and no move was
            # ever taken back (the lobby makes rated games without takebacks;
            # this is the second check).
            meta_takebacks = game.meta.get("takebacks", 0)
            rated = (
                info.rated
                and not forfeits.aborted(game)
                and len(seats) == game.players
                and all(k == "human" for k in stored.seats)
                and not meta_takebacks
                and not (stored.options.get("online") or {}).get("takebacks")
            )
            if not rated:
                info.rated = False
            before: list[RatingRow] = []
            for s in seats:
                s.place = place[s.seat]
                s.score = game.scores[s.seat]
                if rated:
                    row = db.get(RatingRow, (s.user_id, info.rules_key), with_for_update=True)
                    if row is None:
                        row = RatingRow(
                            user_id=s.user_id,
                            rules_key=info.rules_key,
                            mu=MU,
                            sigma=SIGMA,
                            games=0,
                            updated=now(),
                        )
                        db.add(row)
                    before.append(row)
            if rated:
                teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
                new = MODEL.rate(teams, ranks=[float(place[s.seat]) for s in seats])
                for s, row, team in zip(seats, before, new, strict=True):
                    s.mu_before, s.sigma_before = row.mu, row.sigma
                    s.mu_after, s.sigma_after = team[0].mu, team[0].sigma
                    row.mu, row.sigma = team[0].mu, team[0].sigma
                    row.games += 1
                    row.updated = now()
        return True

    def rule_sets(self) -> list[tuple[str, str]]:
        """(key, label) of every rule set someone has a rating in."""
        with Session(self.engine) as db:
            keys = sorted(set(db.scalars(select(RatingRow.rules_key).distinct())))
            out = []
            for k in keys[:50]:
                label = db.scalars(
                    select(CommunityGameRow.rules_label).where(CommunityGameRow.rules_key == k)
                ).first()
                out.append((k, label or k))
            return out

    def leaderboard(self, rules_key: str, limit: int = 50) -> list[dict[str, Any]]:
        from .accounts import UserRow

        with Session(self.engine) as db:
            rows = db.execute(
                select(RatingRow, UserRow.name)
                .join(UserRow, UserRow.id == RatingRow.user_id)
                .where(RatingRow.rules_key == rules_key)
            ).all()
        board = [{"name": name, **Rating(r.mu, r.sigma, r.games).to_dict()} for r, name in rows]
        board.sort(key=lambda e: (-e["rating"], e["name"].lower()))
        for i, e in enumerate(board[:limit]):
            e["rank"] = i + 1
        return board[:limit]

    def history(self, user_id: int, limit: int = 100) -> list[dict[str, Any]]:
        """The user's lobby games, newest first: opponents, rules, result,
        rating change, date, and the user's own seat token (for the replay)."""
        from .accounts import UserRow

        with Session(self.engine) as db:
            mine = db.execute(
                select(CommunitySeatRow, CommunityGameRow)
                .join(CommunityGameRow, CommunityGameRow.game_id == CommunitySeatRow.game_id)
                .where(CommunitySeatRow.user_id == user_id)
                .order_by(CommunityGameRow.created.desc())
                .limit(limit)
            ).all()
            ids = [g.game_id for _, g in mine]
            everyone = (
                db.execute(
                    select(CommunitySeatRow.game_id, CommunitySeatRow.seat, UserRow.name)
                    .join(UserRow, UserRow.id == CommunitySeatRow.user_id)
                    .where(CommunitySeatRow.game_id.in_(ids))
                ).all()
                if ids
                else []
            )
        names: dict[str, dict[int, str]] = {}
        for gid, seat, name in everyone:
            names.setdefault(gid, {})[seat] = name
        out = []
        for s, g in mine:
            change = None
            if s.mu_after is not None and s.mu_before is not None:
                assert s.sigma_before is not None and s.sigma_after is not None
                change = {
                    "before": round(ordinal(s.mu_before, s.sigma_before), 2),
                    "after": round(ordinal(s.mu_after, s.sigma_after), 2),
                }
            seat_names = names.get(g.game_id, {})
            out.append(
                {
                    "game": g.game_id,
                    "seat": s.seat,
                    "token": s.token,
                    "players": [seat_names[i] for i in sorted(seat_names)],
                    "opponents": [n for i, n in sorted(seat_names.items()) if i != s.seat],
                    "rules": g.rules_key,
                    "rules_label": g.rules_label,
                    "rated": g.rated,
                    "finished": g.settled,
                    "place": s.place,
                    "score": s.score,
                    "rating": change,
                    "date": g.created.isoformat(),
                    "link": f"/#/online/{g.game_id}/{s.token}",
                }
            )
        return out

    def unfinished_rated(self, user_id: int) -> str | None:
        """A rated lobby game of this user that is still being played (the
        abandonment rule: docs/community.md), or None."""
        with Session(self.engine) as db:
            q = (
                select(CommunityGameRow.game_id)
                .join(CommunitySeatRow, CommunitySeatRow.game_id == CommunityGameRow.game_id)
                .join(GameRow, GameRow.id == CommunityGameRow.game_id)
                .where(
                    CommunitySeatRow.user_id == user_id,
                    CommunityGameRow.rated.is_(True),
                    GameRow.finished.is_(False),
                )
            )
            return db.scalars(q.limit(1)).first()

    def seat_of(self, user_id: int, game_id: str) -> CommunitySeatRow | None:
        with Session(self.engine) as db:
            return db.scalars(
                select(CommunitySeatRow).where(
                    CommunitySeatRow.game_id == game_id, CommunitySeatRow.user_id == user_id
                )
            ).first()
