"""What one Argon2id password check costs on this machine, for a few
parameter sets: wall time and CPU time of a verify (median of ``--repeat``),
and the resident memory it adds (peak RSS of a fresh process doing only
that, minus the same process before hashing).

    python benchmarks/argon2_params.py            # the sets below, 9 checks each

Each set runs in a child process of its own (a peak RSS is per process).
The server's choice is ``server/passwords.py`` (docs/community.md, "Threat
model").
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

#: (time_cost, memory KiB, lanes, what it is)
SETS = [
    (3, 65536, 4, "argon2-cffi's default (RFC 9106's second choice)"),
    (2, 19456, 1, "OWASP's first (m=19 MiB, t=2, p=1): the server's"),
    (3, 12288, 1, "OWASP's second (m=12 MiB, t=3, p=1)"),
    (1, 47104, 1, "OWASP's (m=46 MiB, t=1, p=1)"),
]


def child(t: int, m: int, p: int, repeat: int) -> dict[str, float]:
    from argon2 import PasswordHasher

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    hasher = PasswordHasher(time_cost=t, memory_cost=m, parallelism=p)
    stored = hasher.hash("correct horse battery")
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        hasher.verify(stored, "correct horse battery")
        walls.append((time.perf_counter() - w) * 1000)
        cpus.append((time.process_time() - c) * 1000)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "wall_ms": statistics.median(walls),
        "cpu_ms": statistics.median(cpus),
        "added_mb": peak - before,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeat", type=int, default=9, help="checks a set (1 to 100)")
    ap.add_argument("--child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    repeat = max(1, min(100, args.repeat))
    if args.child:
        print(json.dumps(child(*args.child, repeat)))
        return 0
    print("| t | m | p | what | wall ms (median) | CPU ms (median) | memory added MB |")
    print("|---|---|---|---|---|---|---|")
    for t, m, p, what in SETS:
        out = subprocess.run(
            [sys.executable, __file__, "--repeat", str(repeat), "--child", str(t), str(m), str(p)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        r = json.loads(out)
        print(
            f"| {t} | {m // 1024} MiB | {p} | {what} | {r['wall_ms']:.0f} | {r['cpu_ms']:.0f} "
            f"| {r['added_mb']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
