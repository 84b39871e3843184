"""The agent catalogue: one entry per agent and level, read by every caller."""

from __future__ import annotations

import pytest

from donutbox.ai import AGENTS, AgentInfo, agent_info, catalogue, make_agent
from donutbox.core import DonutboxError, InputError


def test_levels_first_then_plain_agents() -> None:
    assert [a.name for a in catalogue()] == [
        "easy",
        "medium",
        "hard",
        "expert",
        "random",
        "greedy",
        "heuristic",
        "mcts",
    ]
    assert [(a.name, a.level, a.agent) for a in catalogue() if a.level is not None] == [
        ("easy", 1, "greedy"),
        ("medium", 2, "heuristic"),
        ("hard", 3, "mcts"),
        ("expert", 4, "mcts"),
    ]


def test_only_the_search_takes_a_time_budget() -> None:
    timed = {a.name for a in catalogue() if a.timed}
    assert timed == {"hard", "expert", "mcts"}
    for a in catalogue():
        if a.timed:
            assert a.default_seconds == (5.0 if a.name == "expert" else 1.0)
            assert a.max_seconds == 30.0
        else:
            assert a.default_seconds is None and a.max_seconds is None


def test_to_dict_shape() -> None:
    assert agent_info("hard").to_dict() == {
        "name": "hard",
        "label": "Hard",
        "help": agent_info("hard").help,
        "level": 3,
        "agent": "mcts",
        "timed": True,
        "default_seconds": 1.0,
        "max_seconds": 30.0,
        "same_as": None,
    }
    assert all(a.label and a.help and "\n" not in a.help for a in catalogue())


def test_unknown_agent_names_the_known_ones() -> None:
    with pytest.raises(InputError) as info:
        agent_info("nobody")
    text = str(info.value)
    assert isinstance(info.value, DonutboxError) and isinstance(info.value, ValueError)
    assert "'nobody'" in text and all(a.name in text for a in catalogue())
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("nobody")


def test_every_registered_agent_is_in_the_catalogue() -> None:
    make_agent("random")  # loads the agents' modules
    plain = {a.name for a in catalogue() if a.level is None}
    assert plain == set(AGENTS)
    assert all(a.agent in AGENTS for a in catalogue())


def test_a_level_is_its_agent_with_options_that_callers_override() -> None:
    hard = make_agent("hard")
    assert hard.name == "mcts" and hard.seconds == 1.0  # type: ignore[attr-defined]
    assert make_agent("hard", seconds=2.5).seconds == 2.5  # type: ignore[attr-defined]
    assert make_agent("easy").name == "greedy"
    assert isinstance(agent_info("mcts"), AgentInfo)


def test_a_plain_agent_a_level_plays_exactly_names_that_level() -> None:
    # easy is greedy and medium is heuristic, with no options of their own
    # (made by hand: the same class, the same settings); hard and expert are
    # MCTS with options of their own, not plain mcts; random is no level.
    def made(name: str) -> tuple[str, str]:
        agent = make_agent(name)
        # (every public attribute, not vars(): the compiled core's agents,
        # built by .ci/compiled.sh, have no __dict__)
        fields = {k: getattr(agent, k) for k in dir(agent) if not k.startswith("_")}
        return type(agent).__name__, repr(
            sorted((k, v) for k, v in fields.items() if not callable(v))
        )

    assert made("easy") == made("greedy") and made("medium") == made("heuristic")
    assert made("hard") != made("mcts") and made("expert") != made("mcts")
    assert {a.name: a.same_as for a in catalogue() if a.level is None} == {
        "random": None,
        "greedy": "easy",
        "heuristic": "medium",
        "mcts": None,
    }
    assert all(a.same_as is None for a in catalogue() if a.level is not None)
    # The levels read as levels, without a prefix that repeats the list's name.
    assert [a.label for a in catalogue() if a.level] == ["Easy", "Medium", "Hard", "Expert"]
    # Both names of one agent still make it (records and the CLI name either).
    assert type(make_agent("greedy")) is type(make_agent("easy"))
