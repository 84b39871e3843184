"""Golden records through the real command line (docs/spec.md, "Game records and notation").

Every record in ``tests/data`` and in ``tests/data/spec`` (the specification's
worked examples, copied into the repository) is replayed
with ``donutbox replay X --json`` and listed with ``donutbox moves X --json``
(through the CLI's ``main()`` in this process, and the first records of each
kind also in a ``donutbox`` subprocess, which must say the same); the output
is compared with the hand-worked expectations
(``NAME.expect.json``, ``NAME.moves.json``; see ``tests/data/README.md``).
``cells``, ``winners`` and each delivery's ``to`` are compared in any order,
moves as sets.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
# The specification's worked examples, kept in the repository (tests/data/spec)
# so the tests never depend on where the shared folder is.
EXAMPLES = DATA / "spec"

KEYS = {"scores", "delivered", "finished", "winners", "to_move", "cells", "deliveries", "error"}


def _records() -> list[Path]:
    found = sorted(p for p in DATA.glob("*.json") if p.name.count(".") == 1)
    if EXAMPLES.is_dir():
        found += sorted(p for p in EXAMPLES.glob("*.json") if p.name.count(".") == 1)
    return found


RECORDS = _records()
GOOD = [p for p in RECORDS if not p.name.startswith("bad-")]
BAD = [p for p in RECORDS if p.name.startswith("bad-")]


def _moves_args(path: Path) -> list[str]:
    args = ["moves", str(path), "--json"]
    spec = path.with_name(path.stem + ".moves.json")
    if spec.exists():
        for face in json.loads(spec.read_text()).get("cards", []):
            args += ["--card", face]
    return args


#: Records whose commands also run in a real ``donutbox`` subprocess.
THROUGH_SUBPROCESS = [*GOOD[:3], *BAD[:3]]


@pytest.fixture(scope="module")
def results(cli: Any) -> dict[tuple[str, str], subprocess.CompletedProcess[str]]:
    """Run every command once through ``main()`` in this process (the
    ``cli`` fixture of tests/conftest.py); those of ``THROUGH_SUBPROCESS``
    also in a fresh interpreter, which must give the same status and
    output."""
    jobs: dict[tuple[str, str], list[str]] = {}
    for path in RECORDS:
        jobs[("replay", str(path))] = ["replay", str(path), "--json"]
        if path in GOOD or path in BAD[:3]:
            jobs[("moves", str(path))] = _moves_args(path)
    got = dict(zip(jobs, cli.many(jobs.values(), in_process=True), strict=True))
    real = [k for k in jobs if Path(k[1]) in THROUGH_SUBPROCESS]
    for key, proc in zip(real, cli.many(jobs[k] for k in real), strict=True):
        mine = got[key]
        assert (mine.returncode, mine.stdout, mine.stderr) == (
            proc.returncode,
            proc.stdout,
            proc.stderr,
        ), key
    return got


def _cell_key(c: dict[str, object]) -> tuple[object, ...]:
    return (c["x"], c["y"], c["flavour"], c["roll"], c["owner"], c["delivered"])


def _delivery_key(d: dict[str, object]) -> tuple[object, ...]:
    to = d["to"]
    assert isinstance(to, list)
    return (d["ply"], d["how"], d["size"], d["points"], sorted(to))


def test_there_are_golden_records() -> None:
    names = {p.name for p in GOOD}
    assert len(names) >= 20
    assert len(BAD) >= 10
    for path in GOOD:
        assert path.with_name(path.stem + ".expect.json").exists(), path


@pytest.mark.parametrize("path", GOOD, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_replay_matches_hand_worked_expectation(path: Path, results) -> None:
    expected = json.loads(path.with_name(path.stem + ".expect.json").read_text())
    proc = results[("replay", str(path))]
    assert "Traceback" not in proc.stderr
    want_status = 0 if expected["error"] is None else 1
    assert proc.returncode == want_status, proc.stderr
    got = json.loads(proc.stdout)
    assert set(got) == KEYS
    for key in ("scores", "delivered", "finished", "to_move"):
        assert got[key] == expected[key], key
    assert sorted(got["winners"]) == sorted(expected["winners"])
    assert sorted(map(_cell_key, got["cells"])) == sorted(map(_cell_key, expected["cells"]))
    assert [_delivery_key(d) for d in got["deliveries"]] == [
        _delivery_key(d) for d in expected["deliveries"]
    ]
    if expected["error"] is None:
        assert got["error"] is None
    else:
        err = got["error"]
        assert err is not None
        assert err["ply"] == expected["error"]["ply"]
        assert err["move"] == expected["error"]["move"]
        # The expect file names the rule; the real reason must mention it.
        assert expected["error"]["reason"].lower() in err["reason"].lower()


@pytest.mark.parametrize("path", GOOD, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_moves_match_hand_worked_expectation(path: Path, results) -> None:
    expected = json.loads(path.with_name(path.stem + ".expect.json").read_text())
    spec = path.with_name(path.stem + ".moves.json")
    proc = results[("moves", str(path))]
    assert "Traceback" not in proc.stderr
    got = json.loads(proc.stdout)
    assert set(got) == {"moves"}
    moves = got["moves"]
    assert len(moves) == len(set(moves)), "each legal action must be listed once"
    if spec.exists():
        assert set(moves) == set(json.loads(spec.read_text())["moves"])
    elif expected["finished"]:
        assert moves == []
    else:  # pragma: no cover - every unfinished record has a moves file
        pytest.fail(f"no {spec.name}")


@pytest.mark.parametrize(
    ("command", "path"),
    [("replay", p) for p in BAD] + [("moves", p) for p in BAD[:3]],
    ids=lambda v: v.stem if isinstance(v, Path) else v,
)
def test_unreadable_record_exits_2(path: Path, command: str, results) -> None:
    proc = results[(command, str(path))]
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
