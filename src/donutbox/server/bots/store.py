"""Bot accounts, their API tokens and the challenges sent to bots, in the
database (migration 0007; docs/bots.md).

- A **bot** is an account (a ``users`` row, so it has a name, ratings and a
  history like any player) with a ``bot_accounts`` row naming the player
  who made it.  It has no usable password: it cannot sign in; it acts only
  through its tokens.
- A **token** is ``dbx_`` and 192 bits from ``secrets``; the database keeps
  its SHA-256 digest (as for sessions and seat links), when it was made,
  last used (written at most once a minute) and revoked.
- A **challenge** asks a bot for a game (from a signed-in player or another
  bot): its rules, time control and whether it is rated; ``created`` until
  the bot accepts or declines it, or ``CHALLENGE_SECONDS`` pass.

Every method is one transaction and blocking: the routes run them in
threads.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    delete,
    func,
    select,
    update,
)
from sqlalchemy.engine import CursorResult, Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column

from ..accounts import NAME, CommunityBase, User, UserRow, _aware, now
from ..errors import Conflict, Invalid, NoSuchGame
from ..online import digest
from ..ratings.service import CommunityGameRow, CommunitySeatRow
from ..storage import GameRow

#: Bots one player may own; live (unrevoked) tokens one bot may have.
MAX_BOTS_PER_OWNER = 5
MAX_TOKENS_PER_BOT = 5
#: A challenge not answered within this many seconds has expired.
CHALLENGE_SECONDS = 60.0
#: Challenges one account may have waiting for an answer at once, and a
#: bot may be sent at once (the oldest beyond are not shown: they expire).
MAX_OUTGOING = 3
MAX_INCOMING = 20
#: Challenges are deleted this many days after they were made.
KEEP_DAYS = 1
#: Games a bot may play at once (a person: one rated game, the lobby's
#: abandonment rule).
MAX_BOT_GAMES = 8
#: Bot ratings are kept under the rules key with this prefix: a pool of
#: their own, so a bot never moves a rating of the human pool.
POOL_PREFIX = "bot:"
#: A token's ``last_used`` is written at most this often.
LAST_USED_SECONDS = 60.0
#: What bot tokens start with (so that one pasted by mistake is recognised).
TOKEN_PREFIX = "dbx_"
#: The password hash of a bot: never a valid Argon2 hash, so no password
#: signs a bot in (passwords.verify is False for a malformed hash).
NO_PASSWORD = "!bot-account: no password"


class BotRow(CommunityBase):
    __tablename__ = "bot_accounts"
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class BotTokenRow(CommunityBase):
    __tablename__ = "bot_tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_used: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class ChallengeRow(CommunityBase):
    __tablename__ = "bot_challenges"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    challenger_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    dest_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    rules: Mapped[str] = mapped_column(Text)  # JSON: the rule fields
    rules_key: Mapped[str] = mapped_column(String(40))
    rules_label: Mapped[str] = mapped_column(String(200))
    clock: Mapped[str] = mapped_column(Text)  # JSON: {minutes, increment}
    rated: Mapped[bool] = mapped_column(Boolean)
    status: Mapped[str] = mapped_column(String(12))
    reason: Mapped[str | None] = mapped_column(String(100), nullable=True)
    game_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True))


@dataclass(frozen=True)
class Bot:
    """A bot account acting through one of its tokens."""

    user: User
    token_id: int


@dataclass(frozen=True)
class Challenge:
    id: str
    challenger: User
    challenger_bot: bool
    dest: User
    rules: dict[str, Any]
    rules_key: str
    rules_label: str
    clock: dict[str, float]
    rated: bool
    status: str
    reason: str | None
    game_id: str | None
    created: datetime

    def to_dict(self) -> dict[str, Any]:
        """What the event stream and the challenger are told."""
        return {
            "id": self.id,
            "challenger": {"name": self.challenger.name, "bot": self.challenger_bot},
            "dest": self.dest.name,
            "rules": self.rules,
            "rules_key": self.rules_key,
            "players": 2,
            "clock": self.clock,
            "rated": self.rated,
            "status": self.status,
            "reason": self.reason,
            "game": self.game_id,
        }


def pool_key(rules_key: str) -> str:
    """The ratings key of bot games of these rules (their own pool)."""
    return POOL_PREFIX + rules_key


def new_bot_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(24)


def _expired(created: datetime, at: datetime) -> bool:
    return at - _aware(created) > timedelta(seconds=CHALLENGE_SECONDS)


class BotStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # -- accounts ---------------------------------------------------------------

    def create_bot(self, owner: User, name: str) -> User:
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise Invalid("name: 3 to 20 letters, digits, _ or - (no spaces)")
        try:
            with Session(self.engine) as db, db.begin():
                owned = db.scalar(
                    select(func.count()).select_from(BotRow).where(BotRow.owner_id == owner.id)
                )
                if int(owned or 0) >= MAX_BOTS_PER_OWNER:
                    raise Conflict(f"bots: at most {MAX_BOTS_PER_OWNER} bots an account")
                if db.get(BotRow, owner.id) is not None:
                    raise Invalid("owner: a bot cannot own a bot")
                row = UserRow(
                    name=name, name_key=name.lower(), password_hash=NO_PASSWORD, created=now()
                )
                db.add(row)
                db.flush()
                db.add(BotRow(user_id=row.id, owner_id=owner.id, created=now()))
                return User(row.id, row.name)
        except IntegrityError:
            raise Conflict("name: already taken") from None

    def is_bot(self, user_id: int) -> bool:
        with Session(self.engine) as db:
            return db.get(BotRow, user_id) is not None

    def bot_named(self, name: str) -> tuple[User, str] | None:
        """The bot of this name and its owner's name, or None."""
        if not isinstance(name, str) or not NAME.fullmatch(name):
            return None
        with Session(self.engine) as db:
            row = db.execute(
                select(UserRow, BotRow.owner_id)
                .join(BotRow, BotRow.user_id == UserRow.id)
                .where(UserRow.name_key == name.lower())
            ).first()
            if row is None:
                return None
            owner = db.get(UserRow, row[1])
            return User(row[0].id, row[0].name), owner.name if owner else "?"

    def owned_bot(self, owner: User, name: str) -> User:
        found = self.bot_named(name)
        if found is None or not self._owns(owner.id, found[0].id):
            raise NoSuchGame("bot: you own no bot of that name")
        return found[0]

    def _owns(self, owner_id: int, bot_id: int) -> bool:
        with Session(self.engine) as db:
            row = db.get(BotRow, bot_id)
            return row is not None and row.owner_id == owner_id

    def bots_of(self, owner: User) -> list[dict[str, Any]]:
        """The owner's bots, each with its tokens (never the tokens themselves)."""
        with Session(self.engine) as db:
            bots = db.execute(
                select(UserRow)
                .join(BotRow, BotRow.user_id == UserRow.id)
                .where(BotRow.owner_id == owner.id)
                .order_by(UserRow.id)
            ).scalars()
            out = []
            for b in bots:
                tokens = db.scalars(
                    select(BotTokenRow).where(BotTokenRow.bot_id == b.id).order_by(BotTokenRow.id)
                )
                out.append(
                    {
                        "name": b.name,
                        "created": _aware(b.created).isoformat(),
                        "tokens": [
                            {
                                "id": t.id,
                                "created": _aware(t.created).isoformat(),
                                "last_used": None
                                if t.last_used is None
                                else _aware(t.last_used).isoformat(),
                                "revoked": None
                                if t.revoked is None
                                else _aware(t.revoked).isoformat(),
                            }
                            for t in tokens
                        ],
                    }
                )
            return out

    # -- tokens -----------------------------------------------------------------

    def new_token(self, bot: User) -> tuple[int, str]:
        """A new token for the bot: (its id, the token, shown once)."""
        token = new_bot_token()
        with Session(self.engine) as db, db.begin():
            live = db.scalar(
                select(func.count())
                .select_from(BotTokenRow)
                .where(BotTokenRow.bot_id == bot.id, BotTokenRow.revoked.is_(None))
            )
            if int(live or 0) >= MAX_TOKENS_PER_BOT:
                raise Conflict(
                    f"tokens: at most {MAX_TOKENS_PER_BOT} live tokens a bot; revoke one first"
                )
            row = BotTokenRow(bot_id=bot.id, digest=digest(token), created=now())
            db.add(row)
            db.flush()
            return row.id, token

    def revoke(self, bot: User, token_id: int) -> None:
        with Session(self.engine) as db, db.begin():
            row = db.get(BotTokenRow, token_id)
            if row is None or row.bot_id != bot.id:
                raise NoSuchGame("token: this bot has no token with that id")
            if row.revoked is None:
                row.revoked = now()

    def authenticate(self, token: str, touch: bool) -> Bot | None:
        """The bot a live token acts for (looked up by its digest, as
        sessions are), or None; ``touch`` writes its last use."""
        if not token.startswith(TOKEN_PREFIX) or len(token) > 100:
            return None
        with Session(self.engine) as db, db.begin():
            row = db.execute(
                select(BotTokenRow, UserRow)
                .join(UserRow, UserRow.id == BotTokenRow.bot_id)
                .where(BotTokenRow.digest == digest(token), BotTokenRow.revoked.is_(None))
            ).first()
            if row is None:
                return None
            t, u = row
            if touch:
                t.last_used = now()
            return Bot(User(u.id, u.name), t.id)

    def token_live(self, token_id: int) -> bool:
        """Not revoked (an open stream asks again now and then: revoking a
        token ends its streams too)."""
        with Session(self.engine) as db:
            row = db.get(BotTokenRow, token_id)
            return row is not None and row.revoked is None

    # -- challenges -------------------------------------------------------------

    def challenge(
        self,
        challenger: User,
        dest: User,
        rules: dict[str, Any],
        rules_key: str,
        rules_label: str,
        clock: dict[str, float],
        rated: bool,
    ) -> Challenge:
        if challenger.id == dest.id:
            raise Invalid("name: a bot cannot challenge itself")
        at = now()
        with Session(self.engine) as db, db.begin():
            waiting = [
                c
                for c in db.scalars(
                    select(ChallengeRow).where(
                        ChallengeRow.challenger_id == challenger.id,
                        ChallengeRow.status == "created",
                    )
                )
                if not _expired(c.created, at)
            ]
            if len(waiting) >= MAX_OUTGOING:
                raise Conflict(
                    f"challenge: at most {MAX_OUTGOING} challenges waiting for an answer at once"
                )
            # Answered or expired challenges are kept a day (for the
            # challenger's page and the event streams), then let go.
            db.execute(
                delete(ChallengeRow)
                .where(ChallengeRow.created < at - timedelta(days=KEEP_DAYS))
                .execution_options(synchronize_session=False)  # (SQLite's naive times)
            )
            row = ChallengeRow(
                id=secrets.token_urlsafe(9),
                challenger_id=challenger.id,
                dest_id=dest.id,
                rules=json.dumps(rules),
                rules_key=rules_key,
                rules_label=rules_label[:200],
                clock=json.dumps(clock),
                rated=rated,
                status="created",
                created=at,
            )
            db.add(row)
            db.flush()
            return self._challenge(db, row)

    def _challenge(self, db: Session, row: ChallengeRow) -> Challenge:
        names = dict(
            db.execute(
                select(UserRow.id, UserRow.name).where(
                    UserRow.id.in_([row.challenger_id, row.dest_id])
                )
            ).all()
        )
        status = row.status
        if status == "created" and _expired(row.created, now()):
            status = "expired"
        return Challenge(
            id=row.id,
            challenger=User(row.challenger_id, names.get(row.challenger_id, "?")),
            challenger_bot=db.get(BotRow, row.challenger_id) is not None,
            dest=User(row.dest_id, names.get(row.dest_id, "?")),
            rules=json.loads(row.rules),
            rules_key=row.rules_key,
            rules_label=row.rules_label,
            clock=json.loads(row.clock),
            rated=row.rated,
            status=status,
            reason=row.reason,
            game_id=row.game_id,
            created=_aware(row.created),
        )

    def get_challenge(self, challenge_id: str, reader: User) -> Challenge:
        """A challenge its challenger or its bot may read (anyone else: 404)."""
        with Session(self.engine) as db:
            row = db.get(ChallengeRow, challenge_id[:16])
            if row is None or reader.id not in (row.challenger_id, row.dest_id):
                raise NoSuchGame("challenge: no such challenge")
            return self._challenge(db, row)

    def answer(self, challenge_id: str, bot: User, status: str, reason: str | None) -> Challenge:
        """The bot takes (``accepted``) or declines its challenge, once: a
        conditional UPDATE, so two answers racing settle on one."""
        with Session(self.engine) as db, db.begin():
            row = db.get(ChallengeRow, challenge_id[:16])
            if row is None or row.dest_id != bot.id:
                raise NoSuchGame("challenge: no such challenge")
            if row.status != "created":
                raise Conflict(f"challenge: already {row.status}")
            if _expired(row.created, now()):
                raise Conflict("challenge: expired")
            changed = cast(
                "CursorResult[Any]",
                db.execute(
                    update(ChallengeRow)
                    .where(ChallengeRow.id == row.id, ChallengeRow.status == "created")
                    .values(status=status, reason=reason)
                ),
            )
            if changed.rowcount != 1:
                raise Conflict("challenge: already answered")
            db.refresh(row)
            return self._challenge(db, row)

    def settle_challenge(
        self, challenge_id: str, status: str, game_id: str | None, reason: str | None = None
    ) -> None:
        """After an accept: the game made, or why it could not be."""
        with Session(self.engine) as db, db.begin():
            row = db.get(ChallengeRow, challenge_id)
            if row is not None:
                row.status, row.game_id, row.reason = status, game_id, reason

    def cancel(self, challenge_id: str, challenger: User) -> None:
        with Session(self.engine) as db, db.begin():
            row = db.get(ChallengeRow, challenge_id[:16])
            if row is None or row.challenger_id != challenger.id:
                raise NoSuchGame("challenge: no such challenge")
            if row.status == "created":
                row.status = "canceled"

    def challenges_of(self, user: User) -> list[Challenge]:
        """Challenges to this bot waiting for an answer (the newest
        ``MAX_INCOMING``) and this account's own challenges of the last
        ``CHALLENGE_SECONDS`` (with their answer)."""
        since = now() - timedelta(seconds=CHALLENGE_SECONDS * 2)
        with Session(self.engine) as db:
            incoming = db.scalars(
                select(ChallengeRow)
                .where(
                    ChallengeRow.dest_id == user.id,
                    ChallengeRow.status == "created",
                    ChallengeRow.created >= since,
                )
                .order_by(ChallengeRow.created.desc())
                .limit(MAX_INCOMING)
            )
            outgoing = db.scalars(
                select(ChallengeRow)
                .where(ChallengeRow.challenger_id == user.id, ChallengeRow.created >= since)
                .order_by(ChallengeRow.created.desc())
                .limit(MAX_INCOMING)
            )
            return [self._challenge(db, r) for r in [*incoming, *outgoing]]

    # -- games ------------------------------------------------------------------

    def games_of(self, user_id: int, finished_since: datetime | None = None) -> list[GameInfo]:
        """The account's lobby games still being played, and those that
        ended after ``finished_since``: for the event stream."""
        with Session(self.engine) as db:
            q = (
                select(CommunitySeatRow, CommunityGameRow, GameRow.finished, GameRow.updated)
                .join(CommunityGameRow, CommunityGameRow.game_id == CommunitySeatRow.game_id)
                .join(GameRow, GameRow.id == CommunitySeatRow.game_id)
                .where(CommunitySeatRow.user_id == user_id)
            )
            if finished_since is None:
                q = q.where(GameRow.finished.is_(False))
            else:
                q = q.where((GameRow.finished.is_(False)) | (GameRow.updated >= finished_since))
            rows = db.execute(q.order_by(CommunityGameRow.created.desc()).limit(200)).all()
            return [
                GameInfo(s.game_id, s.seat, g.rules_key, g.rated, bool(done), g.settled)
                for s, g, done, _ in rows
            ]

    def seat_token(self, user_id: int, game_id: str) -> str | None:
        """The seat token of this account's seat in a lobby game (None: not
        its game)."""
        with Session(self.engine) as db:
            return db.scalars(
                select(CommunitySeatRow.token).where(
                    CommunitySeatRow.game_id == game_id[:32], CommunitySeatRow.user_id == user_id
                )
            ).first()

    def playing(self, user_id: int) -> int:
        """Lobby games of this account still being played."""
        with Session(self.engine) as db:
            n = db.scalar(
                select(func.count())
                .select_from(CommunitySeatRow)
                .join(GameRow, GameRow.id == CommunitySeatRow.game_id)
                .where(CommunitySeatRow.user_id == user_id, GameRow.finished.is_(False))
            )
            return int(n or 0)


@dataclass(frozen=True)
class GameInfo:
    id: str
    seat: int
    rules_key: str
    rated: bool
    finished: bool
    settled: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "seat": self.seat,
            "rules_key": self.rules_key,
            "rated": self.rated,
        }
