"""The greedy and heuristic agents choose exactly the moves they chose before
they were made faster.

``data/agent-moves.json.gz`` holds every move of seeded games (each rule
set, two players, greedy and heuristic against themselves and each other;
one three-player rule set), recorded with the agents as they were before
``ai/simple.py`` and ``ai/fasteval.py`` were sped up: a game with seed
``s`` is ``Game.new(rules, players, seed=s)``, the agents (``agents[p %
len(agents)]`` at seat ``p``) sharing ``random.Random(s * 7919 + 1)``.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import pytest

import donutbox
from donutbox.ai import make_agent

DATA = Path(__file__).parent / "data" / "agent-moves.json.gz"


def _cases() -> list[dict[str, Any]]:
    with gzip.open(DATA, "rt") as f:
        data = json.load(f)
    assert data["format"] == "agent-moves/1"
    cases: list[dict[str, Any]] = data["cases"]
    return cases


CASES = _cases()


def _id(case: dict[str, Any]) -> str:
    rules = donutbox.Rules(**case["rules"]).label()
    return f"{rules}-{case['players']}p-{'+'.join(case['agents'])}-s{case['seed']}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_every_recorded_move_is_chosen_again(case: dict[str, Any]) -> None:
    rules = donutbox.Rules(**case["rules"])
    players = case["players"]
    game = donutbox.Game.new(rules, players, seed=case["seed"])
    rng = random.Random(case["seed"] * 7919 + 1)
    names = case["agents"]
    agents = [make_agent(names[p % len(names)]) for p in range(players)]
    for ply, want in enumerate(case["moves"]):
        p = game.to_move
        assert p is not None, f"the game ended early, at ply {ply}"
        move = agents[p].choose(game.view(p), rng)
        assert str(move) == want, f"ply {ply}: {names[p % len(names)]} chose {move}, not {want}"
        game.play(move)
    assert game.finished


def test_the_recording_covers_every_rule_set_and_both_agents() -> None:
    labels = {donutbox.Rules(**c["rules"]).label() for c in CASES}
    assert labels == {r.label() for r in donutbox.Rules.all()}
    assert {a for c in CASES for a in c["agents"]} == {"greedy", "heuristic"}
    assert {c["players"] for c in CASES} == {2, 3}
