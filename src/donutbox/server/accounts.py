"""Accounts: user names, Argon2 password hashes, sign-in sessions, CSRF, and
the guest games an account has claimed (docs/community.md).

- A password is hashed with Argon2id (``argon2-cffi``'s defaults); only the
  hash is stored and no endpoint ever returns it.
- A session is a ``secrets.token_urlsafe(32)`` sent once, in an HttpOnly
  SameSite=Lax cookie (Secure when served over https); the database keeps
  its SHA-256 digest, the user, the CSRF token and when it expires.
- CSRF: every state-changing request carries ``X-CSRF-Token``.  Signed in,
  it must equal the session's CSRF token (readable by the page in the
  ``donutbox_csrf`` cookie, which a page of another site cannot read);
  before sign-in (sign-up, sign-in) it must equal that cookie (double
  submit).  A request whose ``Origin`` is another site is refused too.
- Sign-in attempts are limited per address and per user name (token
  buckets): a password cannot be guessed quickly.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import DateTime, ForeignKey, Integer, String, delete, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from .errors import Busy, Conflict, Invalid, NotIntroduced
from .online import digest

#: A user name: 3 to 20 letters, digits, ``_`` or ``-`` (ASCII: no look-alikes).
NAME = re.compile(r"[A-Za-z0-9_-]{3,20}")
MIN_PASSWORD = 8
MAX_PASSWORD = 128
#: How long a session lasts without signing in again.
SESSION_DAYS = float(os.environ.get("DONUTBOX_SESSION_DAYS", "14") or 14)
SESSION_COOKIE = "donutbox_session"
CSRF_COOKIE = "donutbox_csrf"
CSRF_HEADER = "x-csrf-token"

_hasher = PasswordHasher()
#: Verified against when the user name does not exist, so that a wrong name
#: takes as long as a wrong password.
_DUMMY = _hasher.hash("not a password of anyone")


class CommunityBase(DeclarativeBase):
    """The community's tables (created by the migrations, not create_all)."""


class UserRow(CommunityBase):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(20))
    name_key: Mapped[str] = mapped_column(String(20), unique=True)  # lower case
    password_hash: Mapped[str] = mapped_column(String(200))
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SessionRow(CommunityBase):
    __tablename__ = "user_sessions"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf: Mapped[str] = mapped_column(String(64))
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ClaimRow(CommunityBase):
    """A guest's owner token (its digest) linked to an account: that
    browser's local games are the account's."""

    __tablename__ = "claimed_owners"
    owner_digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    claimed: Mapped[datetime] = mapped_column(DateTime(timezone=True))


@dataclass(frozen=True)
class User:
    id: int
    name: str


@dataclass(frozen=True)
class SignedIn:
    user: User
    csrf: str


def now() -> datetime:
    return datetime.now(UTC)


def _aware(t: datetime) -> datetime:
    """SQLite gives naive datetimes back: they are UTC."""
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def check_name(name: object) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise Invalid("name: 3 to 20 letters, digits, _ or - (no spaces)")
    return name


def check_password(password: object, field: str = "password") -> str:
    if not isinstance(password, str) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise Invalid(f"{field}: {MIN_PASSWORD} to {MAX_PASSWORD} characters")
    return password


# -- sign-in limits -------------------------------------------------------------


class Buckets:
    """Token buckets by key (an address, a user name): ``burst`` attempts at
    once, then ``per_minute``; at most ``size`` keys remembered."""

    def __init__(self, burst: float, per_minute: float, size: int = 10_000) -> None:
        self.burst = burst
        self.rate = per_minute / 60.0
        self.size = size
        self.buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str, what: str, at: float | None = None) -> None:
        at = time.monotonic() if at is None else at
        tokens, stamp = self.buckets.get(key, (self.burst, at))
        tokens = min(self.burst, tokens + (at - stamp) * self.rate)
        if tokens < 1.0:
            self.buckets[key] = (tokens, at)
            wait = max(1, round((1.0 - tokens) / self.rate))
            raise Busy(f"{what}: too many sign-in attempts; try again in {wait} s")
        if key not in self.buckets and len(self.buckets) >= self.size:
            for old in sorted(self.buckets, key=lambda k: self.buckets[k][1])[: self.size // 2]:
                del self.buckets[old]
        self.buckets[key] = (tokens - 1.0, at)


class Accounts:
    """Users, sessions and claims in the database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        #: sign-in (and sign-up) attempts per client address
        self.by_address = Buckets(burst=20, per_minute=10)
        #: sign-in attempts per user name (whatever the address)
        self.by_name = Buckets(burst=5, per_minute=2)

    # -- users ----------------------------------------------------------------

    def sign_up(self, name: object, password: object) -> User:
        name = check_name(name)
        password = check_password(password)
        row = UserRow(
            name=name,
            name_key=name.lower(),
            password_hash=_hasher.hash(password),
            created=now(),
        )
        try:
            with Session(self.engine) as db, db.begin():
                db.add(row)
                db.flush()
                user = User(row.id, row.name)
        except IntegrityError:
            raise Conflict("name: already taken") from None
        return user

    def check(self, name: object, password: object) -> User:
        """The user whose password this is; NotIntroduced otherwise (the same
        answer for an unknown name and a wrong password)."""
        if not isinstance(name, str) or not isinstance(password, str):
            raise Invalid("name: and password: must be text")
        with Session(self.engine) as db:
            row = db.scalars(select(UserRow).where(UserRow.name_key == name.lower())).first()
            stored = row.password_hash if row is not None else _DUMMY
            ok = False
            try:
                ok = _hasher.verify(stored, password) and row is not None
            except (VerificationError, InvalidHashError):
                ok = False
            if not ok or row is None:
                raise NotIntroduced("password: wrong user name or password")
            if _hasher.check_needs_rehash(stored):
                row.password_hash = _hasher.hash(password)
                db.commit()
            return User(row.id, row.name)

    def change_password(self, user: User, old: object, new: object) -> None:
        new = check_password(new, "new_password")
        self.check(user.name, old)
        with Session(self.engine) as db, db.begin():
            row = db.get(UserRow, user.id)
            assert row is not None
            row.password_hash = _hasher.hash(new)

    def find(self, name: str) -> User | None:
        if not isinstance(name, str) or not NAME.fullmatch(name):
            return None
        with Session(self.engine) as db:
            row = db.scalars(select(UserRow).where(UserRow.name_key == name.lower())).first()
            return None if row is None else User(row.id, row.name)

    def names(self, ids: list[int]) -> dict[int, str]:
        if not ids:
            return {}
        with Session(self.engine) as db:
            rows = db.execute(select(UserRow.id, UserRow.name).where(UserRow.id.in_(ids)))
            return {i: n for i, n in rows}

    # -- sessions ---------------------------------------------------------------

    def open_session(self, user: User) -> tuple[str, str]:
        """A new session for ``user``: (session token, CSRF token)."""
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(24)
        t = now()
        with Session(self.engine) as db, db.begin():
            db.add(
                SessionRow(
                    digest=digest(token),
                    user_id=user.id,
                    csrf=csrf,
                    created=t,
                    expires=t + timedelta(days=SESSION_DAYS),
                )
            )
        return token, csrf

    def session(self, token: str | None) -> SignedIn | None:
        """Who a session token signs in (None: none, unknown or expired)."""
        if not token or len(token) > 100:
            return None
        with Session(self.engine) as db:
            row = db.get(SessionRow, digest(token))
            if row is None:
                return None
            if _aware(row.expires) <= now():
                db.delete(row)
                db.commit()
                return None
            user = db.get(UserRow, row.user_id)
            if user is None:
                return None
            return SignedIn(User(user.id, user.name), row.csrf)

    def close_session(self, token: str | None) -> None:
        if token and len(token) <= 100:
            with Session(self.engine) as db, db.begin():
                db.execute(delete(SessionRow).where(SessionRow.digest == digest(token)))

    def close_other_sessions(self, user: User, keep: str | None) -> None:
        keep_digest = digest(keep) if keep else ""
        with Session(self.engine) as db, db.begin():
            db.execute(
                delete(SessionRow).where(
                    SessionRow.user_id == user.id, SessionRow.digest != keep_digest
                )
            )

    # -- claims -----------------------------------------------------------------

    def claim(self, user: User, owner_token: str) -> bool:
        """Link a guest's owner token to ``user``; False if another account
        has it already."""
        d = digest(owner_token)
        with Session(self.engine) as db, db.begin():
            row = db.get(ClaimRow, d)
            if row is not None:
                return row.user_id == user.id
            db.add(ClaimRow(owner_digest=d, user_id=user.id, claimed=now()))
        return True

    def claimed(self, user: User) -> list[str]:
        with Session(self.engine) as db:
            return list(
                db.scalars(select(ClaimRow.owner_digest).where(ClaimRow.user_id == user.id))
            )


def same(a: str | None, b: str | None) -> bool:
    """Constant-time comparison of two tokens (False if either is missing)."""
    if not a or not b:
        return False
    return hmac.compare_digest(a.encode(), b.encode())
