"""A PettingZoo policy playing on a donutbox server as a bot (docs/bots.md).

The policy sees exactly what it would see in ``donutbox.envs.aec_env``: a
dict with the ``observation`` tensor of its seat and the ``action_mask``,
and answers an action index.  Both are built from the bot's own view: the
game stream's state becomes a ``PlayerView`` (``donutbox.botclient.view``),
the hidden cards are dealt at random into one world consistent with it
(``donutbox.core.worlds.sample_world``: the seat's observation and mask are
the same in every such world, for they read only the seat's view), and the
environment's own encoder makes the observation and mask and turns the
action back into a move.

    pip install -e '.[rl]'                  # PettingZoo and Gymnasium
    export DONUTBOX_BOT_TOKEN=dbx_...       # the bot's token
    python examples/bot_pettingzoo.py --server http://127.0.0.1:8000 --games 1

The policy here picks a random legal action (``action_space.sample`` with
the mask), as a trained one would be plugged in: replace ``policy``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from donutbox.botclient.client import BotClient, Options
from donutbox.botclient.view import view_of
from donutbox.core.worlds import sample_world
from donutbox.envs import aec_env

Policy = Callable[[dict[str, np.ndarray], Any], int]


def random_policy(observation: dict[str, np.ndarray], space: Any) -> int:
    """Any legal action (a trained policy reads ``observation`` too)."""
    return int(space.sample(observation["action_mask"]))


def pettingzoo_chooser(policy: Policy, seed: int | None = None) -> Callable[[dict[str, Any]], str]:
    """A chooser for ``BotClient``: state -> the policy's move, as notation."""
    rng = random.Random(seed)
    envs: dict[tuple[str, int], Any] = {}

    def choose(state: dict[str, Any]) -> str:
        players = len(state["players"])
        key = (repr(sorted(state["rules"].items())), players)
        if key not in envs:  # one environment (its spaces and encoder) per rule set
            envs[key] = aec_env(rules=state["rules"], players=players).unwrapped
        env = envs[key]
        seat = state["player"]
        world = sample_world(view_of(state), rng)
        observation = {
            "observation": env.encoding.observe(world, seat),
            "action_mask": env.encoding.mask(world, seat),
        }
        action = policy(observation, env.action_space(f"player_{seat}"))
        move = str(env.encoding.decode(world, action))
        if move not in state["legal"]:  # never: the mask is the legal moves'
            raise RuntimeError(f"the policy's action {action} is {move}, not a legal move")
        return move

    return choose


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="http://127.0.0.1:8000")
    parser.add_argument("--games", type=int, default=None, help="stop after this many games")
    parser.add_argument("--challenge", metavar="BOT", help="challenge this bot once connected")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    token = os.environ.get("DONUTBOX_BOT_TOKEN")
    if not token:
        print("bot_pettingzoo: set DONUTBOX_BOT_TOKEN to the bot's token", file=sys.stderr)
        return 2
    options = Options(games=args.games, challenge=args.challenge)
    client = BotClient(args.server, token, pettingzoo_chooser(random_policy, args.seed), options)
    import asyncio

    return asyncio.run(client.run())


if __name__ == "__main__":
    sys.exit(main())
