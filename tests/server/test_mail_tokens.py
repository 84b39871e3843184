"""The signed links of emails (server/mail/tokens.py): worked out by hand
from the HMAC-SHA256 construction, not read back from the signer alone."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

from donutbox.server.mail.tokens import CONFIRM_SECONDS, sign, verify

KEY = bytes(range(32))


def test_a_token_is_its_payload_and_the_hmac_of_it() -> None:
    token = sign(KEY, "unsub", 7, "ann@example.org", now=1000.0)
    payload, mac = token.split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert body["p"] == "unsub" and body["u"] == 7 and body["a"] == "ann@example.org"
    want = hmac.new(KEY, payload.encode(), hashlib.sha256).digest()
    assert base64.urlsafe_b64decode(mac + "=" * (-len(mac) % 4)) == want
    claim = verify(KEY, token, "unsub", now=1000.0)
    assert claim is not None and (claim.user_id, claim.address) == (7, "ann@example.org")


def test_altered_expired_misused_or_foreign_tokens_open_nothing() -> None:
    token = sign(KEY, "confirm", 7, "ann@example.org", now=1000.0)
    assert verify(KEY, token, "confirm", now=1000.0 + CONFIRM_SECONDS - 1) is not None
    assert verify(KEY, token, "confirm", now=1000.0 + CONFIRM_SECONDS + 1) is None  # expired
    assert verify(KEY, token, "unsub", now=1000.0) is None  # another purpose
    assert verify(bytes(32), token, "confirm", now=1000.0) is None  # another server's key
    payload, mac = token.split(".")
    # Another account in the payload, the mac kept: refused.
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body["u"] = 8
    forged = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    assert verify(KEY, f"{forged}.{mac}", "confirm", now=1000.0) is None
    for bad in ("", "x", "a.b.c", token + "x", "." * 900, token.replace(".", "")):
        assert verify(KEY, bad, "confirm", now=1000.0) is None
