"""``donutbox bot``: a bot account played by an agent of the catalogue (or
any function from a state to a move) over the Bot API (docs/bots.md).

It reads the bot's event stream, answers challenges by its options
(accept from bots, from people, rated only, at most ``max_games`` at once),
opens a game stream for every game that starts and, whenever the state
says it is the bot's turn, asks the agent for a move (in a thread: the
streams keep being read meanwhile) and sends it with the state's version.
A dropped stream is opened again with a growing pause (0.5 s doubling to
8 s); the game stream's first line is the whole current state, so nothing
is missed.  It plays until interrupted, or until ``games`` games have
finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx

from .view import view_of

#: Chooses a move (notation) for a state of the bot's turn.
Chooser = Callable[[dict[str, Any]], str]


def agent_chooser(agent: str, seed: int | None = None) -> Chooser:
    """A catalogue agent (``donutbox agents``) playing from the seat's view;
    a move the rebuilt view would not list is never sent (the state's own
    ``legal`` list decides)."""
    from ..ai import make_agent

    player = make_agent(agent)
    rng = random.Random(seed)

    def choose(state: dict[str, Any]) -> str:
        move = str(player.choose(view_of(state), rng))
        return move if move in state["legal"] else rng.choice(state["legal"])

    return choose


@dataclass
class Options:
    """What the bot accepts, and when it stops."""

    accept_bots: bool = True
    accept_humans: bool = True
    rated_only: bool = False
    max_games: int = 2
    #: stop after this many games have finished (None: until interrupted)
    games: int | None = None
    #: challenge this bot once connected (rules and clock of ``challenge_body``)
    challenge: str | None = None
    challenge_body: dict[str, Any] = field(
        default_factory=lambda: {"clock": {"minutes": 5, "increment": 3}, "rated": True}
    )


class BotClient:
    def __init__(
        self,
        server: str,
        token: str,
        choose: Chooser,
        options: Options | None = None,
        out: TextIO | None = None,
    ) -> None:
        self.server = server.rstrip("/")
        self.token = token
        self.choose = choose
        self.options = options or Options()
        self.out = out or sys.stdout
        self.playing: dict[str, asyncio.Task[None]] = {}
        self.finished = 0
        self.done = asyncio.Event()
        self.name = ""
        #: the server refused the token while running (revoked): exit 1
        self.refused = False

    def say(self, text: str) -> None:
        print(f"[{self.name or 'bot'}] {text}", file=self.out, flush=True)

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.server,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=httpx.Timeout(30.0, read=None),
        )

    async def run(self) -> int:
        """Play until ``done`` (interrupted, ``games`` finished, or the token
        revoked); the exit status: 1 if the token is refused."""
        async with self._http() as http:
            try:
                r = await http.get("/api/bot/account")
            except httpx.TransportError as err:
                print(
                    f"donutbox bot: --server: cannot reach {self.server} ({type(err).__name__})",
                    file=sys.stderr,
                )
                return 1
            if r.status_code != 200:
                print(f"donutbox bot: {_reason(r)}", file=sys.stderr)
                return 1
            self.name = r.json()["name"]
            self.say(f"connected to {self.server}")
            events = asyncio.create_task(self._events(http))
            if self.options.challenge:
                await self._challenge(http, self.options.challenge)
            await self.done.wait()
            events.cancel()
            for task in list(self.playing.values()):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(events, *self.playing.values(), return_exceptions=True)
        return 1 if self.refused else 0

    async def _challenge(self, http: httpx.AsyncClient, name: str) -> None:
        r = await http.post(f"/api/bot/challenge/{name}", json=self.options.challenge_body)
        if r.status_code == 200:
            self.say(f"challenged {name} ({r.json()['id']})")
        else:
            self.say(f"challenge refused: {_reason(r)}")

    async def _lines(self, http: httpx.AsyncClient, path: str) -> AsyncIterator[dict[str, Any]]:
        """The NDJSON messages of a stream, opened again when it drops."""
        pause = 0.5
        while True:
            try:
                async with http.stream("GET", path) as r:
                    if r.status_code in (401, 404):  # revoked, or not the bot's
                        await r.aread()
                        raise Gone(f"{path}: {_reason(r)}")
                    if r.status_code != 200:
                        await r.aread()
                        self.say(f"{path}: {_reason(r)}; trying again in {pause:.1f} s")
                    else:
                        pause = 0.5
                        async for text in r.aiter_lines():
                            if text.strip():
                                yield json.loads(text)
                        if path.startswith("/api/bot/game/"):
                            return  # a game stream ends with its game
            except (httpx.TransportError, json.JSONDecodeError) as err:
                self.say(f"{path}: {type(err).__name__}; trying again in {pause:.1f} s")
            await asyncio.sleep(pause)
            pause = min(8.0, pause * 2)

    async def _events(self, http: httpx.AsyncClient) -> None:
        try:
            await self._read_events(http)
        except Gone as gone:  # the token was revoked: nothing more to do
            self.say(str(gone))
            self.refused = True
            self.done.set()

    async def _read_events(self, http: httpx.AsyncClient) -> None:
        async for event in self._lines(http, "/api/bot/stream/event"):
            kind = event.get("type")
            if kind == "challenge":
                await self._answer(http, event["challenge"])
            elif kind == "gameStart":
                game_id = event["game"]["id"]
                if game_id not in self.playing:
                    self.say(f"game {game_id} starts (seat {event['game']['seat']})")
                    self.playing[game_id] = asyncio.create_task(self._play(http, game_id))
            elif kind == "gameFinish":
                self.say(f"game {event['game']['id']} is over")
            elif kind == "challengeDeclined":
                c = event["challenge"]
                self.say(f"challenge {c['id']} {c['status']}: {c.get('reason') or ''}")
            elif kind == "error":
                self.say(f"event stream: {event.get('reason')}")

    def _declines(self, c: dict[str, Any]) -> str | None:
        o = self.options
        if c["challenger"]["bot"] and not o.accept_bots:
            return "noBot"
        if not c["challenger"]["bot"] and not o.accept_humans:
            return "onlyBot"
        if o.rated_only and not c["rated"]:
            return "casual"
        if sum(1 for t in self.playing.values() if not t.done()) >= o.max_games:
            return "later"
        return None

    async def _answer(self, http: httpx.AsyncClient, c: dict[str, Any]) -> None:
        reason = self._declines(c)
        who = c["challenger"]["name"]
        if reason is None:
            r = await http.post(f"/api/bot/challenge/{c['id']}/accept")
            self.say(
                f"accepted {who}'s challenge" if r.status_code == 200 else f"accept: {_reason(r)}"
            )
        else:
            await http.post(f"/api/bot/challenge/{c['id']}/decline", json={"reason": reason})
            self.say(f"declined {who}'s challenge ({reason})")

    async def _play(self, http: httpx.AsyncClient, game_id: str) -> None:
        """One game: a move whenever the newest state says it is our turn.
        A stream that ends before the game (the server lets a reader that
        fell behind go) is opened again: its first line is the whole state."""
        moved_at = -1
        over = False
        try:
            while not over:
                async for message in self._lines(http, f"/api/bot/game/stream/{game_id}"):
                    if message.get("type") != "state":
                        continue
                    state = message["state"]
                    if state["finished"]:
                        self.say(f"game {game_id}: finished, scores {state['scores']}")
                        over = True
                        break
                    mine = state["to_move"] == state["player"] and state["legal"]
                    if not mine or state["version"] == moved_at:
                        continue
                    move = await asyncio.to_thread(self.choose, state)
                    moved_at = state["version"]
                    r = await http.post(
                        f"/api/bot/game/{game_id}/move",
                        json={"move": move, "version": state["version"]},
                    )
                    if r.status_code not in (200, 409):  # 409: a newer state follows
                        self.say(f"game {game_id}: move {move} refused: {_reason(r)}")
                if not over:
                    await asyncio.sleep(0.5)
        except Gone as gone:
            self.say(str(gone))
        finally:
            self.finished += 1
            self.playing.pop(game_id, None)
            if self.options.games is not None and self.finished >= self.options.games:
                self.done.set()


class Gone(Exception):
    """A stream refused for good (401: the token was revoked; 404: not the
    bot's game): opening it again is useless."""


def _reason(r: httpx.Response) -> str:
    try:
        return str(r.json().get("detail", r.status_code))
    except ValueError:
        return f"HTTP {r.status_code}"


def run(server: str, token: str, choose: Chooser, options: Options) -> int:
    """Run a bot until interrupted (Ctrl-C: exit 0) or its games are done."""
    client = BotClient(server, token, choose, options)
    try:
        return asyncio.run(client.run())
    except KeyboardInterrupt:
        client.say("stopped")
        return 0
