"""The compact observation (the default): its size, its run summaries
worked out by hand, and the full board as the other option."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed: pip install '.[rl]'")

from donutbox.core import Game, Rules  # noqa: E402
from donutbox.core.geometry import cell  # noqa: E402
from donutbox.envs.encoding import Encoder  # noqa: E402


def test_two_players_fit_in_5000_floats() -> None:
    # K = 128 places x (present, row, column, 16 requirement bits, 12 run
    # numbers) + B = 80 boxes x (5 + 2) + features (tray 80, 10 per seat, 4)
    assert Encoder(Rules(), 2).size == 128 * 31 + 80 * 7 + 80 + 10 * 2 + 4 == 4632
    assert Encoder(Rules(), 2, observation="board").size == 141_080


#: The compact observation's size and the action count, worked out by hand
#: from the documented fields (docs/research.md, Observations): K places x
#: 31 (present, row, column, 16 requirement bits, 12 run numbers) + B = 40 n
#: boxes x (5 + n) + features (tray 80, 10 per seat, 4); actions 64 K + B +
#: 4 swaps + pass + overflow.  K: Squared Away 128 / 192 / 256, Splitzkies
#: 136 / 192 / 256 (2 / 3 / 4 players).
BY_HAND = {
    ("squared-away", 2): (128 * 31 + 80 * 7 + 104, 4632, 64 * 128 + 80 + 6, 8278),
    ("squared-away", 3): (192 * 31 + 120 * 8 + 114, 7026, 64 * 192 + 120 + 6, 12414),
    ("squared-away", 4): (256 * 31 + 160 * 9 + 124, 9500, 64 * 256 + 160 + 6, 16550),
    ("splitzkies", 2): (136 * 31 + 80 * 7 + 104, 4880, 64 * 136 + 80 + 6, 8790),
    ("splitzkies", 3): (192 * 31 + 120 * 8 + 114, 7026, 64 * 192 + 120 + 6, 12414),
    ("splitzkies", 4): (256 * 31 + 160 * 9 + 124, 9500, 64 * 256 + 160 + 6, 16550),
}


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("rules", Rules.all(), ids=lambda r: r.key())
def test_observation_size_on_every_rule_set(rules: Rules, players: int) -> None:
    formula, size, action_formula, actions = BY_HAND[(rules.layout, players)]
    assert formula == size and action_formula == actions
    if players == 2:
        assert size <= 5000  # the done-when bound, on every layout and variant
    enc = Encoder(rules, players)
    assert enc.size == size and enc.actions == actions
    layout = enc.centred.layout
    low, high = layout.bounds()
    assert low.shape == high.shape == (size,)
    game = Game.new(rules, players, seed=1)
    assert enc.observe(game, 0).shape == (size,)
    assert enc.mask(game, 0).shape == (actions,)


def test_a_bad_observation_name_is_refused() -> None:
    with pytest.raises(ValueError, match="observation must be compact or board"):
        Encoder(Rules(), 2, observation="pixels")


def _row(enc: Encoder, game: Game, seat: int, x: int, y: int) -> np.ndarray:
    """The places row of the candidate place with NW cell (x, y), as ``seat`` sees it."""
    turn = enc.codec.turn(game.counter, ())  # type: ignore[union-attr]
    k = turn.places.index(cell(x, y))
    obs = enc.centred.encode(game.view(seat))[0]
    return enc.centred.layout.part(obs, "places")[k]


def test_run_summaries_worked_out_by_hand() -> None:
    game = Game.free_game("CCSS", Rules(), 2)
    enc = Encoder(Rules(), 2)
    # start card CCSS at (0, 0): C at (0,0) (1,0), S at (1,1) (0,1), neutral.
    # Place (2, 0) touches (1,0) C and (1,1) S: two runs of 2, each with 4
    # edges to empty cells; nobody holds them.
    row = _row(enc, game, 0, 2, 0)
    assert row[0] == 1.0
    size, mine, free = row[19:23], row[23:27], row[27:31]
    assert list(size) == pytest.approx([0.2, 0.2, 0, 0])  # C S H B
    assert list(mine) == [0, 0, 0, 0]
    assert list(free) == pytest.approx([0.4, 0.4, 0, 0])
    # Place (0, 2) touches only the S run ((0,1) and (1,1)).
    assert list(_row(enc, game, 0, 0, 2)[19:23]) == pytest.approx([0, 0.2, 0, 0])
    # Player 0 plays CCHH at (2, 0): C at (2,0) (3,0) joins the C run (4
    # donuts, 2 of them player 0's); H at (3,1) (2,1) is a new run of 2.
    game.play("CCHH@2,0/0")
    for seat, held in ((0, 0.2), (1, 0.0)):
        row = _row(enc, game, seat, 4, 0)  # touches (3,0) C and (3,1) H
        assert list(row[19:23]) == pytest.approx([0.4, 0, 0.2, 0])
        assert list(row[23:27]) == pytest.approx([held, 0, held, 0])
        # C run: (0,0) W N, (1,0) N, (2,0) N, (3,0) E N = 6 open edges;
        # H run: (3,1) E S, (2,1) S = 3 (its W neighbour (1,1) is S)
        assert list(row[27:31]) == pytest.approx([0.6, 0, 0.3, 0])


def test_the_board_option_keeps_the_full_board() -> None:
    pettingzoo = pytest.importorskip("pettingzoo")
    del pettingzoo
    from donutbox.envs import aec_env

    env = aec_env(observation="board")
    env.reset(seed=3)
    obs = env.observe("player_0")["observation"]
    assert obs.shape == (141_080,)
    compact = aec_env()
    compact.reset(seed=3)
    small = compact.observe("player_0")["observation"]
    assert small.shape == (4632,)
    # the features (last 104) are the same in both
    assert np.array_equal(obs[-104:], small[-104:])
