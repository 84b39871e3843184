"""``donutbox dataset`` (finished games for imitation learning) and
``donutbox bench`` (the engine's speed)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..usage import UsageError, check_seed, printable


def cmd_dataset(args: argparse.Namespace) -> int:
    """``donutbox dataset export``: lab records and (with --include-server)
    the server's rated games, as rows without names (envs/dataset.py)."""
    try:
        from ..envs import dataset
    except ImportError as err:
        raise UsageError(f"the dataset needs numpy: pip install '.[rl]' ({err})") from None
    out = Path(args.out)
    if out.suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UsageError("--out *.parquet needs pyarrow: pip install pyarrow") from None
    if args.server and not args.include_server:
        raise UsageError(
            "--server: the server's accounts have no opt-out of research use yet, so its "
            "games are exported only with --include-server (docs/research.md, 'Game data')"
        )
    if not args.lab and not args.server:
        raise UsageError("nothing to export: give --lab FILE (records.jsonl) and/or --server URL")
    records: list[Any] = []
    for name in args.lab or []:
        try:
            with Path(name).open(encoding="utf-8") as fh:
                for k, line in enumerate(fh, 1):
                    if line.strip():
                        try:
                            records.append(json.loads(line))
                        except json.JSONDecodeError:
                            raise UsageError(f"--lab {name}: line {k} is not JSON") from None
        except OSError as err:
            raise UsageError(f"--lab {name}: {err.strerror or err}") from None
    rows = list(dataset.rows_from_records(records, "lab"))
    lab = len(rows)
    if args.server:
        from sqlalchemy.exc import SQLAlchemyError

        try:
            rows += list(dataset.server_rows(args.server))
        except SQLAlchemyError as err:
            reason = str(err).splitlines()[0][:200]
            raise UsageError(f"--server: cannot read the games ({reason})") from None
    try:
        count = dataset.write(rows, out)
    except OSError as err:
        raise UsageError(f"--out {args.out}: {err.strerror or err}") from None
    print(
        f"wrote {count} games ({lab} from the lab, {count - lab} from the server) to "
        f"{printable(str(out))}"
    )
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from ..bench import run_bench, run_compare

    for name in ("positions", "games", "playouts"):
        if not 1 <= getattr(args, name) <= 1_000_000:
            raise UsageError(f"--{name} must be from 1 to 1000000")
    # Deals from --seed up, one a game, playout and position (a deal that
    # ends before the timed ply is skipped: room for twice as many).
    check_seed(args.seed, 2 * max(args.positions, args.games, args.playouts))

    def step(text: str) -> None:  # progress, on standard error: the figures go to stdout
        print(f"bench: {text}", file=sys.stderr, flush=True)

    (run_compare if args.compare else run_bench)(
        positions=args.positions,
        games=args.games,
        playouts=args.playouts,
        seed=args.seed,
        out=lambda line: print(line, flush=True),
        step=step,
    )
    return 0
