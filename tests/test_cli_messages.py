"""What the command line says when something is wrong or worth knowing:
one way to name a record's move in every command, the file a command could
not use, no escape codes without colour, one seed range, sweeps, misspelled
commands, small samples, the terminal opponent's name."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

# box@0,0 as the first move: nothing but the start card is on the counter,
# whose runs are too small to box and belong to nobody (docs/spec.md, "Runs
# and boxes").
ILLEGAL = {"format": "donutbox/1", "players": ["A", "B"], "seed": 7, "moves": ["box@0,0"]}
# The second move has a rotation that does not exist (0, 90, 180 or 270).
MALFORMED = {
    "format": "donutbox/1",
    "players": ["A", "B"],
    "seed": 7,
    "moves": ["pass", "CCSS@2,0/45"],
}


def _write(path: Path, record: object) -> str:
    path.write_text(json.dumps(record))
    return str(path)


def _one_line(proc: Any) -> str:
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return str(lines[0])


# -- a record's move, named the same way by every command --------------------------


def test_analyse_names_an_illegal_move_as_replay_does_with_status_1(
    cli: Any, tmp_path: Path
) -> None:
    path = _write(tmp_path / "illegal.json", ILLEGAL)
    want = "move 1 (ply 0, box@0,0) is illegal: box it: "
    for command in ("analyse", "replay", "show", "moves", "perft"):
        proc = cli(command, path)
        assert proc.returncode == 1, (command, proc.stderr)
        assert _one_line(proc).startswith(f"donutbox {command}: {want}"), proc.stderr
    assert cli("analyse", path).stdout == ""


def test_a_malformed_move_is_counted_from_1_like_an_illegal_one(cli: Any, tmp_path: Path) -> None:
    path = _write(tmp_path / "malformed.json", MALFORMED)
    for command in ("replay", "show", "moves", "analyse"):
        proc = cli(command, path)
        assert proc.returncode == 2 and proc.stdout == "", (command, proc.stderr)
        assert _one_line(proc) == (
            f"donutbox {command}: move 2 (ply 1): bad move 'CCSS@2,0/45': "
            "rotation must be 0, 90, 180 or 270"
        )


def test_play_resume_names_the_file_it_cannot_resume(cli: Any, tmp_path: Path) -> None:
    path = _write(tmp_path / "notrecord.json", {"hello": 1})
    proc = cli("play", "--resume", path, "--no-color")
    assert proc.returncode == 2 and proc.stdout == ""
    assert _one_line(proc).startswith(f"donutbox play: --resume {path}: format is missing")


# -- serve on a database another server holds ----------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_a_second_serve_on_the_same_file_names_it_and_the_ways_out(
    cli: Any, serve: Any, tmp_path: Path
) -> None:
    first = serve()
    proc = cli("serve", "--port", str(_free_port()), "--db", first.db_url, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    line = _one_line(proc)
    assert line.startswith(f"donutbox serve: cannot use the database {first.db}: "), line
    assert "another donutbox serve" in line and "--db" in line and "stop that server" in line
    assert "sqlite3.OperationalError" not in line


def test_the_default_database_is_named_by_its_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sqlite3

    from donutbox.cli import _database_trouble

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    line = _database_trouble(None, sqlite3.OperationalError("database is locked"))
    assert line.startswith(f"cannot use the database {tmp_path}/donutbox/donutbox.db: ")
    assert re.search(r"--db sqlite:///PATH$", line), line


# -- no colour, no escape codes ----------------------------------------------------------

DATA = Path(__file__).resolve().parent / "data"
#: A finished game with a delivered box (drawn bold, dim and struck through
#: in colour): tests/data/spec/README.md.
DELIVERED = DATA / "spec" / "seal-majority.json"


def test_no_color_and_NO_COLOR_send_no_escape_code_at_all(cli: Any) -> None:
    record = str(DELIVERED)
    # FORCE_COLOR: rich draws as on a terminal (the test runs in a pipe).
    coloured = cli("show", record, FORCE_COLOR="1", NO_COLOR="")
    assert "\x1b[" in coloured.stdout  # the check below can fail
    for proc in (
        cli("show", record, "--no-color", FORCE_COLOR="1", NO_COLOR=""),
        cli("show", record, FORCE_COLOR="1", NO_COLOR="1"),
        cli("play", "--seed", "3", "--no-color", stdin=b"quit\n", FORCE_COLOR="1", NO_COLOR=""),
        cli("play", "--seed", "3", stdin=b"quit\n", FORCE_COLOR="1", NO_COLOR="1"),
    ):
        assert proc.returncode == 0, proc.stderr
        assert "\x1b" not in proc.stdout + proc.stderr, proc.args
    # The same letters, only without the escapes.
    plain = cli("show", record, "--no-color", FORCE_COLOR="1", NO_COLOR="").stdout
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured.stdout) == plain


# -- the terminal opponent's name --------------------------------------------------------


def test_terminal_play_names_the_ai_by_its_agent(cli: Any) -> None:
    proc = cli("play", "--seed", "3", "--vs", "hard", "--no-color", stdin=b"quit\n")
    assert proc.returncode == 0, proc.stderr
    assert "hard (AI): 0 points" in proc.stdout and "You: 0 points" in proc.stdout
    assert "Player 2" not in proc.stdout
    three = cli("play", "--seed", "3", "--players", "3", "--vs", "easy", stdin=b"quit\n")
    assert "easy (AI 1): " in three.stdout and "easy (AI 2): " in three.stdout
    hotseat = cli("play", "--seed", "3", "--vs", "hotseat", stdin=b"quit\n")
    assert "Player 1: 0 points" in hotseat.stdout and "Player 2: 0 points" in hotseat.stdout


# -- one seed range: the record format's, 0 to 2**64-1 -----------------------------------

TOP = 2**64 - 1  # docs/notation.md, "The seed generator"


@pytest.mark.slow
def test_every_seed_option_takes_0_to_2_64_minus_1(cli: Any, tmp_path: Path) -> None:
    made = cli("new", "--seed", str(TOP), "--out", str(tmp_path / "top.json"))
    assert made.returncode == 0, made.stderr
    assert json.loads((tmp_path / "top.json").read_text())["seed"] == TOP
    # One game on the largest seed: refused before (sim took up to 2**63-1).
    out = tmp_path / "sim"
    sim = cli("sim", "--players", "random,random", "--games", "1", "--seed", str(TOP),
              "--out", str(out))  # fmt: skip
    assert sim.returncode == 0, sim.stderr
    assert "Traceback" not in sim.stderr
    for command in (
        ("new",),
        ("play",),
        ("sim", "--players", "random,greedy"),
        ("balance",),
        ("balance", "--sweep", "rolls=0..1"),
        ("bench",),
        ("analyse", str(DELIVERED)),
    ):
        for bad in ("-1", str(TOP + 1)):
            proc = cli(*command, "--seed", bad)
            assert proc.returncode == 2 and proc.stdout == "", (command, proc.stderr)
            assert _one_line(proc) == f"donutbox {command[0]}: --seed must be from 0 to 2**64-1"


def test_a_run_whose_deal_seeds_pass_the_top_says_the_largest_seed_it_takes(cli: Any) -> None:
    # Two games use the seeds TOP and TOP + 1: the largest --seed is TOP - 1.
    proc = cli("sim", "--players", "random,random", "--games", "2", "--seed", str(TOP))
    assert proc.returncode == 2 and proc.stdout == ""
    assert _one_line(proc) == (
        f"donutbox sim: --seed {TOP}: 2 deals use the seeds from it up, past 2**64-1; "
        f"give a --seed of at most {TOP - 1}"
    )


# -- sweeps, misspellings, small samples, the progress bar -------------------------------


def test_a_descending_sweep_counts_down() -> None:
    from donutbox.lab.sweep import SweepError, parse_axis

    assert parse_axis("rolls=10..0:5").values == (10, 5, 0)
    assert parse_axis("rolls=3..1").values == (3, 2, 1)
    assert parse_axis("rolls=1..3").values == (1, 2, 3)
    try:
        parse_axis("rolls=3..1:0")
    except SweepError as err:
        assert str(err) == "--sweep rolls: '3..1:0': the step must be 1 or more"
    else:
        raise AssertionError("a step of 0 was taken")


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (("serv",), "; did you mean 'serve'?"),
        (("analyze", "x.json"), "; did you mean 'analyse'?"),
        (("help", "replya"), "; did you mean 'replay'?"),
        (("sim", "--playrs", "random,random"), "; did you mean --players?"),
        (("new", "--layout", "splitzkie"), "; did you mean 'splitzkies'?"),
        (("play", "--vs", "hrad"), "; did you mean 'hard'?"),
    ],
)
def test_a_misspelling_gets_the_closest_name(
    cli: Any, args: tuple[str, ...], suggestion: str
) -> None:
    proc = cli(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert suggestion in _one_line(proc), proc.stderr


def test_nothing_close_suggests_nothing(cli: Any) -> None:
    assert "did you mean" not in _one_line(cli("frobnicate"))


@pytest.mark.slow
def test_sim_and_sweeps_warn_of_a_small_sample_as_balance_does(cli: Any, tmp_path: Path) -> None:
    # 3 games: a 50% would have the 95% Wilson interval 13%-87% (worked out
    # from the formula: centre (1.5 + 1.92) / 6.84, half-width 1.96 *
    # sqrt(0.75 + 0.96) / 6.84).
    sim = cli("sim", "--players", "random,random", "--games", "3")
    assert sim.returncode == 0, sim.stderr
    assert (
        "donutbox sim: warning: only 3 games: even an even 50% would have a 95% interval "
        "of 13%-87%; use --games 40 or more before reading anything into the win rates"
    ) in sim.stderr.splitlines()
    sweep = cli("balance", "--sweep", "rolls=1..0", "--players", "random,random", "--games",
                "3", "--skill", "none", "--out", str(tmp_path / "sweep"))  # fmt: skip
    assert sweep.returncode == 0, sweep.stderr
    assert any(
        line.startswith("donutbox balance: warning: only 3 games per point: even an even 50%")
        for line in sweep.stderr.splitlines()
    ), sweep.stderr
    # The points in the order given: rolls 1, then rolls 0.
    report = (tmp_path / "sweep" / "sweep.md").read_text()
    assert report.index("| rolls 1 |") < report.index("| rolls 0 |")
    quiet = cli("sim", "--players", "random,random", "--games", "40")
    assert "warning" not in quiet.stderr


def test_the_progress_bar_says_its_time_is_the_time_left(cli: Any) -> None:
    # FORCE_COLOR: drawn as on a terminal (the bar is left out in a pipe).
    proc = cli("sim", "--players", "random,random", "--games", "2", FORCE_COLOR="1", NO_COLOR="")
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", proc.stderr)
    assert re.search(r"2/2 +\d:\d\d:\d\d left", plain), plain


# -- which core runs, and how to get the compiled one ------------------------------------


def test_bench_on_the_pure_core_says_how_to_get_the_compiled_one(cli: Any) -> None:
    import donutbox.core

    if donutbox.core.compiled:
        pytest.skip("this run imports the compiled core")
    proc = cli("bench", "--positions", "1", "--games", "1", "--playouts", "1")
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.endswith(
        "core: pure Python; an editable install (pip install -e) runs the source: "
        "'pip install .' builds the compiled core where a C compiler exists, and "
        "'bash .ci/compiled.sh' tests it without touching this install"
    ), first
