"""AI opponents.  Every agent sees only its player's view (never a game).

from donutbox.ai import make_agent
agent = make_agent("mcts", seconds=1.0)
move = agent.choose(game.view(game.to_move), random.Random(7))
"""

from .base import AGENTS, LEVELS, Agent, agent_names, make_agent

__all__ = ["AGENTS", "LEVELS", "Agent", "agent_names", "make_agent"]
