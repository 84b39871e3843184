"""A long (cluster) balance run stopped early: the report of the games it
kept, worked out again from their records."""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import asdict
from pathlib import Path

from donutbox.cli import main
from donutbox.core import Rules
from donutbox.lab.balance import finished_grid, play_order, report_stopped_run, result_from_record
from donutbox.lab.match import play_game
from donutbox.lab.sim import GameSpec


def test_a_record_replays_to_the_figures_of_the_game_that_made_it() -> None:
    for seats, rules, seed in (
        (["greedy", "random"], Rules(), 3),
        (["random", "greedy"], Rules(match="perfect-match", closers=True), 4),
        (["random", "random"], Rules(layout="splitzkies"), 5),
    ):
        played = play_game(seats, rules, seed)
        again = result_from_record(played.record, played.seconds)
        assert asdict(again) == asdict(played)
        assert played.boxes["sealed"] + played.boxes["boxed"] + played.boxes["end"] > 0


def test_the_grid_is_handed_out_game_by_game_across_the_rule_combinations() -> None:
    # Three games a combination, numbered through (as grid_specs does).
    grid = [
        GameSpec(v * 3 + k, ("a", "b"), rules, k)
        for v, rules in enumerate(Rules.all())
        for k in range(3)
    ]
    order = play_order(grid, 3)
    assert [s.index for s in order[:9]] == [0, 3, 6, 9, 12, 15, 18, 21, 1]
    assert sorted(s.index for s in order) == list(range(24))


def test_a_stopped_run_is_reported_from_the_games_it_kept(tmp_path: Path) -> None:
    full = tmp_path / "full"
    argv = ["balance", "--players", "random,greedy", "--games", "2", "--seed", "4"]
    assert main([*argv, "--out", str(full)]) == 0
    table = [line for line in (full / "balance.md").read_text().splitlines() if line[:2] == "| "]
    # Every game kept: the same table, each combination saying how many it had.
    kept = tmp_path / "kept"
    kept.mkdir()
    for name in ("games.csv", "records.jsonl"):
        shutil.copy(full / name, kept / name)
    path = report_stopped_run(kept, ["random", "greedy"], 4, 2)
    text = path.read_text()
    assert "stopped early, 16 of 16 games finished (2 to 2 per variant)" in text
    again = [line.replace(" (2 games)", "") for line in text.splitlines() if line[:2] == "| "]
    assert again == table
    # Only the first five games of the grid (the first rule combination's
    # two, then three more in game order): three combinations reported.
    with (full / "games.csv").open(newline="") as fh:
        rows = list(csv.reader(fh))
    lines = (full / "records.jsonl").read_text().splitlines(keepends=True)
    part = tmp_path / "part"
    part.mkdir()
    with (part / "games.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows(rows[:6])
    (part / "records.jsonl").write_text("".join(lines[:5]))
    text = report_stopped_run(part, ["random", "greedy"], 4, 2).read_text()
    assert "stopped early, 5 of 16 games finished (1 to 2 per variant)" in text
    assert "One Good Match, Squared Away (2 games)" in text
    assert "One Good Match, Splitzkies (1 game) |" in text
    assert "Perfect Match" not in text.partition("## Reading it")[0]
    grid = finished_grid({i: result_from_record(json.loads(x)) for i, x in enumerate(lines[:5])})
    assert [len(v) for v in grid.values()] == [2, 2, 1]
