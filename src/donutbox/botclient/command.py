"""``donutbox bot``: connect an agent of the catalogue to a server as a bot
(client.py; docs/bots.md)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..usage import UsageError


def add_bot(sub: Any) -> None:
    """Register ``bot`` on ``build_parser``'s subparsers."""
    p = sub.add_parser(
        "bot",
        help="play on a server as a bot account with an agent",
        description="Connect to a donutbox server with a bot token (made on the server's "
        "page: Community, your bots) and play with an agent: accept challenges, play "
        "every game to the end, until interrupted (docs/bots.md).",
    )
    p.add_argument("--server", default="http://127.0.0.1:8000", help="the server's URL")
    p.add_argument(
        "--token",
        default=os.environ.get("DONUTBOX_BOT_TOKEN") or None,
        help="the bot's API token (default $DONUTBOX_BOT_TOKEN; prefer it: a command line "
        "is visible to other users of the machine)",
    )
    p.add_argument(
        "--agent", default="heuristic", help="an agent or level (donutbox play lists them)"
    )
    p.add_argument("--seed", type=int, default=None, help="the agent's random seed")
    p.add_argument("--no-bots", action="store_true", help="decline challenges from bots")
    p.add_argument("--no-humans", action="store_true", help="decline challenges from people")
    p.add_argument("--rated-only", action="store_true", help="decline casual challenges")
    p.add_argument("--max-games", type=int, default=2, help="games at once (default 2)")
    p.add_argument("--games", type=int, default=None, help="stop after this many games")
    p.add_argument("--challenge", metavar="BOT", help="challenge this bot once connected")
    p.add_argument("--minutes", type=float, default=5, help="the challenge's clock (default 5)")
    p.add_argument("--increment", type=float, default=3, help="its increment, s (default 3)")
    p.add_argument("--casual", action="store_true", help="the challenge is not rated")
    p.set_defaults(func=cmd_bot)


def cmd_bot(args: argparse.Namespace) -> int:
    from ..ai.catalogue import OPTIONAL, agent_names
    from .client import Options, agent_chooser, run

    if not args.token:
        raise UsageError("--token: give the bot's token (or set DONUTBOX_BOT_TOKEN)")
    if args.agent not in agent_names() and args.agent not in OPTIONAL:
        raise UsageError(f"--agent: no agent {args.agent!r}; one of {', '.join(agent_names())}")
    if args.max_games < 1 or (args.games is not None and args.games < 1):
        raise UsageError("--max-games, --games: at least 1")
    if not args.server.startswith(("http://", "https://")):
        raise UsageError("--server: an http:// or https:// URL")
    options = Options(
        accept_bots=not args.no_bots,
        accept_humans=not args.no_humans,
        rated_only=args.rated_only,
        max_games=args.max_games,
        games=args.games,
        challenge=args.challenge,
        challenge_body={
            "clock": {"minutes": args.minutes, "increment": args.increment},
            "rated": not args.casual,
        },
    )
    return run(args.server, args.token, agent_chooser(args.agent, args.seed), options)
