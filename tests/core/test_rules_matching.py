"""docs/spec.md, 'Matching' (and the Cinnamon Roll lock), worked by hand.

Positions are free games.  Cells are (x, y); the start card's face is read
NW NE SE SW, so start ``CCSS`` is (0,0) C, (1,0) C, (1,1) S, (0,1) S.  A card at
(2,0) touches it with its NW (2,0)-(1,0) and its SW (2,1)-(1,1).
"""

from __future__ import annotations

import pytest

import donutbox
from donutbox.core.record import dump

OGM = donutbox.Rules()
PERFECT = donutbox.Rules(match="perfect-match")
SPLIT = donutbox.Rules(layout="splitzkies")
PERFECT_SPLIT = donutbox.Rules(match="perfect-match", layout="splitzkies")


def free(start: str, *moves: str, rules: donutbox.Rules = OGM) -> donutbox.Game:
    game = donutbox.Game.free_game(start, rules, 2)
    for move in moves:
        game.play(move)
    return game


def legal(game: donutbox.Game, move: str) -> bool:
    try:
        game.copy().play(move)
    except donutbox.IllegalMove:
        return False
    return True


def donut(game: donutbox.Game, x: int, y: int) -> tuple[str, bool, int | None, bool]:
    for d in game.counter.donuts():
        if (d.x, d.y) == (x, y):
            return (d.flavour, d.roll, d.owner, d.delivered)
    raise AssertionError(f"no donut at {x},{y}")


# -- One Good Match ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("move", "ok"),
    [
        ("HHHH@2,0/0", False),  # H-C and H-S: no pair agrees (H's on one card never pair)
        ("CHHH@2,0/0", True),  # NW C agrees with (1,0) C
        ("HHHS@2,0/0", True),  # SW S agrees with (1,1) S
        ("HHHC@2,0/0", False),  # SW C against S, NW H against C
        ("HCCH@2,0/0", False),  # the C's are on the far side: they touch nothing
        ("SSSS@0,2/0", True),  # (0,2)-(0,1) S and (1,2)-(1,1) S
        ("CCCC@0,2/0", False),
        ("SSCC@0,-2/0", True),  # at (0,-2) SE (1,-1) C and SW (0,-1) C touch C's
        ("CCSS@0,-2/0", False),  # bottom row S S against C C
    ],
)
def test_one_good_match(move: str, ok: bool) -> None:
    assert legal(free("CCSS"), move) is ok


def test_one_good_match_one_pair_is_enough_even_with_mismatches() -> None:
    # CHHH: NW C agrees; SW H touches S and disagrees: still legal.
    assert legal(free("CCSS"), "CHHH@2,0/0")
    # The same card under Perfect Match is refused (SW H owes agreement).
    assert not legal(free("CCSS", rules=PERFECT), "CHHH@2,0/0")


def test_counter_roll_counts_as_its_locked_flavour_not_wild() -> None:
    # Start HSBR: R at SW locks to the next quadrant clockwise, NW = H.
    # A card at (0,2) touches (0,1) = R(H) with NW and (1,1) = B with NE.
    game = free("HSBR")
    assert donut(game, 0, 1) == ("H", True, None, False)
    assert legal(game, "HCCC@0,2/0")  # H agrees with the R locked H
    assert not legal(game, "SCCC@0,2/0")  # S vs H, C vs B
    assert not legal(game, "CCCC@0,2/0")  # the counter's R is not wild


def test_placed_roll_is_wild() -> None:
    game = free("CCSS")
    assert not legal(game, "HHHH@2,0/0")
    assert legal(game, "RHHH@2,0/0")  # R against C agrees
    assert legal(game, "HHHR@2,0/0")  # R (SW) against S agrees


def test_only_delivered_contact_cannot_be_placed() -> None:
    # A boxes the C run (0,0),(1,0),(2,0),(3,0) (A 2 of 4).  A card at (0,-2)
    # touches only those delivered C's: no pair at all.
    game = free("CCSS", "CCSS@2,0/0", "HSSH@-2,0/0", "box@0,0")
    for move in ("CCCC@0,-2/0", "RCCC@0,-2/180", "CCCC@2,-2/0", "SSSS@0,-2/0"):
        assert not legal(game, move)
    # (4,0) touches delivered (3,0) C and live (3,1) S: the S pair counts.
    assert legal(game, "SCCS@4,0/0")
    assert not legal(game, "CCCC@4,0/0")  # C beside delivered C is no pair


# -- Perfect Match ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("move", "ok"),
    [
        ("CHHS@2,0/0", True),  # NW C-C, SW S-S; NE, SE touch nothing and owe nothing
        ("CHHH@2,0/0", False),  # SW H touches only S
        ("HHHS@2,0/0", False),  # NW H touches only C
        ("RHHS@2,0/0", True),  # R agrees with anything
        ("RHHH@2,0/0", False),  # the R is fine, SW H is not
        ("SSSS@0,2/0", True),
        ("SSSC@0,2/0", True),  # SE (1,3) and SW (0,3) touch nothing
        ("SCSS@0,2/0", False),  # NE C against (1,1) S
    ],
)
def test_perfect_match_squared(move: str, ok: bool) -> None:
    assert legal(free("CCSS", rules=PERFECT), move) is ok


def corner(rules: donutbox.Rules) -> donutbox.Game:
    """Start CSHB: (0,0) C, (1,0) S, (1,1) H, (0,1) B.  HSSC at (2,1) hangs half
    off the start card: (2,1) H beside (1,1) H, (2,2) C beside nothing.  Then a
    card at (0,2) has NW (0,2) touching only (0,1) B, and NE (1,2) touching
    (1,1) H (north) and (2,2) C (east): two partners of different flavours."""
    return free("CSHB", "HSSC@2,1/0", rules=rules)


@pytest.mark.parametrize(
    ("move", "ok"),
    [
        ("BHSS@0,2/0", True),  # NE H agrees with the H, not the C: enough
        ("BCSS@0,2/0", True),  # NE C agrees with the C, not the H: enough
        ("BSSS@0,2/0", False),  # NE S agrees with neither
        ("SHSS@0,2/0", False),  # NW S against B
        ("BHHH@0,2/0", True),  # SE (1,3) and SW (0,3) have no partner
    ],
)
def test_perfect_match_either_neighbour_not_both(move: str, ok: bool) -> None:
    assert legal(corner(PERFECT_SPLIT), move) is ok


def test_same_corner_under_one_good_match() -> None:
    game = corner(SPLIT)
    assert legal(game, "BSSS@0,2/0")  # NW B-B is one good match
    assert legal(game, "SSSS@0,2/0") is False  # S vs B, S vs H, S vs C


def test_perfect_match_ignores_delivered_partners() -> None:
    # A boxes the C run of 4; B's HSSS at (4,0) has its H beside delivered C
    # only (it owes nothing) and its S beside live S.
    game = free("CCSS", "CCSS@2,0/0", "SSSS@0,2/0", "box@0,0", rules=PERFECT)
    assert legal(game, "HSSS@4,0/0")
    assert not legal(game, "HHHH@4,0/0")  # SW H against live S
    assert not legal(game, "SSSS@0,-2/0")  # delivered contact only


# -- the Cinnamon Roll lock --------------------------------------------------------


def test_lock_touching_one_flavour_is_automatic() -> None:
    # RHHH at (2,0): the R (NW) touches (1,0) C only -> C, no choice.
    game = free("CCSS")
    played = game.copy().play("RHHH@2,0/0")
    assert str(played) == "RHHH@2,0/0=C"
    g = free("CCSS", "RHHH@2,0/0")
    assert donut(g, 2, 0) == ("C", True, 0, False)
    assert dump(g)["moves"] == ["RHHH@2,0/0=C"]
    assert legal(game, "RHHH@2,0/0=C")  # naming the only lock is fine
    for wrong in ("H", "S", "B"):  # S is touched by the card, not by the R
        with pytest.raises(donutbox.IllegalMove, match="Cinnamon Roll"):
            game.copy().play(f"RHHH@2,0/0={wrong}")


def two_flavours() -> donutbox.Game:
    """The roll-ambiguous-ok position: (2,2) has (2,1) C north, (1,2) S west."""
    return free("CCSS", "CCCC@2,0/0", "SSSS@0,2/0")


def test_lock_touching_two_flavours_needs_a_choice() -> None:
    game = two_flavours()
    with pytest.raises(donutbox.IllegalMove, match="Cinnamon Roll"):
        game.copy().play("RBBB@2,2/0")
    for lock in ("C", "S"):
        g = game.copy()
        g.play(f"RBBB@2,2/0={lock}")
        assert donut(g, 2, 2) == (lock, True, 0, False)
    for wrong in ("H", "B"):  # B is on its own card, but the R touches C and S
        with pytest.raises(donutbox.IllegalMove, match="Cinnamon Roll"):
            game.copy().play(f"RBBB@2,2/0={wrong}")


def test_lock_choice_listed_once_per_flavour() -> None:
    moves = {str(m) for m in two_flavours().legal_moves(cards=["RBBB"])}
    assert {"RBBB@2,2/0=C", "RBBB@2,2/0=S"} <= moves
    assert "RBBB@2,2/0" not in moves
    assert not any(m.startswith("RBBB@2,2/0=") and m[-1] not in "CS" for m in moves)


def test_lock_touching_nothing_uses_its_own_card() -> None:
    # CRSS at (2,0): NW C-C agrees, SW S-S agrees; the R at NE (3,0) touches no
    # counter donut, so it locks to one of its on-card neighbours NW C, SE S.
    game = free("CCSS")
    with pytest.raises(donutbox.IllegalMove, match="Cinnamon Roll"):
        game.copy().play("CRSS@2,0/0")
    for lock in ("C", "S"):
        g = game.copy()
        g.play(f"CRSS@2,0/0={lock}")
        assert donut(g, 3, 0) == (lock, True, 0, False)
    for wrong in ("H", "B"):
        with pytest.raises(donutbox.IllegalMove, match="Cinnamon Roll"):
            game.copy().play(f"CRSS@2,0/0={wrong}")
    # CRCS: both on-card neighbours (NW, SE) are C: automatic.
    g = game.copy()
    assert str(g.play("CRCS@2,0/0")) == "CRCS@2,0/0=C"
    assert donut(g, 3, 0) == ("C", True, 0, False)


def test_lock_touching_only_delivered_uses_its_own_card() -> None:
    # After A boxes the C run of 4, B's RHBS at (4,0) has its R (NW) beside the
    # delivered C at (3,0) only: the lock comes from NE H and SW S; C is not
    # allowed (delivered donuts form no pairs).
    game = free("CCSS", "CCSS@2,0/0", "HSSH@-2,0/0", "box@3,0")
    with pytest.raises(donutbox.IllegalMove, match="Cinnamon Roll"):
        game.copy().play("RHBS@4,0/0")
    for wrong in ("C", "B"):
        with pytest.raises(donutbox.IllegalMove, match="Cinnamon Roll"):
            game.copy().play(f"RHBS@4,0/0={wrong}")
    for lock in ("H", "S"):
        g = game.copy()
        g.play(f"RHBS@4,0/0={lock}")
        assert donut(g, 4, 0) == (lock, True, 1, False)


def test_lock_in_a_splitzkies_corner_with_perfect_match() -> None:
    game = corner(PERFECT_SPLIT)
    # BRSS at (0,2): R at NE touches H and C.
    with pytest.raises(donutbox.IllegalMove, match="Cinnamon Roll"):
        game.copy().play("BRSS@0,2/0")
    assert legal(game, "BRSS@0,2/0=H")
    assert legal(game, "BRSS@0,2/0=C")
    assert not legal(game, "BRSS@0,2/0=S")
    assert not legal(game, "BRSS@0,2/0=B")


@pytest.mark.parametrize(
    ("start", "cell", "flavour"),
    [
        ("RCSH", (0, 0), "C"),  # R at NW -> NE
        ("HRBS", (1, 0), "B"),  # R at NE -> SE
        ("SBRH", (1, 1), "H"),  # R at SE -> SW
        ("CSHR", (0, 1), "C"),  # R at SW -> NW (wraps round)
    ],
)
def test_start_card_roll_locks_to_next_quadrant_clockwise(
    start: str, cell: tuple[int, int], flavour: str
) -> None:
    game = free(start)
    assert donut(game, *cell) == (flavour, True, None, False)


def test_locked_roll_counts_for_runs() -> None:
    # Start CSHR: (0,1) R locked C joins (0,0) C.  HCCH at (-2,0) adds C's at
    # (-1,0), (-1,1): a C run of 4 with an R, A 2 of 4 -> 8 at the end.
    game = free("CSHR", "HCCH@-2,0/0")
    game.end()
    assert game.scores == [8, 0]
    assert [(d.how, d.size, d.points, d.to) for d in game.deliveries] == [("end", 4, 8, (0,))]
