"""The pure rules core: no I/O, no global state, stdlib only."""

from .cards import FLAVOUR_NAMES, FLAVOURS, ROLL, STANDARD_DECK, check_face, rotate
from .counter import Counter, Donut, Run
from .errors import DonutboxError, IllegalMove, NotationError, RecordError
from .game import Delivery, Game
from .moves import Move
from .perft import divide, perft
from .record import FORMAT, Replay, dump, load, replay
from .rules import GAME_INFO, GameInfo, Rules
from .view import PlayerView

__all__ = [
    "FLAVOURS",
    "FLAVOUR_NAMES",
    "FORMAT",
    "GAME_INFO",
    "ROLL",
    "STANDARD_DECK",
    "Counter",
    "Delivery",
    "Donut",
    "DonutboxError",
    "Game",
    "GameInfo",
    "IllegalMove",
    "Move",
    "NotationError",
    "PlayerView",
    "RecordError",
    "Replay",
    "Rules",
    "Run",
    "check_face",
    "divide",
    "dump",
    "load",
    "perft",
    "replay",
    "rotate",
]
