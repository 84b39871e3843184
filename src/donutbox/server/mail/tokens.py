"""Signed links that work without signing in: confirming an address, and
unsubscribing from every email (docs/community.md, "Email").

A token is ``<payload>.<mac>``: the payload is base64url JSON
``{"p": purpose, "u": user id, "a": address, "e": expiry}``, the mac its
HMAC-SHA256 under the server's mail key (``mail_keys``, 256 random bits,
made on first use).  A token names the address it was made for: once the
account changes its address, the old links open nothing.
"""

from __future__ import annotations

import base64
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from hashlib import sha256

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from .rows import MailKeyRow

#: A confirmation link works this long; an unsubscribe link a year.
CONFIRM_SECONDS = 2 * 86400
UNSUBSCRIBE_SECONDS = 365 * 86400
#: The longest token read (anything longer is refused unread).
MAX_TOKEN = 800
PURPOSES = ("confirm", "unsub")


@dataclass(frozen=True)
class Claim:
    purpose: str
    user_id: int
    address: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def mail_key(engine: Engine) -> bytes:
    """The signing key, made once (the first process to store it wins)."""
    with Session(engine) as db:
        row = db.get(MailKeyRow, "links")
        if row is not None:
            return bytes.fromhex(row.key)
    try:
        with Session(engine) as db, db.begin():
            db.add(MailKeyRow(name="links", key=secrets.token_hex(32)))
    except IntegrityError:
        pass  # another process made it first
    with Session(engine) as db:
        row = db.get(MailKeyRow, "links")
        assert row is not None
        return bytes.fromhex(row.key)


def sign(key: bytes, purpose: str, user_id: int, address: str, now: float | None = None) -> str:
    assert purpose in PURPOSES
    life = CONFIRM_SECONDS if purpose == "confirm" else UNSUBSCRIBE_SECONDS
    at = time.time() if now is None else now
    body = {"p": purpose, "u": user_id, "a": address, "e": int(at + life)}
    payload = _b64(json.dumps(body, separators=(",", ":")).encode())
    mac = _b64(hmac.new(key, payload.encode(), sha256).digest())
    return f"{payload}.{mac}"


def verify(key: bytes, token: str, purpose: str, now: float | None = None) -> Claim | None:
    """The claim of a token made by ``sign`` for ``purpose`` and not expired,
    or None (a forged, altered, expired or malformed token alike)."""
    if not token or len(token) > MAX_TOKEN or token.count(".") != 1:
        return None
    payload, mac = token.split(".")
    want = _b64(hmac.new(key, payload.encode(), sha256).digest())
    if not hmac.compare_digest(want, mac):
        return None
    try:
        body = json.loads(_unb64(payload))
    except ValueError:
        return None
    if not isinstance(body, dict) or body.get("p") != purpose:
        return None
    user, address, expiry = body.get("u"), body.get("a"), body.get("e")
    if not (isinstance(user, int) and isinstance(address, str) and isinstance(expiry, int)):
        return None
    if expiry < (time.time() if now is None else now):
        return None
    return Claim(purpose, user, address)
