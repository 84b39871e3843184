"""The pure rules core: no I/O, stdlib only.

Safe to use from many threads at once, each with its own games (a game may
be handed from one thread to another): the state the core keeps besides
the games is per thread (the place-id numbering and move generation's
tables indexed by it, ``counter.Numbering``) or memos of pure functions.
"""

from . import game as _game_module
from .cards import FLAVOUR_NAMES, FLAVOURS, ROLL, STANDARD_DECK, check_face, rotate
from .counter import Counter, Donut, Run
from .errors import DonutboxError, IllegalMove, InputError, NotationError, RecordError
from .game import Game
from .moves import Move
from .perft import divide, perft
from .policy import LAYOUT_RULES, MATCH_RULES, LayoutRule, MatchRule
from .record import FORMAT, Replay, dump, load, replay_partial
from .replay import cut, replay
from .rules import GAME_INFO, RULE_OPTIONS, Choice, GameInfo, RuleOption, Rules
from .state import Delivery, GameState
from .view import PlayerView

#: True when the core's modules are mypyc-compiled extension modules (a
#: ``pip install .`` with a C compiler), False for the pure-Python source.
#: Same code, same results; see docs/performance.md.
compiled: bool = not (_game_module.__file__ or "").endswith(".py")

__all__ = [
    "FLAVOURS",
    "FLAVOUR_NAMES",
    "FORMAT",
    "GAME_INFO",
    "LAYOUT_RULES",
    "MATCH_RULES",
    "ROLL",
    "RULE_OPTIONS",
    "STANDARD_DECK",
    "Choice",
    "Counter",
    "Delivery",
    "Donut",
    "DonutboxError",
    "Game",
    "GameInfo",
    "GameState",
    "IllegalMove",
    "InputError",
    "LayoutRule",
    "MatchRule",
    "Move",
    "NotationError",
    "PlayerView",
    "RecordError",
    "Replay",
    "RuleOption",
    "Rules",
    "Run",
    "check_face",
    "compiled",
    "cut",
    "divide",
    "dump",
    "load",
    "perft",
    "replay",
    "replay_partial",
    "rotate",
]
