"""The one catalogue of agents and difficulty levels.

Everything a caller needs to know about an agent (its label, its level,
whether it takes a thinking-time budget and how much) is in its
``AgentInfo``: the server, the pages and the command line read
``catalogue()`` / ``agent_info(name)`` instead of special-casing names.
This module imports the agents; they import nothing of it (a new agent is
its module, its factory in ``AGENTS`` and its ``AgentInfo`` in ``_PLAIN``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.errors import DonutboxError, InputError
from .base import Agent
from .mcts import MctsAgent
from .simple import GreedyAgent, HeuristicAgent, RandomAgent


@dataclass(frozen=True)
class AgentInfo:
    """One entry of the catalogue: a plain agent or a difficulty level."""

    name: str
    label: str
    help: str
    level: int | None  # 1 easy, 2 medium, 3 hard, 4 expert; None for plain agents
    agent: str  # the underlying agent ("greedy", "mcts", ...)
    timed: bool  # takes a ``seconds`` budget
    default_seconds: float | None
    max_seconds: float | None
    #: Options the level gives its agent (callers' options override them).
    options: dict[str, Any] = field(default_factory=dict, compare=False)
    #: A plain agent that a level plays exactly (the same agent, no
    #: options): that level's name.  A page offers the level and not this
    #: second name for it; the name itself keeps working everywhere.
    same_as: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "help": self.help,
            "level": self.level,
            "agent": self.agent,
            "timed": self.timed,
            "default_seconds": self.default_seconds,
            "max_seconds": self.max_seconds,
            "same_as": self.same_as,
        }


#: The thinking time of a timed agent: default and the most a caller may ask for.
DEFAULT_SECONDS = 1.0
MAX_SECONDS = 30.0

#: The plain agents, in the order the catalogue lists them.
_PLAIN = (
    AgentInfo("random", "Random", "Any legal move, uniformly.", None, "random", False, None, None),
    AgentInfo(
        "greedy",
        "Greedy",
        "The move that scores the most points this turn.",
        None,
        "greedy",
        False,
        None,
        None,
    ),
    AgentInfo(
        "heuristic",
        "Heuristic",
        "The move after which the position evaluates best (one ply).",
        None,
        "heuristic",
        False,
        None,
        None,
    ),
    AgentInfo(
        "mcts",
        "MCTS",
        "Monte Carlo tree search over worlds consistent with its view, for a time budget.",
        None,
        "mcts",
        True,
        DEFAULT_SECONDS,
        MAX_SECONDS,
    ),
)

#: The options of the ``hard`` level (version 3, docs/ai.md "Strength"): the
#: MCTS agent scoring leaves without random playout moves; the opponent's
#: first reply in the tree is the move the one-ply heuristic would choose
#: with the sampled world's cards (deeper replies: the best of 10 sampled
#: moves and the box-its); the search stops early once no candidate can be
#: better than its choice by 0.02 in value (2 standard errors).  ``mcts``
#: with its defaults and one second is the hard level of before version 2.
HARD_OPTIONS: dict[str, Any] = {
    "seconds": DEFAULT_SECONDS,
    "playout_depth": 0,
    "expand_samples": 10,
    "full_replies": 1,
    "stop_z": 2.0,
    "stop_delta": 0.02,
}

#: The options of the ``expert`` level (docs/ai.md, "An expert level"):
#: ``hard``'s search without its early stop, for 5 seconds a move.  It won
#: the paired screen against ``hard`` at 1 second with a 95% interval above
#: one half; it is for players who beat ``hard``, at five seconds a move.
EXPERT_OPTIONS: dict[str, Any] = {**HARD_OPTIONS, "seconds": 5.0, "stop_z": None}

#: The difficulty levels, easiest first: each is a plain agent with options.
_LEVELS = (
    AgentInfo(
        "easy",
        "Easy",
        "Takes the most points on offer now: a first game's opponent.",
        1,
        "greedy",
        False,
        None,
        None,
    ),
    AgentInfo(
        "medium",
        "Medium",
        "Weighs the boxes it builds and contests, one move ahead.",
        2,
        "heuristic",
        False,
        None,
        None,
    ),
    AgentInfo(
        "hard",
        "Hard",
        "Searches ahead for its thinking time (tree search).",
        3,
        "mcts",
        True,
        DEFAULT_SECONDS,
        MAX_SECONDS,
        HARD_OPTIONS,
    ),
    AgentInfo(
        "expert",
        "Expert",
        "Searches five times as long as Hard, to the end of its time.",
        4,
        "mcts",
        True,
        EXPERT_OPTIONS["seconds"],
        MAX_SECONDS,
        EXPERT_OPTIONS,
    ),
)


def _same_as(plain: AgentInfo) -> AgentInfo:
    """``plain`` with ``same_as`` naming the level that is it exactly."""
    level = next((a.name for a in _LEVELS if a.agent == plain.name and not a.options), None)
    return replace(plain, same_as=level)


_CATALOGUE: dict[str, AgentInfo] = {a.name: a for a in (*_LEVELS, *map(_same_as, _PLAIN))}

#: name -> factory taking keyword options (e.g. seconds=, iterations=); one
#: for each agent of ``_PLAIN``.
AGENTS: dict[str, Callable[..., Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "mcts": MctsAgent,
}

#: Difficulty levels as (agent name, options), derived from the catalogue.
LEVELS: dict[str, tuple[str, dict[str, Any]]] = {
    a.name: (a.agent, dict(a.options)) for a in _LEVELS
}


def catalogue() -> list[AgentInfo]:
    """Every agent: the levels first (easy, medium, hard, expert), then the
    plain agents (``greedy`` and ``heuristic`` are ``easy`` and ``medium``
    exactly: their ``same_as``)."""
    return list(_CATALOGUE.values())


def agent_info(name: str) -> AgentInfo:
    """The catalogue entry of ``name``; InputError (a ValueError) naming the known ones."""
    found = _CATALOGUE.get(name) if isinstance(name, str) else None
    if found is None:
        raise InputError(f"unknown agent {str(name)[:40]!r}; known: {', '.join(agent_names())}")
    return found


def agent_names() -> list[str]:
    """Plain agents then levels, each group sorted (as ``donutbox play`` lists them)."""
    return sorted(a.name for a in _PLAIN) + sorted(a.name for a in _LEVELS)


#: Agents with an optional dependency, made by name but not in the catalogue
#: (so no page offers them): name -> the module with ``make``, found by name
#: when the agent is made (like a plug-in entry point: ``ai`` imports nothing
#: above ``core``).  ``learned``: the afterstate value network of
#: ``donutbox.envs.afterstate`` (needs numpy, the ``rl`` extra).
OPTIONAL: dict[str, str] = {"ppo": "donutbox.ai.ppo", "learned": "donutbox.envs.afterstate"}


#: The most search iterations a ``name:N`` budget may ask for.
MAX_ITERATIONS = 10_000_000


def split_budget(name: str) -> tuple[str, dict[str, Any]]:
    """``mcts:200`` -> (``mcts``, ``{"iterations": 200, "seconds": None}``):
    a searching agent (one the catalogue marks ``timed``) with a fixed
    number of search iterations a move instead of its time budget.  A name
    without ``:`` comes back with no options.  InputError (one line) for a
    budget that is not a whole number from 1 to ``MAX_ITERATIONS`` or an
    agent that does not search."""
    base, sep, budget = name.partition(":")
    if not sep:
        return name, {}
    info = agent_info(base)
    if not info.timed:
        raise InputError(f"{base} does not search: {name[:40]!r} takes no ':N' budget")
    if not budget.isdigit() or not 1 <= int(budget) <= MAX_ITERATIONS:
        raise InputError(
            f"{name[:40]!r}: the budget after ':' is iterations, 1 to {MAX_ITERATIONS}"
        )
    return base, {"iterations": int(budget), "seconds": None}


def make_agent(name: str, **options: Any) -> Agent:
    """An agent by name (``random``, ``greedy``, ``heuristic``, ``mcts``) or
    difficulty level (``easy``, ``medium``, ``hard``, ``expert``); options
    override.  ``name:N`` (e.g. ``mcts:200``, ``hard:500``) is a searching
    agent with N iterations a move instead of its time (``split_budget``)."""
    if isinstance(name, str) and ":" in name:
        base, budget = split_budget(name)
        return make_agent(base, **{**budget, **options})
    if isinstance(name, str) and name in OPTIONAL:
        from importlib import import_module

        try:
            module = import_module(OPTIONAL[name])
        except ModuleNotFoundError as err:
            raise DonutboxError(
                f"the {name} agent needs {err.name}: pip install 'donutbox[rl]'"
            ) from None
        return module.make(**options)  # type: ignore[no-any-return]
    info = agent_info(name)
    return AGENTS[info.agent](**{**info.options, **options})
