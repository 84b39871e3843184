"""Accounts: user names, Argon2 password hashes, sign-in sessions, CSRF, and
the guest games an account has claimed (docs/community.md).

- A password is hashed with Argon2id (passwords.py: m = 19 MiB, t = 2,
  p = 1, on a hashing pool of its own with a short queue); only the hash is
  stored and no endpoint ever returns it.
- A session is a ``secrets.token_urlsafe(32)`` sent once, in an HttpOnly
  SameSite=Lax cookie (Secure when served over https); the database keeps
  its SHA-256 digest, the user, the CSRF token and when it expires.
- CSRF: every state-changing request carries ``X-CSRF-Token``.  Signed in,
  it must equal the session's CSRF token (readable by the page in the
  ``donutbox_csrf`` cookie, which a page of another site cannot read);
  before sign-in (sign-up, sign-in) it must equal that cookie (double
  submit).  A request whose ``Origin`` is another site is refused too.
- Password attempts are limited per address (every attempt) and wrong
  passwords per (user name, address) (token buckets): a password cannot be
  guessed quickly, and a stranger's guesses never lock its owner out.
  Addresses are ``limits.address_key``'s (an IPv6 client's /64).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
import re
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import DateTime, ForeignKey, Integer, String, delete, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from .errors import Busy, Conflict, Invalid, NotIntroduced, Overloaded
from .limits import _env_figure
from .online import digest
from .passwords import DUMMY_HASH, HashPool, hash_password, needs_rehash, verify
from .throttle import Limiter

#: A user name: 3 to 20 letters, digits, ``_`` or ``-`` (ASCII: no look-alikes).
NAME = re.compile(r"[A-Za-z0-9_-]{3,20}")
MIN_PASSWORD = 8
MAX_PASSWORD = 128
#: How long a session lasts without signing in again.
SESSION_DAYS = float(os.environ.get("DONUTBOX_SESSION_DAYS", "14") or 14)
SESSION_COOKIE = "donutbox_session"
CSRF_COOKIE = "donutbox_csrf"
CSRF_HEADER = "x-csrf-token"


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

#: Sign-in, sign-up and password-change attempts an address may make: a
#: burst, then a steady rate (every attempt, right or wrong: it bounds the
#: password checks one address can ask for).  ``DONUTBOX_SIGNIN_PER_MINUTE``
#: changes the rate (a test that counts attempts wants no refill).
ADDRESS_BURST = 20
ADDRESS_PER_MINUTE = _env_figure("DONUTBOX_SIGNIN_PER_MINUTE", 10.0)
#: Wrong passwords for one name from one address: a burst, then a rate.
FAILURE_BURST = 5
FAILURE_PER_MINUTE = 2.0


class FailedSignIns:
    """Wrong passwords per key (a user name and an address): ``burst`` at
    once, then ``per_minute``; at most ``size`` keys remembered (the oldest
    half dropped beyond: a dropped key starts afresh).  Only failures count,
    and only from the address they came from: a stranger's guesses never
    lock the owner out."""

    def __init__(self, burst: float, per_minute: float, size: int = 10_000) -> None:
        self.burst = burst
        self.rate = per_minute / 60.0
        self.size = size
        self.buckets: dict[tuple[str, str], tuple[float, float]] = {}

    def _tokens(self, key: tuple[str, str], at: float) -> float:
        tokens, stamp = self.buckets.get(key, (self.burst, at))
        return min(self.burst, tokens + (at - stamp) * self.rate)

    def wait(self, key: tuple[str, str], at: float | None = None) -> float:
        """Seconds until ``key`` may try again (0.0: now)."""
        at = time.monotonic() if at is None else at
        tokens = self._tokens(key, at)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def fail(self, key: tuple[str, str], at: float | None = None) -> None:
        """One more wrong password for ``key``."""
        at = time.monotonic() if at is None else at
        tokens = self._tokens(key, at)
        if key not in self.buckets and len(self.buckets) >= self.size:
            for old in sorted(self.buckets, key=lambda k: self.buckets[k][1])[: self.size // 2]:
                del self.buckets[old]
        self.buckets[key] = (max(0.0, tokens - 1.0), at)

    def forget(self, key: tuple[str, str]) -> None:
        """The right password: the key's failures are forgotten."""
        self.buckets.pop(key, None)


class Accounts:
    """Users, sessions and claims in the database; passwords checked on the
    hashing pool (passwords.py), database work in ``asyncio.to_thread``."""

    def __init__(self, engine: Engine, hashing: HashPool | None = None) -> None:
        self.engine = engine
        self.hashing = hashing if hashing is not None else HashPool()
        #: every sign-in, sign-up and password change per address (shared by
        #: every server process with a broker, throttle.py)
        self.by_address = Limiter(
            ADDRESS_PER_MINUTE / 60.0, ADDRESS_BURST, name="password-attempts"
        )
        #: wrong passwords per (user name, address)
        self.failures = FailedSignIns(FAILURE_BURST, FAILURE_PER_MINUTE)

    async def attempt(self, address: str, what: str = "sign-in") -> None:
        """An attempt from ``address`` (the key of ``limits.address_key``):
        Overloaded (503) if the hashing pool is full now (not counted),
        else Busy (429) once the address's bucket is empty."""
        self.hashing.room(what)
        wait = await self.by_address.acquire(address)
        if wait > 0:
            raise Busy(f"address: too many sign-in attempts; try again in {max(1, round(wait))} s")

    # -- users ----------------------------------------------------------------

    async def sign_up(self, name: object, password: object) -> User:
        name = check_name(name)
        password = check_password(password)
        hashed = await self.hashing.run(hash_password, password, what="sign-up")
        return await asyncio.to_thread(self._insert, name, hashed)

    def _insert(self, name: str, hashed: str) -> User:
        row = UserRow(name=name, name_key=name.lower(), password_hash=hashed, created=now())
        try:
            with Session(self.engine) as db, db.begin():
                db.add(row)
                db.flush()
                user = User(row.id, row.name)
        except IntegrityError:
            raise Conflict("name: already taken") from None
        return user

    def _stored(self, name: str) -> tuple[User, str] | None:
        with Session(self.engine) as db:
            row = db.scalars(select(UserRow).where(UserRow.name_key == name.lower())).first()
            return None if row is None else (User(row.id, row.name), row.password_hash)

    def _replace_hash(self, user: User, old: str | None, new: str) -> None:
        """The user's hash becomes ``new`` (if it is still ``old``: a
        password changed meanwhile is kept)."""
        with Session(self.engine) as db, db.begin():
            row = db.get(UserRow, user.id)
            if row is not None and (old is None or row.password_hash == old):
                row.password_hash = new

    async def check(self, name: object, password: object, address: str) -> User:
        """The user whose password this is; NotIntroduced otherwise (the same
        answer for an unknown name and a wrong password).  Busy when this
        address has had too many wrong passwords for this name; Overloaded
        when the hashing pool's queue is full."""
        if not isinstance(name, str) or not isinstance(password, str):
            raise Invalid("name: and password: must be text")
        key = (name.lower()[:20], address)
        wait = self.failures.wait(key)
        if wait > 0:
            raise Busy(
                "name: too many wrong passwords for this name from your address; "
                f"try again in {max(1, round(wait))} s"
            )
        found = await asyncio.to_thread(self._stored, name)
        stored = found[1] if found is not None else DUMMY_HASH
        ok = await self.hashing.run(verify, stored, password)
        if not ok or found is None:
            self.failures.fail(key)
            raise NotIntroduced("password: wrong user name or password")
        self.failures.forget(key)
        user = found[0]
        if needs_rehash(stored):  # made with older parameters: made again now
            with contextlib.suppress(Overloaded):  # or at a later sign-in
                new = await self.hashing.run(hash_password, password)
                await asyncio.to_thread(self._replace_hash, user, stored, new)
        return user

    async def change_password(self, user: User, old: object, new: object, address: str) -> None:
        new = check_password(new, "new_password")
        await self.check(user.name, old, address)
        hashed = await self.hashing.run(hash_password, new, what="password")
        await asyncio.to_thread(self._replace_hash, user, None, hashed)

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
