"""What the many-process servers' check against the database costs
(server/broker.py ``RedisBroker.reconcile`` and ``check_stored``).

    python benchmarks/reconcile_cost.py --db postgresql+psycopg://postgres@127.0.0.1:PORT/NAME

Every ``RECONCILE_SECONDS`` each process reads the stored versions of the
games in its memory that someone waits on (``Store.versions``: two columns
by primary key, ``VERSIONS_CHUNK`` ids a query), and every hello or HTTP
read of a game already in memory reads its one version.  This makes 1,000
games in the named database (it must be empty of other data you care about:
the games are left there, in the ``games`` table), then times
``Store.versions`` for 1, 10, 100 and 1,000 ids, ``--repeats`` times each,
and prints the median and 90th percentile.  No server is started; the time
is the database's round trip and SQLAlchemy's, on a thread of this process
as in the server.
"""

from __future__ import annotations

import argparse
import statistics
import time

from donutbox.server.storage import Base, Store, make_engine


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--db", required=True, help="a SQLAlchemy URL (PostgreSQL or SQLite)")
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    engine = make_engine(args.db)
    Base.metadata.create_all(engine)
    store = Store(engine)
    ids = [
        store.create("reconcile", "online", ["human", "human"], {}, {"moves": []}).id
        for _ in range(1000)
    ]
    print(f"{'ids':>6}  {'median':>9}  {'p90':>9}")
    for n in (1, 10, 100, 1000):
        chunk = ids[:n]
        store.versions(chunk)  # warm: the statement compiled, a connection pooled
        took = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            found = store.versions(chunk)
            took.append(time.perf_counter() - start)
            assert len(found) == n
        took.sort()
        p90 = took[int(0.9 * (len(took) - 1))]
        print(f"{n:>6}  {statistics.median(took) * 1e3:>7.2f} ms  {p90 * 1e3:>7.2f} ms")
    store.close()


if __name__ == "__main__":
    main()
