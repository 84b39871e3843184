"""A real local SMTP server (aiosmtpd) for the email tests, and what they
read from the mail it got."""

from __future__ import annotations

import email
import email.policy
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


class Mailbox:
    """What the SMTP server accepted; ``refuse``: how many of the next
    messages it answers 451 (try again later) instead."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.refuse = 0
        self.refused = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            if self.refuse > 0:
                self.refuse -= 1
                self.refused += 1
                return "451 4.3.0 try again later"
            msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
            assert isinstance(msg, EmailMessage)
            self.messages.append(msg)
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        with self.lock:
            return [m for m in self.messages if m["To"] == address]

    def wait_for(self, address: str, count: int, seconds: float = 15) -> list[EmailMessage]:
        deadline = time.monotonic() + seconds
        while len(got := self.to(address)) < count:
            assert time.monotonic() < deadline, f"{address} got {len(got)} emails, not {count}"
            time.sleep(0.05)
        return got


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def smtp_server() -> Iterator[tuple[Mailbox, str]]:
    """A local SMTP server and its ``--smtp`` URL."""
    box = Mailbox()
    port = _free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield box, f"smtp://127.0.0.1:{port}?from=play@donutbox.test"
    finally:
        controller.stop()


def parts(msg: EmailMessage) -> tuple[str, str]:
    """The plain text and the HTML of an email."""
    text = msg.get_body(preferencelist=("plain",))
    html = msg.get_body(preferencelist=("html",))
    assert text is not None and html is not None, "not plain text + HTML"
    return text.get_content(), html.get_content()


def link(msg: EmailMessage, pattern: str) -> str:
    """The first link of the plain text matching ``pattern``."""
    text, _ = parts(msg)
    found = re.search(pattern, text)
    assert found, f"no link {pattern!r} in {text!r}"
    return found.group(0)


def unsubscribe_url(msg: EmailMessage) -> str:
    header = str(msg["List-Unsubscribe"])
    assert header.startswith("<") and header.endswith(">"), header
    return header[1:-1]
