"""``donutbox admin``: a server operator's moderation tool on the server's
database (``moderation/service.py``; docs/community.md, "Moderation")."""

from __future__ import annotations

import argparse
import getpass
import json
from typing import Any

from ..usage import UsageError, printable


def add_admin(sub: Any, parser_class: Any) -> None:
    """Register ``admin`` and its commands on ``build_parser``'s subparsers."""
    p = sub.add_parser(
        "admin",
        help="moderation: ban, unban, void a game, reports, the log",
        description="Moderate the community on a server's database (PostgreSQL at any "
        "time; an SQLite file only while no donutbox serve has it open). Every action "
        "is logged (donutbox admin log).",
    )
    p.add_argument(
        "--db",
        help="the server's SQLAlchemy URL (default: SQLite in ~/.local/share/donutbox)",
    )
    p.add_argument("--by", default=None, help="who acts, for the log (default: your login)")
    acts = p.add_subparsers(dest="action", metavar="ACTION", parser_class=parser_class)
    a = acts.add_parser("ban", help="end an account's sessions, take it out of the lobby")
    a.add_argument("name")
    a.add_argument("--reason", default="", help="kept in the log (at most 500 characters)")
    a = acts.add_parser("unban", help="lift a ban")
    a.add_argument("name")
    a = acts.add_parser("void", help="a game counts for no rating; ratings recomputed")
    a.add_argument("game", help="the lobby game's id (one starting with - goes after --)")
    a.add_argument("--reason", default="", help="kept in the log (at most 500 characters)")
    a = acts.add_parser("reports", help="players' reports, newest first")
    a.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    a.add_argument("--json", action="store_true", help="as JSON")
    a = acts.add_parser("log", help="every moderation action, newest first")
    a.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    a.add_argument("--json", action="store_true", help="as JSON")
    p.set_defaults(func=cmd_admin)


def _moderation(url: str | None) -> Any:
    from sqlalchemy.exc import SQLAlchemyError

    from . import migrate
    from .moderation.service import Moderation
    from .storage import make_engine

    try:
        engine = make_engine(url)
    except (SQLAlchemyError, ValueError, OSError) as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UsageError(f"cannot use the database: {reason}") from None
    if not migrate.upgrade(engine):
        raise UsageError(
            "cannot use the database (is a donutbox serve holding this SQLite file? "
            "stop it, or moderate a PostgreSQL server's database)"
        )
    return Moderation(engine)


def cmd_admin(args: argparse.Namespace) -> int:
    from .errors import ActionError

    if args.action is None:
        raise UsageError("name an action: ban, unban, void, reports or log")
    if args.action in ("reports", "log") and not 1 <= args.limit <= 10_000:
        raise UsageError("--limit must be from 1 to 10000")
    actor = (args.by or getpass.getuser() or "operator")[:40]
    moderation = _moderation(args.db)
    try:
        if args.action == "ban":
            print(printable(moderation.ban(args.name, args.reason, f"admin:{actor}")))
        elif args.action == "unban":
            print(printable(moderation.unban(args.name, f"admin:{actor}")))
        elif args.action == "void":
            print(printable(moderation.void(args.game, args.reason, f"admin:{actor}")))
        else:
            rows = (moderation.reports if args.action == "reports" else moderation.log)(args.limit)
            if args.json:
                print(json.dumps(rows, indent=2))
            elif not rows:
                print(f"no {'reports' if args.action == 'reports' else 'actions'} yet")
            for r in [] if args.json else rows:
                print(printable("  ".join("-" if v is None else str(v) for v in r.values())))
    except ActionError as err:
        raise UsageError(err.reason) from None
    return 0
