"""The ``donutbox`` command.

Every command has ``--help``.  Bad input never shows a traceback: a record
that cannot be read gives a one-line reason on standard error and exit
status 2; an illegal move in a record gives status 1 (docs/notation.md, "The
command line"; docs/spec.md, "Command-line contract").
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from . import __version__
from .core import DonutboxError, Game, RecordError, Rules
from .core import replay_partial as replay_to_first_illegal
from .core.cards import check_face
from .core.record import dump
from .core.rules import RULE_OPTIONS
from .summary import replay_summary, sorted_moves
from .usage import (
    MAX_RECORD_BYTES,
    UsageError,
    check_seed,
    illegal_text,
    one_line,
    plural,
    position,
    printable,
    read_record,
)

if TYPE_CHECKING:
    from .lab.match import GameResult
    from .lab.sim import GameSpec

__all__ = ["MAX_RECORD_BYTES", "build_parser", "main", "one_line", "read_record"]

#: Perft beyond this would run for hours (depth 4 is ~10^8 paths midgame).
MAX_PERFT_DEPTH = 6


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        command = self.prog.partition(" ")[2]
        hint = f"donutbox help {command}" if command else "donutbox help"
        raise UsageError(f"{message}{self._did_you_mean(message)} (see '{hint}')", prog=self.prog)

    def _did_you_mean(self, message: str) -> str:
        """``; did you mean 'serve'?`` for a misspelled command or choice,
        ``; did you mean --players?`` for a misspelled option (difflib's
        closest match), else nothing."""
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            known = re.findall(r"'([^']*)'", choice.group(2))
            return _closest(choice.group(1), known, "'{}'")
        unknown = re.match(r"unrecognized arguments: (-[^\s=]+)", message)
        if unknown:
            options = [o for action in self._actions for o in action.option_strings]
            return _closest(unknown.group(1), options, "{}")
        return ""


def _closest(word: str, known: Sequence[str], shown: str) -> str:
    import difflib

    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"; did you mean {shown.format(close[0])}?" if close else ""


def _rules_from(args: argparse.Namespace) -> Rules:
    return Rules.from_dict({o.name: getattr(args, o.name) for o in RULE_OPTIONS}, "the rules")


def _add_rule_options(p: argparse.ArgumentParser) -> None:
    """One option per rule of ``RULE_OPTIONS`` (the core's one schema of the
    variants): its choices, default and help come from there."""

    def esc(text: str) -> str:  # argparse %-formats help texts
        return text.replace("%", "%%")

    for option in RULE_OPTIONS:
        flag = "--" + option.name.replace("_", "-")
        if option.kind == "flag":
            p.add_argument(
                flag,
                dest=option.name,
                action="store_true",
                help=esc(f"{option.label}. {option.help} (default: off)"),
            )
            continue
        values = " ".join(f"{c.value} ({c.label}): {c.help}" for c in option.choices)
        p.add_argument(
            flag,
            dest=option.name,
            choices=option.values,
            default=option.default,
            help=esc(f"{option.label}. {option.help} {values}"),
        )


_DECK_HELP = (
    "deck composition file (JSON, or TOML named *.toml; docs/deck-lab.md); "
    "default: the standard deck"
)


def _deck_arg(path: str | None) -> Any:
    """``--deck FILE``: a deck composition (JSON, or TOML by its ``.toml``
    name; docs/deck-lab.md), or None without one.  A file that cannot be
    read or used is one line naming the field."""
    if path is None:
        return None
    from .core.decks import MAX_TEXT, DeckError, parse_text

    file = Path(path)
    try:
        with file.open("rb") as fh:
            raw = fh.read(MAX_TEXT * 4 + 1)
    except OSError as err:
        raise UsageError(f"--deck {printable(path)}: {err.strerror or err}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--deck {printable(path)}: not UTF-8 text") from None
    fmt = "toml" if file.suffix.lower() == ".toml" else "json"
    try:
        return parse_text(text, fmt, default_name=file.stem[:60] or "custom")
    except DeckError as err:
        raise UsageError(f"--deck {printable(path)}: {err}") from None


def _new_game(rules: Rules, players: Sequence[str] | int, seed: int | None, deck: Any) -> Game:
    """A dealt game: standard decks, or the composition ``deck``."""
    if deck is None:
        return Game.new(rules, players, seed)
    return deck.new_game(rules, players, seed)  # type: ignore[no-any-return]


def _dump(obj: object) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False)


# -- commands ------------------------------------------------------------------


def warn(command: str, text: str) -> None:
    """A problem that does not stop the command (an illegal move in a
    record, a warning), on standard error in the one style of every error:
    ``donutbox COMMAND: text``, one line."""
    print(one_line(f"donutbox {command}: {text}"), file=sys.stderr)


def _warn_illegal(command: str, error: tuple[int, str, str] | None, after: str = "") -> None:
    if error:
        warn(command, illegal_text(*error) + after)


def cmd_replay(args: argparse.Namespace) -> int:
    record = read_record(args.record)
    game, error = replay_to_first_illegal(record)
    summary = replay_summary(game, error)
    if args.json:
        print(_dump(summary))
    else:
        from .render.text import game_text

        _console().print(game_text(game))
        _warn_illegal("replay", error, "; showing the position before it")
    return 1 if error else 0


def cmd_moves(args: argparse.Namespace) -> int:
    record = read_record(args.record)
    cards = [_face_arg(f) for f in (args.card or [])]
    game, error = replay_to_first_illegal(record)
    if cards and not game.free:
        raise UsageError("--card is only for a free game (a dealt game uses the tray)")
    moves = [str(m) for m in sorted_moves(game.legal_moves(cards=cards))]
    if args.json:
        print(_dump({"moves": moves}))
    else:
        print("\n".join(moves))
    _warn_illegal("moves", error, "; listing the moves of the position before it")
    return 1 if error else 0


def cmd_perft(args: argparse.Namespace) -> int:
    from .core import divide, perft

    record = read_record(args.record)
    if not 0 <= args.depth <= MAX_PERFT_DEPTH:
        raise UsageError(f"--depth must be from 0 to {MAX_PERFT_DEPTH}")
    game, error = replay_to_first_illegal(record)
    if error:
        _warn_illegal("perft", error, "; nothing counted")
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


def _names_arg(text: str) -> list[str]:
    """``--names``: non-empty, printable and different names (two players
    called "Ann" would make records, logs and results ambiguous)."""
    names = [n.strip() for n in text.split(",")]
    if any(not n for n in names):
        raise UsageError("--names must be non-empty names separated by commas")
    for n in names:
        if not all(ch.isprintable() for ch in n):
            raise UsageError(
                f"--names: '{printable(n)}' holds a control character; names must be printable"
            )
    seen: dict[str, str] = {}
    for n in names:
        first = seen.get(n.casefold())
        if first == n:
            raise UsageError(
                f"--names: two players are called '{n}'; give each player a different name"
            )
        if first is not None:
            raise UsageError(
                f"--names: '{first}' and '{n}' differ only in case; "
                "give each player a different name"
            )
        seen[n.casefold()] = n
    return names


def cmd_new(args: argparse.Namespace) -> int:
    names: Sequence[str] | int = _names_arg(args.names) if args.names else args.players
    check_seed(args.seed)
    deck = _deck_arg(args.deck)
    try:
        game = _new_game(_rules_from(args), names, args.seed, deck)
    except DonutboxError:
        raise
    except ValueError as err:
        raise UsageError(str(err)) from None
    text = _dump(dump(game)) + "\n"
    if args.out:
        _write_new(Path(args.out), text)
        print(f"wrote {printable(args.out)} (seed {game.seed})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _write_new(path: Path, text: str) -> None:
    if path.is_dir():
        raise UsageError(f"--out {path}: it is a folder; name a file")
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
    game, problem = position(record, args.ply)
    if problem:
        warn("show", problem + "; showing the position before it")
    console = _console(no_color=args.no_color)
    console.print(game_text(game, reveal=args.reveal))
    if not args.no_legend:
        console.print(LEGEND, style="dim")
    return 1 if problem else 0


def cmd_bench(args: argparse.Namespace) -> int:
    from .bench import run_bench, run_compare

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


def cmd_play(args: argparse.Namespace) -> int:
    from .ai import agent_names
    from .play import Session

    known = agent_names()
    if args.seconds <= 0 or args.seconds > 600:
        raise UsageError("--seconds must be more than 0 and at most 600")
    if args.vs != "hotseat" and args.vs not in known:
        guess = _closest(args.vs, ["hotseat", *known], "'{}'")
        raise UsageError(f"--vs must be hotseat or one of {', '.join(known)}{guess}")
    others = "human" if args.vs == "hotseat" else args.vs
    if args.resume and args.deck:
        raise UsageError("--deck: a resumed game keeps the decks of its record; leave out --deck")
    if args.resume:
        try:
            record = read_record(args.resume)
            game, problem = position(record)
        except RecordError as err:  # which file could not be resumed, and why
            raise UsageError(f"--resume {args.resume}: {err}") from None
        if problem:  # a game cannot go on from a record that breaks the rules
            warn("play", f"--resume {args.resume}: {problem}; nothing to resume")
            return 1
        seats = record.get("agents")
        if not (
            isinstance(seats, list)
            and len(seats) == game.players
            and all(s == "human" or s in known for s in seats)
        ):
            seats = ["human"] + [others] * (game.players - 1)
    else:
        check_seed(args.seed)
        deck = _deck_arg(args.deck)
        if not 2 <= args.players <= 4:
            raise UsageError("--players must be from 2 to 4")
        seats = ["human"] + [others] * (args.players - 1)
        if args.second and args.vs != "hotseat":
            seats = seats[1:] + seats[:1]
        try:
            game = _new_game(_rules_from(args), _seat_names(seats), args.seed, deck)
        except DonutboxError:
            raise
        except ValueError as err:
            raise UsageError(str(err)) from None
    session = Session(
        game, list(seats), args.seconds, _console(no_color=args.no_color), seed=game.seed or 0
    )
    return session.run()


def _seat_names(seats: Sequence[str]) -> list[str]:
    """The players' names in a new terminal game: the one human is "You",
    hotseat humans are "Player N", and an AI seat is named by its agent or
    level ("hard (AI)"; "hard (AI 1)", "hard (AI 2)" when there are two)."""
    humans = seats.count("human")
    names = []
    for i, seat in enumerate(seats):
        if seat == "human":
            names.append("You" if humans == 1 else f"Player {i + 1}")
            continue
        alike = [j for j, s in enumerate(seats) if s == seat]
        names.append(f"{seat} (AI)" if len(alike) == 1 else f"{seat} (AI {alike.index(i) + 1})")
    return names


def _agent_list(text: str) -> list[str]:
    from .ai import agent_info

    names = [a.strip() for a in text.split(",") if a.strip()]
    if not 2 <= len(names) <= 4:
        raise UsageError("--players must name 2 to 4 agents, e.g. --players mcts,heuristic")
    for a in names:
        try:
            agent_info(a)
        except DonutboxError as err:
            raise UsageError(f"--players: {err}") from None
    return names


def _progress_runner(total: int, label: str) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    console = _console_err()
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("left"),  # the estimate says what it is: "0:01:20 left"
        console=console,
        transient=True,
        disable=not console.is_terminal,  # no bar in a log file or a pipe
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
    from .ai import catalogue

    # Every agent that takes a time budget (the catalogue says which) gets it.
    return {a.name: dict(search) for a in catalogue() if a.timed}


def _budget_text(args: argparse.Namespace, agents: list[str]) -> str:
    """The search options as typed, when a searching agent plays (for reports)."""
    from .ai import agent_info

    if not any(agent_info(a).timed for a in agents):
        return ""
    if args.iterations is not None:
        return f"--iterations {args.iterations}"
    if args.seconds is not None:
        return f"--seconds {args.seconds:g} --clock {args.clock}"
    return ""


def _check_counts(args: argparse.Namespace) -> None:
    if not 1 <= args.games <= 1_000_000:
        raise UsageError("--games must be from 1 to 1000000")
    check_seed(args.seed, args.games)
    if args.jobs is not None and args.cluster is not None:
        raise UsageError("--jobs and --cluster: give one (the cluster's workers play the games)")
    if args.jobs is None:
        args.jobs = 1
    if not 1 <= args.jobs <= 64:
        raise UsageError("--jobs must be from 1 to 64")
    if not 0 < args.cluster_timeout <= 3600:
        raise UsageError("--cluster-timeout must be more than 0 and at most 3600 seconds")


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


def _progress_log(out: str | None) -> tuple[Any, Any]:
    """``progress.jsonl`` in ``out``, one line per game as it finishes (so
    that a long run that is stopped still leaves its results), and the
    callback that writes it; (None, None) without ``--out``."""
    from .lab.sim import result_line

    if out is None:
        return None, None
    log = (Path(out) / "progress.jsonl").open("w", encoding="utf-8")

    def on_result(index: int, result: Any) -> None:
        log.write(result_line(index, result) + "\n")
        log.flush()

    return log, on_result


def _open_cluster(
    command: str, args: argparse.Namespace, options: dict[str, dict[str, Any]], agents: list[str]
) -> Any:
    """The Dask cluster of ``--cluster`` (started or connected to, and
    checked), or a null context without it."""
    import contextlib

    if args.cluster is None:
        return contextlib.nullcontext(None)
    from .ai import agent_info
    from .lab.cluster import check_budget, open_cluster, parse_target

    target = parse_target(args.cluster)  # a ClusterError is a one-line DonutboxError
    cluster = open_cluster(target, args.cluster_timeout)
    try:
        timed = any(agent_info(a).timed and "iterations" not in options.get(a, {}) for a in agents)
        check_budget(cluster, timed)
        warn(command, f"playing on {cluster.describe()}")
    except BaseException:
        cluster.close()
        raise
    return cluster


def _interrupted(command: str, stopped: Any, out: str | None) -> int:
    """Ctrl-C: keep the games that finished, say so in one line, exit 130."""
    from .lab.sim import write_games

    done, total = len(stopped.results), stopped.total
    if out is None:
        where = "none kept (give --out DIR to keep finished games)"
    else:
        write_games(list(stopped.results.items()), Path(out))
        where = f"kept in {out}"
    warn(command, f"interrupted: {done} of {plural(total, 'game')} finished, {where}")
    return 130


def _warn_small_sample(command: str, games: int, *what: str) -> None:
    """balance's small-sample warning (``lab/balance.py``), for any run."""
    from .lab.balance import small_sample_warning

    warning = small_sample_warning(games, *what)
    if warning:
        warn(command, f"warning: {warning}")


def cmd_sim(args: argparse.Namespace) -> int:
    from .lab.sim import Interrupted, run_specs, specs, summarize, summary_lines, write_outputs

    agents = _agent_list(args.players)
    _check_counts(args)
    deck = _deck_arg(args.deck)
    options = _agent_options(args)
    todo = specs(agents, args.games, _rules_from(args), args.seed, options, deck)
    _out_folder(args.out)
    log = None
    try:
        with _open_cluster("sim", args, options, agents) as cluster:
            # Once the games can start: a command line that cannot run
            # says only why (one line).
            _warn_small_sample("sim", args.games, "", "the win rates")
            progress, update = _progress_runner(len(todo), "games")
            log, on_result = _progress_log(args.out)
            with progress:
                results = run_specs(todo, args.jobs, update, on_result, cluster)
    except Interrupted as stopped:
        return _interrupted("sim", stopped, args.out)
    finally:
        if log is not None:
            log.close()
    summary = summarize(results)
    for line in summary_lines(summary):
        print(line)
    if args.out:
        for path in write_outputs(results, summary, Path(args.out), " vs ".join(agents)):
            print(f"wrote {printable(str(path))}", file=sys.stderr)
    return 0


def _ladder_agents(text: str, least: int = 2, flag: str = "--agents") -> list[str]:
    from .ai import agent_info
    from .ai.catalogue import OPTIONAL, split_budget

    names = [a.strip() for a in text.split(",") if a.strip()]
    if not least <= len(names) <= 16:
        raise UsageError(
            f"{flag} must name {least} to 16 agents, e.g. {flag} random,greedy,mcts:200"
        )
    if len(set(names)) != len(names):
        raise UsageError(f"{flag}: each agent once")
    for a in names:
        if a in OPTIONAL:
            continue
        try:
            split_budget(a) if ":" in a else agent_info(a)
        except DonutboxError as err:
            raise UsageError(f"{flag}: {err}") from None
    return names


def _extension(
    args: argparse.Namespace, rules: Rules, options: dict[str, dict[str, Any]]
) -> tuple[list[str], list[GameResult], list[GameSpec]]:
    """``tournament --extend DIR``: the earlier ladder's agents and games,
    and the games that place the new agents on it (lab/tournament.py)."""
    from .lab.tournament import LadderFileError, agents_of, extension, read_games

    try:
        earlier = read_games(Path(args.extend) / "games.csv")
    except LadderFileError as err:
        raise UsageError(f"--extend: {err}") from None
    played = {r.rules.key() for r in earlier}
    if played != {rules.key()}:
        raise UsageError(
            f"--extend: that ladder was played with rules {', '.join(sorted(played))}, "
            f"not {rules.key()}: give the same rule options"
        )
    old = agents_of(earlier)
    new = [a for a in _ladder_agents(args.agents, 1) if a not in old]
    if not new:
        raise UsageError("--agents: every agent named is on that ladder already")
    against = None
    if args.against is not None:
        against = _ladder_agents(args.against, 1, "--against")
        stray = [a for a in against if a not in old]
        if stray:
            raise UsageError(f"--against: {', '.join(stray)} not on that ladder ({', '.join(old)})")
    todo = extension(old, new, args.games, rules, args.seed, options, against)
    return old + new, earlier, todo


def cmd_tournament(args: argparse.Namespace) -> int:
    from .ai.catalogue import OPTIONAL
    from .lab.sim import Interrupted, run_specs, write_games
    from .lab.tournament import ladder, ladder_lines, pair_table, round_robin

    _check_counts(args)
    options = _agent_options(args)
    rules = _rules_from(args)
    earlier: list[GameResult] = []
    if args.extend is None:
        if args.against is not None:
            raise UsageError("--against: only with --extend")
        agents = _ladder_agents(args.agents)
        todo = round_robin(agents, args.games, rules, args.seed, options)
    else:
        agents, earlier, todo = _extension(args, rules, options)
    _out_folder(args.out)
    listed = [a.split(":")[0] for a in agents if a not in OPTIONAL]
    log = None
    try:
        with _open_cluster("tournament", args, options, listed) as cluster:
            _warn_small_sample("tournament", args.games, "", "the ratings")
            progress, update = _progress_runner(len(todo), "games")
            log, on_result = _progress_log(args.out)
            with progress:
                results = run_specs(todo, args.jobs, update, on_result, cluster)
    except Interrupted as stopped:
        return _interrupted("tournament", stopped, args.out)
    finally:
        if log is not None:
            log.close()
    results = earlier + results
    rows = ladder(results, agents)
    lines = list(ladder_lines(rows, pair_table(results, agents)))
    for line in lines:
        print(line)
    if args.out:
        out = Path(args.out)
        written = write_games(list(enumerate(results)), out)
        path = out / "ladder.md"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(path)
        path = out / "ladder.json"
        path.write_text(json.dumps([r.__dict__ for r in rows], indent=1) + "\n", encoding="utf-8")
        written.append(path)
        for path in written:
            print(f"wrote {printable(str(path))}", file=sys.stderr)
    return 0


def cmd_dataset(args: argparse.Namespace) -> int:
    """``donutbox dataset export``: lab records and (with --include-server)
    the server's rated games, as rows without names (envs/dataset.py)."""
    try:
        from .envs import dataset
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


def cmd_balance(args: argparse.Namespace) -> int:
    if args.sweep:
        return _cmd_sweep(args)
    if args.skill:
        raise UsageError("--skill goes with --sweep")
    from .lab.balance import run_balance, write_report
    from .lab.sim import Interrupted

    agents = _agent_list(args.players)
    _check_counts(args)
    deck = _deck_arg(args.deck)
    _out_folder(args.out)
    _warn_small_sample("balance", args.games)
    from .core import Rules as _Rules

    options = _agent_options(args)
    log = None
    try:
        with _open_cluster("balance", args, options, agents) as cluster:
            progress, update = _progress_runner(args.games * len(_Rules.all()), "games")
            log, on_result = _progress_log(args.out)
            with progress:
                grid = run_balance(
                    agents,
                    args.games,
                    args.seed,
                    args.jobs,
                    options,
                    update,
                    on_result,
                    deck=deck,
                    cluster=cluster,
                )
    except Interrupted as stopped:
        return _interrupted("balance", stopped, args.out)
    finally:
        if log is not None:
            log.close()
    # The games first (records.jsonl, games.csv): a long run keeps them
    # whatever happens next.
    from .lab.sim import write_games

    played = [r for results in grid.values() for r in results]
    write_games(list(enumerate(played)), Path(args.out))
    path = write_report(
        grid, agents, Path(args.out), args.seed, _budget_text(args, agents), args.deck or ""
    )
    print(f"wrote {printable(str(path))}")
    return 0


def _skill_pairs(texts: list[str] | None) -> list[tuple[str, str]]:
    """``--skill STRONG,WEAK`` (repeatable; ``none`` for no skill games)."""
    if texts is None:
        return [("heuristic", "greedy")]
    pairs: list[tuple[str, str]] = []
    for text in texts:
        if text.strip().lower() == "none":
            continue
        from .ai import agent_info

        names = [a.strip() for a in text.split(",")]
        if len(names) != 2 or names[0] == names[1]:
            raise UsageError(
                f"--skill {printable(text)}: name two different agents, STRONG,WEAK "
                "(e.g. heuristic,greedy)"
            )
        for a in names:
            try:
                agent_info(a)
            except DonutboxError as err:
                raise UsageError(f"--skill: {err}") from None
        pairs.append((names[0], names[1]))
    return pairs


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .lab.sim import Interrupted
    from .lab.sweep import (
        SweepError,
        parse_axis,
        points,
        run_sweep,
        total_games,
        write_sweep_report,
    )

    agents = _agent_list(args.players)
    games = args.games
    if not 0 <= games <= 1_000_000:
        raise UsageError("--games must be from 0 to 1000000")
    args.games = max(games, 1)
    _check_counts(args)
    skill = _skill_pairs(args.skill)
    skill_games = games if args.skill_games is None else args.skill_games
    if not 0 <= skill_games <= 1_000_000:
        raise UsageError("--skill-games must be from 0 to 1000000")
    check_seed(args.seed, max(args.games, skill_games))
    if not skill_games:
        skill = []
    if not games and not skill:
        raise UsageError("--games 0 leaves only the --skill games, and there are none")
    deck = _deck_arg(args.deck)
    try:
        pts = points([parse_axis(t) for t in args.sweep], deck, _rules_from(args))
    except SweepError as err:
        raise UsageError(str(err)) from None
    _out_folder(args.out)
    fewest = min(n for n in (games, skill_games if skill else 0) if n)
    total = total_games(len(pts), games, skill, skill_games)
    options = _agent_options(args)
    log = None
    everyone = [*agents, *(a for pair in skill for a in pair)]
    try:
        with _open_cluster("balance", args, options, everyone) as cluster:
            _warn_small_sample("balance", fewest, " per point", "the sweep's figures")
            progress, update = _progress_runner(total, "games")
            log, on_result = _progress_log(args.out)
            with progress:
                res = run_sweep(
                    pts,
                    agents,
                    games,
                    skill,
                    skill_games,
                    args.seed,
                    args.jobs,
                    options,
                    update,
                    on_result,
                    cluster,
                )
    except Interrupted as stopped:
        return _interrupted("balance", stopped, args.out)
    finally:
        if log is not None:
            log.close()
    # The games first: a long sweep keeps its records whatever happens next.
    from .lab.sim import write_games

    played = [r for point in res.games for match in point.values() for r in match]
    write_games(list(enumerate(played)), Path(args.out))
    command = _sweep_command(args, games, skill, skill_games)
    budget = _budget_text(args, agents + [a for pair in skill for a in pair])
    for path in write_sweep_report(res, Path(args.out), command, budget):
        print(f"wrote {printable(str(path))}")
    return 0


def _sweep_command(
    args: argparse.Namespace, games: int, skill: list[tuple[str, str]], skill_games: int
) -> str:
    """The command line that makes this sweep (for its report)."""
    parts = ["donutbox balance"]
    parts += [f"--sweep {t}" for t in args.sweep]
    parts.append(f"--players {args.players}")
    parts.append(f"--games {games}")
    parts += [f"--skill {a},{b}" for a, b in skill] or ["--skill none"]
    if skill and skill_games != games:
        parts.append(f"--skill-games {skill_games}")
    parts.append(f"--seed {args.seed}")
    for option in RULE_OPTIONS:
        value = getattr(args, option.name)
        if value != option.default:
            flag = "--" + option.name.replace("_", "-")
            parts.append(flag if value is True else f"{flag} {value}")
    if args.deck:
        parts.append(f"--deck {args.deck}")
    all_agents = [*_agent_list(args.players), *(a for pair in skill for a in pair)]
    budget = _budget_text(args, all_agents)
    if budget:
        parts.append(budget)
    return " ".join(parts)


def _add_sim_options(
    p: argparse.ArgumentParser, games: int, out: str | None, per: str, players: bool = True
) -> None:
    if players:
        p.add_argument(
            "--players",
            default="heuristic,heuristic",
            help="agents in seat order, comma-separated (default heuristic,heuristic)",
        )
    p.add_argument(
        "--games", type=int, default=games, help=f"games to play {per} (default {games})"
    )
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default 1)")
    p.add_argument(
        "--cluster",
        metavar="WHERE",
        help="play the games on a Dask cluster instead: local (one worker per core), "
        "local:N (N workers on this machine) or a scheduler's address tcp://HOST:PORT; "
        "the same results as --jobs (needs pip install '.[cluster]')",
    )
    p.add_argument(
        "--cluster-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for the --cluster scheduler and its workers (default 10)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        help="first deal seed, 0 to 2**64-1 (default 1); the games use the seeds from it up",
    )
    from .ai import catalogue

    timed = ", ".join(a.name for a in catalogue() if a.timed)
    p.add_argument(
        "--seconds", type=float, help=f"thinking time per move of the searching agents ({timed})"
    )
    p.add_argument(
        "--iterations",
        type=int,
        help=f"search iterations per move of the searching agents ({timed}), instead of time",
    )
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


def _listen(host: str, port: int) -> Any:
    """A listening socket on ``host``:``port``, or a UsageError saying in one
    line why there cannot be one (port in use, unknown or foreign address):
    checked before the server says it is serving."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        raise UsageError(f"--host '{host}': not an address to listen on ({reason})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(2048)
    except OSError as err:
        sock.close()
        reason = err.strerror or str(err)
        if err.errno == errno.EADDRINUSE:
            reason += "; is another server running there? choose another --port"
        elif err.errno == errno.EADDRNOTAVAIL:
            reason += "; --host must be an address of this machine, e.g. 127.0.0.1 or 0.0.0.0"
        elif err.errno == errno.EACCES:
            reason += "; ports below 1024 need privileges"
        raise UsageError(f"cannot listen on {host} port {port}: {reason}") from None
    sock.set_inheritable(True)
    return sock


def _database_trouble(db: str | None, err: Exception) -> str:
    """One line on why ``serve`` cannot use its database.  A locked SQLite
    file is another server holding it (a server locks its SQLite file
    exclusively, docs/online.md): the line names the file and both ways out."""
    reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
    if "database is locked" not in reason:
        return f"cannot use the database: {reason}"
    from sqlalchemy.engine import make_url

    from .server.storage import default_url

    where = make_url(db or default_url()).database or "?"
    return (
        f"cannot use the database {where}: another donutbox serve is using it "
        "(an SQLite file serves one server); stop that server, or give this one "
        "a file of its own with --db sqlite:///PATH"
    )


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .server import limits
    from .server.app import create_app

    if not 0 < args.port < 65536:
        raise UsageError("--port must be from 1 to 65535")
    if not 1 <= args.workers <= 16:
        raise UsageError("--workers must be from 1 to 16")
    sock = _listen(args.host, args.port)
    try:
        try:
            host = f"[{args.host}]" if ":" in args.host else args.host
            app = create_app(
                args.db,
                workers=args.workers,
                broker_url=args.broker or None,
                smtp_url=args.smtp or None,
                public_url=args.public_url or f"http://{host}:{args.port}",
            )
        except ValueError as err:
            if str(err).startswith(("--broker", "--smtp")):  # not Redis; a bad SMTP URL
                raise UsageError(str(err)) from None
            raise UsageError(_database_trouble(args.db, err)) from None
        except Exception as err:  # a bad database URL or file: say so in one line
            raise UsageError(_database_trouble(args.db, err)) from None
        host = f"[{args.host}]" if ":" in args.host else args.host
        url = f"http://{host}:{args.port}/"
        print(
            printable(f"donutbox is serving at {url} (API docs at {url}docs); Ctrl-C stops it"),
            flush=True,
        )
        if args.open:
            import threading
            import webbrowser

            threading.Timer(1.0, lambda: webbrowser.open(url)).start()
        # ws_max_size: the transport refuses huge frames before the app reads
        # them (the app itself refuses messages over 2,048 characters).
        # No per-message deflate: a state is about 20 KB, small for any network,
        # and compressing every state for every reader was a tenth of the
        # server's time per move (docs/performance.md, online play load).
        config = uvicorn.Config(
            app,
            log_level="warning",
            ws_max_size=65536,
            ws_per_message_deflate=False,
            **limits.uvicorn_options(),  # header deadline, per-address cap (issue 12)
        )
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
    return 0


def _console(no_color: bool = False) -> Any:
    """The console of ``show``, ``replay`` and ``play``.  ``--no-color`` or
    NO_COLOR (no-color.org) set and not empty: no escape code for colour or
    style at all (rich's own ``no_color`` drops colours but keeps bold, dim
    and strikethrough)."""
    from rich.console import Console

    plain = no_color or bool(os.environ.get("NO_COLOR"))
    return Console(
        no_color=plain,
        color_system=None if plain else "auto",
        highlight=False,
        soft_wrap=True,
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
    from .render.commands import add_commands

    add_commands(sub, _Parser)
    from .analyse_cmd import add_analyse  # the ai helper's command (ai/analysis.py)

    add_analyse(sub)
    from .server.admin_cmd import add_admin  # moderation (server/moderation/service.py)

    add_admin(sub, _Parser)
    from .botclient.command import add_bot  # the Bot API's client (docs/bots.md)

    add_bot(sub)
    _help_command(sub, parser)
    return parser


def _agents_help() -> str:
    from .ai import catalogue

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


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status (0 success, 1 an illegal move in a
    record, 2 bad input, 3 a bug, 130 interrupted).

    Every error is one line on standard error, in one style:
    ``donutbox COMMAND: reason`` (``donutbox: reason`` before a command is
    known).
    """
    parser = build_parser()
    command: str | None = None
    try:
        args, extra = parser.parse_known_args(argv)
        command = getattr(args, "command", None)
        if extra:  # named by the command's own parser, so that the prefix names it
            owner = _commands(parser).get(command, parser) if command else parser
            owner.error(f"unrecognized arguments: {' '.join(extra)}")
        if not getattr(args, "func", None):
            print(parser.format_help().rstrip(), file=sys.stderr)
            print("donutbox: no command given (see 'donutbox help')", file=sys.stderr)
            return 2
        return int(args.func(args))
    except UsageError as err:
        prefix = err.prog or _prefix(command)
        print(one_line(f"{prefix}: {err}"), file=sys.stderr)
        return 2
    except DonutboxError as err:
        print(one_line(f"{_prefix(command)}: {err}"), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print(f"{_prefix(command)}: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # no traceback ever reaches a user
        if os.environ.get("DONUTBOX_DEBUG"):
            raise
        print(
            one_line(
                f"{_prefix(command)}: internal error ({type(err).__name__}: {err}); "
                "set DONUTBOX_DEBUG=1 for details"
            ),
            file=sys.stderr,
        )
        return 3


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _prefix(command: str | None) -> str:
    return f"donutbox {command}" if command else "donutbox"


if __name__ == "__main__":
    sys.exit(main())
