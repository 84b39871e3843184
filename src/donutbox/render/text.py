"""The counter drawn as text, readable with or without colour.

Each cell is three characters: the flavour letter (lower case once its box
is delivered), the owner (1-4, ``.`` for the neutral start card) and ``@``
on a Cinnamon Roll.  Colour, where the terminal has it, only repeats what
the letters say (rich markup; flavours as colours, owners as styles).

Text from a record (players' names) is passed through ``printable``: a name
holding ESC sequences or other control characters is shown escaped
(``\x1b``), never sent to the terminal as it is.
"""

from __future__ import annotations

from rich.text import Text

from ..core import Game, PlayerView
from ..core.counter import Donut
from ..usage import plural, printable

FLAVOUR_STYLE = {
    "C": "bold #8b4513",
    "S": "bold #ff69b4",
    "H": "bold #d2a05a",
    "B": "bold #4169e1",
}
OWNER_STYLE = (
    "bold white on #1f3a5f",
    "bold white on #5f1f1f",
    "bold white on #1f5f2a",
    "bold white on #5f4f1f",
)

LEGEND = (
    "C Chocolate Cruller  S Strawberry Sprinkles  H Donut Holes  B Blueberry Glaze\n"
    "@ Cinnamon Roll (letter = flavour it locked to)  digit = owner  . = start card\n"
    "lower case = delivered (frozen) box"
)


def counter_text(donuts: list[Donut]) -> Text:
    """The grid of cells with x and y labels."""
    out = Text()
    if not donuts:
        return out
    xs = [d.x for d in donuts]
    ys = [d.y for d in donuts]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    at = {(d.x, d.y): d for d in donuts}
    label_w = max(len(str(y0)), len(str(y1)))
    header = " " * (label_w + 1) + "".join(
        f"{x:<3}"[:3] if x % 2 == 0 else "   " for x in range(x0, x1 + 1)
    )
    out.append(header.rstrip() + "\n", style="dim")
    for y in range(y0, y1 + 1):
        out.append(f"{y:>{label_w}} ", style="dim")
        for x in range(x0, x1 + 1):
            d = at.get((x, y))
            if d is None:
                out.append(" · ", style="dim")
                continue
            letter = d.flavour.lower() if d.delivered else d.flavour
            owner = "." if d.owner is None else str(d.owner + 1)
            mark = "@" if d.roll else " "
            style = FLAVOUR_STYLE[d.flavour]
            if d.delivered:
                style += " dim strike"
            out.append(letter, style=style)
            out.append(owner, style=OWNER_STYLE[d.owner] if d.owner is not None else "dim")
            out.append(mark, style="bold yellow" if d.roll else "")
        out.append("\n")
    return out


def game_text(game: Game, reveal: bool = False, viewer: int | None = None) -> Text:
    """Counter plus scores, piles and trays.

    Shows the tray of the player to move (or ``viewer``'s; none when
    ``viewer`` is -1, e.g. while a hotseat terminal changes hands), or every
    tray with ``reveal``.
    """
    out = counter_text(game.counter.donuts())
    out.append("\n")
    out.append(_status(game.view(-1)))
    if not game.free:
        who = [p for p in range(game.players)] if reveal else []
        if not reveal:
            me = viewer if viewer is not None else game.to_move
            if me is not None and me >= 0:
                who = [me]
        for p in who:
            name = printable(game.names[p])
            out.append(f"Tray of {name} ({p + 1}): {' '.join(game.trays[p]) or '-'}\n")
    return out


def _status(view: PlayerView) -> Text:
    out = Text()
    rules = view.rules.label()
    out.append(f"Rules: {rules}\n", style="dim")
    for p, name in enumerate(view.names):
        turn = "▶ " if view.to_move == p else "  "
        line = (
            f"{turn}{p + 1} {printable(name)}: {plural(view.scores[p], 'point')}, "
            f"{plural(view.boxes_delivered[p], 'box', 'boxes')} delivered"
        )
        if not view.free:
            line += f", tray {view.tray_sizes[p]}, pile {view.pile_sizes[p]}"
        if p in view.winners:
            line += "  (winner)"
        out.append(
            line + "\n", style=OWNER_STYLE[p].replace("on ", "") if view.to_move == p else ""
        )
    if view.finished:
        out.append("Game over.\n", style="bold")
    elif view.final_lap_turns is not None:
        turns = plural(view.final_lap_turns, "turn")
        out.append(f"Final Lap: {turns} left.\n", style="bold yellow")
    if view.history:
        out.append(f"Last move: {view.history[-1]} (ply {len(view.history) - 1})\n")
    return out
