"""A proven bound on the length of a dealt game, tighter than ``GAME_INFO``'s.

The environments need it for OpenSpiel's ``max_game_length`` and
Gymnasium's ``max_episode_steps``.  With ``n`` players and standard decks of
``D = 30`` cards (RULES.md), counting every action (place, box-it, swap,
pass) of a dealt game:

1. **Placements before the Final Lap.**  A pile shrinks only when its owner
   places (the tray refills from it); swaps put a card back.  Player 0's
   pile starts with ``D - 5`` cards (the start card came from that deck), the
   others with ``D - 4``.  The Final Lap starts at the placement that empties
   the first pile, so before it every pile still holds a card: at most
   ``(D - 6) + (n - 1)(D - 5)`` placements, plus the one that empties a pile:
   ``P = (D - 5) n`` (50 for two players).
2. **The Final Lap** lasts ``n - 1`` more actions of any kind.
3. **Box-its** freeze a run of 3 or more donuts that were never frozen
   before, so with ``k`` placements made at most ``floor(4 (k + 1) / 3)``
   box-its have happened in all (the start card's 4 donuts included).
4. **Swaps and passes** come in streaks that a placement or a box-it ends.
   A streak that ends the game is at most ``cards_left`` long (the deadlock
   guard); any other at most ``cards_left - 1``; with ``k`` placements made,
   ``cards_left = D n - 1 - k``.

So the longest game makes every box-it as early as 3. allows (a streak
before each, while ``cards_left`` is highest), then the longest streak
before every placement: the sum ``max_game_length`` computes.  Two players:
4,003; three 9,077; four 16,180 (``GAME_INFO.max_game_length``:
8,539, 19,109 and 33,879).  Real games are far
shorter (docs/research.md: 50-62 actions in random play) because a streak
needs every player unable to place for dozens of turns in a row; the bound
is what a proof can promise, not what play does.
"""

from __future__ import annotations

from functools import cache

from ..core.rules import GAME_INFO


@cache
def max_game_length(players: int, deck: int = GAME_INFO.deck_size) -> int:
    """The proven bound of the module doc (actions of a dealt game)."""
    n = players
    placements = (deck - 5) * n
    total = placements + (n - 1)  # the placements and the Final Lap
    boxes_done = 0
    for k in range(placements):  # k placements made so far
        cards_left = deck * n - 1 - k
        allowed = (4 * (k + 1)) // 3
        boxes = allowed - boxes_done  # every box-it as early as possible
        boxes_done = allowed
        # each box-it and the next placement end a streak of cards_left - 1
        total += boxes + (boxes + 1) * (cards_left - 1)
    # A game ending in deadlock at k placements replaces the streak before
    # placement k + 1 and that placement (cards_left - 1 + 1) by one streak of
    # at most cards_left: never longer, so the sum covers it.
    return total


__all__ = ["max_game_length"]
