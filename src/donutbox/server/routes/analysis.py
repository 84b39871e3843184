"""The analysis of a finished local game (``donutbox analyse`` in the web app).

``POST /api/games/{id}/analysis`` (the owner's bearer, as every local-game
route) asks for it; ``GET`` answers ``{"state": "queued", "ahead": k,
"done": 0, "total": n}`` while it waits, ``{"state": "running", "done": k,
"total": n}`` while it runs, then the ``analyse --json`` document
(docs/ai.md) with ``"state": "done"`` added.

The moves are searched one at a time (``ai.analysis.analyse_ply``, each from
its mover's own view) on the server's search workers, and only when the
fair queue of live games' AI searches has nothing waiting and a worker free:
a live game's AI move waits at most one analysis step (``SECONDS``, 0.3 s
of CPU).  At most one analysis per game and ``MAX_RUNNING`` at once on the
server; more wait in a queue served fairly: **one running per client** (a
client is its owner token, and its address: a stranger can make owner
tokens at will, not addresses), and of the clients waiting, the one whose
last analysis started longest ago goes first.  A client may have
``PER_CLIENT`` analyses running or waiting, the queue ``MAX_WAITING`` in
all (429 beyond).  Results are kept in memory (the last ``KEEP``
analyses), not in the record: a restart forgets them and the owner asks
again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Body, Request

from ...ai.analysis import MoveAnalysis, analyse_ply, to_json
from ...core import Game
from ...core.record import dump
from .. import forfeits, limits
from ..errors import Busy, Conflict, Invalid, NoSuchGame
from ..hub import Hub
from ..online import digest
from ..routes.common import HubDep
from ..routes.local import Auth, local
from ..routes.online import bearer, online_reader
from ..session import SPECTATOR, GameSession

log = logging.getLogger("donutbox.server.analysis")

router = APIRouter()

OptionalBody = Body(None, description='{"seconds": 0.05 to 1} (optional)')

#: CPU seconds searched per move (``DONUTBOX_ANALYSIS_SECONDS`` overrides).
SECONDS = 0.3
#: A request's own ``seconds`` must be in this range.
SECONDS_RANGE = (0.05, 1.0)
#: Analyses running at once on the server.
MAX_RUNNING = 2
#: Analyses one client (an owner token, an address) may have running or waiting.
PER_CLIENT = 3
#: Analyses waiting at most on the server.
MAX_WAITING = 50
#: Finished analyses kept in memory.
KEEP = 200
#: How often a waiting step looks for a free worker.
POLL = 0.05


def default_seconds() -> float:
    try:
        value = float(os.environ.get("DONUTBOX_ANALYSIS_SECONDS", SECONDS))
    except ValueError:
        return SECONDS
    lo, hi = SECONDS_RANGE
    return min(hi, max(lo, value))


@dataclass
class Job:
    """An analysis asked for: whose (owner digest, address key), what."""

    game_id: str
    owner: str
    address: str
    game: Game
    seconds: float
    total: int
    asked: float = field(default_factory=time.monotonic)


class Analyses:
    """The analyses of one hub: the queue, running ones' progress, finished
    documents."""

    def __init__(self) -> None:
        self.running: dict[str, dict[str, int]] = {}
        self.jobs: dict[str, Job] = {}  # the running ones
        self.waiting: OrderedDict[str, Job] = OrderedDict()
        self.done: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.failed: dict[str, str] = {}
        #: when each client's (owner's, address's) last analysis started
        self.last_start: dict[str, float] = {}
        #: analysis steps in the workers now (all analyses together)
        self.steps = 0

    def finish(self, game_id: str, doc: dict[str, Any]) -> None:
        self.done[game_id] = doc
        self.done.move_to_end(game_id)
        while len(self.done) > KEEP:
            self.done.popitem(last=False)

    def of_client(self, owner: str, address: str) -> int:
        """Analyses running or waiting for this owner or this address."""
        return sum(
            1
            for j in (*self.jobs.values(), *self.waiting.values())
            if j.owner == owner or j.address == address
        )

    def ahead(self, game_id: str) -> int:
        """Analyses waiting before ``game_id`` in the queue's order."""
        order = sorted(self.waiting.values(), key=self._turn)
        return next(i for i, j in enumerate(order) if j.game_id == game_id)

    def _turn(self, job: Job) -> tuple[float, float]:
        """The fair order: the client whose last analysis started longest
        ago (never: first), then the longest waiting."""
        last = max(
            self.last_start.get("o:" + job.owner, -1.0),
            self.last_start.get("a:" + job.address, -1.0),
        )
        return (last, job.asked)

    def next_job(self) -> Job | None:
        """The waiting analysis to start now, if a place is free: none of
        its client's analyses running, first in the fair order."""
        if len(self.jobs) >= MAX_RUNNING:
            return None
        owners = {j.owner for j in self.jobs.values()}
        addresses = {j.address for j in self.jobs.values()}
        free = [j for j in self.waiting.values() if j.owner not in owners]
        free = [j for j in free if j.address not in addresses]
        return min(free, key=self._turn) if free else None

    def begin(self, job: Job) -> None:
        del self.waiting[job.game_id]
        self.jobs[job.game_id] = job
        self.running[job.game_id] = {"done": 0, "total": job.total}
        now = time.monotonic()
        self.last_start["o:" + job.owner] = self.last_start["a:" + job.address] = now
        if len(self.last_start) > 4 * KEEP:  # forget the oldest clients
            for key in sorted(self.last_start, key=self.last_start.__getitem__)[:KEEP]:
                del self.last_start[key]


_OF: weakref.WeakKeyDictionary[Hub, Analyses] = weakref.WeakKeyDictionary()


def analyses(hub: Hub) -> Analyses:
    a = _OF.get(hub)
    if a is None:
        a = _OF[hub] = Analyses()
    return a


def _dispatch(hub: Hub) -> None:
    """Start the waiting analyses that may start now."""
    a = analyses(hub)
    while (job := a.next_job()) is not None:
        a.begin(job)
        hub.spawn(_run(hub, job))


async def _free_worker(hub: Hub, a: Analyses) -> None:
    """Wait until no live game's AI search is waiting and a worker is free
    (of live searches and of the other analyses' steps)."""
    q = hub.ai.searches
    while q.order or len(q.running) + a.steps >= q.capacity:
        await asyncio.sleep(POLL)


async def _run(hub: Hub, job: Job) -> None:
    a = analyses(hub)
    game_id, game, seconds = job.game_id, job.game, job.seconds
    record = dump(game)
    total = len(record["moves"])
    loop = asyncio.get_running_loop()
    moves: list[dict[str, Any]] = []
    stopping = False
    try:
        for ply in range(total):
            await _free_worker(hub, a)
            a.steps += 1
            try:
                moves.append(
                    await loop.run_in_executor(
                        hub.ai.searches.executor, analyse_ply, record, ply, seconds
                    )
                )
            finally:
                a.steps -= 1
            a.running[game_id]["done"] = ply + 1
        doc = to_json(
            game,
            [MoveAnalysis(**m) for m in moves],
            {"seconds": seconds, "clock": "cpu", "seed": 0},
        )
        a.finish(game_id, {"state": "done", **doc})
    except asyncio.CancelledError:  # the server is stopping: start nothing new
        stopping = True
        raise
    except Exception as err:  # told to the owner as one line
        log.warning("analysis of game %s failed: %s", game_id, err)
        a.failed[game_id] = "the analysis failed: ask again"
    finally:
        a.running.pop(game_id, None)
        a.jobs.pop(game_id, None)
        if not stopping:
            _dispatch(hub)


async def _analysable(
    hub: Hub, game_id: str, authorization: str | None, asking: bool
) -> GameSession:
    """A local game of the bearer's (``asking`` for an analysis: once it is
    over, 409 before), or an online game the bearer plays in (a seat's
    token; spectators get 404 as strangers do), once it is over: 409 before,
    for reading too (the analysis shows the search's best moves, help no
    player may have while the game runs)."""
    if authorization and bearer(authorization):
        s = await hub.open(game_id, bearer(authorization))
        if s.online:
            s, seat = await online_reader(hub, game_id, authorization)
            if seat == SPECTATOR:
                raise NoSuchGame()
            if not forfeits.over(s.game):
                raise Conflict(
                    "analysis: the game is still being played; it opens when the game is over"
                )
            return s
    s = await local(hub, game_id, authorization)
    if asking and not s.game.finished:
        raise Conflict("the analysis opens when the game is over")
    return s


def _progress(a: Analyses, game_id: str) -> dict[str, Any] | None:
    """The state of a queued or running analysis (None: neither)."""
    if game_id in a.running:
        return {"state": "running", **a.running[game_id]}
    job = a.waiting.get(game_id)
    if job is not None:
        return {"state": "queued", "ahead": a.ahead(game_id), "done": 0, "total": job.total}
    return None


@router.post("/api/games/{game_id}/analysis", status_code=202)
async def start_analysis(
    game_id: str,
    hub: HubDep,
    request: Request,
    authorization: str | None = Auth,
    body: dict[str, Any] | None = OptionalBody,
) -> dict[str, Any]:
    """Start analysing a finished game (each move searched ``seconds`` of
    CPU from its mover's view; default 0.3, a body may ask 0.05 to 1)."""
    s = await _analysable(hub, game_id, authorization, asking=True)
    seconds = default_seconds()
    if body is not None:
        if not isinstance(body, dict) or set(body) - {"seconds"}:
            raise Invalid("body: only 'seconds' may be given")
        if "seconds" in body:
            value = body["seconds"]
            lo, hi = SECONDS_RANGE
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not lo <= value <= hi
            ):
                raise Invalid(f"seconds: a number from {lo} to {hi}")
            seconds = float(value)
    a = analyses(hub)
    if game_id in a.done:
        return {"state": "done", "done": len(s.game.history), "total": len(s.game.history)}
    progress = _progress(a, game_id)
    if progress is not None:
        return progress
    owner = digest(bearer(authorization))
    address = limits.client_address(request)
    if a.of_client(owner, address) >= PER_CLIENT:
        raise Busy(
            f"analysis: at most {PER_CLIENT} of your games analysed or waiting at once; "
            "ask again when one is done"
        )
    if len(a.waiting) >= MAX_WAITING:
        raise Busy("analysis: the server's queue is full; try again in a few minutes")
    a.failed.pop(game_id, None)
    total = len(s.game.history)
    a.waiting[game_id] = Job(game_id, owner, address, s.game, seconds, total)
    _dispatch(hub)
    progress = _progress(a, game_id)
    assert progress is not None
    return progress


@router.get("/api/games/{game_id}/analysis")
async def get_analysis(
    game_id: str, hub: HubDep, authorization: str | None = Auth
) -> dict[str, Any]:
    """The analysis: its progress while running, then the document."""
    s = await _analysable(hub, game_id, authorization, asking=False)
    a = analyses(hub)
    if game_id in a.done:
        return a.done[game_id]
    progress = _progress(a, game_id)
    if progress is not None:
        return progress
    if game_id in a.failed:
        return {"state": "failed", "reason": a.failed[game_id]}
    return {"state": "none", "done": 0, "total": len(s.game.history)}
