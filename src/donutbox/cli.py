"""The ``donutbox`` command.

Every command has ``--help``.  Bad input never shows a traceback: a record
that cannot be read gives a one-line reason on standard error and exit
status 2; an illegal move in a record gives status 1 (RULES.md section 9).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .core import DonutboxError, Game, IllegalMove, RecordError, Rules, replay
from .core.cards import check_face
from .core.record import setup
from .core.rules import LAYOUTS, MATCHES
from .summary import replay_summary, sorted_moves
from .usage import UsageError

#: Perft beyond this would run for hours (depth 4 is ~10^8 paths midgame).
MAX_PERFT_DEPTH = 6
#: Records larger than this are refused unread (a real record is a few KiB).
MAX_RECORD_BYTES = 4 * 1024 * 1024


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _reject_constant(name: str) -> Any:
    raise RecordError(f"not valid JSON: {name} is not a number in JSON")


def read_record(source: str) -> dict[str, Any]:
    """Read a record from a path or ``-`` (standard input); RecordError if unreadable."""
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_RECORD_BYTES + 1)
        else:
            path = Path(source)
            if path.is_dir():
                raise RecordError(f"cannot read {source}: it is a directory")
            with path.open("rb") as fh:
                data = fh.read(MAX_RECORD_BYTES + 1)
    except OSError as err:
        raise RecordError(f"cannot read {source}: {err.strerror or err}") from None
    if len(data) > MAX_RECORD_BYTES:
        raise RecordError(f"record is larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise RecordError(f"record is not UTF-8 (byte {err.start})") from None
    if not text.strip():
        raise RecordError("empty input: expected a JSON game record")
    try:
        record = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        raise RecordError(
            f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"
        ) from None
    except RecursionError:
        raise RecordError("not valid JSON: nested too deeply") from None
    except ValueError:  # Python refuses integers of more than 4,300 digits
        raise RecordError("not valid JSON: a number has too many digits") from None
    if not isinstance(record, dict):
        raise RecordError("a record must be a JSON object")
    return record


def _rules_from(args: argparse.Namespace) -> Rules:
    return Rules(match=args.match, layout=args.layout, closers=args.closers)


def _add_rule_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--match",
        choices=MATCHES,
        default="one-good-match",
        help="matching rule (default: one-good-match)",
    )
    p.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="squared-away",
        help="layout rule (default: squared-away)",
    )
    p.add_argument("--closers", action="store_true", help="Coffee's For Closers: the sealer scores")


def _dump(obj: object) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False)


# -- commands ------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    record = read_record(args.record)
    game, error = replay(record)
    summary = replay_summary(game, error)
    if args.json:
        print(_dump(summary))
    else:
        from .render.text import game_text

        _console().print(game_text(game))
        if error:
            print(one_line(f"move {error[0]} ({error[1]}) is illegal: {error[2]}"), file=sys.stderr)
    return 1 if error else 0


def cmd_moves(args: argparse.Namespace) -> int:
    record = read_record(args.record)
    cards = [_face_arg(f) for f in (args.card or [])]
    game, error = replay(record)
    if cards and not game.free:
        raise UsageError(
            "donutbox moves: --card is only for a free game (a dealt game uses the tray)"
        )
    moves = [str(m) for m in sorted_moves(game.legal_moves(cards=cards))]
    if args.json:
        print(_dump({"moves": moves}))
    else:
        print("\n".join(moves))
    if error:
        print(one_line(f"move {error[0]} ({error[1]}) is illegal: {error[2]}"), file=sys.stderr)
        return 1
    return 0


def cmd_perft(args: argparse.Namespace) -> int:
    from .core import divide, perft

    record = read_record(args.record)
    if not 0 <= args.depth <= MAX_PERFT_DEPTH:
        raise UsageError(f"donutbox perft: --depth must be from 0 to {MAX_PERFT_DEPTH}")
    game, error = replay(record)
    if error:
        print(one_line(f"move {error[0]} ({error[1]}) is illegal: {error[2]}"), file=sys.stderr)
        return 1
    try:  # perft itself refuses a free game, with the reason to print
        split = divide(game, args.depth) if args.divide and args.depth >= 1 else None
        nodes = perft(game, args.depth) if split is None else sum(split.values())
    except ValueError as err:
        raise RecordError(str(err)) from None
    if split is not None:
        order = [str(m) for m in sorted_moves(game.legal_moves())]
        counts = {m: split[m] for m in order}
        if args.json:
            print(_dump({"depth": args.depth, "nodes": nodes, "divide": counts}))
        else:
            for move, n in counts.items():
                print(f"{move} {n}")
            print(f"total {nodes}")
        return 0
    print(_dump({"depth": args.depth, "nodes": nodes}) if args.json else nodes)
    return 0


def _face_arg(text: str) -> str:
    try:
        return check_face(text)
    except DonutboxError as err:
        raise UsageError(f"--card: {err}") from None


def cmd_new(args: argparse.Namespace) -> int:
    if args.names:
        names: Sequence[str] | int = [n.strip() for n in args.names.split(",")]
        if any(not n for n in names):
            raise UsageError("donutbox new: --names must be non-empty names separated by commas")
    else:
        names = args.players
    try:
        game = Game.new(_rules_from(args), names, args.seed)
    except DonutboxError:
        raise
    except ValueError as err:
        raise UsageError(f"donutbox new: {err}") from None
    text = _dump(game.to_record()) + "\n"
    if args.out:
        _write_new(Path(args.out), text)
        print(f"wrote {args.out} (seed {game.seed})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _write_new(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {err.strerror or err}") from None


def cmd_show(args: argparse.Namespace) -> int:
    from .render.text import LEGEND, game_text

    record = read_record(args.record)
    game, moves, end = setup(record)
    upto = len(moves) if args.ply is None else args.ply
    if not 0 <= upto <= len(moves):
        raise UsageError(f"donutbox show: --ply must be from 0 to {len(moves)}")
    status = 0
    for ply, move in enumerate(moves[:upto]):
        try:
            game.play(move)
        except IllegalMove as err:
            print(
                f"move {ply} ({move}) is illegal: {err}; showing the position before it",
                file=sys.stderr,
            )
            status = 1
            break
    else:
        if end and upto == len(moves):
            game.end()
    console = _console(no_color=args.no_color)
    console.print(game_text(game, reveal=args.reveal))
    if not args.no_legend:
        console.print(LEGEND, style="dim")
    return status


def cmd_bench(args: argparse.Namespace) -> int:
    from .bench import run_bench

    for name in ("positions", "games", "playouts"):
        if not 1 <= getattr(args, name) <= 1_000_000:
            raise UsageError(f"donutbox bench: --{name} must be from 1 to 1000000")
    if not 0 <= args.seed < 2**63:
        raise UsageError("donutbox bench: --seed must be from 0 to 2**63-1")
    run_bench(
        positions=args.positions,
        games=args.games,
        playouts=args.playouts,
        seed=args.seed,
        out=print,
    )
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from .ai import agent_names
    from .play import Session

    known = agent_names()
    if args.resume:
        record = read_record(args.resume)
        game = Game.from_record(record)
        seats = record.get("agents")
        if not (
            isinstance(seats, list)
            and len(seats) == game.players
            and all(s == "human" or s in known for s in seats)
        ):
            seats = ["human"] + [args.vs] * (game.players - 1)
    else:
        if args.vs != "hotseat" and args.vs not in known:
            raise UsageError(f"donutbox play: --vs must be hotseat or one of {', '.join(known)}")
        try:
            game = Game.new(_rules_from(args), args.players, args.seed)
        except ValueError as err:
            raise UsageError(f"donutbox play: {err}") from None
        others = "human" if args.vs == "hotseat" else args.vs
        seats = ["human"] + [others] * (args.players - 1)
        if args.second and args.vs != "hotseat":
            seats = seats[1:] + seats[:1]
    if args.seconds <= 0 or args.seconds > 600:
        raise UsageError("donutbox play: --seconds must be more than 0 and at most 600")
    session = Session(
        game, list(seats), args.seconds, _console(no_color=args.no_color), seed=game.seed or 0
    )
    return session.run()


def _agent_list(text: str, players_min: int = 2) -> list[str]:
    from .ai import agent_names

    names = [a.strip() for a in text.split(",") if a.strip()]
    known = agent_names()
    if not 2 <= len(names) <= 4:
        raise UsageError("--players must name 2 to 4 agents, e.g. --players mcts,heuristic")
    for a in names:
        if a not in known:
            raise UsageError(f"unknown agent {a!r}; known: {', '.join(known)}")
    return names


def _progress_runner(total: int, label: str) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=_console_err(),
        transient=True,
    )
    task = progress.add_task(label, total=total)
    return progress, lambda done, _total: progress.update(task, completed=done)


def _console_err() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def _agent_options(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    # The lab measures MCTS's time budget in CPU seconds by default, so that
    # results do not depend on the machine's load (docs/ai.md).
    search: dict[str, Any] = {"clock": args.clock}
    if args.seconds is not None:
        if not 0 < args.seconds <= 600:
            raise UsageError("--seconds must be more than 0 and at most 600")
        search = {"seconds": args.seconds, "clock": args.clock}
    if args.iterations is not None:
        if not 0 < args.iterations <= 10_000_000:
            raise UsageError("--iterations must be from 1 to 10000000")
        search = {"iterations": args.iterations, "clock": args.clock}
    return {"mcts": dict(search), "hard": dict(search)}


def _budget_text(args: argparse.Namespace, agents: list[str]) -> str:
    """The search options as typed, when a searching agent plays (for reports)."""
    if not {"mcts", "hard"} & set(agents):
        return ""
    if args.iterations is not None:
        return f"--iterations {args.iterations}"
    if args.seconds is not None:
        return f"--seconds {args.seconds:g} --clock {args.clock}"
    return ""


def _check_counts(args: argparse.Namespace) -> None:
    if not 1 <= args.games <= 1_000_000:
        raise UsageError("--games must be from 1 to 1000000")
    if not 1 <= args.jobs <= 64:
        raise UsageError("--jobs must be from 1 to 64")
    if not 0 <= args.seed < 2**63:
        raise UsageError("--seed must be from 0 to 2**63-1")


def _out_folder(out: str | None) -> None:
    """Make the --out folder before any game is played (a long run must not
    fail at its end for want of a place to write)."""
    if out is None:
        return
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageError(f"--out {out}: it is a file, and --out names a folder") from None
    except OSError as err:
        raise UsageError(f"--out {out}: {err.strerror or err}") from None


def cmd_sim(args: argparse.Namespace) -> int:
    from .lab.sim import result_line, run_specs, specs, summarize, summary_lines, write_outputs

    agents = _agent_list(args.players)
    _check_counts(args)
    todo = specs(agents, args.games, _rules_from(args), args.seed, _agent_options(args))
    progress, update = _progress_runner(len(todo), "games")
    on_result = None
    if args.out:
        # Each finished game is appended at once, so that a long run that is
        # stopped still leaves its results.
        _out_folder(args.out)
        log = (Path(args.out) / "progress.jsonl").open("w", encoding="utf-8")

        def on_result(index: int, result: Any) -> None:
            log.write(result_line(index, result) + "\n")
            log.flush()

    with progress:
        results = run_specs(todo, args.jobs, update, on_result)
    if args.out:
        log.close()
    summary = summarize(results)
    for line in summary_lines(summary):
        print(line)
    if args.out:
        for path in write_outputs(results, summary, Path(args.out), " vs ".join(agents)):
            print(f"wrote {path}", file=sys.stderr)
    return 0


def cmd_balance(args: argparse.Namespace) -> int:
    from .lab.balance import run_balance, write_report

    agents = _agent_list(args.players)
    _check_counts(args)
    _out_folder(args.out)
    progress, update = _progress_runner(args.games * 8, "games")
    with progress:
        grid = run_balance(agents, args.games, args.seed, args.jobs, _agent_options(args), update)
    path = write_report(grid, agents, Path(args.out), args.seed, _budget_text(args, agents))
    print(f"wrote {path}")
    return 0


def _add_sim_options(p: argparse.ArgumentParser, games: int, out: str | None) -> None:
    p.add_argument(
        "--players",
        default="heuristic,heuristic",
        help="agents in seat order, comma-separated (default heuristic,heuristic)",
    )
    p.add_argument("--games", type=int, default=games, help=f"games to play (default {games})")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--seed", type=int, default=1, help="first deal seed (default 1)")
    p.add_argument("--seconds", type=float, help="mcts thinking time per move")
    p.add_argument("--iterations", type=int, help="mcts iterations per move (instead of time)")
    p.add_argument(
        "--clock",
        choices=["cpu", "wall"],
        default="cpu",
        help="how --seconds is measured: cpu (default; CPU time of the searching "
        "process, independent of the machine's load) or wall (elapsed time)",
    )
    p.add_argument(
        "--out",
        default=out,
        help="folder for records, CSV and plots" + (f" (default {out})" if out else ""),
    )


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .server import limits
    from .server.app import create_app

    if not 0 < args.port < 65536:
        raise UsageError("donutbox serve: --port must be from 1 to 65535")
    if not 1 <= args.workers <= 16:
        raise UsageError("donutbox serve: --workers must be from 1 to 16")
    try:
        app = create_app(args.db, workers=args.workers)
    except Exception as err:  # a bad database URL or file: say so in one line
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UsageError(f"donutbox serve: cannot use the database: {reason}") from None
    url = f"http://{args.host}:{args.port}/"
    print(f"donutbox is serving at {url} (API docs at {url}docs); Ctrl-C stops it", flush=True)
    if args.open:
        import threading
        import webbrowser

        threading.Timer(1.0, lambda: webbrowser.open(url)).start()
    # ws_max_size: the transport refuses huge frames before the app reads
    # them (the app itself refuses messages over 2,048 characters).
    # No per-message deflate: a state is about 20 KB, small for any network,
    # and compressing every state for every reader was a tenth of the
    # server's time per move (docs/performance.md, online play load).
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        ws_max_size=65536,
        ws_per_message_deflate=False,
        **limits.uvicorn_options(),  # header deadline, per-address cap (issue 12)
    )
    return 0


def _console(no_color: bool = False) -> Any:
    from rich.console import Console

    return Console(
        no_color=no_color or bool(os.environ.get("NO_COLOR")), highlight=False, soft_wrap=True
    )


# -- the parser ----------------------------------------------------------------


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
    p.add_argument("--json", action="store_true", help="print the result as JSON (RULES.md 9)")
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
    group.add_argument("--players", type=int, default=2, help="number of players, 2 to 4")
    group.add_argument("--names", help="player names separated by commas, in turn order")
    p.add_argument("--seed", type=int, help="shuffle seed, 0 to 2**64-1 (default: random)")
    _add_rule_options(p)
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
    p.add_argument("--open", action="store_true", help="open the browser")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "sim",
        help="play many games between agents and report",
        description="Paired games between agents (every seat rotation per deal), in "
        "parallel; win rates with 95% intervals, scores, points by source, lengths.",
    )
    _add_sim_options(p, 100, None)
    _add_rule_options(p)
    p.set_defaults(func=cmd_sim)

    p = sub.add_parser(
        "balance",
        help="run every rule combination and write a report",
        description="All eight rule combinations with the chosen agents; writes a "
        "Markdown report with plots for the game's designer.",
    )
    _add_sim_options(p, 50, "balance-report")
    p.set_defaults(func=cmd_balance)

    p = sub.add_parser(
        "play",
        help="play in the terminal against an agent or hotseat",
        description="Play a game in the terminal. Type 'help' at the prompt.",
    )
    p.add_argument(
        "--vs",
        default="heuristic",
        help="opponent: hotseat, an agent (random, greedy, heuristic, mcts) or a "
        "level (easy, medium, hard); default heuristic",
    )
    p.add_argument("--seconds", type=float, default=1.0, help="thinking time of mcts and hint")
    p.add_argument("--players", type=int, default=2, help="2 to 4 players")
    p.add_argument("--seed", type=int, help="deal seed (default: random)")
    p.add_argument("--second", action="store_true", help="let the opponent start")
    p.add_argument("--resume", metavar="FILE", help="continue a saved game")
    p.add_argument("--no-color", action="store_true", help="no colour (letters only)")
    _add_rule_options(p)
    p.set_defaults(func=cmd_play)

    p = sub.add_parser(
        "bench",
        help="measure the engine's speed",
        description="Move generation, random games and playouts per second, "
        "for Squared Away and Splitzkies (One Good Match), on one core.",
    )
    p.add_argument("--positions", type=int, default=400, help="positions at ply 30 to time")
    p.add_argument("--games", type=int, default=200, help="random full games per layout")
    p.add_argument("--playouts", type=int, default=400, help="sampling playouts per layout")
    p.add_argument("--seed", type=int, default=1, help="first seed")
    p.set_defaults(func=cmd_bench)
    from .render.commands import add_commands

    add_commands(sub, _Parser)
    return parser


def one_line(text: str) -> str:
    """A message as one printable line: control characters escaped, and text
    that cannot be printed (lone surrogates) replaced."""
    out = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return out.encode("utf-8", "backslashreplace").decode("utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args))
    except UsageError as err:
        print(one_line(str(err)), file=sys.stderr)
        return 2
    except DonutboxError as err:
        print(one_line(f"donutbox: {err}"), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # no traceback ever reaches a user
        if os.environ.get("DONUTBOX_DEBUG"):
            raise
        print(
            one_line(
                f"donutbox: internal error ({type(err).__name__}: {err}); "
                "set DONUTBOX_DEBUG=1 for details"
            ),
            file=sys.stderr,
        )
        return 3


if __name__ == "__main__":
    sys.exit(main())
