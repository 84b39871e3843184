"""The ``donutbox`` command line (docs/spec.md, "Command-line contract").

Commands that only read and write files and standard streams (``new``,
``show``, ``replay``, ``moves``, ``perft``, ``bench``, ``render``, ``print``,
``help``, ``--help`` of any command, bad command lines) run through the
same ``main()`` the console script calls, in this process, with standard
streams, environment and exit status of their own (``_in_process``: a fresh
interpreter costs 0.1 to 0.3 s of CPU, ``main()`` a few ms).  ``serve``,
``sim``, ``balance`` and ``play`` (sockets, worker processes, signals, a
terminal) always run as a real ``donutbox`` subprocess, as do the tests of the
entry points themselves; ``test_in_process_runs_match_the_real_command``
checks that both ways give the same status, output and errors.  Bad input of
any kind must give exit status 2, exactly one line on standard error, no
traceback, and nothing on standard output.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pytest

from donutbox.core.record import dump, load

F = "donutbox/1"
AB = ["Ann", "Bob"]
B5 = ["BBBB"] * 5
DECKS = [["BBBB"] * 4 + ["CCCC", "BBBB"], B5]

# The table of docs/spec.md, "Components", copied by hand (halves, threes, rainbows, rolls).
HALVES = Counter(["CCSS", "CCHH", "CCBB", "SSHH", "SSBB", "HHBB"] * 2)
THREES = Counter(["CCSH", "SSHB", "HHBC", "BBCS", "CCBH", "SSBH"])
RAINBOWS = Counter(["CSHB", "CSBH", "CHSB", "CHBS"])
ROLLS = Counter(["RCSH", "RHSC", "RCSB", "RBCS", "RCHB", "RBHC", "RSHB", "RBSH"])
STANDARD = HALVES + THREES + RAINBOWS + ROLLS


def _command() -> list[str]:
    beside = Path(sys.executable).with_name("donutbox")
    if beside.exists():
        return [str(beside)]
    exe = shutil.which("donutbox")
    return [exe] if exe else [sys.executable, "-m", "donutbox.cli"]


class Job(NamedTuple):
    args: tuple[str, ...]
    stdin: bytes = b""
    env: tuple[tuple[str, str], ...] = ()


def _subprocess(job: Job) -> subprocess.CompletedProcess[str]:
    """``job`` through the real ``donutbox`` command: a fresh interpreter."""
    import os

    env = dict(os.environ)
    env.pop("FORCE_COLOR", None)
    env.pop("DONUTBOX_DEBUG", None)
    env.update(dict(job.env))
    proc = subprocess.run(
        [*_command(), *job.args],
        input=job.stdin,
        capture_output=True,
        timeout=60,
        env=env,
        check=False,
    )
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


#: Commands with sockets, worker processes, signal handlers or a terminal:
#: always a real subprocess (but for ``--help``).  Every other command line
#: touches nothing but its files and standard streams and runs in-process.
SUBPROCESS_ONLY = {"serve", "sim", "balance", "play"}


def _in_process_ok(args: tuple[str, ...]) -> bool:
    return not args or args[0] not in SUBPROCESS_ONLY or "--help" in args


def _in_process(job: Job) -> subprocess.CompletedProcess[str]:
    """``job`` through ``donutbox.cli.main`` in this process, as the console
    script runs it (``sys.exit(main())``): standard input from ``job.stdin``,
    standard output and error captured as the bytes a pipe would get (UTF-8
    with the child's error handlers), the child's environment (``job.env``
    added, ``FORCE_COLOR`` and ``DONUTBOX_DEBUG`` removed); the streams and
    the environment are put back afterwards."""
    import io
    import os

    from donutbox.cli import main

    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_env = dict(os.environ)
    streams = (
        io.TextIOWrapper(io.BytesIO(job.stdin), encoding="utf-8", errors="surrogateescape"),
        io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape"),
        io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace"),
    )
    sys.stdin, sys.stdout, sys.stderr = streams
    os.environ.pop("FORCE_COLOR", None)
    os.environ.pop("DONUTBOX_DEBUG", None)
    os.environ.update(dict(job.env))
    try:
        try:
            status = main(list(job.args))
        except SystemExit as stop:  # what sys.exit would make of it
            if stop.code is None or isinstance(stop.code, int):
                status = stop.code or 0
            else:
                print(stop.code, file=sys.stderr)
                status = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.environ.clear()
        os.environ.update(saved_env)
    written = []
    for stream in streams[1:]:
        stream.flush()
        written.append(stream.buffer.getvalue().decode("utf-8", "replace"))  # type: ignore[attr-defined]
    return subprocess.CompletedProcess(["donutbox", *job.args], status, *written)


def _run(job: Job) -> subprocess.CompletedProcess[str]:
    return _in_process(job) if _in_process_ok(job.args) else _subprocess(job)


def run_many(jobs: list[Job]) -> list[subprocess.CompletedProcess[str]]:
    """Each job's result, in order: the subprocesses a few at a time, the
    in-process ones one after another (they share this process's streams)."""
    real = [i for i, job in enumerate(jobs) if not _in_process_ok(job.args)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip(real, pool.map(_subprocess, [jobs[i] for i in real]), strict=True))
    return [done[i] if i in done else _in_process(job) for i, job in enumerate(jobs)]


def run(*args: str, stdin: bytes = b"", **env: str) -> subprocess.CompletedProcess[str]:
    return _run(Job(tuple(args), stdin, tuple(env.items())))


def assert_bad_input(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 2, f"{what}: exit {proc.returncode}\n{proc.stderr}"
    assert proc.stdout == "", f"{what}: wrote to stdout: {proc.stdout[:200]!r}"
    assert "Traceback" not in proc.stderr, what
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].strip(), f"{what}: stderr {proc.stderr!r}"


def write(path: Path, record: object) -> Path:
    path.write_text(json.dumps(record))
    return path


def test_in_process_runs_match_the_real_command(tmp_path: Path) -> None:
    # The in-process runner stands for the real command: for every kind of
    # outcome (output, --help's exit, a usage error, bad input, an illegal
    # move, standard input, forced colour, a file written, names outside
    # ASCII) both ways give the same status, standard output and error.
    names = write(
        tmp_path / "names.json",
        {"format": F, "players": ["Jérôme", "Zoë\u202e"], "start": "CCSS", "moves": ["CCSS@2,0/0"]},
    )
    illegal = str(DATA / "perfect-illegal.json")
    jobs = [
        Job(("show", str(names)), env=(("FORCE_COLOR", "1"),)),
        Job(("replay", str(names))),
        Job(("replay", "-", "--json"), stdin=names.read_bytes()),
        Job(("moves", illegal, "--json")),
        Job(("new", "--seed", "3", "--out", str(tmp_path / "new.json"))),
        Job(("new", "--seed", "3")),
        Job(("show", "--help")),
        Job(("sim", "--help")),
        Job(()),
        Job(("frobnicate",)),
        Job(("replay", str(tmp_path / "none.json"))),
        Job(("perft", str(DATA / "bad-seed.json"))),
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:
        real = list(pool.map(_subprocess, jobs))
    assert all(_in_process_ok(job.args) for job in jobs)
    for job, want in zip(jobs, real, strict=True):
        if job.args[:2] == ("new", "--seed") and "--out" in job.args:
            (tmp_path / "new.json").unlink()  # the in-process run writes it again
        got = _in_process(job)
        assert (got.returncode, got.stdout, got.stderr) == (
            want.returncode,
            want.stdout,
            want.stderr,
        ), job.args
    assert [p.returncode for p in real] == [0, 0, 0, 1, 0, 0, 0, 0, 2, 2, 2, 2]
    assert "\x1b[" in real[0].stdout  # colour was forced
    assert json.loads((tmp_path / "new.json").read_text()) == json.loads(real[5].stdout)


# -- --help ---------------------------------------------------------------------


def test_every_command_has_help() -> None:
    commands = [
        "replay",
        "moves",
        "perft",
        "new",
        "show",
        "bench",
        "play",
        "sim",
        "tournament",
        "balance",
        "serve",
        "print",
        "render",
    ]
    procs = run_many([Job((c, "--help")) for c in commands] + [Job(("--help",))])
    for command, proc in zip([*commands, "(top)"], procs, strict=True):
        assert proc.returncode == 0, command
        assert "usage" in proc.stdout.lower(), command
        assert "Traceback" not in proc.stderr
        # argparse %-formats argument help but not descriptions: a doubled
        # percent sign there reaches the reader as "%%".
        assert "%%" not in proc.stdout, command
    top = procs[-1].stdout
    for command in commands:
        assert command in top


# -- new ---------------------------------------------------------------------------


def _standard_record(record: dict, players: int) -> None:
    assert record["format"] == F
    assert len(record["players"]) == players
    assert len(record["decks"]) == players
    for deck in record["decks"]:
        assert Counter(deck) == STANDARD
    assert record.get("moves", []) == []


def test_new_with_options_gives_a_record_that_replays(tmp_path: Path) -> None:
    out = tmp_path / "new.json"
    jobs = [
        Job(("new", "--seed", "7")),
        Job(("new", "--seed", "7")),
        Job(("new", "--seed", "8")),
        Job(
            (
                "new",
                "--players",
                "3",
                "--seed",
                "5",
                "--match",
                "perfect-match",
                "--layout",
                "splitzkies",
                "--closers",
            )
        ),
        Job(("new", "--names", "Ann,Bob,Cy,Di", "--seed", "0")),
        Job(("new", "--seed", str(2**64 - 1))),
        Job(("new",)),
        Job(("new", "--seed", "11", "--out", str(out))),
    ]
    a, a2, b, three, four, biggest, unseeded, to_file = run_many(jobs)
    for proc in (a, a2, b, three, four, biggest, unseeded):
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
    assert a.stdout == a2.stdout  # the same seed deals the same decks
    rec_a, rec_b = json.loads(a.stdout), json.loads(b.stdout)
    assert rec_a["decks"] != rec_b["decks"]
    _standard_record(rec_a, 2)
    rec3 = json.loads(three.stdout)
    _standard_record(rec3, 3)
    assert rec3["rules"] == {"match": "perfect-match", "layout": "splitzkies", "closers": True}
    rec4 = json.loads(four.stdout)
    _standard_record(rec4, 4)
    assert rec4["players"] == ["Ann", "Bob", "Cy", "Di"]
    _standard_record(json.loads(biggest.stdout), 2)
    _standard_record(json.loads(unseeded.stdout), 2)
    assert to_file.returncode == 0 and to_file.stdout == ""
    _standard_record(json.loads(out.read_text()), 2)

    # Each record replays: nothing played, player 0 to move, the start card
    # (player 0's 5th card) alone on the counter.
    paths = []
    for i, proc in enumerate((a, three, four, unseeded)):
        paths.append(tmp_path / f"r{i}.json")
        paths[-1].write_text(proc.stdout)
    paths.append(out)
    replays = run_many([Job(("replay", str(p), "--json")) for p in paths])
    for path, proc in zip(paths, replays, strict=True):
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout)
        record = json.loads(path.read_text())
        n = len(record["players"])
        assert got["scores"] == [0] * n and got["delivered"] == [0] * n
        assert got["finished"] is False and got["winners"] == [] and got["to_move"] == 0
        assert got["deliveries"] == [] and got["error"] is None
        assert len(got["cells"]) == 4
        start = record["decks"][0][4]
        assert sorted((c["x"], c["y"]) for c in got["cells"]) == [(0, 0), (0, 1), (1, 0), (1, 1)]
        assert all(c["owner"] is None for c in got["cells"])
        flavours = {(c["x"], c["y"]): c["flavour"] for c in got["cells"]}
        for (x, y), letter in zip([(0, 0), (1, 0), (1, 1), (0, 1)], start, strict=True):
            if letter != "R":
                assert flavours[(x, y)] == letter


@pytest.mark.parametrize(
    "args",
    [
        ("--players", "5"),
        ("--players", "1"),
        ("--players", "two"),
        ("--seed", "-1"),
        ("--seed", str(2**64)),
        ("--seed", str(10**40)),
        ("--seed", "1.5"),
        ("--match", "best-match"),
        ("--layout", "hexagons"),
        ("--names", "Ann"),
        ("--names", ",,"),
        ("--names", "A,B,C,D,E"),
        ("--names", "Ann," + "x" * 201),  # a record may not hold it (docs/notation.md, Limits)
        ("--out", "/nonexistent-dir/sub/x.json"),
        ("--bogus",),
    ],
)
def test_new_bad_options(args: tuple[str, ...], capfd: pytest.CaptureFixture[str]) -> None:
    from donutbox.cli import main

    status = main(["new", *args])
    out, err = capfd.readouterr()
    assert_bad_input(subprocess.CompletedProcess([], status, out, err), " ".join(args))


def test_new_bad_options_subprocess() -> None:
    cases = [("--players", "5"), ("--seed", "-1"), ("--seed", str(2**64))]
    with ThreadPoolExecutor(max_workers=4) as pool:
        procs = list(pool.map(_subprocess, [Job(("new", *a)) for a in cases]))
    for args, proc in zip(cases, procs, strict=True):
        assert_bad_input(proc, " ".join(args))


# -- show --------------------------------------------------------------------------


def test_show_draws_a_letter_for_every_flavour(tmp_path: Path) -> None:
    # The same two-move free game on a start card of each flavour: the
    # drawing of start FFFF holds at least 4 more F's than that of another.
    jobs = []
    for letter in "CSHB":
        rec = {"format": F, "players": AB, "start": letter * 4}
        jobs.append(Job(("show", str(write(tmp_path / f"{letter}.json", rec)), "--no-legend")))
    outs = dict(zip("CSHB", (p.stdout for p in run_many(jobs)), strict=True))
    for letter in "CSHB":
        for other in "CSHB".replace(letter, ""):
            assert outs[letter].count(letter) >= outs[other].count(letter) + 4, letter


def test_show_options(tmp_path: Path) -> None:
    decks = [
        ["CCSS", "CCBB", "SSBB", "RCSH", "CCCC", "SSHH", "HHHH"],
        ["CSHB", "BBCS", "CHSB", "SSHB", "HHBB"],
    ]
    full = write(
        tmp_path / "full.json",
        {"format": F, "players": AB, "decks": decks, "moves": ["CCSS@2,0/0", "CSHB@-2,0/90"]},
    )
    one = write(
        tmp_path / "one.json", {"format": F, "players": AB, "decks": decks, "moves": ["CCSS@2,0/0"]}
    )
    none = write(tmp_path / "none.json", {"format": F, "players": AB, "decks": decks, "moves": []})
    free = write(
        tmp_path / "free.json",
        {"format": F, "players": AB, "start": "CSHR", "moves": ["HCCH@-2,0/0"], "end": True},
    )
    jobs = [
        Job(("show", str(full))),
        Job(("show", str(full), "--ply", "1")),
        Job(("show", str(one))),
        Job(("show", str(full), "--ply", "0")),
        Job(("show", str(none))),
        Job(("show", str(full), "--reveal", "--no-legend")),
        Job(("show", str(full), "--no-legend")),
        Job(("show", str(full), "--no-color"), env=(("FORCE_COLOR", "1"),)),
        Job(("show", str(full), "--no-color")),
        Job(("show", str(free), "--no-color", "--reveal")),
        Job(("show", "-", "--no-color"), stdin=full.read_bytes()),
    ]
    procs = run_many(jobs)
    for proc in procs:
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout.strip()
    plain, ply1, one_out, ply0, none_out, reveal, hidden, forced, nocolor, _free_out, piped = [
        p.stdout for p in procs
    ]
    assert ply1 == one_out  # --ply N shows the position after N moves
    assert ply0 == none_out
    assert plain != ply1
    # After 2 moves player 0 is to move: player 1's tray (BBCS CHSB SSHB and
    # the HHBB it drew) is shown only with --reveal.
    assert "HHBB" in reveal and "HHBB" not in hidden
    # --no-color: no colour codes even when colour is forced.
    for params in re.findall(r"\x1b\[([0-9;]*)m", forced):
        for p in params.split(";"):
            assert not p or not (30 <= int(p) <= 49 or 90 <= int(p) <= 107), repr(params)
    assert "\x1b" not in nocolor
    assert piped == nocolor


# -- replay / moves --------------------------------------------------------------


def test_replay_exit_status_and_stdin(tmp_path: Path) -> None:
    ok = {"format": F, "players": AB, "start": "CCSS", "moves": ["CCSS@2,0/0"]}
    illegal = {"format": F, "players": AB, "start": "CCSS", "moves": ["HHHH@2,0/0"]}
    p_ok, p_illegal = write(tmp_path / "ok.json", ok), write(tmp_path / "il.json", illegal)
    procs = run_many(
        [
            Job(("replay", str(p_ok), "--json")),
            Job(("replay", str(p_illegal), "--json")),
            Job(("replay", "-", "--json"), stdin=json.dumps(ok).encode()),
            Job(("replay", str(p_ok))),
            Job(("replay", str(p_illegal))),
            Job(("moves", str(p_ok), "--json")),
            Job(("moves", "-", "--json", "--card", "HHHH"), stdin=json.dumps(ok).encode()),
        ]
    )
    a, b, c, d, e, f, g = procs
    assert a.returncode == 0 and c.returncode == 0 and d.returncode == 0
    assert json.loads(a.stdout) == json.loads(c.stdout)
    assert b.returncode == 1
    got = json.loads(b.stdout)
    assert got["error"]["ply"] == 0 and got["error"]["move"] == "HHHH@2,0/0"
    assert "one good match" in got["error"]["reason"].lower()
    assert len(got["cells"]) == 4  # the state before the illegal move
    assert e.returncode == 1 and "Traceback" not in e.stderr
    # B to move holds nothing: no box; without --card a free game lists no
    # placements.
    assert json.loads(f.stdout) == {"moves": []}
    # The counter holds only C and S: HHHH agrees nowhere, and B holds no box.
    assert json.loads(g.stdout) == {"moves": []}


# -- bad input ---------------------------------------------------------------------


def _rec(**fields: object) -> dict:
    base: dict = {"format": F, "players": AB, "start": "CCCC", "moves": []}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not _DROP}


_DROP = object()


def _dealt(**fields: object) -> dict:
    return _rec(**{"start": _DROP, "decks": DECKS, **fields})


BAD_JSON: dict[str, bytes] = {
    "malformed-json": b'{"format": "donutbox/1", "players": [',
    "trailing-garbage": json.dumps(_rec()).encode() + b" x",
    "json-array": b"[]",
    "json-number": b"5",
    "json-string": b'"donutbox/1"',
    "json-null": b"null",
    "nan-seed": b'{"format": "donutbox/1", "players": ["A", "B"], "seed": NaN}',
    "deep-nesting": b'{"format": "donutbox/1", "players": ["A", "B"], "start": "CCCC", "x": '
    + b"[" * 100_000
    + b"]" * 100_000
    + b"}",
    "empty": b"",
    "whitespace": b"  \n\t  \n",
    "non-utf8": b'\xff\xfe{"format": "donutbox/1"}',
    "latin-1": '{"format": "donutbox/1", "players": ["Jérôme", "B"], "start": "CCCC"}'.encode(
        "latin-1"
    ),
}

BAD_RECORDS: dict[str, dict] = {
    "unknown-rules-key": _rec(rules={"match": "one-good-match", "speed": "fast"}),
    "rules-not-object": _rec(rules="perfect-match"),
    "rules-closers-string": _rec(rules={"closers": "yes"}),
    "rules-match-unknown": _rec(rules={"match": "best-match"}),
    "rules-layout-number": _rec(rules={"layout": 2}),
    "players-string": _rec(players="AnnBob"),
    "players-one": _rec(players=["Ann"]),
    "players-five": _rec(players=["A", "B", "C", "D", "E"]),
    "player-name-number": _rec(players=[1, 2]),
    "players-missing": _rec(players=_DROP),
    "moves-string": _rec(moves="pass"),
    "moves-number": _rec(moves=[5]),
    "moves-object": _rec(moves={"0": "pass"}),
    "format-missing": _rec(format=_DROP),
    "format-wrong": _rec(format="donutbox/2"),
    "format-number": _rec(format=1),
    "seed-string": _rec(start=_DROP, seed="7"),
    "seed-float": _rec(start=_DROP, seed=7.5),
    "seed-bool": _rec(start=_DROP, seed=True),
    "seed-negative": _rec(start=_DROP, seed=-1),
    "seed-2**64": _rec(start=_DROP, seed=2**64),
    "seed-huge": _rec(start=_DROP, seed=10**100),
    "seed-huge-negative": _rec(start=_DROP, seed=-(10**100)),
    "decks-not-list": _dealt(decks={"0": DECKS[0]}),
    "deck-not-list": _dealt(decks=["BBBBBBBB", B5]),
    "deck-face-number": _dealt(decks=[[1, 2, 3, 4, 5, 6], B5]),
    "bad-face-letter": _dealt(decks=[["CCSX", *DECKS[0][1:]], B5]),
    "bad-face-lower": _dealt(decks=[["ccss", *DECKS[0][1:]], B5]),
    "bad-face-short": _dealt(decks=[["CCS", *DECKS[0][1:]], B5]),
    "bad-start-face": _rec(start="CCCX"),
    "start-number": _rec(start=4),
    "two-r-start": _rec(start="RRCS"),
    "two-r-deck": _dealt(decks=[[*DECKS[0][:5], "RCRS"], B5]),
    "two-r-start-card-of-deck": _dealt(decks=[[*DECKS[0][:4], "RCSR", "BBBB"], B5]),
    "three-decks-two-players": _dealt(decks=[*DECKS, B5]),
    "one-deck-two-players": _dealt(decks=[DECKS[0]]),
    "short-deck-player-0": _dealt(decks=[DECKS[0][:5], B5]),
    "short-deck-player-1": _dealt(decks=[DECKS[0], B5[:4]]),
    "huge-x": _rec(moves=["CCCC@100000000000000000000,0/0"]),
    "huge-negative-y": _rec(moves=["box@0,-99999999999999999999"]),
    "bad-rotation": _rec(moves=["CCCC@2,0/45"]),
    "bad-move-text": _rec(moves=["play CCCC"]),
    "lock-without-roll": _rec(moves=["CCCC@2,0/0=C"]),
    "start-and-decks": _rec(decks=DECKS),
    "start-and-seed": _rec(seed=3),
    "no-setup": _rec(start=_DROP),
    "end-not-bool": _rec(end="yes"),
}


def _sources(root: Path) -> dict[str, tuple[str, bytes]]:
    """Each bad input as (argument, standard input)."""
    sources: dict[str, tuple[str, bytes]] = {}
    for name, data in BAD_JSON.items():
        (root / f"{name}.json").write_bytes(data)
        sources[name] = (str(root / f"{name}.json"), b"")
    for name, record in BAD_RECORDS.items():
        write(root / f"{name}.json", record)
        sources[name] = (str(root / f"{name}.json"), b"")
    sources["directory"] = (str(root), b"")
    sources["missing-file"] = (str(root / "no-such-file.json"), b"")
    sources["stdin-empty"] = ("-", b"")
    sources["stdin-garbage"] = ("-", b"{not json")
    sources["stdin-non-utf8"] = ("-", b"\x80\x81\x82")
    return sources


BAD_NAMES = [
    *BAD_JSON,
    *BAD_RECORDS,
    "directory",
    "missing-file",
    "stdin-empty",
    "stdin-garbage",
    "stdin-non-utf8",
]
COMMANDS = [("replay", "--json"), ("replay",), ("moves", "--json"), ("show",)]
# Through a real subprocess (the rest run in-process through the same main()).
SUBPROCESS = [
    "malformed-json", "empty", "non-utf8", "directory", "missing-file", "stdin-empty",
    "two-r-start", "unknown-rules-key", "three-decks-two-players", "start-and-decks",
    "huge-x", "seed-huge", "deep-nesting", "player-name-number", "bad-face-letter",
]  # fmt: skip


@pytest.fixture(scope="module")
def bad_sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, bytes]]:
    return _sources(tmp_path_factory.mktemp("bad"))


@pytest.fixture(scope="module")
def bad_runs(bad_sources: dict[str, tuple[str, bytes]]) -> dict[str, list]:
    jobs: dict[tuple[str, str], Job] = {}
    for name in SUBPROCESS:
        src, stdin = bad_sources[name]
        jobs[(name, "replay --json")] = Job(("replay", src, "--json"), stdin)
    for name in SUBPROCESS[:4]:
        src, stdin = bad_sources[name]
        for command in COMMANDS[1:]:
            jobs[(name, " ".join(command))] = Job((command[0], src, *command[1:]), stdin)
    keys = list(jobs)
    out: dict[str, list] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:  # real subprocesses, a few at a time
        procs = list(pool.map(_subprocess, [jobs[k] for k in keys]))
    for (name, command), proc in zip(keys, procs, strict=True):
        out.setdefault(name, []).append((command, proc))
    return out


@pytest.mark.parametrize("name", SUBPROCESS)
def test_bad_input_exits_2_with_one_line(name: str, bad_runs: dict[str, list]) -> None:
    for command, proc in bad_runs[name]:
        assert_bad_input(proc, f"{name} ({command})")


@pytest.mark.parametrize("name", BAD_NAMES)
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_bad_input_in_process(
    name: str,
    command: tuple[str, ...],
    bad_sources: dict[str, tuple[str, bytes]],
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same main() the console script calls, without a new interpreter."""
    import io

    from donutbox.cli import main

    src, stdin = bad_sources[name]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    monkeypatch.delenv("DONUTBOX_DEBUG", raising=False)
    status = main([command[0], src, *command[1:]])
    out, err = capfd.readouterr()
    assert_bad_input(subprocess.CompletedProcess([], status, out, err), f"{name} {command}")


def test_bad_command_line_arguments(tmp_path: Path) -> None:
    good = write(tmp_path / "g.json", {"format": F, "players": AB, "start": "CCSS", "moves": []})
    cases = [
        ("show", str(good), "--ply", "5"),
        ("show", str(good), "--ply", "-1"),
        ("show", str(good), "--ply", "x"),
        ("moves", str(good), "--json", "--card", "CCSX"),
        ("moves", str(good), "--json", "--card", "RRCS"),
        ("replay",),
        ("replay", str(good), "--bogus"),
        ("frobnicate",),
    ]
    for args, proc in zip(cases, run_many([Job(a) for a in cases]), strict=True):
        assert_bad_input(proc, " ".join(args))


def test_missing_file_with_a_newline_in_its_name(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from donutbox.cli import main

    status = main(["replay", str(tmp_path / "no\nsuch.json"), "--json"])
    out, err = capfd.readouterr()
    assert_bad_input(subprocess.CompletedProcess([], status, out, err), "newline in path")


def test_new_with_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    # A name given as a non-UTF-8 byte on the command line: either refused as
    # bad input (exit 2, one line), or written so that the project's own
    # reader can replay the record.
    name = b"\xff,B".decode("utf-8", "surrogateescape")
    new = subprocess.run(
        [*_command(), "new", "--names", name, "--seed", "1"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert b"Traceback" not in new.stderr
    if new.returncode == 0:
        made = tmp_path / "made.json"
        made.write_bytes(new.stdout)
        back = run("replay", str(made), "--json")
        assert back.returncode == 0, f"new wrote a record that replay refuses: {back.stderr}"
    else:
        assert new.returncode == 2 and new.stdout == b""
        assert len(new.stderr.strip().splitlines()) == 1


def test_record_with_a_lone_surrogate_name(tmp_path: Path) -> None:
    # "\ud800" is valid JSON syntax but no Unicode character: handled or
    # refused as bad input, never an internal error.
    weird = write(
        tmp_path / "weird.json", {"format": F, "players": ["\ud800", "B"], "start": "CCCC"}
    )
    jobs = [("replay", str(weird), "--json"), ("replay", str(weird)), ("show", str(weird))]
    for args, proc in zip(jobs, run_many([Job(a) for a in jobs]), strict=True):
        assert "Traceback" not in proc.stderr
        if proc.returncode != 0:
            assert_bad_input(proc, " ".join(args))


# -- bad arguments found by review: one line, exit 2, whatever the entry point --


def test_bad_arguments_are_one_line_through_every_entry_point(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    huge = tmp_path / "huge.json"
    huge.write_text('{"format": "donutbox/1", "players": ["a", "b"], "x": ' + "9" * 5001 + "}")
    finished = str(Path(__file__).parent / "data" / "deadlock.json")  # 10 moves
    cases = [
        ("replay", str(huge), "--json"),  # Python refuses ints over 4,300 digits
        ("render", finished, "--ply", "-5", "--out", str(tmp_path / "x.svg")),
        ("print", "--decks", "0", "--out", str(tmp_path / "x.pdf")),
        ("sim", "--players", "random,random", "--games", "2", "--out", str(a_file)),
        ("balance", "--games", "1", "--out", str(a_file)),
        ("bench", "--positions", "0"),
        ("serve", "--db", f"sqlite:///{tmp_path}/no/such/dir/x.db", "--port", "1"),
    ]
    entry_points = [
        _command(),
        [sys.executable, "-m", "donutbox.cli"],
        [sys.executable, "-m", "donutbox"],
    ]
    runs = [(entry, args) for entry in entry_points for args in cases]

    def run(run: tuple[list[str], tuple[str, ...]]) -> subprocess.CompletedProcess[str]:
        entry, args = run
        return subprocess.run(
            [*entry, *args], capture_output=True, text=True, timeout=60, check=False
        )

    # A few at a time: each is a fresh interpreter, and none writes a file
    # another reads.
    with ThreadPoolExecutor(max_workers=4) as pool:
        procs = list(pool.map(run, runs))
    for (entry, args), proc in zip(runs, procs, strict=True):
        assert_bad_input(proc, " ".join([*entry[-1:], *args]))
    assert not (tmp_path / "x.svg").exists() and not (tmp_path / "x.pdf").exists()


# -- perft -------------------------------------------------------------------------


def test_perft_command_agrees_with_the_naive_engines_counts(tmp_path: Path) -> None:
    # tests/data/perft/positions.json holds counts made by the independent naive engine.
    data = json.loads((Path(__file__).parent / "data" / "perft" / "positions.json").read_text())
    chosen = [p for p in data["positions"] if p["name"].startswith(("fresh-", "final-lap-three"))]
    assert len(chosen) == 3
    jobs, expected = [], []
    for position in chosen:
        path = write(tmp_path / f"{position['name']}.json", position["record"])
        jobs.append(Job(("perft", str(path), "--depth", "2", "--json")))
        expected.append({"depth": 2, "nodes": position["perft"]["2"]})
        jobs.append(Job(("perft", str(path), "--depth", "1", "--divide")))
        expected.append(position["perft"]["1"])
    procs = run_many(jobs)
    for proc, want in zip(procs, expected, strict=True):
        assert proc.returncode == 0, proc.stderr
        if isinstance(want, dict):
            assert json.loads(proc.stdout) == want
        else:
            lines = proc.stdout.splitlines()
            assert lines[-1] == f"total {want}" and len(lines) == want + 1
            assert all(line.rsplit(" ", 1)[1] == "1" for line in lines[:-1])


def test_perft_bad_input(tmp_path: Path) -> None:
    free = write(tmp_path / "free.json", {"format": F, "players": AB, "start": "CCSS"})
    dealt = write(tmp_path / "dealt.json", {"format": F, "players": AB, "seed": 1})
    cases = [("perft", str(free)), ("perft", str(dealt), "--depth", "7")]
    cases += [("perft", str(dealt), "--depth", "-1"), ("perft", str(tmp_path / "none.json"))]
    for args, proc in zip(cases, run_many([Job(c) for c in cases]), strict=True):
        assert_bad_input(proc, " ".join(args))


# -- issue 19: what a newcomer meets on the command line ------------------------

DATA = Path(__file__).parent / "data"


def _env_with_this_tree() -> dict[str, str]:
    import os

    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("DONUTBOX_DEBUG", None)
    env.pop("FORCE_COLOR", None)
    return env


def _interrupt_after_progress(args: list[str], out: Path, total: int) -> tuple[int, str, float]:
    """Start ``donutbox ARGS`` in its own process group (as a terminal would
    run it), wait until ``out/progress.jsonl`` shows a finished game, then
    send SIGINT to the whole group (what Ctrl-C does).  Returns the exit
    status, standard error, and the seconds from SIGINT to the exit."""
    import os
    import signal
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "donutbox.cli", *args, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env_with_this_tree(),
        start_new_session=True,
    )
    log = out / "progress.jsonl"
    try:
        deadline = time.monotonic() + 120
        while not (log.exists() and log.read_text().strip()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no game finished in 120 s"
            time.sleep(0.1)
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # No worker outlives the command: the process group empties (at once but
    # for multiprocessing's resource tracker, which ends when it sees its
    # parent gone).
    gone_by = time.monotonic() + 3
    while True:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < gone_by, "a process of the command outlived it"
        time.sleep(0.05)
    assert total > 0
    return proc.returncode, err, took


@pytest.mark.parametrize("command", ["sim", "balance"])
def test_ctrl_c_stops_every_worker_at_once_and_keeps_finished_games(
    command: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    # MCTS at 0.05 s (wall clock) a move: about 3 s a game, 40 games (320 for
    # balance, 40 per rule combination) on 2 workers: far from done when the
    # first game has finished.
    args = [command, "--players", "mcts,mcts", "--seconds", "0.05", "--clock", "wall"]
    args += ["--games", "40", "--jobs", "2"]
    total = 40 if command == "sim" else 40 * 8
    status, err, took = _interrupt_after_progress(args, out, total)
    assert status == 130, err
    assert took < 5, f"took {took:.1f} s to stop"
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    m = re.fullmatch(
        rf"donutbox {command}: interrupted: (\d+) of {total} games finished, kept in (.+)",
        lines[-1],
    )
    assert m, lines[-1]
    done = int(m.group(1))
    assert 1 <= done < total and m.group(2) == str(out)
    # What finished is kept: one progress line, one record and one CSV row per game.
    logged = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert len(logged) == done
    records = (out / "records.jsonl").read_text().splitlines()
    assert len(records) == done
    with (out / "games.csv").open() as fh:
        import csv

        rows = list(csv.DictReader(fh))
    assert sorted(int(r["game"]) for r in rows) == sorted(g["game"] for g in logged)
    # Each kept record is a whole game that replays to the logged scores.
    for line, game in zip(records, sorted(logged, key=lambda g: g["game"]), strict=True):
        record = json.loads(line)
        assert record["result"]["scores"] == game["scores"]
    first = tmp_path / "first.json"
    first.write_text(records[0])
    replayed = run("replay", str(first), "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["finished"] is True


def test_ctrl_c_with_one_job_keeps_finished_games_too(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["sim", "--players", "heuristic,heuristic", "--games", "400", "--jobs", "1"]
    status, err, took = _interrupt_after_progress(args, out, 400)
    assert status == 130 and took < 5, err
    assert re.search(r"donutbox sim: interrupted: \d+ of 400 games finished, kept in ", err)
    assert (out / "games.csv").exists()


def test_moves_card_on_a_dealt_game_is_refused_as_the_docs_say(tmp_path: Path) -> None:
    # docs/notation.md (moves): "In a dealt game --card is refused".
    dealt = write(tmp_path / "dealt.json", {"format": F, "players": AB, "seed": 1})
    proc = run("moves", str(dealt), "--json", "--card", "CCSS")
    assert_bad_input(proc, "moves --card on a dealt game")
    assert proc.stderr.startswith("donutbox moves: --card is only for a free game")
    docs = (Path(__file__).resolve().parents[1] / "docs" / "notation.md").read_text()
    assert "In a dealt game `--card` is refused" in " ".join(docs.split())


def test_an_illegal_move_is_named_by_its_number_and_its_ply(tmp_path: Path) -> None:
    # perfect-illegal (tests/data/README.md): the third move, ply 2, HHCC@2,2/0.
    path = str(DATA / "perfect-illegal.json")
    jobs = [
        Job(("replay", path)),
        Job(("replay", path, "--json")),
        Job(("moves", path, "--json")),
        Job(("show", path, "--no-legend")),
        Job(("perft", str(DATA / "perfect-illegal.json"), "--depth", "1")),
        Job(("play", "--resume", path, "--no-color")),
    ]
    replay_text, replay_json, moves, show, perft, play = run_many(jobs)
    want = "move 3 (ply 2, HHCC@2,2/0) is illegal: Perfect Match"
    for command, proc in zip(("replay", "moves", "show"), (replay_text, moves, show), strict=True):
        assert proc.returncode == 1, (command, proc.stderr)
        assert proc.stderr.startswith(f"donutbox {command}: {want}"), proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    # The JSON contract is unchanged: 0-based ply, the move, the reason.
    assert replay_json.returncode == 1
    error = json.loads(replay_json.stdout)["error"]
    assert error["ply"] == 2 and error["move"] == "HHCC@2,2/0"
    assert "move 3" not in error["reason"]
    assert play.returncode == 1 and play.stdout == ""
    assert play.stderr.startswith(f"donutbox play: --resume {path}: {want}"), play.stderr
    # perft refuses a free game before it replays: whatever the reason, one line.
    assert perft.returncode in (1, 2) and len(perft.stderr.strip().splitlines()) == 1


BAD_CALLS = [
    ("new", ("new", "--players", "5")),
    ("new", ("new", "--out", "/tmp")),
    ("new", ("new", "--players", "two")),
    ("sim", ("sim", "--games", "0")),
    ("sim", ("sim", "--players", "heuristic,nobody")),
    ("sim", ("sim", "--bogus")),
    ("balance", ("balance", "--jobs", "0")),
    ("play", ("play", "--vs", "nobody")),
    ("play", ("play", "--seconds", "0")),
    ("bench", ("bench", "--games", "0")),
    ("serve", ("serve", "--port", "0")),
    ("replay", ("replay", "/no/such/file.json")),
    ("replay", ("replay", str(DATA / "bad-format.json"), "--json")),
    ("moves", ("moves", str(DATA / "bad-move.json"))),
    ("show", ("show", str(DATA / "bad-players.json"))),
    ("perft", ("perft", str(DATA / "bad-seed.json"))),
    ("render", ("render", str(DATA / "bad-format.json"), "--out", "/tmp/never.svg")),
    ("print", ("print", "--decks", "9")),
    ("help", ("help", "frobnicate")),
    (None, ("frobnicate",)),
    (None, ("--bogus",)),
]


def test_every_error_has_the_one_prefix_style() -> None:
    # docs/notation.md, the command line: "donutbox COMMAND: reason", or
    # "donutbox: reason" when no command could be read.
    procs = run_many([Job(args) for _, args in BAD_CALLS])
    for (command, args), proc in zip(BAD_CALLS, procs, strict=True):
        assert_bad_input(proc, " ".join(args))
        prefix = f"donutbox {command}: " if command else "donutbox: "
        assert proc.stderr.startswith(prefix), (args, proc.stderr)
        assert not proc.stderr.startswith(prefix + "donutbox"), proc.stderr  # no doubled prefix


def test_bare_donutbox_and_the_help_command() -> None:
    bare, top, one, same, unknown, flag = run_many(
        [
            Job(()),
            Job(("help",)),
            Job(("help", "new")),
            Job(("new", "--help")),
            Job(("help", "frobnicate")),
            Job(("--help",)),
        ]
    )
    # No command: the usage goes to standard error, status 2, nothing on stdout.
    assert bare.returncode == 2 and bare.stdout == ""
    assert bare.stderr.startswith("usage: donutbox") and "replay" in bare.stderr
    assert bare.stderr.rstrip().endswith("donutbox: no command given (see 'donutbox help')")
    # `help` is the top-level help, on stdout, status 0; `help new` is `new --help`.
    assert top.returncode == 0 and top.stdout == flag.stdout and top.stderr == ""
    assert one.returncode == 0 and one.stdout == same.stdout
    assert one.stdout.startswith("usage: donutbox new")
    assert_bad_input(unknown, "help frobnicate")
    assert "replay" in unknown.stderr  # it lists the commands there are


def test_counts_have_real_plurals(tmp_path: Path) -> None:
    # tie-break-boxed (tests/data/README.md): 9-9, A delivered 1 box, B none.
    # final-lap (docs/notation.md): after A's first move B has 1 more turn.
    final_lap = write(
        tmp_path / "final-lap.json",
        {
            "format": F,
            "players": ["A", "B"],
            "decks": [
                ["CCSS", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB"],
                ["CCHH", "BBBB", "BBBB", "BBBB", "BBBB"],
            ],
            "moves": ["CCSS@2,0/0"],
        },
    )
    boxed, lap = run_many(
        [
            Job(("show", str(DATA / "tie-break-boxed.json"), "--no-color", "--no-legend")),
            Job(("show", str(final_lap), "--no-color", "--no-legend")),
        ]
    )
    assert boxed.returncode == 0 and lap.returncode == 0
    assert "A: 9 points, 1 box delivered" in boxed.stdout
    assert "B: 9 points, 0 boxes delivered" in boxed.stdout
    assert "Final Lap: 1 turn left." in lap.stdout
    for text in (boxed.stdout, lap.stdout):
        assert "(s)" not in text and "1 boxes" not in text


def test_plural_helper() -> None:
    from donutbox.usage import plural

    assert [plural(n, "box", "boxes") for n in (0, 1, 2)] == ["0 boxes", "1 box", "2 boxes"]
    assert plural(1, "move") == "1 move" and plural(3, "move") == "3 moves"


def test_bench_announces_its_steps_and_its_help_shows_defaults() -> None:
    help_, tiny = run_many(
        [Job(("bench", "--help")), Job(("bench", "--positions", "2", "--games", "1",
                                        "--playouts", "1"))]
    )  # fmt: skip
    assert help_.returncode == 0
    for option, default in (("--positions", 400), ("--games", 200), ("--playouts", 400)):
        assert re.search(rf"{option} \w+\s+.*\(default {default}\)", help_.stdout, re.S), option
    assert tiny.returncode == 0, tiny.stderr
    steps = tiny.stderr.splitlines()
    # Two layouts, four steps each, announced before they run.
    assert len(steps) == 8 and all(s.startswith("bench: ") for s in steps), steps
    assert "1 of 2" in steps[0] and "2 of 2" in steps[-1]
    figures = tiny.stdout.splitlines()
    assert figures[0].startswith("machine: ") and len(figures) == 3


def test_balance_help_says_games_are_per_rule_combination() -> None:
    proc = run("balance", "--help")
    text = " ".join(proc.stdout.split())
    assert "games to play per rule combination (8 combinations) (default 50)" in text
    assert "games to play in all (default 100)" in " ".join(run("sim", "--help").stdout.split())


@pytest.mark.parametrize(
    ("names", "why"),
    [
        ("Ann,Ann", "two players are called 'Ann'"),
        ("Ann,Bob,Ann", "two players are called 'Ann'"),
        ("Ann, Ann ", "two players are called 'Ann'"),
        ("Ann,ANN", "'Ann' and 'ANN' differ only in case"),
        ("Ann,B\x1b[2Job", "control character"),
        ("Ann,B\tob", "control character"),
    ],
)
def test_new_refuses_names_that_make_records_ambiguous(
    names: str, why: str, capfd: pytest.CaptureFixture[str]
) -> None:
    from donutbox.cli import main

    status = main(["new", "--names", names])
    out, err = capfd.readouterr()
    assert_bad_input(subprocess.CompletedProcess([], status, out, err), names)
    assert err.startswith("donutbox new: --names: ") and why in err
    assert "\x1b" not in err and "\t" not in err


# -- issue 12, point 13: no control character from a record reaches a terminal --

EVIL = "Eve\x1b]0;pwned\x07\x1b[2J\x1b[31m\r\u202e"


def _no_raw_escapes(text: str) -> None:
    """Only rich's own colour codes (SGR: ESC [ digits m) may be in ``text``."""
    rest = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert "\x1b" not in rest and "\x07" not in rest and "\r" not in rest, repr(rest[:300])
    assert "\u202e" not in rest


def test_names_with_control_characters_are_escaped_on_every_terminal_output(
    tmp_path: Path,
) -> None:
    record = {"format": F, "players": [EVIL, "Bob"], "start": "CCSS", "moves": ["HHHH@2,0/0"]}
    path = write(tmp_path / "evil.json", record)
    evil_file = tmp_path / "no\x1b[2Jsuch.json"
    jobs = [
        Job(("replay", str(path))),
        Job(("show", str(path))),
        Job(("show", str(path), "--reveal"), env=(("FORCE_COLOR", "1"),)),
        Job(("replay", str(path)), env=(("FORCE_COLOR", "1"),)),
        Job(("replay", str(evil_file))),
        Job(("replay", str(path), "--json")),
    ]
    *terminal, as_json = run_many(jobs)
    for proc in terminal:
        assert "Traceback" not in proc.stderr
        _no_raw_escapes(proc.stdout)
        _no_raw_escapes(proc.stderr)
    # The name is still there, escaped so a reader sees what it holds.
    assert "Eve\\x1b]0;pwned\\x07" in terminal[0].stdout
    assert "no\\x1b[2Jsuch.json" in terminal[4].stderr
    # JSON keeps the record's text as JSON escapes (the contract's output is data).
    assert as_json.returncode == 1 and "\x1b" not in as_json.stdout


def test_terminal_play_escapes_names(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from donutbox.play import Session

    game = load(
        {
            "format": "donutbox/1",
            "players": [EVIL, "Bot"],
            "decks": [["CCCC", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB", "BBBB"], ["BBBB"] * 6],
        }
    )
    prompts: list[str] = []
    answers = iter(["CCCC@2,0/0", "flip\x1b[2J", "undo"])

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    for colour in (False, True):
        out = io.StringIO()
        console = Console(file=out, width=120, force_terminal=colour, no_color=not colour)
        prompts.clear()
        answers = iter(["CCCC@2,0/0", "flip\x1b[2J", "undo"])
        copy = load(dump(game))
        assert Session(copy, ["human", "random"], 1.0, console, ask).run() == 0
        text = out.getvalue()
        _no_raw_escapes(text)
        for prompt in prompts:
            _no_raw_escapes(prompt)
        assert "not allowed: bad move 'flip\\x1b[2J'" in text or "flip\\\\x1b" in text
        assert "took back 2 moves" in text


# -- issue 12, point 15: serve refuses an address it cannot listen on ----------


def test_serve_on_a_port_in_use_or_a_bad_host_is_one_line_and_status_2(tmp_path: Path) -> None:
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    db = f"sqlite:///{tmp_path}/x.db"
    try:
        in_use, foreign, unknown = run_many(
            [
                Job(("serve", "--port", str(port), "--db", db)),
                Job(("serve", "--host", "203.0.113.1", "--port", "8765", "--db", db)),
                Job(("serve", "--host", "no-such-host.invalid", "--db", db)),
            ]
        )
    finally:
        taken.close()
    for proc, words in (
        (in_use, f"cannot listen on 127.0.0.1 port {port}: Address already in use"),
        (foreign, "cannot listen on 203.0.113.1 port 8765"),
        (unknown, "--host 'no-such-host.invalid': not an address to listen on"),
    ):
        assert_bad_input(proc, words)  # nothing on stdout: it never said it was serving
        assert proc.stderr.startswith(f"donutbox serve: {words}"), proc.stderr


def test_ctrl_c_stops_a_sweep_and_keeps_finished_games(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # 11 points x 200 games: far from done when the first game has finished.
    args = ["balance", "--sweep", "rolls=0..10", "--players", "heuristic,heuristic"]
    args += ["--games", "200", "--skill", "none", "--jobs", "2"]
    status, err, took = _interrupt_after_progress(args, out, 2200)
    assert status == 130 and took < 5, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    m = re.fullmatch(
        r"donutbox balance: interrupted: (\d+) of 2200 games finished, kept in (.+)", lines[0]
    )
    assert m and 1 <= int(m.group(1)) < 2200, lines[0]
    records = (out / "records.jsonl").read_text().splitlines()
    assert len(records) == int(m.group(1))
    assert not (out / "sweep.md").exists()


def test_play_takes_a_deck_file(tmp_path: Path) -> None:
    deck = tmp_path / "d.json"
    deck.write_text('{"name": "no rolls", "deck": {"rolls": 0}}')
    proc = subprocess.run(
        [sys.executable, "-m", "donutbox.cli", "play", "--deck", str(deck), "--seed", "3"],
        input="save g.json\nquit\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env_with_this_tree(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "g.json").read_text())
    assert record["deck"] == "no rolls"
    assert all("R" not in face for d in record["decks"] for face in d)
    resumed = subprocess.run(
        [sys.executable, "-m", "donutbox.cli", "play", "--resume", "g.json", "--deck", str(deck)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env_with_this_tree(),
        timeout=60,
    )
    assert resumed.returncode == 2
    assert "--deck: a resumed game keeps the decks of its record" in resumed.stderr


def test_a_deeply_nested_toml_deck_is_one_line_and_exit_2(tmp_path: Path) -> None:
    deck = tmp_path / "deep.toml"
    deck.write_text("deck = " + "[" * 5000 + "]" * 5000)
    proc = subprocess.run(
        [sys.executable, "-m", "donutbox.cli", "play", "--deck", str(deck)],
        input="quit\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env_with_this_tree(),
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--deck" in lines[0], proc.stderr
    assert lines[0].endswith("not TOML: nested too deeply"), proc.stderr
