"""The deck lab: sweep axes, paired seeds, results independent of --jobs,
and a small sweep end to end through the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from donutbox.core import Rules, replay
from donutbox.core.decks import from_kinds
from donutbox.lab.match import play_game
from donutbox.lab.sim import run_specs, specs
from donutbox.lab.sweep import SweepError, parse_axis, points, run_sweep, sweep_specs


def test_axes() -> None:
    assert parse_axis("rolls=0..10").values == tuple(range(11))
    assert parse_axis("rolls=0..10:5").values == (0, 5, 10)
    assert parse_axis("rainbows=2,4,8").values == (2, 4, 8)
    assert parse_axis("closers=off,on").values == (False, True)
    assert parse_axis("layout=splitzkies").values == ("splitzkies",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rolls", "write NAME=VALUES"),
        ("cards=1..3", "'cards': unknown; sweep one of halves, threes, rainbows, rolls, match"),
        ("rolls=a..b", "not A..B"),
        ("rolls=5..1:0", "'5..1:0': the step must be 1 or more"),
        ("rolls=0..31", "31 cards is not from 0 to 30"),
        ("closers=maybe", "'maybe' is not on or off"),
        ("match=loose", "'loose' is not one of one-good-match, perfect-match"),
        ("rolls=4,4", "given twice"),
    ],
)
def test_bad_axes(text: str, message: str) -> None:
    with pytest.raises(SweepError, match=message):
        parse_axis(text)


def test_points_are_every_combination_and_checked_before_any_game() -> None:
    pts = points([parse_axis("rolls=4,8"), parse_axis("closers=off,on")])
    assert [(p.deck.counts()["rolls"], p.rules.closers) for p in pts] == [
        (4, False),
        (4, True),
        (8, False),
        (8, True),
    ]
    assert pts[1].label() == "rolls 4, closers"
    with pytest.raises(SweepError, match="rainbows 20 \\+ rolls 20 = 40 cards"):
        points([parse_axis("rolls=0,20"), parse_axis("rainbows=20")])
    with pytest.raises(SweepError, match="leave out --deck"):
        points([parse_axis("rolls=1")], deck=from_kinds({"rolls": 3}))


def test_every_point_uses_the_same_paired_seeds() -> None:
    pts = points([parse_axis("rolls=2,9")])
    todo, where = sweep_specs(pts, ["heuristic", "heuristic"], 3, [("heuristic", "greedy")], 2, 40)
    assert (
        where
        == [(0, "self")] * 3
        + [(0, "heuristic,greedy")] * 2
        + [(1, "self")] * 3
        + [(1, "heuristic,greedy")] * 2
    )
    assert [s.index for s in todo] == list(range(10))
    # One agent in both seats: one game per deal (a rotation would replay it).
    assert [s.seed for s in todo[:3]] == [40, 41, 42]
    # Two agents: both seats of deal 40.
    assert [(s.seats, s.seed) for s in todo[3:5]] == [
        (("heuristic", "greedy"), 40),
        (("greedy", "heuristic"), 40),
    ]
    assert [s.seed for s in todo[5:]] == [s.seed for s in todo[:5]]


def test_same_agent_in_both_seats_gives_the_same_game_under_rotation() -> None:
    # Why the sweep gives each self-play game its own deal: the seat
    # rotation of one agent's game is the very same game.
    a = play_game(["greedy", "greedy"], Rules(), 3)
    b = play_game(["greedy", "greedy"], Rules(), 3)
    assert a.record["moves"] == b.record["moves"]


def test_the_standard_point_plays_exactly_the_standard_games() -> None:
    (pt,) = points([parse_axis("rolls=8")])
    assert pt.deck.standard
    todo = specs(["greedy", "random"], 2, Rules(), 11)
    plain = run_specs(todo)
    res = run_sweep([pt], ["greedy", "random"], 2, [], 0, 11, 1)
    assert [r.record for r in res.games[0]["self"]] == [r.record for r in plain]


def test_sweep_results_do_not_depend_on_jobs() -> None:
    pts = points([parse_axis("rolls=0,10"), parse_axis("layout=splitzkies")])
    # One game a point and one skill game: four games, split three ways
    # unevenly by jobs=3.
    args = (pts, ["greedy", "greedy"], 1, [("greedy", "random")], 1, 5)
    one = run_sweep(*args, jobs=1)
    two = run_sweep(*args, jobs=2)
    three = run_sweep(*args, jobs=3)
    records = [[r.record for g in point.values() for r in g] for point in one.games]
    for other in (two, three):
        assert records == [[r.record for g in point.values() for r in g] for point in other.games]
    # A deck with 0 rolls deals no R; one with 10 deals 10 per player.
    for point, rolls in zip(one.games, (0, 10), strict=True):
        for r in point["self"]:
            assert [sum("R" in f for f in d) for d in r.record["decks"]] == [rolls, rolls]
            assert r.record["rules"]["layout"] == "splitzkies"
            # The record carries its decks: it replays to the same result.
            assert replay(r.record).scores == r.scores


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "donutbox", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_a_small_sweep_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "lab"
    proc = _run(
        "balance",
        "--sweep",
        "rolls=0,8",
        "--players",
        "greedy,greedy",
        "--games",
        "2",
        "--skill",
        "greedy,random",
        "--skill-games",
        "2",
        "--jobs",
        "2",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "sweep.json").read_text())
    assert data["command"] == (
        "donutbox balance --sweep rolls=0,8 --players greedy,greedy --games 2 "
        "--skill greedy,random --seed 1"
    )
    first, second = data["points"]
    assert first["point"] == "rolls 0" and second["point"] == "rolls 8"
    assert first["deck"] == "16 halves, 8 threes, 6 rainbows, 0 rolls"
    # No Cinnamon Roll: no doubled box, and no roll leader to count.
    assert first["roll_share"] == 0 and first["roll_decided"] == 0
    # ... so every point is an "other" point: its leader is the winner.
    assert first["other_leader_win"] == 1.0
    assert first["games"] == 2 and first["skill"]["greedy,random"]["games"] == 2
    lines = (out / "progress.jsonl").read_text().splitlines()
    assert len(lines) == 8  # 2 points x (2 self-play + 2 skill games)
    # Every game's record is kept, in game order, and replays to its result.
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 8
    for rec, logged in zip(
        records, sorted(map(json.loads, lines), key=lambda g: g["game"]), strict=True
    ):
        assert replay(rec).scores == logged["scores"] == rec["result"]["scores"]
    assert all("R" not in f for rec in records[:4] for d in rec["decks"] for f in d)
    md = (out / "sweep.md").read_text()
    assert "| rolls 0 | 16 halves, 8 threes, 6 rainbows, 0 rolls |" in md
    for name in ("first-player", "rolls", "points", "length", "skill"):
        assert (out / f"sweep-{name}.png").stat().st_size > 1000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--sweep", "rolls=0..40"), "40 cards is not from 0 to 30"),
        (("--sweep", "rolls=1", "--sweep", "rolls=2"), "an axis is given twice"),
        (("--sweep", "rolls=1", "--skill", "greedy"), "--skill greedy: name two different agents"),
        (("--skill", "greedy,random"), "--skill goes with --sweep"),
        (("--sweep", "rolls=1", "--games", "0", "--skill", "none"), "there are none"),
    ],
)
def test_bad_sweeps_are_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    proc = _run("balance", *args, "--out", str(tmp_path / "x"), cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("donutbox balance: ")
    assert not (tmp_path / "x").exists()


def test_sim_and_new_take_a_deck_file(tmp_path: Path) -> None:
    deck = tmp_path / "halves.toml"
    deck.write_text('name = "rolls and halves"\n[deck.cards]\nRCSH = 10\nCCSS = 20\n')
    proc = _run("new", "--deck", str(deck), "--seed", "4", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["deck"] == "rolls and halves"
    assert [Counter(d) for d in record["decks"]] == [Counter({"RCSH": 10, "CCSS": 20})] * 2
    out = tmp_path / "sim"
    proc = _run(
        "sim", "--deck", str(deck), "--players", "greedy,random", "--games", "2",
        "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for line in (out / "records.jsonl").read_text().splitlines():
        rec = json.loads(line)
        assert [Counter(d) for d in rec["decks"]] == [Counter({"RCSH": 10, "CCSS": 20})] * 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"deck": {"rolls": 6, "rainbow": 3}}')
    proc = _run("new", "--deck", str(bad), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        f'donutbox new: --deck {bad}: composition.deck: unknown key "rainbow"; '
        'a deck has "cards" or kind counts (halves, threes, rainbows, rolls)\n'
    )
