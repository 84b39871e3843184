"""The argument parser of ``donutbox``: every command, its options and help."""

from __future__ import annotations

import argparse
import os
from typing import Any

from .. import __version__
from ..usage import UsageError
from .balance import cmd_balance
from .common import _DECK_HELP, _add_rule_options, _closest, _Parser
from .lab import _add_sim_options, cmd_sim
from .ladder import cmd_tournament
from .records import cmd_moves, cmd_new, cmd_perft, cmd_replay, cmd_show
from .research import cmd_bench, cmd_dataset
from .server import cmd_serve
from .terminal import cmd_play


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="donutbox",
        description="The donut card game: records, rules engine and tools.",
    )
    parser.add_argument("--version", action="version", version=f"donutbox {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser(
        "replay",
        help="replay a record and report the result",
        description="Replay a game record (a path, or - for standard input).",
    )
    p.add_argument("record", help="record file, or - for standard input")
    p.add_argument(
        "--json", action="store_true", help="print the result as JSON (fields: docs/notation.md)"
    )
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser(
        "moves",
        help="list the legal moves of the player to move",
        description="Replay a record and list every legal action of the player to move.",
    )
    p.add_argument("record", help="record file, or - for standard input")
    p.add_argument("--json", action="store_true", help='print {"moves": [...]}')
    p.add_argument(
        "--card",
        action="append",
        metavar="FACE",
        help="free game only: a face whose placements to list (repeatable)",
    )
    p.set_defaults(func=cmd_moves)

    p = sub.add_parser(
        "perft",
        help="count the move sequences of a given length (engine testing)",
        description="Replay a dealt game's record and count every sequence of --depth "
        "legal moves from that position (a finished game counts 0 beyond depth 0; "
        "see docs/performance.md, Perft).",
    )
    p.add_argument("record", help="record file, or - for standard input")
    p.add_argument("--depth", type=int, default=2, help="moves in a sequence (default 2)")
    p.add_argument("--divide", action="store_true", help="the count under each first move")
    p.add_argument("--json", action="store_true", help='print {"depth", "nodes"[, "divide"]}')
    p.set_defaults(func=cmd_perft)

    p = sub.add_parser(
        "new",
        help="write a fresh seeded record",
        description="Deal a new game with standard decks and print its record.",
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--players", type=int, default=2, help="number of players, 2 to 4 (default 2)"
    )
    group.add_argument(
        "--names", help="player names separated by commas, in turn order (each different)"
    )
    p.add_argument("--seed", type=int, help="shuffle seed, 0 to 2**64-1 (default: random)")
    _add_rule_options(p)
    p.add_argument(
        "--deck",
        metavar="FILE",
        help=_DECK_HELP,
    )
    p.add_argument("--out", help="write the record to this file instead of standard output")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser(
        "show",
        help="draw a record's counter in the terminal",
        description="Draw the counter, scores, piles and the tray of the player to move.",
    )
    p.add_argument("record", help="record file, or - for standard input")
    p.add_argument("--ply", type=int, help="show the position after this many moves")
    p.add_argument("--reveal", action="store_true", help="show every player's tray")
    p.add_argument("--no-color", action="store_true", help="no colour (letters only)")
    p.add_argument("--no-legend", action="store_true", help="leave out the legend")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "serve",
        help="start the web app (play in the browser)",
        description="Start the web server: play against the AI or hotseat in the browser. "
        "Games are stored in an SQLite file in your data folder, or in any SQLAlchemy "
        "database given with --db.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--db",
        help="SQLAlchemy URL, e.g. postgresql+psycopg://user@host/db "
        "(default: SQLite in ~/.local/share/donutbox)",
    )
    p.add_argument("--workers", type=int, default=1, help="AI worker processes (default 1)")
    p.add_argument(
        "--broker",
        default=os.environ.get("DONUTBOX_BROKER") or None,
        help="Redis URL, e.g. redis://localhost:6379/0, joining every server process "
        "on the same --db (default $DONUTBOX_BROKER; none: this process alone; "
        "docs/deploy.md)",
    )
    p.add_argument(
        "--smtp",
        default=os.environ.get("DONUTBOX_SMTP") or None,
        help="send email reminders through this server: "
        "smtp://[user[:password]@]host[:port][?starttls=1&from=addr] or smtps://... "
        "(default $DONUTBOX_SMTP; none: no email; docs/deploy.md)",
    )
    p.add_argument(
        "--public-url",
        default=os.environ.get("DONUTBOX_PUBLIC_URL") or None,
        help="the address players reach this server at, for the links in emails "
        "(default $DONUTBOX_PUBLIC_URL, else http://HOST:PORT)",
    )
    p.add_argument("--open", action="store_true", help="open the browser")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "sim",
        help="play many games between agents and report",
        description="Paired games between agents (every seat rotation per deal), in "
        "parallel; win rates with 95% intervals, scores, points by source, lengths.",
    )
    _add_sim_options(p, 100, None, "in all")
    _add_rule_options(p)
    p.add_argument(
        "--deck",
        metavar="FILE",
        help=_DECK_HELP,
    )
    p.set_defaults(func=cmd_sim)

    p = sub.add_parser(
        "tournament",
        help="round robin of agents with a rating table",
        description="Every pair of agents plays --games paired games (each deal from both "
        "seats); a Bradley-Terry fit gives Elo-scale ratings with bootstrap 95% intervals "
        "(docs/research.md, 'An evaluation ladder').",
    )
    p.add_argument(
        "--agents",
        required=True,
        help="agents, comma-separated; a searching agent may take a fixed budget of "
        "iterations a move as NAME:N, e.g. random,greedy,heuristic,mcts:200,hard",
    )
    _add_sim_options(p, 20, None, "per pair", players=False)
    _add_rule_options(p)
    p.add_argument(
        "--extend",
        metavar="DIR",
        help="place new agents on a ladder played before (the --out folder of an earlier "
        "tournament): only the games of the agents of --agents not on it are played, against "
        "its agents (or those of --against) and each other; the ratings are fitted to all",
    )
    p.add_argument(
        "--against",
        metavar="AGENTS",
        help="with --extend: the earlier agents the new ones play (default: all of them)",
    )
    p.set_defaults(func=cmd_tournament)

    p = sub.add_parser(
        "dataset",
        help="export finished games for imitation learning",
        description="export: finished games as rows without names (JSON lines, or Parquet "
        "with pyarrow): the lab's records and, with --include-server, the server's rated "
        "games (docs/research.md, 'Game data').",
    )
    p.add_argument("action", choices=["export"], help="export (the one action)")
    p.add_argument(
        "--lab", action="append", metavar="FILE", help="a records.jsonl of sim or tournament"
    )
    p.add_argument("--server", metavar="URL", help="the server's database URL (read only)")
    p.add_argument(
        "--include-server",
        action="store_true",
        help="export the server's games: its accounts have no opt-out yet (docs)",
    )
    p.add_argument("--out", required=True, help="the file to write: *.jsonl or *.parquet")
    p.set_defaults(func=cmd_dataset)

    p = sub.add_parser(
        "balance",
        help="run every rule combination and write a report",
        description="All eight rule combinations with the chosen agents; writes a "
        "Markdown report with plots for the game's designer.",
    )
    _add_sim_options(p, 50, "balance-report", "per rule combination (8 combinations)")
    p.add_argument(
        "--deck",
        metavar="FILE",
        help=_DECK_HELP,
    )
    p.add_argument(
        "--sweep",
        action="append",
        metavar="NAME=VALUES",
        help="sweep instead of the eight rule combinations: a deck kind (halves, threes, "
        "rainbows, rolls: cards per deck, e.g. rolls=0..10, rolls=0..10:2, rainbows=2,4,8) "
        "or a rule option (match, layout, closers, e.g. closers=off,on); repeat for every "
        "combination; --games is then per point, from the same deal seeds at every point "
        "(docs/deck-lab.md)",
    )
    p.add_argument(
        "--skill",
        action="append",
        metavar="STRONG,WEAK",
        help="with --sweep: a pair of agents whose paired games measure skill expression "
        "(repeatable; default heuristic,greedy; none for none)",
    )
    p.add_argument(
        "--skill-games",
        type=int,
        help="with --sweep: games per point of each --skill pair (default: --games)",
    )
    _add_rule_options(p)
    p.set_defaults(func=cmd_balance)

    p = sub.add_parser(
        "play",
        help="play in the terminal against an agent or hotseat",
        description="Play a game in the terminal. Type 'help' at the prompt.",
    )
    p.add_argument(
        "--vs",
        default="heuristic",
        help="opponent: hotseat, or one of the catalogue: "
        + _agents_help()
        + "; default heuristic",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=1.0,
        help="thinking time per move of a searching agent and of hint (default 1)",
    )
    p.add_argument("--players", type=int, default=2, help="2 to 4 players (default 2)")
    p.add_argument("--seed", type=int, help="deal seed, 0 to 2**64-1 (default: random)")
    p.add_argument("--second", action="store_true", help="let the opponent start")
    p.add_argument("--resume", metavar="FILE", help="continue a saved game")
    p.add_argument("--no-color", action="store_true", help="no colour (letters only)")
    p.add_argument(
        "--deck",
        metavar="FILE",
        help=_DECK_HELP,
    )
    _add_rule_options(p)
    p.set_defaults(func=cmd_play)

    p = sub.add_parser(
        "bench",
        help="measure the engine's speed",
        description="Move generation, random games and playouts per second, "
        "for Squared Away and Splitzkies (One Good Match), on one core. With the "
        "defaults it takes about half a minute; each step is announced on standard "
        "error as it starts, the figures go to standard output.",
    )
    p.add_argument(
        "--positions", type=int, default=400, help="positions at ply 30 to time (default 400)"
    )
    p.add_argument(
        "--games", type=int, default=200, help="random full games per layout (default 200)"
    )
    p.add_argument(
        "--playouts", type=int, default=400, help="sampling playouts per layout (default 400)"
    )
    p.add_argument("--seed", type=int, default=1, help="first seed, 0 to 2**64-1 (default 1)")
    p.add_argument(
        "--compare",
        action="store_true",
        help="also MCTS iterations/s, then all again on the pure-Python core in a "
        "child process, with the compiled / pure ratios",
    )
    p.set_defaults(func=cmd_bench)
    from ..render.commands import add_commands

    add_commands(sub, _Parser)
    from ..analyse_cmd import add_analyse  # the ai helper's command (ai/analysis.py)

    add_analyse(sub)
    from ..server.admin_cmd import add_admin  # moderation (server/moderation/service.py)

    add_admin(sub, _Parser)
    from ..botclient.command import add_bot  # the Bot API's client (docs/bots.md)

    add_bot(sub)
    _help_command(sub, parser)
    return parser


def _agents_help() -> str:
    from ..ai import catalogue

    return "; ".join(f"{a.name}: {a.help.rstrip('.')}" for a in catalogue()).replace("%", "%%")


def _help_command(sub: Any, parser: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "help",
        help="show the help of the donutbox command or of one command",
        description="Show the help of donutbox, or of COMMAND (the same as "
        "'donutbox COMMAND --help').",
    )
    p.add_argument("topic", nargs="?", metavar="COMMAND", help="the command to explain")

    def cmd_help(args: argparse.Namespace) -> int:
        if args.topic is None:
            parser.print_help()
            return 0
        if args.topic not in sub.choices:
            commands = [c for c in sub.choices if c != "help"]
            guess = _closest(args.topic, commands, "'{}'")
            raise UsageError(
                f"no command {args.topic!r}; the commands are {', '.join(commands)}{guess}"
            )
        sub.choices[args.topic].print_help()
        return 0

    p.set_defaults(func=cmd_help)
