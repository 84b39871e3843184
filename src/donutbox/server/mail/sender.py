"""The sender: a background task of ``donutbox serve`` that sends what the
outbox holds (docs/deploy.md, "Email: --smtp").

It wakes when a row is stored in this process, and every ``POLL_SECONDS``
anyway (rows stored by other processes, retries that came due).  Each row
is taken for ``LEASE_SECONDS`` before it is sent (outbox.claim: its attempt
is counted first), sent with smtplib in a thread (never on the event loop,
``TIMEOUT`` seconds at most a connection), then marked sent.  A failure is
tried again after ``BACKOFF`` seconds, doubled each time, ``ATTEMPTS``
times in all; then the row is marked failed, with the server's answer.

What a crash costs: a row is stored before it is sent, so a crash never
loses a stored email; it is sent by the next sender to look (this process
restarted, or another one).  A crash after the mail server accepted a row
and before it was marked sent sends it once more when its lease is over:
each such crash costs at most one duplicate of the rows in hand (at most
``BATCH``), never more (the attempt count bounds every row).

Rows are kept ``KEEP_DAYS`` (``DONUTBOX_MAIL_KEEP_DAYS``, 30 by default):
the hourly limits count them and their ``dedupe`` keys stop a second
reminder for the same deadline, which is at most 7 days away.  Once an hour
(``PRUNE_SECONDS``) and at start, older rows that are done with are
deleted: they hold addresses nobody needs any more.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import smtplib
import ssl
import time

from .compose import message
from .config import SmtpConfig
from .outbox import Outbox, Pending

log = logging.getLogger("donutbox.server.mail")

POLL_SECONDS = float(os.environ.get("DONUTBOX_MAIL_POLL_SECONDS", "5"))
BACKOFF = float(os.environ.get("DONUTBOX_MAIL_BACKOFF_SECONDS", "30"))
ATTEMPTS = 5
LEASE_SECONDS = 120.0
TIMEOUT = 20.0
BATCH = 20
KEEP_DAYS = float(os.environ.get("DONUTBOX_MAIL_KEEP_DAYS", "30"))
PRUNE_SECONDS = 3600.0


def deliver(config: SmtpConfig, p: Pending) -> None:
    """Send one email (blocking: run in a thread)."""
    msg = message(config, p.address, p.subject, p.text, p.html, p.unsubscribe)
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if config.tls:
        smtp = smtplib.SMTP_SSL(config.host, config.port, timeout=TIMEOUT, context=context)
    else:
        smtp = smtplib.SMTP(config.host, config.port, timeout=TIMEOUT)
    with smtp:
        if config.starttls and not config.tls:
            smtp.starttls(context=context)
        if config.user:
            smtp.login(config.user, config.password or "")
        smtp.send_message(msg)


class Sender:
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox
        self.wake = asyncio.Event()
        outbox.stored = self._stored
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        #: sent and failed tries since start (for logs and tests)
        self.sent = 0
        self.failures = 0

    def _stored(self) -> None:
        """Called from a thread after a row is stored: wake the sender."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.wake.set)

    async def send_due(self) -> int:
        """Send every row due now; how many were sent."""
        config = self.outbox.config
        done = 0
        while True:
            batch = await asyncio.to_thread(self.outbox.claim, LEASE_SECONDS, BATCH)
            if not batch:
                return done
            for p in batch:
                try:
                    await asyncio.to_thread(deliver, config, p)
                except (OSError, smtplib.SMTPException) as err:
                    self.failures += 1
                    said = " ".join(str(err).split())[:200] or type(err).__name__
                    give_up = p.attempts >= ATTEMPTS
                    retry = time.time() + BACKOFF * 2 ** (p.attempts - 1)
                    log.warning(
                        "mail: sending email %s failed (try %s of %s): %s",
                        p.id,
                        p.attempts,
                        ATTEMPTS,
                        said,
                    )
                    await asyncio.to_thread(self.outbox.failed, p.id, said, give_up, retry)
                    continue
                await asyncio.to_thread(self.outbox.sent, p.id)
                self.sent += 1
                done += 1

    async def prune(self) -> int:
        """Delete the rows older than ``KEEP_DAYS`` that are done with."""
        return await asyncio.to_thread(self.outbox.prune, time.time() - KEEP_DAYS * 86400)

    async def _forever(self) -> None:
        pruned = -PRUNE_SECONDS
        while True:
            self.wake.clear()
            try:
                if time.monotonic() - pruned >= PRUNE_SECONDS:
                    pruned = time.monotonic()
                    await self.prune()
                await self.send_due()
            except asyncio.CancelledError:
                raise
            except Exception as err:  # the database failed: tried again at the next poll
                log.error("mail: the outbox could not be read (%s)", str(err).splitlines()[0][:200])
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), POLL_SECONDS)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.ensure_future(self._forever())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
