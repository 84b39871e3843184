"""Rematch of a finished lobby game (docs/community.md, "Rematch"): a new
online game with the same players, rules, time control and rated flag,
the seats turned by one (the second player starts), made once every
player of the old game has accepted.

``POST /api/rematch/{game}`` offers a rematch, or accepts the one offered;
``POST /api/rematch/{game}/decline`` declines it (it is not offered again
until ``OFFER_SECONDS`` after it was first made: a player cannot be asked
over and over); ``GET /api/rematch/{game}``
is the offer as it stands.  Only the game's own players are answered
(anyone else: 404 ``no such game``, the answer to an id that does not
exist).  The offer lives in the ``rematches`` table (migration 0008), so
every server process sees it; each change wakes the players' lobby
sockets, whose state carries ``rematches`` (the offers of games the
player sat in), and the new game reaches every page of theirs as any
lobby game does (their games in progress).

One transaction (the offer's row locked) records an acceptance and, when
it is the last, marks the offer ``starting``: only that request makes the
game, however many accept at once.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from fastapi import APIRouter
from sqlalchemy import Float, String, Text, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column

from ...core.record import load
from .. import forfeits
from ..accounts import CommunityBase, User, UserRow
from ..errors import Conflict, NoSuchGame
from ..ratings.service import CommunityGameRow, CommunitySeatRow
from ..routes.accounts import Community, CommunityDep, Csrf, Me
from ..routes.common import HubDep
from .store import turn_based_refusal

router = APIRouter()

#: An offer nobody answered for this long is gone (a new one may be made).
OFFER_SECONDS = 600.0
#: The offer's ``new_game`` while the accepting request makes the game.
STARTING = ""
#: Tries of an acceptance that lost the race to insert the offer's row.
ATTEMPTS = 3


class RematchRow(CommunityBase):
    """The rematch offered after a finished lobby game (one per game)."""

    __tablename__ = "rematches"
    game_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    #: JSON list of the user ids who accepted, in the order they did
    accepted: Mapped[str] = mapped_column(Text)
    #: the name of a player who declined (the offer is then closed)
    declined: Mapped[str | None] = mapped_column(String(20), nullable=True)
    #: the rematch's game: "" while it is being made, None before
    new_game: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created: Mapped[float] = mapped_column(Float)


class Rematches:
    """The offers in the database; every method is one transaction (run in
    a thread)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def players(self, game_id: str) -> list[User]:
        """The game's players in seat order (none: not a lobby game)."""
        with Session(self.engine) as db:
            rows = db.execute(
                select(CommunitySeatRow.seat, UserRow.id, UserRow.name)
                .join(UserRow, UserRow.id == CommunitySeatRow.user_id)
                .where(CommunitySeatRow.game_id == game_id)
                .order_by(CommunitySeatRow.seat)
            ).all()
            return [User(uid, name) for _, uid, name in rows]

    def game(self, game_id: str) -> CommunityGameRow | None:
        with Session(self.engine) as db:
            return db.get(CommunityGameRow, game_id)

    @staticmethod
    def _live(row: RematchRow | None, now: float) -> bool:
        """An offer that stands (a declined one is closed: it may be made
        again once it has lapsed)."""
        return (
            row is not None
            and now - row.created < OFFER_SECONDS
            and (row.declined is None or row.new_game is not None)
        )

    def accept(self, game_id: str, user: User, everyone: list[User]) -> tuple[RematchRow, bool]:
        """Record ``user``'s acceptance (a new offer if none stands); True
        if it completed the offer: this caller makes the game."""
        for _ in range(ATTEMPTS - 1):
            try:
                return self._accept(game_id, user, everyone)
            except IntegrityError:  # two first offers at once: the other's row is there now
                continue
        return self._accept(game_id, user, everyone)

    def _accept(self, game_id: str, user: User, everyone: list[User]) -> tuple[RematchRow, bool]:
        now = time.time()
        with Session(self.engine, expire_on_commit=False) as db, db.begin():
            row = db.scalars(
                select(RematchRow).where(RematchRow.game_id == game_id).with_for_update()
            ).first()
            # No means no: a declined offer is not made again until it lapses.
            declined = row is not None and row.declined is not None and row.new_game is None
            if declined and row is not None and now - row.created < OFFER_SECONDS:
                raise Conflict(f"rematch: {row.declined} declined it")
            if row is not None and not self._live(row, now):
                db.delete(row)
                db.flush()
                row = None
            if row is None:
                row = RematchRow(game_id=game_id, accepted="[]", created=now)
                db.add(row)
            accepted = list(json.loads(row.accepted))
            if user.id not in accepted:
                accepted.append(user.id)
            row.accepted = json.dumps(accepted)
            start = row.new_game is None and {u.id for u in everyone} <= set(accepted)
            if start:
                row.new_game = STARTING
            return row, start

    def started(self, game_id: str, new_game: str | None) -> None:
        """The game made (its id), or None: making it failed, ask again."""
        with Session(self.engine) as db, db.begin():
            row = db.get(RematchRow, game_id)
            if row is None:
                return
            if new_game is None:
                db.delete(row)
            else:
                row.new_game = new_game

    def decline(self, game_id: str, user: User) -> None:
        with Session(self.engine) as db, db.begin():
            row = db.get(RematchRow, game_id)
            if row is None or row.new_game is not None:
                return
            row.declined = user.name

    def offer(self, game_id: str) -> RematchRow | None:
        with Session(self.engine) as db:
            row = db.get(RematchRow, game_id)
            fresh = row is not None and time.time() - row.created < OFFER_SECONDS
            return row if fresh else None

    def of_player(self, user_id: int, limit: int = 10) -> list[dict[str, Any]]:
        """The standing offers of games ``user_id`` sat in, newest first (the
        lobby state's ``rematches``)."""
        since = time.time() - OFFER_SECONDS
        with Session(self.engine) as db:
            ids = list(
                db.scalars(
                    select(RematchRow.game_id)
                    .join(CommunitySeatRow, CommunitySeatRow.game_id == RematchRow.game_id)
                    .where(CommunitySeatRow.user_id == user_id, RematchRow.created > since)
                    .order_by(RematchRow.created.desc())
                    .limit(limit)
                )
            )
        return [self.describe(g) for g in ids]

    def describe(self, game_id: str) -> dict[str, Any]:
        """``{game, players, accepted, waiting, declined, new_game}`` (names)."""
        players = self.players(game_id)
        row = self.offer(game_id)
        accepted = [] if row is None else list(json.loads(row.accepted))
        names = {u.id: u.name for u in players}
        return {
            "game": game_id,
            "players": [u.name for u in players],
            "accepted": [names[i] for i in accepted if i in names],
            "waiting": [u.name for u in players if u.id not in accepted],
            "declined": None if row is None else row.declined,
            "new_game": None if row is None or not row.new_game else row.new_game,
            "offered": row is not None,
        }


def rematches(c: Community) -> Rematches:
    return Rematches(c.ratings.engine)


async def _players_of(c: Community, game_id: str, user: User) -> list[User]:
    """The players of a lobby game ``user`` sat in; NoSuchGame otherwise."""
    if len(game_id) > 32:
        raise NoSuchGame()
    players = await asyncio.to_thread(rematches(c).players, game_id)
    if user.id not in {u.id for u in players}:
        raise NoSuchGame()
    return players


@router.get("/api/rematch/{game_id}")
async def rematch_state(game_id: str, me: Me, c: CommunityDep) -> dict[str, Any]:
    """The rematch offer of a lobby game of yours (``offered`` false: none)."""
    await _players_of(c, game_id, me.user)
    return await asyncio.to_thread(rematches(c).describe, game_id)


@router.post("/api/rematch/{game_id}", dependencies=[Csrf])
async def rematch(game_id: str, me: Me, c: CommunityDep, hub: HubDep) -> dict[str, Any]:
    """Offer a rematch of a finished lobby game, or accept the one offered;
    the last acceptance makes the new game (seats turned by one)."""
    players = await _players_of(c, game_id, me.user)
    r = rematches(c)
    stored = await asyncio.to_thread(hub.store.get, game_id)
    old = await asyncio.to_thread(r.game, game_id)
    if stored is None or old is None:
        raise NoSuchGame()
    game = load(stored.record)
    if not forfeits.over(game):
        raise Conflict("rematch: the game is still being played")
    if forfeits.aborted(game):  # a rematch would wait for the one who never came
        raise Conflict(
            "rematch: the game was aborted (not every player arrived); find a new opponent"
        )
    standing = await asyncio.to_thread(r.describe, game_id)
    if standing["new_game"] is not None:  # made already: nothing more to do
        return standing
    online = stored.options.get("online") or {}
    rated = bool(online.get("rated", False))
    if rated:  # the abandonment rule (docs/community.md): one rated game at a time
        for u in players:
            reason = await asyncio.to_thread(c.ratings.rated_refusal, u.id)
            if reason is not None and u.id == me.user.id:
                raise Conflict(reason)
            if reason is not None:  # (the other player's reason is theirs to read)
                raise Conflict(f"rematch: {u.name} cannot start a rated game now")
    if (online.get("clock") or {}).get("days") is not None:  # at most so many at once
        for u in players:
            count = await asyncio.to_thread(c.ratings.turn_based_in_progress, u.id)
            full = turn_based_refusal(count)
            if full is not None:
                raise Conflict(
                    full
                    if u.id == me.user.id
                    else f"rematch: {u.name} has as many turn-based games as one account may"
                )
    _, start = await asyncio.to_thread(r.accept, game_id, me.user, players)
    ids = [u.id for u in players]
    if start:
        clock = online.get("clock")
        minutes = (
            None
            if not clock
            else {
                "minutes": clock["initial_ms"] / 60000,
                "increment": clock["increment_ms"] / 1000,
            }
        )
        turned = players[1:] + players[:1]
        assert c.lobby.starter is not None
        try:
            made = await c.lobby.starter(
                game.rules.to_dict(),
                old.rules_key,
                old.rules_label,
                turned,
                minutes,
                rated,
                bool(online.get("takebacks", False)),
            )
        except Exception:
            await asyncio.to_thread(r.started, game_id, None)
            c.lobby.changed(private=ids)
            raise
        await asyncio.to_thread(r.started, game_id, made)
    c.lobby.changed(private=ids)
    return await asyncio.to_thread(r.describe, game_id)


@router.post("/api/rematch/{game_id}/decline", dependencies=[Csrf])
async def decline(game_id: str, me: Me, c: CommunityDep) -> dict[str, Any]:
    """Decline the rematch offered (the others are told who declined)."""
    players = await _players_of(c, game_id, me.user)
    await asyncio.to_thread(rematches(c).decline, game_id, me.user)
    c.lobby.changed(private=[u.id for u in players])
    return await asyncio.to_thread(rematches(c).describe, game_id)
