"""The PPO baseline: a smoke run of examples/train_ppo.py, and the shipped
policy as an agent (``make_agent("ppo")``)."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

from donutbox.ai import make_agent
from donutbox.core import DonutboxError, Game

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_without_torch_the_agent_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now fails
    with pytest.raises(DonutboxError, match="pip install torch"):
        make_agent("ppo")


def _example() -> ModuleType:
    pytest.importorskip(
        "torch", reason="the training example needs PyTorch: pip install -e '.[train]'"
    )
    pytest.importorskip("gymnasium", reason="the rl extra is not installed: pip install '.[rl]'")
    spec = importlib.util.spec_from_file_location("train_ppo", EXAMPLES / "train_ppo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_training_smoke_run(tmp_path: Path) -> None:
    example = _example()
    out = tmp_path / "ppo.pt"
    result = example.main(
        ["--cpu-minutes", "0.02", "--games-per-iter", "2", "--eval-deals", "1", "--out", str(out)]
    )
    assert result["games"] >= 2 and result["rows"]
    row = result["rows"][0]
    assert row["steps"] > 10 and row["cpu_s"] > 0
    for name in ("random", "greedy"):
        assert result[f"eval_{name}"]["games"] == 2  # one deal, both seats
    agent = make_agent("ppo", weights=str(out))
    game = Game.new(seed=3)
    move = agent.choose(game.view(0), random.Random(0))
    assert game.is_legal(move)


def test_the_shipped_policy_plays_whole_games() -> None:
    pytest.importorskip("torch", reason="the ppo agent needs PyTorch: pip install -e '.[train]'")
    agent = make_agent("ppo")
    other = make_agent("random")
    rng = random.Random(1)
    for seed in range(2):
        game = Game.new(seed=seed)
        while not game.finished:
            who = agent if game.to_move == seed % 2 else other
            game.play(who.choose(game.view(game.to_move), rng))
        assert game.finished
    assert (
        Path(__file__).resolve().parents[2] / "src/donutbox/ai/data/ppo.pt"
    ).stat().st_size < 2_000_000
