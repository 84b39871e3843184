"""Game analysis (ai/analysis.py, ``donutbox analyse``): hand-checked cases."""

from __future__ import annotations

import json
import math
import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import donutbox
from donutbox.ai.analysis import POINT_MARKS, analyse_game, analyse_move, margin, mark
from donutbox.core import STANDARD_DECK, Move, dump

SRC = Path(__file__).resolve().parents[1] / "src"


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-m", "donutbox", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def test_marks_by_the_documented_thresholds() -> None:
    assert mark(0.0) is None
    assert mark(0.0999) is None
    assert mark(0.10) == "inaccuracy"
    assert mark(0.1999) == "inaccuracy"
    assert mark(0.20) == "mistake"
    assert mark(0.2999) == "mistake"
    assert mark(0.30) == "blunder"
    assert mark(0.9) == "blunder"


def test_points_lost_mark_moves_in_a_game_already_lost() -> None:
    # The thresholds in points: what each drop costs in an even game, from
    # 0.5 + d/2 to 0.5 - d/2, by hand: 40 * ln(0.55/0.45) = 8.03,
    # 40 * ln(0.6/0.4) = 16.22, 40 * ln(0.65/0.35) = 24.76.
    assert dict(POINT_MARKS) == {"inaccuracy": 8.0, "mistake": 16.2, "blunder": 24.8}
    squash = lambda m: 1 / (1 + math.exp(-m / 20))  # noqa: E731 (mcts._squash, scale 20)
    assert abs(margin(squash(-37.5)) + 37.5) < 1e-9
    # A game lost by 100 points: giving a 12-point box away (a 24-point
    # swing) barely moves the chance (0.0067 -> 0.0006), which alone marks
    # nothing; in points it is a mistake.
    before, after = squash(-100), squash(-124)
    assert before - after < 0.01 and mark(before - after) is None
    lost = margin(before) - margin(after)
    assert abs(lost - 24) < 1e-6
    assert mark(before - after, lost) == "mistake"
    assert mark(0.0, 8.0) == "inaccuracy" and mark(0.0, 7.9) is None
    assert mark(0.0, 24.8) == "blunder"


def _contested_box() -> donutbox.Game:
    """Start card BBBB.  Player 0 puts BCRC east of it, its R locked to C:
    three C donuts.  Player 1 puts CCCB below that: three more C, joined to
    them.  The C run is 6 donuts with an R (12 points), each player holding
    3, so either may box it.  Everything else in hand is HHHH, which fits
    nowhere (no H on the counter): player 0 may only box it or swap."""
    decks = [
        ["BCRC", "HHHH", "HHHH", "HHHH", "BBBB", "HHHH", "HHHH"],
        ["CCCB", "HHHH", "HHHH", "HHHH", "HHHH", "HHHH"],
    ]
    game = donutbox.Game.deal(decks)
    game.play("BCRC@2,0/0=C")
    game.play("CCCB@2,2/0")
    return game


def test_giving_a_contested_box_away_is_marked() -> None:
    game = _contested_box()
    assert sorted(map(str, game.legal_moves())) == ["box@3,0", "swap HHHH"]
    swap = analyse_move(game, Move("swap", "HHHH"), iterations=300)
    # Swapping lets player 1 box the 12 points instead: a 24-point swing in
    # the margin, squashed with scale 20: 1/(1+e^-0.6) - 1/(1+e^0.6)
    # = tanh(0.3) = 0.29.  A drop of 0.20 or more is a mistake.
    swing = math.tanh(12 / 40)
    assert abs(swing - 0.291) < 0.001
    assert swap.best == "box@3,0"
    assert swap.after < 0.5 < swap.before
    assert abs(swap.drop - swing) < 0.05
    assert swap.mark in ("mistake", "blunder")
    assert swap.mark == mark(swap.drop, swap.points_lost)
    # The same swing in points: about 24 (the squash undone), at least a
    # mistake's 16.2.
    assert 16.2 <= swap.points_lost <= 40
    boxed = analyse_move(game, Move("box", "", 3, 0), iterations=300)
    assert boxed.best == boxed.move == "box@3,0"
    assert boxed.drop == 0 and boxed.mark is None
    assert boxed.player == 0 and boxed.ply == 2 and boxed.choices == 2


def _twin_games() -> tuple[donutbox.Game, donutbox.Game]:
    """Two games that player 0 cannot tell apart: player 1's hidden tray and
    pile differ (as in tests/ai/test_agents.py)."""
    deck0 = list(STANDARD_DECK)
    deck1 = list(STANDARD_DECK)
    rng = random.Random(3)
    rng.shuffle(deck0)
    rng.shuffle(deck1)
    other_b = deck1[1:]
    random.Random(99).shuffle(other_b)
    a = donutbox.Game.deal([deck0, deck1])
    b = donutbox.Game.deal([deck0, [deck1[0], *other_b]])
    move0 = a.legal_moves()[0]
    a.play(move0)
    b.play(move0)
    reply = next(m for m in a.legal_moves() if m.kind == "place" and m.face == deck1[0])
    a.play(reply)
    b.play(reply)
    return a, b


def test_analysis_never_reads_the_hidden_cards() -> None:
    a, b = _twin_games()
    assert a.trays[1] != b.trays[1]
    assert a.view(0).to_dict() == b.view(0).to_dict()
    for move in a.legal_moves()[:2]:
        assert analyse_move(a, move, iterations=60) == analyse_move(b, move, iterations=60)
    # The whole game so far: player 0's moves are judged the same in both.
    first_a = [m for m in analyse_game(a, iterations=40) if m.player == 0]
    first_b = [m for m in analyse_game(b, iterations=40) if m.player == 0]
    assert first_a == first_b


def test_one_ply_for_a_worker_equals_the_whole_analysis(tmp_path: Path) -> None:
    from donutbox.ai.analysis import analyse_ply

    record = json.loads(_short_record(tmp_path, 4).read_text())
    whole = analyse_game(donutbox.core.replay(record), iterations=30, seed=3)
    assert [analyse_ply(record, p, iterations=30, seed=3) for p in range(4)] == [
        m.to_dict() for m in whole
    ]
    with pytest.raises(donutbox.core.InputError, match="ply must be from 0 to 3"):
        analyse_ply(record, 4, iterations=30)


def _short_record(tmp_path: Path, plies: int = 6) -> Path:
    game = donutbox.Game.new(seed=12)
    rng = random.Random(5)
    for _ in range(plies):
        moves = game.legal_moves()
        game.play(moves[rng.randrange(len(moves))])
    path = tmp_path / "game.json"
    path.write_text(json.dumps(dump(game)))
    return path


def test_cli_json_graph_and_progress(tmp_path: Path) -> None:
    record = _short_record(tmp_path)
    graph = tmp_path / "chance.svg"
    proc = _run("analyse", str(record), "--seconds", "0.02", "--json", "--out", str(graph))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["thresholds"] == {"blunder": 0.3, "mistake": 0.2, "inaccuracy": 0.1}
    assert [m["ply"] for m in data["moves"]] == list(range(6))
    assert [m["player"] for m in data["moves"]] == [0, 1, 0, 1, 0, 1]
    for m in data["moves"]:
        assert 0 <= m["after"] <= 1 and 0 <= m["before"] <= 1
        assert m["drop"] == pytest.approx(max(0.0, m["before"] - m["after"]), abs=2e-4)
        assert m["mark"] == mark(m["drop"], m["points_lost"])
    assert [s["moves"] for s in data["summary"]] == [3, 3]
    assert "move 6 of 6" in proc.stderr
    assert graph.read_text().lstrip().startswith("<?xml")


def test_cli_table_keeps_long_names_apart_and_counts_in_words(tmp_path: Path) -> None:
    # The contested box played out (player 0 swaps, player 1 boxes it, then
    # swaps to the end), under two names alike in their first 18 letters.
    game = _contested_box()
    for move in ["swap HHHH", "box@3,0"] + ["swap HHHH"] * 10:
        game.play(move)
    assert game.finished
    record = dump(game)
    record["players"] = ["Bartholomew Smith (1)", "Bartholomew Smith (2)"]
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    proc = _run("analyse", str(path), "--seconds", "0.05")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    rows = lines[1:15]
    for i, row in enumerate(rows):
        assert row.split()[0] == str(i + 1)
        assert f"Bartholomew Smith ({i % 2 + 1})" in row, row
    assert rows[2].split()[-1] in ("mistake", "blunder")  # the swap (move 3)
    totals = [line for line in lines if line.startswith("Bartholomew Smith (")]
    assert len(totals) == 2
    for line in totals:
        # "1 mistake", "0 mistakes", "2 inaccuracies": the word agrees
        for count, word in re.findall(r"(\d+) ([a-z]+)", line.split(": ", 1)[1]):
            singular = word in ("blunder", "mistake", "inaccuracy")
            assert singular == (count == "1"), line


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["--out", "x.gif"], "--out"),
        (["--seconds", "0"], "--seconds"),
    ],
)
def test_cli_bad_options_one_line(tmp_path: Path, args: list[str], word: str) -> None:
    record = _short_record(tmp_path, 2)
    proc = _run("analyse", str(record), *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and word in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_missing_record_one_line(tmp_path: Path) -> None:
    proc = _run("analyse", str(tmp_path / "nothing.json"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "cannot read" in proc.stderr


def test_ctrl_c_exits_130_with_one_line(tmp_path: Path) -> None:
    record = _short_record(tmp_path, 30)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "donutbox", "analyse", str(record), "--seconds", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # "analyse: 30 moves, ..." once it is searching
    assert first.startswith("analyse: 30 moves")
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip().splitlines() == ["donutbox analyse: interrupted"]
