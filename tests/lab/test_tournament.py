"""``donutbox tournament``: the round robin, the Bradley-Terry ratings
(worked by hand), and the command's output and errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from donutbox.ai import make_agent
from donutbox.ai.catalogue import split_budget
from donutbox.cli import main
from donutbox.core import InputError, Rules
from donutbox.lab.match import GameResult
from donutbox.lab.tournament import extension, fit, ladder, round_robin


def test_round_robin_pairs_every_two_agents_on_the_same_deals() -> None:
    todo = round_robin(["a", "b", "c"], 4, Rules(), 10)
    pairs = [(s.seats, s.seed) for s in todo]
    assert [s.index for s in todo] == list(range(12))
    assert pairs[:4] == [(("a", "b"), 10), (("b", "a"), 10), (("a", "b"), 11), (("b", "a"), 11)]
    assert {frozenset(s.seats) for s in todo} == {
        frozenset("ab"),
        frozenset("ac"),
        frozenset("bc"),
    }


def test_bradley_terry_by_hand() -> None:
    # a beats b 3 of 4; with one virtual draw: 3.5 to 1.5 in 5 games, and
    # the maximum-likelihood ratio of two agents is the ratio of their wins.
    p = fit(["a", "b"], {("a", "b"): (3.0, 4)})
    assert p[0] / p[1] == pytest.approx(3.5 / 1.5)
    # a chain (a-b, b-c, no a-c) fits each link on its own
    p = fit(["a", "b", "c"], {("a", "b"): (3.0, 4), ("b", "c"): (1.0, 4)})
    assert p[0] / p[1] == pytest.approx(3.5 / 1.5)
    assert p[1] / p[2] == pytest.approx(1.5 / 3.5)


def _result(seats: tuple[str, str], winner: int, seed: int) -> GameResult:
    return GameResult(
        seed=seed,
        seats=list(seats),
        rules=Rules(),
        scores=[1, 0] if winner == 0 else [0, 1],
        winners=[winner],
        delivered=[0, 0],
        plies=1,
        swaps=0,
        passes=0,
        points_by_source={},
        boxes={},
        roll_points=[0, 0],
        seconds=0.0,
        ended_by="",
        deck="standard",
        record={},
    )


def test_ladder_ratings_on_the_elo_scale_with_intervals() -> None:
    # strong beats random in 9 of 10 games (5 deals, both seats)
    results = []
    for deal in range(5):
        results.append(_result(("strong", "random"), 0, deal))
        results.append(_result(("random", "strong"), 1 if deal else 0, deal))
    rows = ladder(results, ["random", "strong"], boots=100)
    strong, rand = rows
    assert (strong.agent, rand.agent) == ("strong", "random")
    assert rand.rating == 0 and (rand.low, rand.high) == (0, 0)  # the anchor
    # 9.5 to 1.5 in 11 games: 400 log10(9.5 / 1.5) = 320.6
    assert strong.rating == pytest.approx(400 * math.log10(9.5 / 1.5))
    assert strong.low <= strong.rating <= strong.high
    assert strong.high > strong.low  # the deals vary: one was shared 1-1
    assert (strong.games, strong.score) == (10, 0.9)


def test_a_budget_names_iterations() -> None:
    assert split_budget("mcts:200") == ("mcts", {"iterations": 200, "seconds": None})
    agent = make_agent("hard:30")
    assert agent.iterations == 30 and agent.seconds is None  # type: ignore[attr-defined]
    with pytest.raises(InputError, match="greedy does not search"):
        split_budget("greedy:5")
    with pytest.raises(InputError, match="iterations, 1 to"):
        split_budget("mcts:0")


def test_the_command_plays_and_writes_the_ladder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["tournament", "--agents", "random,greedy,mcts:8", "--games", "2", "--out", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0] == "| rank | agent | rating | 95% interval | games | score |"
    rows = json.loads((tmp_path / "ladder.json").read_text())
    assert sorted(r["agent"] for r in rows) == ["greedy", "mcts:8", "random"]
    assert all(r["games"] == 4 for r in rows)  # 2 games against each of 2 others
    # every game has one winner or a shared win: the scores add up to 6 games
    assert sum(r["score"] * r["games"] for r in rows) == pytest.approx(6)
    assert len((tmp_path / "records.jsonl").read_text().splitlines()) == 6


@pytest.mark.parametrize(
    ("agents", "reason"),
    [
        ("random", "--agents must name 2 to 16 agents"),
        ("random,random", "each agent once"),
        ("random,nobody", "unknown agent 'nobody'"),
        ("random,greedy:5", "greedy does not search"),
        ("random,mcts:lots", "iterations, 1 to"),
    ],
)
def test_bad_agents_get_one_line(
    agents: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tournament", "--agents", agents]) == 2
    err = capsys.readouterr().err
    assert reason in err and len(err.strip().splitlines()) == 1


def test_a_pair_that_did_not_play_shows_no_score(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert (
        main(["tournament", "--agents", "random,greedy", "--games", "2", "--out", str(first)]) == 0
    )
    args = ["--extend", str(first), "--agents", "heuristic", "--against", "greedy"]
    assert main(["tournament", *args, "--games", "2", "--out", str(second)]) == 0
    rows = [r for r in (second / "ladder.md").read_text().splitlines() if r.startswith("| ")]
    cells = {r.split(" | ")[0].strip("| "): r.strip("| ").split(" | ") for r in rows}
    order = cells["row's score vs column"][1:]
    seen = dict(zip(order, cells["heuristic"][1:], strict=True))
    assert seen["random"] == "·" and seen["heuristic"] == "-"
    assert seen["greedy"].endswith("%")
    seen = dict(zip(order, cells["random"][1:], strict=True))
    assert seen["heuristic"] == "·"


def test_an_extension_plays_only_the_new_agents_games() -> None:
    rules = Rules()
    todo = extension(["random", "greedy", "heuristic"], ["mcts:8"], 2, rules, 5)
    # One new agent: 2 paired games (deal 5 from both seats) against each
    # of the 3 earlier agents, and nothing among the earlier ones.
    assert [(s.seats, s.seed) for s in todo] == [
        (("mcts:8", "random"), 5),
        (("random", "mcts:8"), 5),
        (("mcts:8", "greedy"), 5),
        (("greedy", "mcts:8"), 5),
        (("mcts:8", "heuristic"), 5),
        (("heuristic", "mcts:8"), 5),
    ]
    assert [s.index for s in todo] == list(range(6))
    # --against narrows the opponents; two new agents also meet each other.
    todo = extension(["random", "greedy"], ["mcts:8", "mcts:9"], 2, rules, 5, against=["greedy"])
    assert [s.seats for s in todo][::2] == [
        ("mcts:8", "greedy"),
        ("mcts:9", "greedy"),
        ("mcts:8", "mcts:9"),
    ]


def test_the_command_extends_a_ladder_played_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert (
        main(["tournament", "--agents", "random,greedy", "--games", "2", "--out", str(first)]) == 0
    )
    before = (first / "games.csv").read_text().splitlines()
    code = main(
        ["tournament", "--extend", str(first), "--agents", "heuristic", "--games", "2",
         "--out", str(second)]
    )  # fmt: skip
    assert code == 0
    capsys.readouterr()
    after = (second / "games.csv").read_text().splitlines()
    # The earlier 2 games kept as they were (not replayed), then 4 new ones:
    # heuristic against random and against greedy, 2 each, on deal 1.
    assert after[: len(before)] == before
    new = [line.split(",") for line in after[len(before) :]]
    assert [(row[2], row[3], row[1]) for row in new] == [
        ("heuristic", "random", "1"),
        ("random", "heuristic", "1"),
        ("heuristic", "greedy", "1"),
        ("greedy", "heuristic", "1"),
    ]
    rows = {r["agent"]: r for r in json.loads((second / "ladder.json").read_text())}
    assert sorted(rows) == ["greedy", "heuristic", "random"]
    assert (rows["random"]["games"], rows["greedy"]["games"], rows["heuristic"]["games"]) == (
        4,
        4,
        4,
    )
    assert rows["random"]["rating"] == 0  # the anchor
    # The pair table: random and greedy did play each other; a pair that
    # did not play shows "·", never a score.
    lines = (second / "ladder.md").read_text().splitlines()
    table = {line.split(" | ")[0].strip("| "): line for line in lines if line.startswith("| ")}
    assert "·" not in table["random"] and "·" not in table["heuristic"]
    first_ladder = (first / "ladder.md").read_text()
    assert "·" not in first_ladder
    # Only the new games have records here (the earlier ones are in first/).
    assert len((second / "records.jsonl").read_text().splitlines()) == 4


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        (["--agents", "random"], "--agents: every agent named is on that ladder already"),
        (["--agents", "heuristic", "--against", "mcts:8"], "--against: mcts:8 not on that ladder"),
        (
            ["--agents", "heuristic", "--layout", "splitzkies"],
            "--extend: that ladder was played with rules",
        ),
    ],
)
def test_a_bad_extension_gets_one_line(
    extra: list[str], reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["tournament", "--agents", "random,greedy", "--games", "2", "--out", str(tmp_path)])
        == 0
    )
    capsys.readouterr()
    assert main(["tournament", "--extend", str(tmp_path), *extra]) == 2
    err = capsys.readouterr().err
    assert reason in err and len(err.strip().splitlines()) == 1
    assert main(["tournament", "--extend", str(tmp_path / "none"), "--agents", "heuristic"]) == 2
    assert "--extend: " in capsys.readouterr().err
    assert main(["tournament", "--agents", "random,greedy", "--against", "random"]) == 2
    assert "--against: only with --extend" in capsys.readouterr().err
