"""Each email's words, as plain text and as HTML, and the message sent.

Every email carries its one-click unsubscribe link in the body and in the
``List-Unsubscribe`` header (with ``List-Unsubscribe-Post``, RFC 8058, so a
mail program's own "unsubscribe" button works too).  Names and rule labels
come from players: they are escaped in the HTML and never put in a header
but the subject, where the email library encodes them.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from .config import SmtpConfig


@dataclass(frozen=True)
class Letter:
    subject: str
    text: str
    html: str


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _letter(subject: str, lines: list[str], link: str, link_text: str, unsubscribe: str) -> Letter:
    """A letter of a few paragraphs and one link, plus the unsubscribe line."""
    foot = f"You get this email because of your donutbox account. Unsubscribe: {unsubscribe}"
    text = "\n\n".join([*lines, f"{link_text}: {link}", "-- ", foot]) + "\n"
    paras = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    body = (
        f"<!doctype html><html><body>{paras}"
        f'<p><a href="{html.escape(link, quote=True)}">{html.escape(link_text)}</a></p>'
        '<hr><p style="font-size:smaller">You get this email because of your donutbox '
        f'account. <a href="{html.escape(unsubscribe, quote=True)}">Unsubscribe</a> '
        "(one click, no sign-in).</p></body></html>"
    )
    return Letter(subject[:200], text, body)


def confirm(name: str, link: str, unsubscribe: str) -> Letter:
    return _letter(
        "donutbox: confirm your email address",
        [
            f"Someone (we hope you) asked to get donutbox reminders for the account {name} "
            "at this address.",
            "Nothing is sent until the address is confirmed. If this was not you, "
            "ignore this email, or unsubscribe below: the address is then forgotten.",
        ],
        link,
        "Confirm this address",
        unsubscribe,
    )


def your_turn(
    rules: str, opponents: list[str], deadline: float | None, link: str, unsubscribe: str
) -> Letter:
    against = ", ".join(opponents) or "the AI"
    lines = [f"It is your move in your game of {rules} against {against}."]
    if deadline is not None:
        lines.append(
            f"Move before {_when(deadline)}: a missed deadline loses a rated game on time "
            "(in a casual one the server's AI moves for you)."
        )
    return _letter(
        f"donutbox: your move against {against}", lines, link, "Open the game", unsubscribe
    )


def invitation(sender: str, rules: str, link: str, unsubscribe: str) -> Letter:
    return _letter(
        f"donutbox: {sender} invites you to a table",
        [f"{sender} invites you to a table of {rules}. Open the lobby to join it."],
        link,
        "Open the lobby",
        unsubscribe,
    )


def game_over(rules: str, opponents: list[str], result: str, link: str, unsubscribe: str) -> Letter:
    against = ", ".join(opponents) or "the AI"
    return _letter(
        f"donutbox: your game against {against} is over",
        [f"Your game of {rules} against {against} is over: {result}."],
        link,
        "See the game",
        unsubscribe,
    )


def message(
    config: SmtpConfig, to: str, subject: str, text: str, body_html: str, unsubscribe: str
) -> EmailMessage:
    """The email as sent: plain text with an HTML alternative."""
    msg = EmailMessage()
    msg["From"] = config.sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = format_datetime(datetime.fromtimestamp(time.time(), UTC))
    msg["Message-ID"] = make_msgid(domain=config.sender.rsplit("@", 1)[-1])
    msg["List-Unsubscribe"] = f"<{unsubscribe}>"
    msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(text)
    msg.add_alternative(body_html, subtype="html")
    return msg
