"""The analysis of a finished local game (``donutbox analyse`` in the web app).

``POST /api/games/{id}/analysis`` (the owner's bearer, as every local-game
route) starts it; ``GET`` answers ``{"state": "running", "done": k,
"total": n}`` until it is done, then the ``analyse --json`` document
(docs/ai.md) with ``"state": "done"`` added.

The moves are searched one at a time (``ai.analysis.analyse_ply``, each from
its mover's own view) on the server's search workers, and only when the
fair queue of live games' AI searches has nothing waiting and a worker free:
a live game's AI move waits at most one analysis step (``SECONDS``, 0.3 s
of CPU).  At most one analysis per game, ``MAX_RUNNING`` at once on the
server; results are kept in memory (the last ``KEEP`` analyses), not in
the record: a restart forgets them and the owner asks again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from collections import OrderedDict
from typing import Any

from fastapi import APIRouter, Body

from ..ai.analysis import MoveAnalysis, analyse_ply, to_json
from ..core import Game
from .errors import Busy, Conflict, Invalid
from .hub import Hub
from .routes_local import Auth, local
from .routing import HubDep

log = logging.getLogger("donutbox.server.analysis")

router = APIRouter()

OptionalBody = Body(None, description='{"seconds": 0.05 to 1} (optional)')

#: CPU seconds searched per move (``DONUTBOX_ANALYSIS_SECONDS`` overrides).
SECONDS = 0.3
#: A request's own ``seconds`` must be in this range.
SECONDS_RANGE = (0.05, 1.0)
#: Analyses running at once on the server.
MAX_RUNNING = 2
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


class Analyses:
    """The analyses of one hub: running ones' progress, finished documents."""

    def __init__(self) -> None:
        self.running: dict[str, dict[str, int]] = {}
        self.done: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.failed: dict[str, str] = {}
        #: analysis steps in the workers now (all analyses together)
        self.steps = 0

    def finish(self, game_id: str, doc: dict[str, Any]) -> None:
        self.done[game_id] = doc
        self.done.move_to_end(game_id)
        while len(self.done) > KEEP:
            self.done.popitem(last=False)


_OF: weakref.WeakKeyDictionary[Hub, Analyses] = weakref.WeakKeyDictionary()


def analyses(hub: Hub) -> Analyses:
    a = _OF.get(hub)
    if a is None:
        a = _OF[hub] = Analyses()
    return a


async def _free_worker(hub: Hub, a: Analyses) -> None:
    """Wait until no live game's AI search is waiting and a worker is free
    (of live searches and of the other analyses' steps)."""
    q = hub.ai.searches
    while q.order or len(q.running) + a.steps >= q.capacity:
        await asyncio.sleep(POLL)


async def _run(hub: Hub, game_id: str, game: Game, seconds: float) -> None:
    a = analyses(hub)
    record = game.to_record()
    total = len(record["moves"])
    loop = asyncio.get_running_loop()
    moves: list[dict[str, Any]] = []
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
    except Exception as err:  # told to the owner as one line
        log.warning("analysis of game %s failed: %s", game_id, err)
        a.failed[game_id] = "the analysis failed: ask again"
    finally:
        a.running.pop(game_id, None)


@router.post("/api/games/{game_id}/analysis", status_code=202)
async def start_analysis(
    game_id: str,
    hub: HubDep,
    authorization: str | None = Auth,
    body: dict[str, Any] | None = OptionalBody,
) -> dict[str, Any]:
    """Start analysing a finished game (each move searched ``seconds`` of
    CPU from its mover's view; default 0.3, a body may ask 0.05 to 1)."""
    s = await local(hub, game_id, authorization)
    if not s.game.finished:
        raise Conflict("the analysis opens when the game is over")
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
    if game_id in a.running:
        return {"state": "running", **a.running[game_id]}
    if len(a.running) >= MAX_RUNNING:
        raise Busy("analysis: the server is analysing other games; try again in a minute")
    total = len(s.game.history)
    a.failed.pop(game_id, None)
    a.running[game_id] = {"done": 0, "total": total}
    hub.spawn(_run(hub, game_id, s.game, seconds))
    return {"state": "running", "done": 0, "total": total}


@router.get("/api/games/{game_id}/analysis")
async def get_analysis(
    game_id: str, hub: HubDep, authorization: str | None = Auth
) -> dict[str, Any]:
    """The analysis: its progress while running, then the document."""
    s = await local(hub, game_id, authorization)
    a = analyses(hub)
    if game_id in a.done:
        return a.done[game_id]
    if game_id in a.running:
        return {"state": "running", **a.running[game_id]}
    if game_id in a.failed:
        return {"state": "failed", "reason": a.failed[game_id]}
    return {"state": "none", "done": 0, "total": len(s.game.history)}
