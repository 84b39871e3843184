"""The lab on a real Dask cluster (``--cluster``): the same games, rows and
reports as ``--jobs``, Ctrl-C keeping what finished, and one-line errors for
a cluster that cannot be used.

One local cluster (two worker processes, one thread each) is shared by the
module; the commands reach it by its address, as they would a remote one.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from donutbox.cli import main
from donutbox.core import Rules
from donutbox.lab.match import play_game
from donutbox.lab.sim import specs

# Imported by the tests that use it, not at collection (about 1 s in every
# xdist worker): here only whether it is there.
if importlib.util.find_spec("distributed") is None:
    pytest.skip("needs pip install '.[cluster]'", allow_module_level=True)

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    import logging

    distributed = pytest.importorskip("distributed", reason="needs pip install '.[cluster]'")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # any free port: two runs at once must not clash
        silence_logs=logging.CRITICAL,
    )
    try:
        yield str(cluster.scheduler_address)
    finally:
        cluster.close()


def _rows(folder: Path) -> list[list[str]]:
    """games.csv without its ``seconds`` column (the wall time of each game,
    which no two runs share)."""
    with (folder / "games.csv").open(newline="") as fh:
        rows = list(csv.reader(fh))
    drop = rows[0].index("seconds")
    return [row[:drop] + row[drop + 1 :] for row in rows]


def _runs(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    common: list[str],
    scheduler: str,
    jobs: tuple[int, ...] = (1, 2),
) -> dict[str, tuple[str, str]]:
    """The command on the cluster and with each --jobs: each one's (stdout,
    stderr), its files in tmp_path / name (cluster, jobs1, jobs2)."""
    outs = {}
    for name, how in (
        ("cluster", ["--cluster", scheduler]),
        *((f"jobs{n}", ["--jobs", str(n)]) for n in jobs),
    ):
        code = main([*common, *how, "--out", str(tmp_path / name)])
        out, err = capsys.readouterr()
        assert code == 0, err
        outs[name] = (out.replace(str(tmp_path / name), "OUT"), err)
    assert f"playing on the Dask cluster at {scheduler} (2 workers)" in outs["cluster"][1]
    return outs


def test_sim_on_a_cluster_gives_the_same_rows_as_jobs(
    scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["sim", "--players", "greedy,random", "--games", "4", "--seed", "11", "--closers"]
    outs = _runs(capsys, tmp_path, common, scheduler)
    base = tmp_path / "jobs1"
    rows = _rows(base)
    assert len(rows) == 5  # a header and four games, paired: seeds 11, 11, 12, 12
    assert [r[1] for r in rows[1:]] == ["11", "11", "12", "12"]
    for name in ("cluster", "jobs2"):
        assert outs[name][0] == outs["jobs1"][0]  # the printed summary
        assert _rows(tmp_path / name) == rows
        for file in ("records.jsonl", "summary.json"):
            assert (tmp_path / name / file).read_bytes() == (base / file).read_bytes()
    # Every game was logged as it finished, once.
    with (tmp_path / "cluster" / "progress.jsonl").open() as fh:
        logged = [json.loads(line) for line in fh]
    assert sorted(g["game"] for g in logged) == list(range(4))


def test_balance_on_a_cluster_gives_the_same_report_as_jobs(
    scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Self-play: every game a deal of its own (seeds 5 and 6 in each of
    # the eight rule combinations).
    common = ["balance", "--players", "random,random", "--games", "2", "--seed", "5"]
    _runs(capsys, tmp_path, common, scheduler)
    base = tmp_path / "jobs1"
    rows = _rows(base)
    assert len(rows) == 17
    assert [r[1] for r in rows[1:]] == ["5", "6"] * 8
    for name in ("cluster", "jobs2"):
        assert _rows(tmp_path / name) == rows
        for file in ("records.jsonl", "balance.md"):
            assert (tmp_path / name / file).read_bytes() == (base / file).read_bytes()


def test_sweep_on_a_cluster_gives_the_same_report_as_jobs(
    scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = [
        *("balance", "--sweep", "rolls=4,8", "--players", "random,random", "--games", "2"),
        *("--skill", "greedy,random", "--skill-games", "2", "--seed", "3"),
    ]
    _runs(capsys, tmp_path, common, scheduler, jobs=(1,))
    base = tmp_path / "jobs1"
    assert len(_rows(base)) == 9  # 2 points x (2 self-play + 2 skill games)
    cluster = tmp_path / "cluster"
    assert _rows(cluster) == _rows(base)
    assert (cluster / "sweep.md").read_bytes() == (base / "sweep.md").read_bytes()
    figures = [json.loads((folder / "sweep.json").read_text()) for folder in (cluster, base)]
    for f in figures:  # the mean wall time of a game differs from run to run
        for point in f["points"]:
            point.pop("seconds_per_game")
            for s in point["skill"].values():
                s.pop("seconds_per_game")
    assert figures[0] == figures[1]


def test_ctrl_c_on_a_local_cluster_keeps_the_games_that_finished(tmp_path: Path) -> None:
    # Ctrl-C at a terminal reaches the whole process group: the command, its
    # scheduler and its worker processes.  The workers leave it to the
    # command, which keeps the finished games and stops them all.
    out = tmp_path / "stopped"
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "donutbox", "sim", "--players", "greedy,random"),
            *("--games", "400", "--seed", "9", "--cluster", "local:2", "--out", str(out)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        start_new_session=True,
    )
    log = out / "progress.jsonl"
    deadline = time.monotonic() + 60
    while not (log.exists() and log.read_text().count("\n") >= 3):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert lines[0] == "donutbox sim: playing on a local Dask cluster (2 workers)"
    assert len(lines) == 2, stderr  # no worker's traceback
    assert lines[1].startswith("donutbox sim: interrupted: ")
    assert lines[1].endswith(f"of 400 games finished, kept in {out}")
    kept = int(lines[1].split()[3])
    logged = sorted(json.loads(x)["game"] for x in log.read_text().splitlines())
    rows = _rows(out)
    assert 3 <= kept == len(rows) - 1 == len(logged) < 400
    assert sorted(int(r[0]) for r in rows[1:]) == logged
    # No process of the run is left (the workers stopped with it).
    deadline = time.monotonic() + 10
    while True:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "a worker of the stopped run is still running"
        time.sleep(0.1)
    # The kept games are those --jobs 1 plays for the same specs.
    todo = specs(["greedy", "random"], 400, Rules(), 9)
    kept_rows = {int(r[0]): r for r in rows[1:]}
    for i in logged:
        r = play_game(list(todo[i].seats), Rules(), todo[i].seed)
        assert kept_rows[i][1:4] == [str(r.seed), *r.seats]
        assert kept_rows[i][4:6] == [str(x) for x in r.scores]
        assert kept_rows[i][7] == str(r.plies)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _sim_fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(["sim", "--players", "random,random", "--games", "2", *argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1, err
    return err


def test_a_scheduler_that_does_not_answer_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = f"tcp://127.0.0.1:{_closed_port()}"
    err = _sim_fails(capsys, "--cluster", refused, "--cluster-timeout", "1", "--out", str(tmp_path))
    no_answer = "no Dask scheduler answered within 1 s"
    assert err.startswith(f"donutbox sim: --cluster {refused}: {no_answer} (")
    # A socket that takes the connection and never says a word.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        mute = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        err = _sim_fails(capsys, "--cluster", mute, "--cluster-timeout", "1")
        assert time.monotonic() - started < 5
    assert err == f"donutbox sim: --cluster {mute}: {no_answer} (no answer)\n"
    assert not (tmp_path / "games.csv").exists()


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["--cluster", "local:0"], "--cluster local:0: N in local:N must be from 1 to 64"),
        (["--cluster", "somewhere"], "--cluster somewhere: give local, local:N or a scheduler's"),
        (["--cluster", "tcp://host:99999"], "--cluster tcp://host:99999: the port must be"),
        (["--cluster", "local:2", "--jobs", "2"], "--jobs and --cluster: give one"),
        (["--cluster", "local", "--cluster-timeout", "0"], "--cluster-timeout must be more than 0"),
    ],
)
def test_bad_cluster_options_are_one_line(
    argv: list[str], reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _sim_fails(capsys, *argv).startswith(f"donutbox sim: {reason}")


def test_without_dask_the_error_names_the_extra(tmp_path: Path) -> None:
    # Python treats a module set to None in sys.modules as not installed.
    argv = ["sim", "--games", "2", "--cluster", "local:2", "--out", str(tmp_path)]
    code = (
        "import sys; sys.modules['distributed'] = None; from donutbox.cli import main; "
        f"sys.exit(main({argv!r}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr == (
        "donutbox sim: --cluster needs Dask distributed, which is not installed: "
        "pip install '.[cluster]'\n"
    )
    assert not (tmp_path / "games.csv").exists()
