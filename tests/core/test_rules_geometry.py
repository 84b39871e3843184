"""docs/spec.md, 'Geometry', worked by hand on free games."""

from __future__ import annotations

import pytest

import donutbox

SQUARED = donutbox.Rules()
SPLIT = donutbox.Rules(layout="splitzkies")


def free(start: str, *moves: str, rules: donutbox.Rules = SQUARED) -> donutbox.Game:
    game = donutbox.Game.free_game(start, rules, 2)
    for move in moves:
        game.play(move)
    return game


def flavours(game: donutbox.Game) -> dict[tuple[int, int], str]:
    return {(d.x, d.y): d.flavour for d in game.counter.donuts()}


def placements(game: donutbox.Game, *faces: str) -> set[str]:
    return {str(m) for m in game.legal_moves(cards=list(faces)) if m.kind == "place"}


def test_card_covers_nw_ne_se_sw() -> None:
    # CHSB at (2,0): NW (2,0) C, NE (3,0) H, SE (3,1) S, SW (2,1) B.
    # Contact: (2,0) C beside the start card's (1,0) C.
    game = free("CCSS", "CHSB@2,0/0")
    got = flavours(game)
    assert (got[(2, 0)], got[(3, 0)], got[(3, 1)], got[(2, 1)]) == ("C", "H", "S", "B")
    assert len(got) == 8


@pytest.mark.parametrize(
    ("rot", "quads"),
    [
        # abcd -> dabc per 90 degrees clockwise (CHSB -> BCHS -> SBCH -> HSBC).
        (0, "CHSB"),
        (90, "BCHS"),
        (180, "SBCH"),
        (270, "HSBC"),
    ],
)
def test_rotation_turns_clockwise(rot: int, quads: str) -> None:
    # Start CCCC: only the card's C can agree.  Put the turned card on the side
    # where its C faces the start card: C at NW or SW -> east of it at (2,0);
    # C at NE or SE -> west of it at (-2,0).  Then read its four cells back.
    game = donutbox.Game.free_game("CCCC", SQUARED, 2)
    c_at = quads.index("C")  # 0 NW, 1 NE, 2 SE, 3 SW
    x, y = {0: (2, 0), 1: (-2, 0), 2: (-2, 0), 3: (2, 0)}[c_at]
    game.play(f"CHSB@{x},{y}/{rot}")
    got = flavours(game)
    assert "".join(got[c] for c in [(x, y), (x + 1, y), (x + 1, y + 1), (x, y + 1)]) == quads


def test_squared_away_needs_even_coordinates() -> None:
    game = free("CCCC")
    for move in ("CCCC@2,1/0", "CCCC@1,2/0", "CCCC@-1,-2/0", "CCCC@2,-1/0"):
        with pytest.raises(donutbox.IllegalMove, match="Squared Away"):
            game.copy().play(move)
    game.play("CCCC@2,0/0")


def test_no_overlap() -> None:
    game = free("CCCC", "CCCC@2,0/0")
    with pytest.raises(donutbox.IllegalMove):
        game.copy().play("CCCC@2,0/0")
    with pytest.raises(donutbox.IllegalMove):
        game.copy().play("CCCC@0,0/90")
    split = free("CCCC", rules=SPLIT)
    for move in ("CCCC@1,1/0", "CCCC@-1,-1/0", "CCCC@1,-1/0", "CCCC@0,1/0"):
        with pytest.raises(donutbox.IllegalMove):
            split.copy().play(move)


def test_corner_alone_is_no_contact() -> None:
    # (2,2) covers (2,2),(3,2),(3,3),(2,3): (2,2) is only diagonal to (1,1).
    for rules in (SQUARED, SPLIT):
        game = free("CCCC", rules=rules)
        for move in ("CCCC@2,2/0", "CCCC@-2,-2/0", "CCCC@2,-2/0", "CCCC@-2,2/0", "CCCC@4,0/0"):
            with pytest.raises(donutbox.IllegalMove):
                game.copy().play(move)


def test_squared_away_places_around_the_start_card() -> None:
    # 4 places x 4 rotations of CCCC (each rotation is its own move).
    game = free("CCCC")
    want = {
        f"CCCC@{x},{y}/{r}"
        for x, y in [(2, 0), (-2, 0), (0, 2), (0, -2)]
        for r in (0, 90, 180, 270)
    }
    assert placements(game, "CCCC") == want


def test_splitzkies_places_around_the_start_card() -> None:
    # NW corners x, y in -2..2 give 25 places; the 9 with x, y in -1..1 overlap
    # the start card and the 4 corners (+-2, +-2) touch it only diagonally: 12.
    game = free("CCCC", rules=SPLIT)
    spots = [
        (x, y)
        for x in range(-2, 3)
        for y in range(-2, 3)
        if not (abs(x) <= 1 and abs(y) <= 1) and not (abs(x) == 2 and abs(y) == 2)
    ]
    assert len(spots) == 12
    want = {f"CCCC@{x},{y}/{r}" for x, y in spots for r in (0, 90, 180, 270)}
    assert placements(game, "CCCC") == want


def test_splitzkies_card_hangs_half_off() -> None:
    # HSSS at (2,1): covers (2,1) H beside (1,1) H; half of it hangs below.
    game = free("CHHC", "HSSS@2,1/0", rules=SPLIT)
    got = flavours(game)
    assert (got[(2, 1)], got[(3, 1)], got[(3, 2)], got[(2, 2)]) == ("H", "S", "S", "S")
    assert (2, 0) not in got and (3, 0) not in got
    # A card may then sit one quadrant offset from that one, too.
    game.play("CCCS@3,-1/0")  # (3,0) S sits on (3,1) S
    assert flavours(game)[(3, 0)] == "S"


def test_splitzkies_offset_rejected_in_squared_away() -> None:
    with pytest.raises(donutbox.IllegalMove, match="Squared Away"):
        free("CHHC", "HSSS@2,1/0")


def test_coordinates_grow_east_and_south() -> None:
    # A card to the north-west of everything has negative coordinates.
    game = free("CCCC", "CCCC@-2,0/0", "CCCC@-2,-2/0")
    got = flavours(game)
    assert {(-2, -2), (-1, -2), (-1, -1), (-2, -1)} <= set(got)
    assert min(x for x, _ in got) == -2 and min(y for _, y in got) == -2
