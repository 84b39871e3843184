"""The Bot API's routes (docs/bots.md).

- ``/api/bot/*``: a bot acting with its token (``Authorization: Bearer
  dbx_...``), and nothing else: a session cookie opens nothing here.  A bot
  reaches only its own games (another game, whether it exists or not: 404
  ``no such game``) and the challenges sent to it or by it.
- ``/api/account/bots*``: a signed-in player makes bots and their tokens
  (session and CSRF, as every community route).
- ``/api/bots/{name}``: a bot's public card; ``/api/bots/{name}/challenge``:
  a signed-in player challenges a bot.

Limits: every ``/api/bot`` request takes a token from its address's bucket
and then from its bot token's (``throttle.Limiter``, shared by every
process with a broker); one event stream a token and one stream a game a
token in this process; games a bot plays at once and challenges waiting
are bounded in ``store.py``.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Header, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from ..accounts import User
from ..errors import Busy, Conflict, Invalid, NoSuchGame, NotIntroduced
from ..lobby.store import DEFAULT_CLOCK
from ..models import ClockOption, Intent, RuleFields, Version
from ..moderation.service import Moderation
from ..routes.accounts import Community, CommunityDep, Csrf, Me
from ..routes.common import HubDep
from ..routes.lobby import _rules, not_playing_rated, rated_clock
from ..routes.local import record as game_record
from ..routes.online import bearer, online_move, online_resign
from ..throttle import Limiter
from .store import MAX_BOT_GAMES, Bot, BotStore, Challenge, pool_key
from .streams import event_stream, game_stream

router = APIRouter()

#: Requests of one address to ``/api/bot`` (before its token is looked up:
#: a flood of made-up tokens costs a bounded number of lookups).
ADDRESS_PER_SECOND = 20.0
ADDRESS_BURST = 100
#: Requests of one bot token (moves, streams, challenges together).
TOKEN_PER_SECOND = 8.0
TOKEN_BURST = 40
#: Game streams one token may hold open in this process.
MAX_GAME_STREAMS = MAX_BOT_GAMES + 2
NDJSON = "application/x-ndjson"


class BotApi:
    """What the bot routes share (``app.state.bots``, made on first use)."""

    def __init__(self, store: BotStore) -> None:
        self.store = store
        self.by_address = Limiter(ADDRESS_PER_SECOND, ADDRESS_BURST, name="bot-address")
        self.by_token = Limiter(TOKEN_PER_SECOND, TOKEN_BURST, name="bot-token")
        #: token id -> when its last use was written (at most once a minute)
        self.touched: dict[int, float] = {}
        #: open streams in this process: token ids with an event stream,
        #: (token id, game id) with a game stream
        self.event_streams: set[int] = set()
        self.game_streams: set[tuple[int, str]] = set()


def api_of(request: Request) -> BotApi:
    api: BotApi | None = getattr(request.app.state, "bots", None)
    if api is None:
        api = request.app.state.bots = BotApi(BotStore(request.app.state.hub.store.engine))
    return api


ApiDep = Annotated[BotApi, Depends(api_of)]


async def the_bot(request: Request, api: ApiDep, authorization: str | None = Header(None)) -> Bot:
    """The bot whose live token is the bearer; 401 otherwise (a session
    cookie is not looked at), 429 beyond the address's or token's rate."""
    from ..limits import client_address

    wait = await api.by_address.acquire(client_address(request))
    if wait > 0:
        raise Busy(f"rate limit: too many requests from your address; try again in {wait:.1f} s")
    token = bearer(authorization)
    if not token:
        raise NotIntroduced("Authorization: send the bot's token as 'Bearer <token>'")
    bot = await asyncio.to_thread(api.store.authenticate, token, False)
    if bot is None:
        raise NotIntroduced("token: no such bot token, or it was revoked")
    if time.monotonic() - api.touched.get(bot.token_id, -1e9) > 60.0:
        api.touched[bot.token_id] = time.monotonic()
        await asyncio.to_thread(api.store.authenticate, token, True)
    wait = await api.by_token.acquire(str(bot.token_id))
    if wait > 0:
        raise Busy(f"rate limit: too many requests with this token; try again in {wait:.1f} s")
    engine = api.store.engine
    if await asyncio.to_thread(Moderation(engine).is_banned, bot.user.id):
        raise NotIntroduced("token: this bot is banned")
    return bot


BotDep = Annotated[Bot, Depends(the_bot)]


class ChallengeBody(RuleFields):  # type: ignore[misc,valid-type]
    clock: ClockOption = Field(
        default_factory=lambda: ClockOption(
            minutes=DEFAULT_CLOCK["minutes"], increment=DEFAULT_CLOCK["increment"], days=None
        ),
        description="the time control (every bot game has a clock)",
    )
    rated: bool = Field(True, description="rated in the bot pool")


class Decline(BaseModel):
    reason: str = Field("generic", max_length=100, description="shown to the challenger")


class NewBot(BaseModel):
    name: str = Field(..., max_length=20, description="the bot's account name")


# -- the bot's own routes ---------------------------------------------------------


@router.get("/api/bot/account")
async def bot_account(bot: BotDep) -> dict[str, Any]:
    """Who this token acts for."""
    return {"name": bot.user.name, "bot": True}


@router.get("/api/bot/stream/event")
async def bot_events(bot: BotDep, api: ApiDep, c: CommunityDep) -> StreamingResponse:
    """NDJSON: ``challenge``, ``challengeDeclined``, ``gameStart``,
    ``gameFinish`` (docs/bots.md)."""
    if bot.token_id in api.event_streams:
        raise Conflict("stream: this token has an event stream open already")
    api.event_streams.add(bot.token_id)

    async def body() -> Any:
        try:
            async for chunk in event_stream(api.store, c.lobby, bot):
                yield chunk
        finally:
            api.event_streams.discard(bot.token_id)

    return StreamingResponse(body(), media_type=NDJSON)


async def _seat_token(api: BotApi, bot: Bot, game_id: str) -> str:
    """The bot's seat token in this game; the answer to an unknown id
    (404 ``no such game``) for any game that is not the bot's."""
    token = await asyncio.to_thread(api.store.seat_token, bot.user.id, game_id)
    if token is None:
        raise NoSuchGame()
    return token


@router.get("/api/bot/game/stream/{game_id}")
async def bot_game(game_id: str, bot: BotDep, api: ApiDep, hub: HubDep) -> StreamingResponse:
    """NDJSON: the seat's ``state`` first, then each ``state`` and
    ``presence`` the online WebSocket would send it; ends with the game."""
    token = await _seat_token(api, bot, game_id)
    key = (bot.token_id, game_id)
    if key in api.game_streams:
        raise Conflict("stream: this token has this game's stream open already")
    if sum(1 for t, _ in api.game_streams if t == bot.token_id) >= MAX_GAME_STREAMS:
        raise Busy(f"stream: at most {MAX_GAME_STREAMS} game streams a token")
    api.game_streams.add(key)

    async def live() -> bool:
        return await asyncio.to_thread(api.store.token_live, bot.token_id)

    try:
        chunks = game_stream(hub, game_id, token, live)
        first = await chunks.__anext__()  # refusals (a damaged game) before the 200
    except BaseException:
        api.game_streams.discard(key)
        raise

    async def body() -> Any:
        try:
            yield first
            async for chunk in chunks:
                yield chunk
        finally:
            api.game_streams.discard(key)
            await chunks.aclose()

    return StreamingResponse(body(), media_type=NDJSON)


@router.post("/api/bot/game/{game_id}/move")
async def bot_move(
    game_id: str, intent: Intent, bot: BotDep, api: ApiDep, hub: HubDep
) -> dict[str, Any]:
    """Play a move (docs/notation.md) made on ``version``: 409 if stale."""
    token = await _seat_token(api, bot, game_id)
    state = await online_move(game_id, intent, hub, f"Bearer {token}")
    return {"ok": True, "version": state["version"]}


@router.post("/api/bot/game/{game_id}/resign")
async def bot_resign(
    game_id: str, body: Version, bot: BotDep, api: ApiDep, hub: HubDep
) -> dict[str, Any]:
    token = await _seat_token(api, bot, game_id)
    state = await online_resign(game_id, body, hub, f"Bearer {token}")
    return {"ok": True, "version": state["version"]}


@router.get("/api/bot/game/{game_id}/record")
async def bot_record(game_id: str, bot: BotDep, api: ApiDep, hub: HubDep) -> dict[str, Any]:
    """A finished game's whole record (every deck: only once it is over),
    as ``GET /api/games/{id}/record`` gives it to the game's links."""
    token = await _seat_token(api, bot, game_id)
    return await game_record(game_id, hub, f"Bearer {token}")


@router.post("/api/bot/challenge/{name}")
async def bot_challenge(name: str, body: ChallengeBody, bot: BotDep, api: ApiDep) -> dict[str, Any]:
    """Challenge another bot (bots challenge bots; people challenge bots
    from the page)."""
    return (await _challenge(api, bot.user, name, body)).to_dict()


@router.post("/api/bot/challenge/{challenge_id}/accept")
async def bot_accept(
    challenge_id: str, bot: BotDep, api: ApiDep, c: CommunityDep
) -> dict[str, Any]:
    """Accept a challenge sent to this bot: the game starts (both event
    streams get ``gameStart``)."""
    ch = await asyncio.to_thread(api.store.get_challenge, challenge_id, bot.user)
    if ch.dest.id != bot.user.id:
        raise NoSuchGame("challenge: no such challenge")
    await _can_start(api, c, ch)
    ch = await asyncio.to_thread(api.store.answer, challenge_id, bot.user, "accepted", None)
    try:
        game_id = await _start(api, c, ch)
    except Exception:
        await asyncio.to_thread(
            api.store.settle_challenge, ch.id, "declined", None, "the game could not be made"
        )
        raise
    return {"ok": True, "game": game_id}


@router.post("/api/bot/challenge/{challenge_id}/decline")
async def bot_decline(
    challenge_id: str, body: Decline, bot: BotDep, api: ApiDep, c: CommunityDep
) -> dict[str, Any]:
    ch = await asyncio.to_thread(
        api.store.answer, challenge_id, bot.user, "declined", " ".join(body.reason.split())
    )
    c.lobby.changed(only=ch.challenger.id)
    return {"ok": True}


# -- a player's side ----------------------------------------------------------------


@router.post("/api/account/bots", dependencies=[Csrf])
async def new_bot(body: NewBot, me: Me, api: ApiDep) -> dict[str, Any]:
    """A bot account owned by the signed-in player."""
    bot = await asyncio.to_thread(api.store.create_bot, me.user, body.name)
    return {"name": bot.name, "bot": True, "owner": me.user.name}


@router.get("/api/account/bots")
async def my_bots(me: Me, api: ApiDep) -> list[dict[str, Any]]:
    """The player's bots and their tokens (ids, made, last used, revoked;
    never the tokens)."""
    return await asyncio.to_thread(api.store.bots_of, me.user)


@router.post("/api/account/bots/{name}/tokens", dependencies=[Csrf])
async def new_bot_token(name: str, me: Me, api: ApiDep) -> dict[str, Any]:
    """A token for the bot, shown this once (the server keeps its digest)."""
    bot = await asyncio.to_thread(api.store.owned_bot, me.user, name)
    token_id, token = await asyncio.to_thread(api.store.new_token, bot)
    return {"id": token_id, "token": token, "bot": bot.name}


@router.post("/api/account/bots/{name}/tokens/{token_id}/revoke", dependencies=[Csrf])
async def revoke_bot_token(name: str, token_id: int, me: Me, api: ApiDep) -> dict[str, Any]:
    bot = await asyncio.to_thread(api.store.owned_bot, me.user, name)
    await asyncio.to_thread(api.store.revoke, bot, token_id)
    return {"revoked": token_id}


@router.get("/api/bots/{name}")
async def bot_card(name: str, api: ApiDep, c: CommunityDep) -> dict[str, Any]:
    """A bot's public card: its owner and whether it is connected (its
    event stream is open)."""
    found = await asyncio.to_thread(api.store.bot_named, name)
    if found is None:
        raise NoSuchGame("name: no such bot")
    bot, owner = found
    return {
        "name": bot.name,
        "bot": True,
        "owner": owner,
        "online": await c.lobby.is_online(bot.id),
    }


@router.post("/api/bots/{name}/challenge", dependencies=[Csrf])
async def challenge_bot(
    name: str, body: ChallengeBody, me: Me, api: ApiDep, c: CommunityDep
) -> dict[str, Any]:
    """A signed-in player challenges a bot; the game appears in their lobby
    (``games``) when the bot accepts.  A rated challenge is refused while the
    player has a rated game being played (the lobby's abandonment rule)."""
    if await asyncio.to_thread(api.store.is_bot, me.user.id):
        raise Invalid("session: a bot plays through its token")
    if body.rated:
        await not_playing_rated(c, me.user)
    return (await _challenge(api, me.user, name, body)).to_dict()


@router.get("/api/bots/challenges/{challenge_id}")
async def my_challenge(challenge_id: str, me: Me, api: ApiDep) -> dict[str, Any]:
    """A challenge the player sent: ``created``, ``accepted`` (with
    ``game``), ``declined`` (with ``reason``) or ``expired``."""
    return (await asyncio.to_thread(api.store.get_challenge, challenge_id, me.user)).to_dict()


@router.post("/api/bots/challenges/{challenge_id}/cancel", dependencies=[Csrf])
async def cancel_challenge(challenge_id: str, me: Me, api: ApiDep) -> dict[str, Any]:
    await asyncio.to_thread(api.store.cancel, challenge_id, me.user)
    return {"canceled": challenge_id}


# -- challenges and games -------------------------------------------------------------


async def _challenge(api: BotApi, challenger: User, name: str, body: ChallengeBody) -> Challenge:
    found = await asyncio.to_thread(api.store.bot_named, name)
    if found is None:
        raise NoSuchGame("name: no such bot")
    rules, key, label = _rules(body)
    if body.clock.days is not None:
        raise Invalid("clock.days: bot games are real-time ({minutes, increment})")
    clock = rated_clock(body.clock) if body.rated else body.clock.spec()
    return await asyncio.to_thread(
        api.store.challenge, challenger, found[0], rules, key, label, clock, body.rated
    )


async def _can_start(api: BotApi, c: Community, ch: Challenge) -> None:
    """The limits of rated play before a challenge's game starts: a person
    with a rated game being played cannot start another (the lobby's
    abandonment rule); a bot plays at most ``MAX_BOT_GAMES`` at once."""
    if ch.status != "created":
        raise Conflict(f"challenge: already {ch.status}")
    for user, is_bot in ((ch.challenger, ch.challenger_bot), (ch.dest, True)):
        if is_bot:
            if await asyncio.to_thread(api.store.playing, user.id) >= MAX_BOT_GAMES:
                raise Conflict(f"games: {user.name} plays {MAX_BOT_GAMES} games already")
        elif ch.rated:
            await not_playing_rated(c, user)


async def _start(api: BotApi, c: Community, ch: Challenge) -> str:
    """The challenge's game: an online game made by the lobby's starter (so
    every guarantee of rated play holds), seats in a random order, rated in
    the bot pool (``pool_key``)."""
    assert c.lobby.starter is not None
    players = [
        User(
            ch.challenger.id,
            f"BOT {ch.challenger.name}" if ch.challenger_bot else ch.challenger.name,
        ),
        User(ch.dest.id, f"BOT {ch.dest.name}"),
    ]
    if secrets.randbelow(2):
        players.reverse()
    game_id = await c.lobby.starter(
        ch.rules,
        pool_key(ch.rules_key),
        f"{ch.rules_label} (bots)",
        players,
        ch.clock,
        ch.rated,
        False,
    )
    await asyncio.to_thread(api.store.settle_challenge, ch.id, "accepted", game_id)
    c.lobby.changed(private=[ch.challenger.id, ch.dest.id])
    return game_id


def install(app: FastAPI) -> None:
    """Register the Bot API's routes (create_app calls this)."""
    app.include_router(router)
