"""A process killed between storing a move and telling the others of it.

Two real `donutbox serve` processes on one PostgreSQL and one Redis (as in
test_multiprocess.py): process A, the survivor, holds the game in memory
with readers; process B takes seat 1's move and is SIGKILLed at one of two
places, by the failpoint (server/failpoints.py) armed in its environment:

- ``after-store``: the move is stored (committed), nothing else happened:
  no answer, nothing published;
- ``before-publish``: the move is stored and acknowledged to the mover,
  and B dies before its message about it reaches Redis.

Either way the database holds a version A never heard of.  Within 10 s of
the kill every reader of A must be sent that version, holding the move,
and a reader that reconnects to A must be sent it at once (the hello
compares the stored version).  Two layouts: seat 1 and the spectator on B
(both come back through A after the kill), and every reader but the mover
on A.  Each case is repeated ``DONUTBOX_CRASH_REPEATS`` times (default 3;
docs/deploy.md gives the figures of 20), each with a new process B on the
same game.  ``DONUTBOX_CRASH_LOG=FILE`` appends each case's seconds from
the kill until the survivor's readers had the move, a JSON line a case.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
import test_multiprocess as multi  # skips this module too without the services

REPEATS = int(os.environ.get("DONUTBOX_CRASH_REPEATS", "3"))
#: The survivor's readers must see the stored move within this many seconds.
WITHIN = 10.0


def _stored(game_id: str) -> tuple[int, list[str]]:
    """The stored version and moves, read from the database itself."""
    import psycopg

    assert multi.PG
    url = multi.PG.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as c:
        row = c.execute("SELECT version, record FROM games WHERE id = %s", (game_id,)).fetchone()
    assert row is not None
    return int(row[0]), list(json.loads(row[1])["moves"])


async def _until_turn(
    reader: multi.Recorder, seat: int, others: list[multi.Recorder], rng: random.Random
) -> dict[str, Any]:
    """Play the other seat's moves (through its own reader, on A) until it
    is ``seat``'s turn; that state."""
    while True:
        st = await reader.wait(lambda s: s["finished"] or s["to_move"] is not None)
        assert not st["finished"], "the game ended before the repeats did"
        if st["to_move"] == seat:
            return st
        mover = others[st["to_move"]]
        mine = await mover.wait(lambda s, v=st["version"]: s["version"] >= v and bool(s["legal"]))
        reply = await mover.move(rng.choice(mine["legal"]), mine["version"])
        assert reply["type"] == "ack", reply
        await reader.wait(lambda s, n=reply["version"]: s["version"] >= n)


async def _come_back(
    server: multi.Serve, game_id: str, tokens: list[str], stored: int, move: str
) -> None:
    """Readers saying hello to ``server`` are sent the stored version (with
    ``move``) in their first state."""
    for token in tokens:
        c = multi.Recorder(server.url, game_id, token)
        await c.start()
        assert c.versions[0] == stored, (c.versions, stored)
        assert c.state is not None and c.state["history"][-1] == move
        await c.close()


@pytest.mark.parametrize("layout", ["split", "survivor-only"])
@pytest.mark.parametrize("failpoint", ["after-store", "before-publish"])
def test_a_move_stored_by_a_process_killed_before_telling_reaches_the_survivor_s_readers(
    tmp_path: Path, failpoint: str, layout: str
) -> None:
    one = multi.Serve(tmp_path / "a.log", {"DONUTBOX_BROKER_PREFIX": f"crash-{tmp_path.name}"})
    started: list[multi.Serve] = [one]
    try:
        one.wait_ready()
        status, g = one.post(
            "/api/online", {"seats": [{"name": "A"}, {"name": "B"}]}, via="10.1.0.1"
        )
        assert status == 200
        tokens = [g["seats"][0]["token"], g["seats"][1]["token"], g["spectator"]["token"]]
        late: list[float] = []
        asyncio.run(
            asyncio.wait_for(
                _repeats(one, g["id"], tokens, failpoint, layout, tmp_path, started, late),
                60 + 40 * REPEATS,
            )
        )
        assert len(late) == REPEATS
        if log := os.environ.get("DONUTBOX_CRASH_LOG"):  # the figures of docs/deploy.md
            with open(log, "a") as out:
                row = {"failpoint": failpoint, "layout": layout, "seconds": late}
                out.write(json.dumps(row) + "\n")
        assert max(late) < WITHIN, late
    finally:
        for s in started:
            s.stop()


async def _repeats(
    one: multi.Serve,
    game_id: str,
    tokens: list[str],
    failpoint: str,
    layout: str,
    folder: Path,
    started: list[multi.Serve],
    late: list[float],
) -> None:
    rng = random.Random(f"{failpoint}-{layout}")
    seat0 = multi.Recorder(one.url, game_id, tokens[0])
    await seat0.start()
    watcher_on_a = multi.Recorder(one.url, game_id, tokens[2])
    if layout == "survivor-only":
        await watcher_on_a.start()
    for n in range(REPEATS):
        env = {"DONUTBOX_BROKER_PREFIX": f"crash-{folder.name}", "DONUTBOX_FAILPOINT": failpoint}
        two = multi.Serve(folder / f"b{n}.log", env)
        started.append(two)
        await asyncio.to_thread(two.wait_ready)
        seat1 = multi.Recorder(two.url, game_id, tokens[1], max_pause=0.2)
        await seat1.start()
        on_b = [seat1]
        if layout == "split":
            watcher = multi.Recorder(two.url, game_id, tokens[2], max_pause=0.2)
            await watcher.start()
            on_b.append(watcher)
        st = await _until_turn(seat1, 1, [seat0, seat1], rng)
        v = st["version"]
        mine = await seat1.wait(lambda s, v=v: s["version"] >= v and bool(s["legal"]))
        # not a swap: its face is hidden from the other readers' histories
        move = rng.choice([m for m in mine["legal"] if not m.startswith("swap")] or mine["legal"])
        if failpoint == "before-publish":
            reply = await seat1.move(move, v)
            assert reply["type"] == "ack" and reply["version"] == v + 1, reply
        else:  # B dies before it can answer
            with_reply = asyncio.ensure_future(seat1.move(move, v))
            await asyncio.to_thread(two.proc.wait, 20)
            with_reply.cancel()
        await asyncio.to_thread(two.proc.wait, 20)
        killed = time.monotonic()
        for c in on_b:
            await c.close()
        assert two.proc.returncode == -9, two.log.read_text()[-2000:]
        stored, moves = _stored(game_id)
        assert stored == v + 1 and moves[-1] == move, (stored, v, moves[-3:], move)
        if layout == "split":  # its readers come back through A at once
            await _come_back(one, game_id, tokens[1:], stored, move)
        # The survivor's readers are sent it, with the move (in the
        # survivor-only layout, before anyone new says hello to A).
        readers = [seat0] + ([watcher_on_a] if layout == "survivor-only" else [])
        for c in readers:
            seen = await c.wait(lambda s, n=stored: s["version"] >= n, WITHIN + 5)
            assert seen["history"][-1] == move
        late.append(time.monotonic() - killed)
        if layout == "survivor-only":
            await _come_back(one, game_id, tokens[1:], stored, move)
    await seat0.close()
    await watcher_on_a.close()
