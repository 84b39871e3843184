"""Email over HTTP: an account's address and reminders (signed in, CSRF on
every POST), and the two pages an email links to, which work without
signing in: confirm an address, unsubscribe (GET from the email's link,
POST from a mail program's one-click button, RFC 8058)."""

from __future__ import annotations

import asyncio
import html
import logging
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from ..errors import NoSuchGame
from ..hub import Hub
from ..routes.accounts import Csrf, Me
from .config import SmtpConfig
from .notify import Notifier
from .outbox import Outbox
from .rows import MAX_ADDRESS
from .sender import Sender
from .tokens import MAX_TOKEN

router = APIRouter()
log = logging.getLogger("donutbox.server.mail")


@dataclass
class Mail:
    """``app.state.mail`` when the server was started with ``--smtp``."""

    outbox: Outbox
    sender: Sender
    notifier: Notifier


def start_mail(hub: Hub, config: SmtpConfig | None) -> Mail | None:
    """At start-up (the lifespan): the outbox, its sender and the reminders'
    hook on the hub; None without ``--smtp`` (nothing is ever stored or
    sent)."""
    if config is None:
        return None
    outbox = Outbox(hub.store.engine, config)
    sender = Sender(outbox)
    notifier = Notifier(hub, outbox)
    hub.watchers.append(notifier.game_changed)
    sender.start()
    log.info("mail: sending through %s", config.describe())
    return Mail(outbox, sender, notifier)


def mail_of(request: Request) -> Mail | None:
    mail: Mail | None = getattr(request.app.state, "mail", None)
    return mail


MailDep = Annotated[Mail | None, Depends(mail_of)]


def _on(mail: Mail | None) -> Mail:
    if mail is None:
        raise NoSuchGame("email: this server sends no email (started without --smtp)")
    return mail


class Address(BaseModel):
    address: str = Field(..., max_length=MAX_ADDRESS, description="the address to confirm")


class Reminders(BaseModel):
    turn: bool = Field(..., description="your move in a turn-based game")
    invite: bool = Field(..., description="an invitation to a table")
    over: bool = Field(..., description="a turn-based game is over")


@router.get("/api/account/email")
async def email_settings(me: Me, mail: MailDep) -> dict[str, Any]:
    """The account's address and reminders; ``enabled``: whether this
    server sends email at all."""
    if mail is None:
        return {"enabled": False, "address": None, "confirmed": False, "reminders": None}
    settings = await asyncio.to_thread(mail.outbox.settings, me.user.id)
    return {"enabled": True, **settings}


@router.post("/api/account/email", dependencies=[Csrf])
async def set_email(body: Address, me: Me, mail: MailDep) -> dict[str, Any]:
    """Set the account's one address (replacing any other): a confirmation
    link is emailed to it; nothing else is sent before it is confirmed."""
    m = _on(mail)
    await asyncio.to_thread(m.outbox.set_address, me.user.id, me.user.name, body.address)
    return {"enabled": True, **await asyncio.to_thread(m.outbox.settings, me.user.id)}


@router.post("/api/account/email/reminders", dependencies=[Csrf])
async def set_reminders(body: Reminders, me: Me, mail: MailDep) -> dict[str, Any]:
    m = _on(mail)
    await asyncio.to_thread(m.outbox.set_reminders, me.user.id, body.turn, body.invite, body.over)
    return {"enabled": True, **await asyncio.to_thread(m.outbox.settings, me.user.id)}


@router.post("/api/account/email/remove", dependencies=[Csrf])
async def remove_email(me: Me, mail: MailDep) -> dict[str, Any]:
    m = _on(mail)
    await asyncio.to_thread(m.outbox.remove, me.user.id)
    return {"enabled": True, "address": None, "confirmed": False, "reminders": None}


def _page(title: str, text: str, status: int = 200) -> HTMLResponse:
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>donutbox: {html.escape(title)}</title></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>"
        '<p><a href="/">Open donutbox</a></p></body></html>'
    )
    return HTMLResponse(body, status_code=status)


Token = Annotated[str, Query(alias="t", max_length=MAX_TOKEN)]


@router.get("/api/email/confirm", include_in_schema=False)
async def confirm(mail: MailDep, t: Token = "") -> HTMLResponse:
    if mail is None:
        return _page("No email here", "This server sends no email.", 404)
    address = await asyncio.to_thread(mail.outbox.confirm, t)
    if address is None:
        return _page(
            "Link not valid",
            "This confirmation link is not valid: expired, altered, or for an address the "
            "account no longer uses. Add the address again to get a new one.",
            400,
        )
    return _page("Address confirmed", f"{address} will get the reminders you chose.")


@router.get("/api/email/unsubscribe", include_in_schema=False)
@router.post("/api/email/unsubscribe", include_in_schema=False)
async def unsubscribe(mail: MailDep, t: Token = "") -> HTMLResponse:
    """One click, no sign-in: every reminder to the link's address stops."""
    if mail is None:
        return _page("No email here", "This server sends no email.", 404)
    if not await asyncio.to_thread(mail.outbox.unsubscribe, t):
        return _page("Link not valid", "This unsubscribe link is not valid.", 400)
    return _page(
        "Unsubscribed",
        "No more email goes to this address. Signed in, you can choose reminders again "
        "under Community.",
    )
