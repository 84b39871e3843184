"""The balance lab: reproducible simulations, correct statistics, real files."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from donutbox.core import Rules
from donutbox.lab.sim import run_specs, specs, summarize
from donutbox.lab.stats import describe, wilson


def test_wilson_interval_matches_the_textbook_values() -> None:
    # Worked by hand: p = 0.5, n = 100, z = 1.96 -> centre 0.5,
    # half = 1.96 * sqrt(0.0025 + 0.000096) / 1.0384 = 0.0962.
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4)
    assert hi == pytest.approx(0.5962, abs=1e-4)
    # p = 0: the interval starts at 0 and reaches 3.7% for n = 100.
    lo, hi = wilson(0, 100)
    assert lo == pytest.approx(0.0, abs=1e-12)
    assert hi == pytest.approx(0.0370, abs=1e-4)


def test_describe_quartiles() -> None:
    d = describe([1, 2, 3, 4, 5])
    assert d["mean"] == 3 and d["median"] == 3 and d["min"] == 1 and d["max"] == 5


def test_games_are_paired_over_seats() -> None:
    todo = specs(["greedy", "random"], 5, Rules(), 40)
    assert [(s.seats, s.seed) for s in todo] == [
        (("greedy", "random"), 40),
        (("random", "greedy"), 40),
        (("greedy", "random"), 41),
        (("random", "greedy"), 41),
        (("greedy", "random"), 42),
    ]


def test_results_do_not_depend_on_jobs() -> None:
    todo = specs(["greedy", "random"], 4, Rules(layout="splitzkies"), 7)
    one = run_specs(todo, jobs=1)
    two = run_specs(todo, jobs=2)
    assert [r.record for r in one] == [r.record for r in two]
    summary = summarize(one)
    assert sum(a["wins"] for a in summary["agents"].values()) == pytest.approx(4)
    assert sum(s["wins"] for s in summary["seats"]) == pytest.approx(4)


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_specs_reports_each_game_as_it_finishes(jobs: int) -> None:
    todo = specs(["greedy", "random"], 4, Rules(), 3)
    seen: list[tuple[int, int]] = []
    results = run_specs(todo, jobs=jobs, on_result=lambda i, r: seen.append((i, r.seed)))
    assert sorted(seen) == [(0, 3), (1, 3), (2, 4), (3, 4)]
    assert [r.seed for r in results] == [3, 3, 4, 4]


@pytest.mark.parametrize(
    ("extra", "clock"), [([], "cpu"), (["--clock", "cpu"], "cpu"), (["--clock", "wall"], "wall")]
)
@pytest.mark.parametrize("budget", [["--seconds", "0.5"], ["--iterations", "300"], []])
def test_sim_passes_the_mcts_clock_to_the_agents(
    extra: list[str], clock: str, budget: list[str]
) -> None:
    from donutbox.cli import _agent_options, build_parser

    for command in ("sim", "balance"):
        args = build_parser().parse_args([command, "--players", "mcts,heuristic", *budget, *extra])
        options = _agent_options(args)
        expected: dict[str, object] = {"clock": clock}
        if budget:
            expected[budget[0].lstrip("-")] = float(budget[1]) if budget[0] == "--seconds" else 300
        assert options["mcts"] == expected
        assert options["hard"] == expected
        spec = specs(["mcts", "heuristic"], 2, Rules(), 1, options)[1]
        assert dict(dict(spec.options)["mcts"]) == expected
        # The agent the game runner builds gets the clock.
        from donutbox.ai import make_agent

        assert make_agent("mcts", **dict(dict(spec.options)["mcts"])).clock == clock  # type: ignore[attr-defined]


def test_sim_command_writes_records_csv_and_plots(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "donutbox.cli",
            "sim",
            "--players",
            "greedy,random",
            "--games",
            "4",
            "--jobs",
            "2",
            "--out",
            str(out),
            "--closers",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "win rate" in result.stdout
    lines = (out / "records.jsonl").read_text().splitlines()
    assert len(lines) == 4
    # Each game was also logged as it finished.
    logged = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert sorted(g["game"] for g in logged) == [0, 1, 2, 3]
    assert {g["seed"] for g in logged} == {1, 2}
    record = json.loads(lines[0])
    assert record["rules"]["closers"] is True
    with (out / "games.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4
    for name in ("scores.png", "win_rate_by_seat.png", "points_by_source.png"):
        data = (out / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 5000


def test_balance_command_writes_a_report(tmp_path: Path) -> None:
    out = tmp_path / "bal"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "donutbox.cli",
            "balance",
            "--players",
            "random,random",
            "--games",
            "2",
            "--jobs",
            "2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    report = (out / "balance.md").read_text()
    for variant in Rules.all():
        assert variant.label() in report
    for name in ("balance-first-player.png", "balance-boxes.png", "balance-length.png"):
        assert (out / name).read_bytes().startswith(b"\x89PNG")


def test_balance_report_names_the_search_budget(tmp_path: Path) -> None:
    # One game per rule combination and one iteration per move: the line
    # checked is the same whatever the budget, and MCTS ranks every legal
    # move before its first iteration (that ranking is the cost here).
    out = tmp_path / "bal"
    result = subprocess.run(
        [
            *(sys.executable, "-m", "donutbox.cli", "balance", "--players", "mcts,random"),
            *("--games", "1", "--seed", "7", "--iterations", "1", "--out", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    report = (out / "balance.md").read_text()
    assert (
        "Made by `donutbox balance --players mcts,random --games 1 --seed 7 --iterations 1`"
        in report
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--games", "0"],
        ["--jobs", "0"],
        ["--players", "greedy"],
        ["--players", "greedy,nobody"],
        ["--seconds", "-1"],
        ["--seed", "-5"],
    ],
)
def test_sim_rejects_bad_options_in_one_line(args: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "donutbox.cli", "sim", "--players", "random,random", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def _result(seed: int, winners: list[int]) -> object:
    from donutbox.lab.match import GameResult

    return GameResult(
        seed=seed,
        seats=["a", "b"],
        rules=Rules(),
        scores=[10, 5] if winners == [0] else [5, 10],
        winners=winners,
        delivered=[0, 0],
        plies=40,
        swaps=0,
        passes=0,
        points_by_source={"sealed": [0, 0], "boxed": [0, 0], "end": [10, 5]},
        boxes={"sealed": 0, "boxed": 0, "end": 2},
        roll_points=[0, 0],
        seconds=0.1,
    )


def _figures(first_wins: int, games: int) -> dict:
    from donutbox.lab.balance import variant_figures

    results = [_result(i, [0] if i < first_wins else [1]) for i in range(games)]
    return {rules: variant_figures(results) for rules in Rules.all()}  # type: ignore[arg-type]


def test_balance_warns_below_a_useful_sample_size() -> None:
    from donutbox.lab.balance import MIN_GAMES, findings, small_sample_warning

    # 0 first-player wins in 4 games: Wilson's interval is 0%-49.0% (worked by
    # hand: z^2/n = 0.960, centre 0.960/2/1.960 = 0.245, half 0.245), so it
    # does exclude 50%; with 4 games that is no conclusion, and the report
    # says so before its findings.
    assert small_sample_warning(4).startswith("only 4 games per rule combination")
    assert "95% interval of 15%-85%" in small_sample_warning(4)  # wilson(2, 4): 0.5 +- 0.350
    assert small_sample_warning(MIN_GAMES) == ""
    lines = findings(_figures(0, 4))
    assert lines[0].startswith("- With 4 games per variant the intervals are too wide")
    assert "lies below 50%" in lines[1] and "0.0% (95% interval 0.0%-49.0%)" in lines[1]
    assert not any("Seat order matters" in line for line in lines)


def test_balance_findings_are_worded_by_their_intervals() -> None:
    from donutbox.lab.balance import findings

    # 50 of 100: interval 40.4%-59.6% holds 50% in every variant.
    even = findings(_figures(50, 100))
    assert even[0].startswith("- In every variant the first player's 95% interval holds 50%")
    # 65 of 100: interval 55.3%-73.6% lies above 50%.
    ahead = findings(_figures(65, 100))
    assert ahead[0].startswith("- The first player's 95% interval lies above 50% in: ")
    assert "65.0% (95% interval 55.3%-73.6%)" in ahead[0]
    assert not any("too wide" in line for line in ahead)


def test_balance_with_a_tiny_sample_says_so_in_the_report_and_on_stderr(tmp_path: Path) -> None:
    out = tmp_path / "bal"
    result = subprocess.run(
        [
            *(sys.executable, "-m", "donutbox.cli", "balance", "--players", "random,random"),
            *("--games", "2", "--out", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("donutbox balance: warning: only 2 games per rule combination")
    report = (out / "balance.md").read_text()
    assert "**Small sample**: only 2 games per rule combination" in report
    assert "Seat order matters" not in report
    # The log keys each game on its rules (Rules.key()), not on a display label.
    logged = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert sorted({g["rules"] for g in logged}) == sorted(r.key() for r in Rules.all())
