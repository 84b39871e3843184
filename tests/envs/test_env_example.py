"""The example in examples/ runs, and an agent played through the
environment plays exactly as it does on the engine."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("pettingzoo", reason="the rl extra is not installed: pip install '.[rl]'")
pytest.importorskip("gymnasium", reason="the rl extra is not installed: pip install '.[rl]'")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_evaluate_agents_example() -> None:
    result = _load("evaluate_agents").main(games=2, quiet=True)
    assert result["identical"] == 2
    for rate, half in result["rates"].values():
        assert 0.0 <= rate <= 1.0 and half >= 0.0


def test_measure_window_example_fits_the_default_window() -> None:
    example = _load("measure_window")
    from donutbox.core import Rules
    from donutbox.envs import DEFAULT_WINDOW

    for players in (2, 4):
        need = example.needed_half_width(Rules(layout="splitzkies"), players, seed=0)
        assert 2 <= need <= DEFAULT_WINDOW[players] // 2
