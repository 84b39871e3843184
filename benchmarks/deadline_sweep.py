"""What the deadline sweep costs (server/deadlines.py): the one query each
server process runs every ``DONUTBOX_DEADLINE_SWEEP_SECONDS`` (30 s by
default) for unfinished games whose turn-based deadline has passed.

    python benchmarks/deadline_sweep.py --db postgresql+psycopg://postgres@127.0.0.1:PORT/NAME

Makes ``--games`` unfinished games in the named database (it must be empty
of other data you care about: the games are left in the ``games`` table),
each with a deadline spread over the next week (``games.deadline_at``, as a
turn-based game stores it), ``--due`` of them already passed; then times
``Store.due`` (at most 100 ids, the earliest first) ``--repeats`` times and
prints the median and 90th percentile.  No server is started: the time is
the database's round trip and SQLAlchemy's, on a thread of this process as
in the server.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from sqlalchemy import update

from donutbox.server.storage import Base, GameRow, Store, make_engine


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--db", required=True, help="a SQLAlchemy URL (PostgreSQL or SQLite)")
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--due", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    engine = make_engine(args.db)
    Base.metadata.create_all(engine)
    store = Store(engine)
    now = time.time()
    rng = random.Random(1)
    ids = [
        store.create("sweep", "online", ["human", "human"], {}, {"moves": []}).id
        for _ in range(args.games)
    ]
    with engine.begin() as conn:
        for i, game_id in enumerate(ids):
            at = now - rng.uniform(1, 3600) if i < args.due else now + rng.uniform(60, 7 * 86400)
            conn.execute(update(GameRow).where(GameRow.id == game_id).values(deadline_at=at))
    store.due(time.time())  # warm: the statement compiled, a connection pooled
    took = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        found = store.due(time.time())
        took.append(time.perf_counter() - start)
    assert len(found) >= min(args.due, 100), len(found)
    took.sort()
    p90 = took[int(0.9 * (len(took) - 1))]
    print(f"games {args.games}, due {args.due}: found {len(found)}")
    print(f"median {statistics.median(took) * 1e3:.2f} ms, p90 {p90 * 1e3:.2f} ms")
    store.close()


if __name__ == "__main__":
    main()
