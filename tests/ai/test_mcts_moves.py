"""``mcts`` with its defaults (the hard level before version 2) and with
version 2's options choose the moves they chose before the options of
version 3 were added.

``MOVES`` is every move of one seeded game between the two, recorded with
the search of commit ``c452d5d`` (before ``full_replies``, ``stop_z``,
``stop_delta`` and ``leaf``): ``Game.new(Rules(), 2, seed=3)``, player 1
``MctsAgent(iterations=100)``, player 2 the same with
``playout_depth=0, expand_samples=10, stop_lead=1.0``, both drawing from
one ``random.Random(3 * 7919 + 1)``.
"""

from __future__ import annotations

import random

import donutbox
from donutbox.ai.mcts import MctsAgent

MOVES = [
    "CCBB@2,0/90",
    "RHSC@0,2/90=H",
    "CCBB@-2,0/180",
    "RBCS@-2,2/270=S",
    "RSHB@-4,0/180=C",
    "RBHC@-4,2/90=C",
    "CCSS@-6,2/0",
    "RCSH@-6,0/180=C",
    "RCHB@-8,2/0=C",
    "BBCS@-10,2/270",
    "CCBH@-8,0/180",
    "CCBH@-10,0/180",
    "BBCS@-12,0/0",
    "HHBC@-12,2/180",
    "RBCS@-12,-2/180=B",
    "SSHH@0,4/270",
    "HHBB@-10,-2/0",
    "SSBB@-2,4/180",
    "SSBB@-2,-2/90",
    "HHBB@-4,4/270",
    "SSHH@-6,-2/270",
    "SSBB@-8,-2/180",
    "CCSH@-6,-4/90",
    "CCSS@-8,-4/0",
    "RCSH@-4,-2/0=H",
    "SSHB@0,6/270",
    "RCSB@-4,-4/180=C",
    "CCSS@-2,6/90",
    "CHSB@-2,-4/0",
    "HHBB@2,6/0",
    "RHSC@-12,-4/0=C",
    "CCHH@2,2/90",
    "RBSH@4,2/0=C",
    "RCSB@2,-2/180=C",
    "CCHH@4,0/180",
    "CCBB@2,4/0",
    "SSBH@-10,-4/180",
    "CCSH@4,4/0",
    "CCSS@-14,-4/90",
    "RSHB@-4,6/90=B",
    "HHBB@0,-2/270",
    "RBSH@4,6/270=B",
    "SSBB@0,-4/270",
    "CCBB@4,-2/180",
    "HHBC@-14,-2/180",
    "RCHB@4,-4/270=B",
    "SSHB@-14,0/180",
    "SSHH@-4,8/90",
    "SSHH@-12,-6/0",
    "CHSB@-2,8/90",
]


def test_the_previous_searches_choose_the_recorded_moves() -> None:
    game = donutbox.Game.new(donutbox.Rules(), 2, seed=3)
    rng = random.Random(3 * 7919 + 1)
    agents = [
        MctsAgent(iterations=100),
        MctsAgent(iterations=100, playout_depth=0, expand_samples=10, stop_lead=1.0),
    ]
    for ply, want in enumerate(MOVES):
        p = game.to_move
        assert p is not None, f"the game ended early, at ply {ply}"
        move = agents[p].choose(game.view(p), rng)
        assert str(move) == want, f"ply {ply}: chose {move}, not {want}"
        game.play(move)
    assert game.finished
