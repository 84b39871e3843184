"""The Bot API on two real ``donutbox serve`` processes on one PostgreSQL
and one Redis (docs/deploy.md): one bot connected to each process plays the
other to the end; the challenge made on one reaches the bot listening on
the other, and each bot's game stream carries the moves sent to the other
process (the broker's messages).  Skipped, with the reason, without
DONUTBOX_TEST_PG_URL and DONUTBOX_TEST_REDIS_URL (``.ci/run`` sets them)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_multiprocess as multi  # skips this module too without the services
from bot_helpers import Person, bot_process, reaped
from community_helpers import fresh_pg_database


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[multi.Serve, multi.Serve]]:
    assert multi.PG
    with fresh_pg_database(multi.PG, "bots_multi") as db:
        env = {"DONUTBOX_BROKER_PREFIX": f"test-{uuid.uuid4().hex[:10]}"}
        a = multi.Serve(tmp_path / "one.log", env, db=db)
        a.wait_ready()  # the first one migrates the new database
        b = multi.Serve(tmp_path / "two.log", env, db=db)
        try:
            b.wait_ready()
            yield a, b
        finally:
            a.stop()
            b.stop()


def test_bots_on_two_processes_play_each_other_to_the_end(two) -> None:  # type: ignore[no-untyped-def]
    a, b = two
    owner = Person(a.url, "Owner")
    x, y = owner.bot("xbot"), owner.bot("ybot")
    waiter = bot_process(b.url, y, "--games", "1")
    challenger = bot_process(a.url, x, "--games", "1", "--challenge", "ybot")
    outs = []
    with reaped(challenger, waiter):
        for proc in (challenger, waiter):
            out, _ = proc.communicate(timeout=240)
            outs.append(out)
            assert proc.returncode == 0, out
    assert "accepted xbot's challenge" in outs[1], outs
    assert "finished, scores" in outs[0] and "finished, scores" in outs[1], outs
    # Both saw the same final scores (each from its own process's stream).
    final = [o.split("finished, scores ")[1].splitlines()[0] for o in outs]
    assert final[0] == final[1]
    owner.http.close()
