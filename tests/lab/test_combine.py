"""Combining the progress logs of several sim runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from donutbox.lab.combine import load, main, paired_only, win_rates


def _write(folder: Path, games: list[dict[str, object]]) -> None:
    folder.mkdir()
    (folder / "progress.jsonl").write_text("".join(json.dumps(g) + "\n" for g in games))


def test_wins_from_two_runs_are_added_and_ties_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ab = ["a", "b"]
    ba = ["b", "a"]
    _write(
        tmp_path / "one",
        [
            {"game": 0, "seed": 1, "seats": ab, "winners": [0]},  # a wins
            {"game": 1, "seed": 1, "seats": ba, "winners": [1]},  # a wins
        ],
    )
    _write(
        tmp_path / "two",
        [
            {"game": 0, "seed": 5, "seats": ab, "winners": [0, 1]},  # tie: 1/2 each
            {"game": 1, "seed": 5, "seats": ba, "winners": [0]},  # b wins
            {"game": 2, "seed": 6, "seats": ab, "winners": [1]},  # b wins, deal unfinished
        ],
    )
    games = load([tmp_path / "one", tmp_path / "two", tmp_path / "missing"])
    assert len(games) == 5
    rates = win_rates(games)
    assert rates["a"]["games"] == 5 and rates["a"]["wins"] == 2.5
    assert rates["b"]["wins"] == 2.5
    paired = paired_only(games)
    assert sorted(g["seed"] for g in paired) == [1, 1, 5, 5]
    assert win_rates(paired)["a"]["wins"] == 2.5  # 2.5 of 4 games
    main([str(tmp_path / "one"), str(tmp_path / "two"), "--paired"])
    out = capsys.readouterr().out
    assert "4 games" in out
    assert "a: 2.5/4 = 62.5%" in out
