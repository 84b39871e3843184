"""Ratings and the games the lobby made: openskill's Plackett-Luce model, a
rating per player per rule set (``Rules.key()``), updated once when a rated
game ends (docs/community.md says why Plackett-Luce), each seat's update
weighted by the pair's recent games and kept from established ratings by
provisional opponents (the rules: ``ratings/model.py``).

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

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    and_,
    false,
    func,
    select,
    update,
)
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Mapped, Session, aliased, mapped_column

from ...core import Game
from ...core.record import load
from .. import forfeits
from ..accounts import CommunityBase, now
from ..moderation.rows import BanRow
from ..ratings.model import (
    MODEL,
    MU,
    PAIR_WINDOW_DAYS,
    PROVISIONAL_OPPONENTS,
    PROVISIONAL_SIGMA,
    QUICK_MATCH_PAIR_LIMIT,
    SIGMA,
    Skill,
    deviation,
    display,
    provisional,
    rate,
    seat_weights,
)
from ..storage import GameRow, Store
from . import no_shows

__all__ = ["MODEL", "MU", "SIGMA", "Rating", "Ratings", "ordinal", "places"]


class RatingRow(CommunityBase):
    __tablename__ = "ratings"
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    rules_key: Mapped[str] = mapped_column(String(40), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    #: counted games (weight > 0) and the different accounts they were against
    games: Mapped[int] = mapped_column(Integer, default=0)
    opponents: Mapped[int] = mapped_column(Integer, default=0)
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
    #: voided by a moderator (``donutbox admin void``): counts for no rating
    voided: Mapped[bool] = mapped_column(Boolean, default=False)


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
    #: how much the game counted for this seat (ratings.model.seat_weights)
    weight: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: the game was aborted because this seat's player never arrived
    #: (ratings/no_shows.py)
    no_show: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


def _turn_based(options: str) -> bool:
    """Whether a stored game's options give it a turn-based clock."""
    try:
        online = json.loads(options).get("online") or {}
        clock = online.get("clock") or {}
        return isinstance(clock, dict) and clock.get("days") is not None
    except (ValueError, AttributeError):
        return False


def ordinal(mu: float, sigma: float) -> float:
    """mu - 3 sigma (0 for a new player): how quick match compares ratings."""
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
    opponents: int = 0

    @property
    def provisional(self) -> bool:
        return provisional(Skill(self.mu, self.sigma, self.games, self.opponents))

    def to_dict(self) -> dict[str, Any]:
        """The shown rating (1500 to start), whether it is provisional (the
        page writes "1512?"), and the model's own numbers in ``model``."""
        return {
            "rating": display(self.mu),
            "provisional": self.provisional,
            "deviation": deviation(self.sigma),
            "games": self.games,
            "opponents": self.opponents,
            "model": {"mu": round(self.mu, 3), "sigma": round(self.sigma, 3)},
        }


NEW = Rating(MU, SIGMA, 0)


def _rating(row: RatingRow) -> Rating:
    return Rating(row.mu, row.sigma, row.games, row.opponents or 0)


def earlier_pairs(
    db: Session, users: Sequence[int], ended: datetime, game_id: str
) -> dict[frozenset[int], int]:
    """Settled rated games (any rules) of each pair of ``users`` together
    that ended within ``PAIR_WINDOW_DAYS`` before ``ended``, this one aside."""
    a, b = aliased(CommunitySeatRow), aliased(CommunitySeatRow)
    g = CommunityGameRow
    rows = db.execute(
        select(a.user_id, b.user_id, func.count(func.distinct(g.game_id)))
        .join(b, and_(b.game_id == a.game_id, a.user_id < b.user_id))
        .join(g, g.game_id == a.game_id)
        .where(
            a.user_id.in_(users),
            b.user_id.in_(users),
            g.rated.is_(True),
            g.settled.is_(True),
            g.voided.is_(False),
            g.game_id != game_id,
            g.ended >= ended - timedelta(days=PAIR_WINDOW_DAYS),
            g.ended <= ended,
        )
        .group_by(a.user_id, b.user_id)
    ).all()
    return {frozenset((x, y)): int(n) for x, y, n in rows}


def repeated_pairs(db: Session, users: Sequence[int]) -> frozenset[frozenset[int]]:
    """The pairs of ``users`` that quick match keeps apart: their next game
    together would count less than fully (``QUICK_MATCH_PAIR_LIMIT``)."""
    if len(users) < 2:
        return frozenset()
    earlier = earlier_pairs(db, users, now(), "")
    return frozenset(p for p, n in earlier.items() if n >= QUICK_MATCH_PAIR_LIMIT)


def counted_opponents(db: Session, user_id: int, rules_key: str) -> int:
    """The different accounts met in the user's counted games (weight > 0)
    of these rules."""
    mine, other = aliased(CommunitySeatRow), aliased(CommunitySeatRow)
    n = db.scalar(
        select(func.count(func.distinct(other.user_id)))
        .select_from(mine)
        .join(other, and_(other.game_id == mine.game_id, other.user_id != mine.user_id))
        .join(CommunityGameRow, CommunityGameRow.game_id == mine.game_id)
        .where(
            mine.user_id == user_id,
            mine.weight > 0,
            CommunityGameRow.rules_key == rules_key,
            CommunityGameRow.rated.is_(True),
            CommunityGameRow.voided.is_(False),
        )
    )
    return int(n or 0)


def _rate_seats(
    db: Session,
    info: CommunityGameRow,
    seats: list[CommunitySeatRow],
    rows: list[RatingRow],
    place: list[int],
) -> None:
    """A rated game's new ratings: each seat's weight from the pairs'
    history (``ratings.model.seat_weights``), the weighted update, and the
    counted games and opponents."""
    assert info.ended is not None
    users = [s.user_id for s in seats]
    before = [Skill(r.mu, r.sigma, r.games or 0, r.opponents or 0) for r in rows]
    weights = seat_weights(users, earlier_pairs(db, users, info.ended, info.game_id), before)
    after = rate(before, place, weights)
    for s, row, w, (mu, sigma) in zip(seats, rows, weights, after, strict=True):
        s.mu_before, s.sigma_before = row.mu, row.sigma
        s.mu_after, s.sigma_after = mu, sigma
        s.weight = w
        row.mu, row.sigma = mu, sigma
        row.updated = now()
    db.flush()
    for s, row, w in zip(seats, rows, weights, strict=True):
        if w > 0:
            row.games = (row.games or 0) + 1
            row.opponents = counted_opponents(db, s.user_id, info.rules_key)


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
                    voided=False,
                    created=now(),
                )
            )
            db.flush()
            for seat, (user_id, token) in enumerate(seats):
                db.add(CommunitySeatRow(game_id=game_id, seat=seat, user_id=user_id, token=token))

    def rating(self, user_id: int, rules_key: str) -> Rating:
        with Session(self.engine) as db:
            row = db.get(RatingRow, (user_id, rules_key))
            return NEW if row is None else _rating(row)

    def all_of(self, user_id: int) -> dict[str, Rating]:
        with Session(self.engine) as db:
            rows = db.scalars(select(RatingRow).where(RatingRow.user_id == user_id))
            return {r.rules_key: _rating(r) for r in rows}

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
        game = load(stored.record)
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
            absent = forfeits.absent(game)
            for s in seats:
                s.place = place[s.seat]
                s.score = game.scores[s.seat]
                s.no_show = s.seat in absent
                if rated:
                    row = db.get(RatingRow, (s.user_id, info.rules_key), with_for_update=True)
                    if row is None:
                        row = RatingRow(
                            user_id=s.user_id,
                            rules_key=info.rules_key,
                            mu=MU,
                            sigma=SIGMA,
                            games=0,
                            opponents=0,
                            updated=now(),
                        )
                        db.add(row)
                    before.append(row)
            if rated:
                _rate_seats(db, info, seats, before, [place[s.seat] for s in seats])
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
        from ..accounts import UserRow

        with Session(self.engine) as db:
            rows = db.execute(
                select(RatingRow, UserRow.name)
                .join(UserRow, UserRow.id == RatingRow.user_id)
                .where(
                    RatingRow.rules_key == rules_key,
                    RatingRow.sigma <= PROVISIONAL_SIGMA,
                    RatingRow.opponents >= PROVISIONAL_OPPONENTS,
                    RatingRow.user_id.not_in(select(BanRow.user_id)),
                )
            ).all()
        # Provisional ratings are not listed (docs/community.md): a new
        # account's lucky streak, or one fed by a few accounts, stays off.
        board = [
            {"name": name, **rating.to_dict()}
            for rating, name in ((_rating(r), name) for r, name in rows)
            if not rating.provisional
        ]
        board.sort(key=lambda e: (-e["model"]["mu"], e["name"].lower()))
        for i, e in enumerate(board[:limit]):
            e["rank"] = i + 1
        return board[:limit]

    def history(self, user_id: int, limit: int = 100) -> list[dict[str, Any]]:
        """The user's lobby games, newest first: opponents, rules, result,
        rating change, date, and the user's own seat token (for the replay)."""
        from ..accounts import UserRow

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
                    "before": display(s.mu_before),
                    "after": display(s.mu_after),
                    "weight": 1.0 if s.weight is None else s.weight,
                    "model": {
                        "mu_before": round(s.mu_before, 3),
                        "sigma_before": round(s.sigma_before, 3),
                        "mu_after": round(s.mu_after, 3),
                        "sigma_after": round(s.sigma_after, 3),
                    },
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
                    "voided": bool(g.voided),
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
        """A real-time rated lobby game of this user that is still being
        played (the abandonment rule: docs/community.md), or None.
        Turn-based games do not count: a player may have many at once."""
        with Session(self.engine) as db:
            q = (
                select(CommunityGameRow.game_id, GameRow.options)
                .join(CommunitySeatRow, CommunitySeatRow.game_id == CommunityGameRow.game_id)
                .join(GameRow, GameRow.id == CommunityGameRow.game_id)
                .where(
                    CommunitySeatRow.user_id == user_id,
                    CommunityGameRow.rated.is_(True),
                    GameRow.finished.is_(False),
                )
            )
            for game_id, options in db.execute(q):
                if not _turn_based(options):
                    return str(game_id)
        return None

    def turn_based_in_progress(self, user_id: int) -> int:
        """How many turn-based lobby games of this user are still being
        played (rated or not)."""
        with Session(self.engine) as db:
            q = (
                select(GameRow.options)
                .join(CommunityGameRow, GameRow.id == CommunityGameRow.game_id)
                .join(CommunitySeatRow, CommunitySeatRow.game_id == CommunityGameRow.game_id)
                .where(CommunitySeatRow.user_id == user_id, GameRow.finished.is_(False))
            )
            return sum(1 for options in db.scalars(q) if _turn_based(options))

    def no_shows(self, user_id: int, since: datetime) -> list[datetime]:
        """When the user's no-shows (``no_shows.py``) since ``since`` were,
        games ended but not yet settled included (settled here first)."""
        self.settle_all()
        with Session(self.engine) as db:
            q = (
                select(CommunityGameRow.ended)
                .join(CommunitySeatRow, CommunitySeatRow.game_id == CommunityGameRow.game_id)
                .where(
                    CommunitySeatRow.user_id == user_id,
                    CommunitySeatRow.no_show.is_(True),
                    CommunityGameRow.ended >= since,
                )
            )
            # (SQLite gives back naive UTC times)
            return [t if t.tzinfo else t.replace(tzinfo=UTC) for t in db.scalars(q) if t]

    def rated_pause(self, user_id: int) -> dict[str, Any] | None:
        """While the user's rated play is paused after repeated no-shows
        (``no_shows.py``): when it opens again (Unix seconds) and the reason a
        rated request is refused with; else None.  The lobby shows it before
        the player tries."""
        t = now()
        times = self.no_shows(user_id, t - no_shows.WINDOW)
        until = no_shows.paused_until(times, t)
        reason = no_shows.refusal(times, t)
        if until is None or reason is None:
            return None
        return {"until": until.timestamp(), "reason": reason}

    def rated_refusal(self, user_id: int) -> str | None:
        """Why this user may not start a rated game now (one line), or None:
        a real-time rated game still being played (abandonment), or rated
        play paused after repeated no-shows (``no_shows.py``)."""
        game = self.unfinished_rated(user_id)
        if game is not None:
            return f"rated: your rated game {game} is still being played; finish or resign it first"
        t = now()
        return no_shows.refusal(self.no_shows(user_id, t - no_shows.WINDOW), t)

    def seat_of(self, user_id: int, game_id: str) -> CommunitySeatRow | None:
        with Session(self.engine) as db:
            return db.scalars(
                select(CommunitySeatRow).where(
                    CommunitySeatRow.game_id == game_id, CommunitySeatRow.user_id == user_id
                )
            ).first()
