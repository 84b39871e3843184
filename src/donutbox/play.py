"""Terminal play: ``donutbox play``, against agents or hotseat.

The human types moves in notation (``CCSS@2,0/90``) or short forms:

- ``N X,Y [ROT] [=F]``: tray card N (1-4) at X,Y, turned ROT (default 0);
- ``box X,Y``, ``swap N`` or ``swap FACE``, ``pass``;
- ``moves [N]``: legal moves (of tray card N); ``hint``: the strongest
  agent's choice; ``undo``: take back your last move (and the replies);
  ``save FILE``; ``show``; ``help``; ``quit``.

Illegal input is answered with the rule it breaks; nothing is changed.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from .ai import agent_info, catalogue, make_agent
from .core import DonutboxError, Game, InputError, Move
from .core.cards import ROTATIONS
from .core.record import dump
from .core.replay import cut
from .render.text import LEGEND, game_text
from .summary import sorted_moves
from .usage import plural, printable

HELP = """Moves: notation (CCSS@2,0/90, RCSH@4,0/0=C, box@3,1, swap CCSS, pass)
  or short: 'N X,Y [ROT] [=F]' puts tray card N at X,Y turned ROT degrees,
  'box X,Y', 'swap N', 'pass'.
Commands: moves [N] (legal moves, of card N) | hint | undo | save FILE |
  show | help | quit"""

_SHORT = re.compile(r"(\d)\s+(-?\d+)\s*,\s*(-?\d+)(?:\s+(\d+))?(?:\s*=\s*([CSHB]))?", re.I)


class Session:
    """One terminal game: who plays each seat, the game, input and output."""

    def __init__(
        self,
        game: Game,
        seats: list[str],
        seconds: float,
        console: Console,
        ask: Callable[[str], str] = input,
        seed: int = 0,
    ) -> None:
        self.game = game
        self.seats = seats  # "human" or an agent/level name, per player
        self.agents = {
            p: make_agent(name, **({"seconds": seconds} if agent_info(name).timed else {}))
            for p, name in enumerate(seats)
            if name != "human"
        }
        self.seconds = seconds
        self.console = console
        self.ask = ask
        self.rng = random.Random(seed)
        # Hotseat (two or more humans at one terminal): the human whose tray
        # may be on the screen.  When the turn passes to another human, the
        # screen shows no tray until they take the keyboard and press Enter.
        self.hotseat = seats.count("human") >= 2
        self.shown = game.to_move

    def say(self, text: str, style: str = "") -> None:
        """One message, with any control character in it shown escaped (a
        player's name may hold ESC sequences; they never reach the terminal)."""
        safe = "\n".join(printable(line) for line in text.split("\n"))
        self.console.print(safe, style=style, highlight=False, markup=False)

    def name(self, p: int) -> str:
        """Player ``p``'s name, safe to print (see ``say``)."""
        return printable(self.game.names[p])

    def draw(self) -> None:
        viewer = self.game.to_move
        humans = [p for p, s in enumerate(self.seats) if s == "human"]
        if self.hotseat:
            viewer = self.shown if viewer == self.shown else -1
        elif viewer is None or viewer not in humans:
            viewer = humans[0] if humans else None
        self.console.print(game_text(self.game, viewer=viewer))

    def hand_over(self, p: int) -> bool:
        """Hotseat: wait until player ``p`` has the keyboard, then clear the
        screen and show their tray.  False when the input ends."""
        name = self.name(p)
        try:
            self.ask(f"Pass the keyboard to {name}; {name}, press Enter to see your cards. ")
        except EOFError:
            return False
        self.shown = p
        self.console.clear()
        self.draw()
        return True

    def run(self) -> int:
        self.say("donutbox: type 'help' for commands.")
        self.console.print(LEGEND, style="dim")
        self.draw()
        while not self.game.finished:
            p = self.game.to_move
            assert p is not None
            if self.seats[p] != "human":
                move = self.agents[p].choose(self.game.view(p), self.rng)
                self.game.play(move)
                # As the humans may see it: a swapped card's face is hidden
                # (it goes under the pile, whose order is secret).
                shown = self.game.view(-1).history[-1]
                self.say(f"{self.name(p)} plays {shown}")
                self.draw()
                continue
            if self.hotseat and p != self.shown and not self.hand_over(p):
                self.say("bye (game not saved)")
                return 0
            try:
                line = self.ask(f"{self.name(p)}> ").strip()
            except EOFError:
                self.say("bye (game not saved)")
                return 0
            if not line:
                continue
            if line in ("quit", "exit", "q"):
                self.say("bye")
                return 0
            try:
                self.command(line)
            except DonutboxError as err:
                self.say(f"not allowed: {err}", style="bold red")
        self.say("Game over: " + self.result())
        return 0

    def result(self) -> str:
        g = self.game
        names = ", ".join(self.name(w) for w in g.winners)
        scores = " - ".join(str(s) for s in g.scores)
        return f"{scores}; winner: {names}"

    def command(self, line: str) -> None:
        game = self.game
        me = game.to_move
        assert me is not None
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        if word == "help":
            self.say(HELP)
        elif word == "show":
            self.draw()
        elif word == "moves":
            moves = sorted_moves(game.legal_moves())
            if rest:
                face = self._tray_card(rest)
                moves = [m for m in moves if m.face == face]
            self.say(" ".join(str(m) for m in moves) or "(none)")
        elif word == "hint":
            self.say(f"hint: {_hint_agent(self.seconds).choose(game.view(me), self.rng)}")
        elif word == "undo":
            self.undo()
        elif word == "save":
            if not rest:
                raise InputError("save needs a file name")
            try:
                Path(rest).write_text(json.dumps(self.record(), indent=1) + "\n", encoding="utf-8")
            except OSError as err:
                raise InputError(f"cannot save to {rest}: {err.strerror or err}") from None
            self.say(f"saved to {rest}")
        else:
            move = self.parse(line)
            game.play(move)
            self.draw()

    def parse(self, line: str) -> Move:
        m = _SHORT.fullmatch(line)
        if m:
            face = self._tray_card(m.group(1))
            rot = int(m.group(4) or 0)
            if rot not in ROTATIONS:
                raise InputError("rotation must be 0, 90, 180 or 270")
            return Move.place(
                face, int(m.group(2)), int(m.group(3)), rot, (m.group(5) or "").upper()
            )
        word, _, rest = line.partition(" ")
        if word == "swap" and rest.strip().isdigit():
            return Move.swap(self._tray_card(rest.strip()))
        if word == "box" and rest:
            return Move.parse("box@" + rest.replace(" ", ""))
        return Move.parse(line)

    def _tray_card(self, text: str) -> str:
        tray = self.game.trays[self.game.to_move or 0]
        if not text.isdigit() or not 1 <= int(text) <= len(tray):
            raise InputError(f"pick a tray card from 1 to {len(tray)}")
        return tray[int(text) - 1]

    def undo(self) -> None:
        game = self.game
        me = game.to_move
        history = [str(m) for m in game.history]
        # Take back moves until it is this human's turn again, before their last move.
        n = game.players
        back_to = None
        if not self.agents:
            # Hotseat: take back the last move, whoever made it.
            back_to = len(history) - 1 if history else None
        else:
            for ply in range(len(history) - 1, -1, -1):
                if ply % n == me:
                    back_to = ply
                    break
        if back_to is None:
            raise InputError("undo: you have no move to take back")
        self.game = cut(game, back_to)
        # Hotseat: the tray of the player now to move is shown only once they
        # have the keyboard (``run`` asks for it).
        self.say(f"took back {plural(len(history) - back_to, 'move')}")
        self.draw()

    def record(self) -> dict[str, Any]:
        record = dump(self.game)
        record["agents"] = list(self.seats)
        return record


def _hint_agent(seconds: float) -> Any:
    """The strongest level of the catalogue, with ``seconds`` to think if it
    takes a time budget."""
    best = max((a for a in catalogue() if a.level is not None), key=lambda a: a.level or 0)
    return make_agent(best.name, **({"seconds": seconds} if best.timed else {}))
