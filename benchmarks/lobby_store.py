"""What the lobby's reads and writes cost in the database (docs/community.md,
"The lobby on many processes"): the public part (open tables, queue,
who is online), one player's private part, a seat taken, a presence
written, a pairing, each timed over many calls on a lobby of
``--tables`` open tables (1-3 players each) and ``--online`` players seen.

    python benchmarks/lobby_store.py                       # SQLite (a temporary file)
    python benchmarks/lobby_store.py --db postgresql+psycopg://...  # an empty database

Prints the mean wall time and CPU time (this process's, time.process_time)
per call, in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import text

from donutbox.server import migrate
from donutbox.server.accounts import User
from donutbox.server.lobby.store import LobbyStore
from donutbox.server.storage import make_engine


def timed(what: str, fn: Callable[[], object], n: int) -> None:
    walls, cpus = [], []
    for _ in range(n):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    print(
        f"{what:<34} wall {statistics.mean(walls) * 1000:7.3f} ms"
        f"  (p50 {statistics.median(walls) * 1000:.3f})"
        f"  cpu {statistics.mean(cpus) * 1000:7.3f} ms  ({n} calls)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", help="SQLAlchemy URL of an empty database (default: SQLite)")
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--online", type=int, default=500)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    folder = tempfile.mkdtemp()
    url = args.db or f"sqlite:///{Path(folder) / 'lobby.db'}"
    engine = make_engine(url)
    assert migrate.upgrade(engine)
    users = args.online + 4 * args.tables + 10
    with engine.begin() as conn:
        conn.execute(
            text(
                "insert into users (name, name_key, password_hash, created)"
                " values (:n, :n, 'x', CURRENT_TIMESTAMP)"
            ),
            [{"n": f"u{i}"} for i in range(users)],
        )
        ids = [r[0] for r in conn.execute(text("select id from users order by id"))]
    store = LobbyStore(engine)
    people = [User(uid, f"u{i}") for i, uid in enumerate(ids)]
    rules = {"match": "o"}
    k = 0
    for t in range(args.tables):
        host = people[k]
        k += 1
        table = store.open_table(host, rules, "o", "Standard", 4, None, True, False)
        for _ in range(t % 3):
            store.join(people[k], table["id"])
            k += 1
    for p in people[: args.online]:
        store.touch(p)
    me = people[0]
    print(f"{url.split(':')[0]}: {args.tables} tables, {args.online} online")
    timed("public (tables, queue, online)", store.public, args.calls)
    timed("private (invites, place)", lambda: store.private(me), args.calls)
    timed("touch (presence written)", lambda: store.touch(me), args.calls)
    spare = people[k : k + args.calls]
    host = people[-1]
    table = store.open_table(host, rules, "o", "x", 4, None, True, False)

    def sit() -> None:
        p = spare.pop()
        store.join(p, table["id"])
        store.leave(p, table["id"])

    timed("join + leave (two transactions)", sit, min(args.calls, len(spare)))
    queue = people[k + args.calls : k + args.calls + 20]
    for i, p in enumerate(queue):
        store.enqueue(p, rules, "o", "x", 2, 100.0 * i)  # too far apart to pair
    timed("pair (20 queued, none paired)", store.pair, args.calls)
    if not url.startswith("sqlite"):
        engine.dispose()


if __name__ == "__main__":
    main()
