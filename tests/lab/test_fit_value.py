"""The fitter of the leaf evaluation (lab/fit_value.py): the logistic
regression against known models, the game rows, the script end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from donutbox.ai.value import FORMAT, NAMES, load_weights
from donutbox.core import InputError
from donutbox.lab import fit_value
from donutbox.lab.fit_value import check_seeds, fit_logistic, positions, sigmoid


def _synthetic(n: int, seed: int) -> tuple[npt.NDArray[np.float64], np.random.Generator]:
    """A constant and three features on very different scales."""
    rng = np.random.default_rng(seed)
    x = np.column_stack(
        [np.ones(n), rng.normal(0, 30, n), rng.normal(5, 1, n), rng.integers(0, 2, n)]
    )
    return x, rng


def test_the_fit_recovers_known_coefficients_exactly_from_expected_outcomes() -> None:
    # outcomes equal to the model's own probabilities: the maximum of the
    # (unpenalised) likelihood is the model itself
    true = np.array([-1.5, 0.04, 0.3, -0.8])
    x, _ = _synthetic(2000, 1)
    y = sigmoid(x @ true)
    w = fit_logistic(x, y, l2=0.0, free=(0,))
    assert np.allclose(w, true, atol=1e-6)


def test_the_fit_recovers_known_coefficients_from_sampled_outcomes() -> None:
    # 0/1 outcomes drawn from a known logistic model: within a few standard
    # errors (about 0.002, 0.02 and 0.04 for the three features here)
    true = np.array([-1.5, 0.04, 0.3, -0.8])
    x, rng = _synthetic(40_000, 2)
    y = (rng.random(len(x)) < sigmoid(x @ true)).astype(float)
    w = fit_logistic(x, y, l2=1.0, free=(0,))
    assert abs(w[1] - true[1]) < 0.006
    assert abs(w[2] - true[2]) < 0.08
    assert abs(w[3] - true[3]) < 0.12
    # a strong penalty shrinks the (standardised) weights towards 0
    shrunk = fit_logistic(x, y, l2=1e6, free=(0,))
    assert all(abs(shrunk[i]) < abs(w[i]) / 5 for i in (1, 2, 3))


def test_the_fit_without_a_constant_recovers_a_model_without_one() -> None:
    # the margin model for 3-4 players has no constant: columns not centred
    true = np.array([0.04, -0.3, 0.8])
    x, _ = _synthetic(2000, 3)
    w = fit_logistic(x[:, 1:], sigmoid(x[:, 1:] @ true), l2=0.0)
    assert np.allclose(w, true, atol=1e-6)


def test_measurement_seeds_are_refused() -> None:
    check_seeds(300_000, 1000)
    with pytest.raises(InputError, match="70001-70400"):
        check_seeds(70_300, 10)
    with pytest.raises(InputError, match="60000-62000"):
        check_seeds(59_990, 11)


def test_a_game_row_replays_with_the_movers_results() -> None:
    row = fit_value.play_one(300_123, ["heuristic", "heuristic"], 0.1, 10)
    seen = list(positions(row))
    assert len(seen) == len(row["moves"])
    (winner,) = row["winners"]
    movers = [0 if i % 2 == 0 else 1 for i in range(len(seen))]  # no box-its change turns
    for (x, q, _, result), mover in zip(seen, movers, strict=True):
        assert x[1] == (1.0 if mover == 0 else -1.0)  # seat: the mover is known
        assert result == (1.0 if mover == winner else 0.0)
        assert 0.0 < q <= 1.0
    broken = dict(row, winners=[1 - winner])
    with pytest.raises(InputError, match="do not replay"):
        list(positions(broken))


def test_the_script_runs_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w.json"
    games = tmp_path / "g.jsonl"
    args = ["--games", "5", "--seed", "300000", "--mcts-every", "5", "--mcts-iterations", "8"]
    assert fit_value.main([*args, "--out", str(out), "--save-games", str(games)]) == 0
    data = json.loads(out.read_text())
    assert data["format"] == FORMAT
    assert set(data["features"]) == set(NAMES)
    prov = data["provenance"]
    assert prov["games"] == 5 and prov["deal_seeds"] == "300000-300004"
    assert prov["agents"] == {"mcts vs heuristic": 1, "heuristic vs heuristic": 4}
    held = data["held_out"]
    assert held["games"] == 1 and held["positions"] > 40
    for name in ("fitted", "squash20", "margin_refit"):
        assert 0.0 < held[name]["brier"] < 1.0 and held[name]["log_loss"] > 0.0
    model = load_weights(out)  # the loader accepts what the fitter writes
    assert math.isfinite(model.weights["banked"])
    rows = [json.loads(line) for line in games.read_text().splitlines()]
    assert [r["held_out"] for r in rows] == [False, False, False, False, True]
    # the saved games fit to the same weights
    again = tmp_path / "again.json"
    assert fit_value.main(["--from", str(games), "--out", str(again)]) == 0
    assert json.loads(again.read_text())["features"] == data["features"]
    assert "fitted: log-loss" in capsys.readouterr().out


def test_bad_options_get_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert fit_value.main(["--games", "4", "--seed", "70001"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fit_value: deal seeds 70001-70004 overlap") and err.count("\n") == 1
    assert fit_value.main(["--from", str(tmp_path / "none.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seed": 1}\n')
    assert fit_value.main(["--from", str(bad)]) == 2
    assert "bad.jsonl:1: no 'seats'" in capsys.readouterr().err
