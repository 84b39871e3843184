"""The ``--smtp`` URL of ``donutbox serve``:
``smtp://[user[:password]@]host[:port][?starttls=1&from=addr]``.

``smtp://`` talks plain SMTP (port 25 by default) and upgrades with STARTTLS
when ``starttls=1``; ``smtps://`` is SMTP over TLS from the first byte (port
465 by default).  ``from`` is the sender's address (default
``donutbox@<host>``).  User and password are percent-decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

#: The longest ``--smtp`` URL taken.
MAX_URL = 1000


class SmtpUrlError(ValueError):
    """A ``--smtp`` URL that cannot be used; the text names what is wrong."""


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    user: str | None
    password: str | None
    starttls: bool
    tls: bool
    sender: str
    #: Where the links in emails point: the server as its players reach it.
    base_url: str

    def describe(self) -> str:
        """The settings without the password (for logs)."""
        how = "TLS" if self.tls else "STARTTLS" if self.starttls else "plain"
        who = f"{self.user}@" if self.user else ""
        return f"smtp {who}{self.host}:{self.port} ({how}), from {self.sender}"


def parse_smtp_url(url: str, base_url: str) -> SmtpConfig:
    """The settings of ``url``, or SmtpUrlError naming the fault."""
    if len(url) > MAX_URL:
        raise SmtpUrlError(f"--smtp: longer than {MAX_URL} characters")
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps"):
        raise SmtpUrlError("--smtp: must start with smtp:// or smtps://")
    if not parts.hostname:
        raise SmtpUrlError("--smtp: no host (smtp://host:port)")
    try:
        port = parts.port or (465 if parts.scheme == "smtps" else 25)
    except ValueError:
        raise SmtpUrlError("--smtp: the port must be a number from 1 to 65535") from None
    query = parse_qs(parts.query)
    unknown = set(query) - {"starttls", "from"}
    if unknown:
        raise SmtpUrlError(f"--smtp: unknown option {sorted(unknown)[0]} (starttls, from)")
    starttls = query.get("starttls", ["0"])[-1].lower() in ("1", "true", "yes")
    sender = query.get("from", [f"donutbox@{parts.hostname}"])[-1]
    if "@" not in sender or any(c in sender for c in "\r\n<>, "):
        raise SmtpUrlError("--smtp: from= must be one plain address (name@host)")
    return SmtpConfig(
        host=parts.hostname,
        port=port,
        user=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        starttls=starttls,
        tls=parts.scheme == "smtps",
        sender=sender,
        base_url=base_url.rstrip("/"),
    )
