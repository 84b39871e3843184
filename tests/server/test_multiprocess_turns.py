"""A turn-based deadline on many processes: the process that made a game
(and holds its lease) is killed with SIGKILL; the other one, which never
had the game in memory, takes the game over once the dead process's lease
has expired (the broker's scan) and acts at the *stored* deadline: a
takeover starts a real-time turn again, but never moves a turn-based
deadline.

Two real `donutbox serve` processes on one PostgreSQL and one Redis; a
"day" of 8 s.  Skipped without DONUTBOX_TEST_PG_URL and
DONUTBOX_TEST_REDIS_URL.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from test_multiprocess import PG, _start_pair

DAY = 8.0


def _stored(game: str) -> tuple[int, dict[str, object]]:
    from sqlalchemy import create_engine, text

    assert PG
    engine = create_engine(PG)
    try:
        with engine.connect() as c:
            version, record = c.execute(
                text("SELECT version, record FROM games WHERE id = :g"), {"g": game}
            ).one()
    finally:
        engine.dispose()
    return version, json.loads(record)


@pytest.mark.slow
def test_the_other_process_acts_on_a_deadline_once_the_holder_is_dead(tmp_path: Path) -> None:
    a, b, _ = _start_pair(
        tmp_path, DONUTBOX_DAY_SECONDS=str(DAY), DONUTBOX_DEADLINE_SWEEP_SECONDS="0.5"
    )
    try:
        status, made = a.post(
            "/api/online", {"seats": [{"name": "Ann"}, {"name": "Bob"}], "clock": {"days": 1}}
        )
        assert status == 200
        game = made["id"]
        time.sleep(0.5)  # a holds the game's lease (it watches the clock)
        a.kill()
        made_at = time.monotonic()
        # The deadline is at most DAY from here; the takeover about 3.5 s from
        # here (the lease's 3 s, a 0.5 s scan).  Acting at the stored deadline:
        # about DAY; a turn started again at the takeover: about 3.5 + DAY.
        while (row := _stored(game))[0] == 0:
            assert time.monotonic() - made_at < DAY + 2, "the stored deadline was not kept"
            time.sleep(0.1)
        version, record = row
        assert version == 1 and len(record["moves"]) == 1  # type: ignore[arg-type]
        time.sleep(1.5)
        assert _stored(game)[0] == 1  # acted on once
    finally:
        a.stop()
        b.stop()
