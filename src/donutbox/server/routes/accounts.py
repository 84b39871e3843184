"""Accounts over HTTP: sign up, in and out, password change, a guest's games
claimed, profiles, history, records and the leaderboard (docs/community.md).

Every state-changing route depends on ``csrf_ok``; every route that needs a
player depends on ``signed_in``.  No answer carries a password hash, a
session token (it is only ever set as a cookie) or another player's seat
token.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from pydantic import BaseModel, Field

from ...core.record import load
from .. import forfeits, limits
from ..accounts import (
    CSRF_COOKIE,
    CSRF_HEADER,
    MAX_PASSWORD,
    SESSION_COOKIE,
    SESSION_DAYS,
    Accounts,
    SignedIn,
    same,
)
from ..errors import Invalid, NoSuchGame, NotAllowed, NotIntroduced
from ..lobby.service import Lobby
from ..moderation.rows import MAX_REASON
from ..moderation.service import Moderation
from ..online import digest
from ..ratings.head_to_head import head_to_head, results
from ..ratings.service import Ratings
from ..routes.local import OWNER_TOKEN
from ..routes.online import bearer
from ..storage import Store

router = APIRouter()


@dataclass
class Community:
    """What the community routes share (``app.state.community``)."""

    accounts: Accounts
    ratings: Ratings
    lobby: Lobby


def community_of(request: Request) -> Community:
    c: Community = request.app.state.community
    return c


CommunityDep = Annotated[Community, Depends(community_of)]


def client_address(request: Request) -> str:
    """The key the per-address limits count under (an IPv6 client's /64)."""
    return limits.client_address(request)


def secure(request: Request) -> bool:
    """Cookies get ``Secure`` when the page is served over https (behind a
    proxy: run uvicorn with --proxy-headers) or DONUTBOX_SECURE_COOKIES=1."""
    return request.url.scheme == "https" or os.environ.get("DONUTBOX_SECURE_COOKIES") == "1"


def origin_ok(origin: str | None, host: str | None) -> bool:
    """No Origin (same-origin GETs, old clients, TestClient), or an Origin
    whose host:port is the request's Host."""
    if not origin:
        return True
    if origin == "null":
        return False
    return bool(host) and urlsplit(origin).netloc.lower() == (host or "").lower()


def signed_in_or_none(request: Request) -> SignedIn | None:
    return community_of(request).accounts.session(request.cookies.get(SESSION_COOKIE))


def signed_in(request: Request) -> SignedIn:
    who = signed_in_or_none(request)
    if who is None:
        raise NotIntroduced("session: sign in first")
    return who


def csrf_ok(request: Request) -> None:
    """A state-changing request: same-site Origin, and the CSRF header equal
    to the session's token (signed in) or to the CSRF cookie (not yet)."""
    if not origin_ok(request.headers.get("origin"), request.headers.get("host")):
        raise NotAllowed("Origin: requests from another site are refused")
    sent = request.headers.get(CSRF_HEADER)
    who = signed_in_or_none(request)
    expected = who.csrf if who is not None else request.cookies.get(CSRF_COOKIE)
    if not same(sent, expected):
        raise NotAllowed("X-CSRF-Token: missing or wrong (reload the page)")


Me = Annotated[SignedIn, Depends(signed_in)]
Csrf = Depends(csrf_ok)


def _cookies(response: Response, request: Request, session: str | None, csrf: str) -> None:
    age = int(SESSION_DAYS * 86400)
    if session is not None:
        response.set_cookie(
            SESSION_COOKIE,
            session,
            max_age=age,
            httponly=True,
            samesite="lax",
            secure=secure(request),
            path="/",
        )
    # Readable by the page's script (it sends it back as X-CSRF-Token); a
    # page of another site can neither read it nor set the header.
    response.set_cookie(
        CSRF_COOKIE, csrf, max_age=age, httponly=False, samesite="strict", secure=secure(request)
    )


class Credentials(BaseModel):
    name: str = Field(..., max_length=20, description="3 to 20 letters, digits, _ or -")
    password: str = Field(..., max_length=MAX_PASSWORD, description="8 to 128 characters")


class PasswordChange(BaseModel):
    old_password: str = Field(..., max_length=MAX_PASSWORD)
    new_password: str = Field(..., max_length=MAX_PASSWORD)


def _me(who: SignedIn | None) -> dict[str, Any] | None:
    return None if who is None else {"name": who.user.name}


@router.get("/api/account")
async def account(request: Request, response: Response) -> dict[str, Any]:
    """Who is signed in (``user``: null if nobody) and the CSRF token the
    next state-changing request must send as ``X-CSRF-Token``."""
    who = await asyncio.to_thread(signed_in_or_none, request)
    if who is not None:
        csrf = who.csrf
    else:
        csrf = request.cookies.get(CSRF_COOKIE) or ""
        if not (20 <= len(csrf) <= 64):
            csrf = secrets.token_urlsafe(24)
            _cookies(response, request, None, csrf)
    return {"user": _me(who), "csrf": csrf}


@router.post("/api/account/signup", dependencies=[Csrf])
async def sign_up(
    body: Credentials, request: Request, response: Response, c: CommunityDep
) -> dict[str, Any]:
    await c.accounts.attempt(client_address(request), "sign-up")
    user = await c.accounts.sign_up(body.name, body.password)
    token, csrf = await asyncio.to_thread(c.accounts.open_session, user)
    _cookies(response, request, token, csrf)
    return {"user": {"name": user.name}, "csrf": csrf}


@router.post("/api/account/signin", dependencies=[Csrf])
async def sign_in(
    body: Credentials, request: Request, response: Response, c: CommunityDep
) -> dict[str, Any]:
    """Signed in by name and password.  Refused with 429 beyond the address's
    attempts or its wrong passwords for this name; 503 (``Retry-After``)
    when the password checks' queue is full."""
    address = client_address(request)
    await c.accounts.attempt(address)
    user = await c.accounts.check(body.name, body.password, address)
    # A banned account's password still checks (told only to its owner,
    # who knows it), but no session is opened (`donutbox admin ban`).
    if await asyncio.to_thread(Moderation(c.ratings.engine).is_banned, user.id):
        raise NotAllowed("account: this account is banned from this server")
    await asyncio.to_thread(c.accounts.close_session, request.cookies.get(SESSION_COOKIE))
    token, csrf = await asyncio.to_thread(c.accounts.open_session, user)
    _cookies(response, request, token, csrf)
    return {"user": {"name": user.name}, "csrf": csrf}


@router.post("/api/account/signout", dependencies=[Csrf])
async def sign_out(request: Request, response: Response, c: CommunityDep) -> dict[str, Any]:
    who = await asyncio.to_thread(signed_in_or_none, request)
    await asyncio.to_thread(c.accounts.close_session, request.cookies.get(SESSION_COOKIE))
    if who is not None:
        await c.lobby.forget(who.user)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return {"user": None}


@router.post("/api/account/password", dependencies=[Csrf])
async def change_password(
    body: PasswordChange, request: Request, me: Me, c: CommunityDep
) -> dict[str, Any]:
    """A new password; every other session of the account is signed out."""
    address = client_address(request)
    await c.accounts.attempt(address, "password")
    await c.accounts.change_password(me.user, body.old_password, body.new_password, address)
    await asyncio.to_thread(
        c.accounts.close_other_sessions, me.user, request.cookies.get(SESSION_COOKIE)
    )
    return {"changed": True}


@router.post("/api/account/claim", dependencies=[Csrf])
async def claim(
    me: Me, c: CommunityDep, request: Request, authorization: str | None = Header(None)
) -> dict[str, Any]:
    """The local games of the guest whose owner token is the bearer become
    this account's (listed by ``GET /api/account/games``).  Only a token
    that owns a local game may be claimed (404 otherwise, nothing stored):
    made-up tokens do not fill the claims table."""
    token = bearer(authorization)
    if not OWNER_TOKEN.fullmatch(token):
        raise Invalid("Authorization: an owner token is 32 to 128 URL-safe characters")
    store: Store = request.app.state.hub.store
    if not await asyncio.to_thread(_owns_a_game, store, digest(token)):
        raise NoSuchGame("Authorization: this owner token owns no game")
    if not await asyncio.to_thread(c.accounts.claim, me.user, token):
        raise NotAllowed("Authorization: these games belong to another account")
    return {"claimed": True}


def _owns_a_game(store: Store, owner: str) -> bool:
    """Whether a local game's owner is ``owner`` (a token's digest)."""
    games = store.list(limit=5, exclude_mode="online", owner=owner)
    return any(g.options.get("owner") == owner for g in games)


@router.get("/api/account/games")
async def claimed_games(me: Me, request: Request, c: CommunityDep) -> list[dict[str, Any]]:
    """The account's local games (claimed from guest browsers)."""
    store: Store = request.app.state.hub.store

    def read() -> list[dict[str, Any]]:  # database reads: in a thread
        out: list[dict[str, Any]] = []
        for owner in c.accounts.claimed(me.user)[:20]:
            for g in store.list(limit=100, exclude_mode="online", owner=owner):
                out.append(
                    {
                        "id": g.id,
                        "title": g.title,
                        "mode": g.mode,
                        "finished": g.finished,
                        "updated": g.updated.isoformat(),
                    }
                )
        return out

    return await asyncio.to_thread(read)


@router.get("/api/account/games/{game_id}/record")
async def claimed_record(game_id: str, me: Me, request: Request, c: CommunityDep) -> dict[str, Any]:
    """A finished claimed local game's record."""
    store: Store = request.app.state.hub.store
    if len(game_id) > 64:
        raise NoSuchGame()
    g = await asyncio.to_thread(store.get, game_id)
    claimed = await asyncio.to_thread(c.accounts.claimed, me.user)
    if g is None or g.mode == "online" or g.options.get("owner") not in claimed:
        raise NoSuchGame()
    if not g.finished:
        raise NotAllowed("the record shows every hidden card: export it when the game is over")
    return g.record


@router.get("/api/players/{name}")
async def profile(name: str, c: CommunityDep, request: Request) -> dict[str, Any]:
    """A player's ratings (per rule set), results (games, wins, draws,
    losses: head_to_head.results) and lobby games.  Seat tokens (the
    links that open a game) only in one's own profile."""
    user = await asyncio.to_thread(c.accounts.find, name)
    if user is None:
        raise NoSuchGame("name: no such player")
    uid = user.id

    def read() -> dict[str, Any]:  # database reads: in a thread
        c.ratings.settle_all()
        who = signed_in_or_none(request)
        own = who is not None and who.user.id == uid
        history = c.ratings.history(uid)
        labels = dict(c.ratings.rule_sets())
        if not own:
            for h in history:
                h.pop("token")
                h.pop("link")
        ratings = {
            k: {**r.to_dict(), "label": labels.get(k, k)} for k, r in c.ratings.all_of(uid).items()
        }
        banned = Moderation(c.ratings.engine).is_banned(uid)
        record = results(c.ratings.engine, uid)
        return {
            "me": own,
            "ratings": ratings,
            "history": history,
            "banned": banned,
            "results": record,
        }

    read_out = await asyncio.to_thread(read)
    return {
        "name": user.name,
        "me": read_out["me"],
        "online": await c.lobby.is_online(uid),
        "banned": read_out["banned"],
        "ratings": read_out["ratings"],
        "history": read_out["history"],
        "results": read_out["results"],
    }


@router.get("/api/players/{name}/vs/{other}")
async def versus(name: str, other: str, c: CommunityDep) -> dict[str, Any]:
    """``name``'s record against ``other`` in finished lobby games: wins,
    draws, losses (from ``name``'s side) and the games, newest first."""
    a = await asyncio.to_thread(c.accounts.find, name)
    b = await asyncio.to_thread(c.accounts.find, other)
    if a is None:
        raise NoSuchGame("name: no such player")
    if b is None:
        raise NoSuchGame("other: no such player")
    if a.id == b.id:
        raise Invalid("other: a player has no games against themselves")

    def read() -> dict[str, Any]:  # database reads: in a thread
        c.ratings.settle_all()
        return head_to_head(c.ratings.engine, a.id, b.id)

    return {"name": a.name, "other": b.name, **await asyncio.to_thread(read)}


class Report(BaseModel):
    reason: str = Field(..., min_length=1, max_length=MAX_REASON, description="what happened")
    game: str | None = Field(None, max_length=32, description="a lobby game you both sat in")


@router.post("/api/players/{name}/report", dependencies=[Csrf])
async def report(name: str, body: Report, me: Me, c: CommunityDep) -> dict[str, Any]:
    """Report a player to the server's moderators (``donutbox admin
    reports``): at most 10 reports a day, one per player and game."""
    if len(name) > 20:
        raise NoSuchGame("name: no such player")
    moderation = Moderation(c.ratings.engine)
    await asyncio.to_thread(moderation.report, me.user, name, body.game, body.reason)
    return {"reported": True}


@router.get("/api/leaderboard")
async def leaderboard(
    c: CommunityDep,
    rules: str | None = Query(None, max_length=40, description="a rule set's key (Rules.key())"),
) -> dict[str, Any]:
    """The players of a rule set by rating (mu - 3 sigma); without ``rules``,
    every rule set with ratings, each with its board."""

    def read() -> dict[str, Any]:  # database reads: in a thread
        c.ratings.settle_all()
        if rules is not None:
            return {"rules": rules, "players": c.ratings.leaderboard(rules)}
        return {
            "boards": [
                {"rules": key, "label": label, "players": c.ratings.leaderboard(key)}
                for key, label in c.ratings.rule_sets()
            ]
        }

    return await asyncio.to_thread(read)


@router.get("/api/community/games/{game_id}/record")
async def lobby_record(game_id: str, me: Me, request: Request, c: CommunityDep) -> dict[str, Any]:
    """A finished lobby game's record, for the players who sat in it."""
    if len(game_id) > 64:
        raise NoSuchGame()
    if await asyncio.to_thread(c.ratings.seat_of, me.user.id, game_id) is None:
        raise NoSuchGame()
    g = await asyncio.to_thread(request.app.state.hub.store.get, game_id)
    if g is None:
        raise NoSuchGame()
    if not g.finished or not forfeits.over(load(g.record)):
        raise NotAllowed("the record shows every hidden card: download it when the game is over")
    out: dict[str, Any] = dict(g.record)
    out["agents"] = g.seats
    return out
