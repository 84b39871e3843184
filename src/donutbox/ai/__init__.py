"""AI opponents.  Every agent sees only its player's view (never a game).

from donutbox.ai import make_agent
agent = make_agent("mcts", seconds=1.0)
move = agent.choose(game.view(game.to_move), random.Random(7))

``catalogue()`` lists every agent and level with its label and whether it
takes a time budget (``agent_info(name).timed``).
"""

from .base import Agent
from .catalogue import (
    AGENTS,
    LEVELS,
    AgentInfo,
    agent_info,
    agent_names,
    catalogue,
    make_agent,
)

__all__ = [
    "AGENTS",
    "LEVELS",
    "Agent",
    "AgentInfo",
    "agent_info",
    "agent_names",
    "catalogue",
    "make_agent",
]
