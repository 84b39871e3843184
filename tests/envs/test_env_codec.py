"""The action codec and the observation encoder (numpy only)."""

from __future__ import annotations

import random

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed: pip install '.[rl]'")

from donutbox.core import STANDARD_DECK, Game, Move, Rules  # noqa: E402
from donutbox.core.sampling import sample_move  # noqa: E402
from donutbox.envs import (  # noqa: E402
    DEFAULT_WINDOW,
    ActionCodec,
    ObservationEncoder,
    OutsideWindow,
    default_window,
)

ALL_RULES = Rules.all()


def _positions(rules: Rules, players: int, seed: int, every: int = 7) -> list[Game]:
    """Copies of one random game every few plies, to the end."""
    game = Game.new(rules, players, seed=seed)
    rng = random.Random(seed)
    out = [game.copy()]
    while not game.finished:
        game.play(sample_move(game, rng))
        if game.ply % every == 0:
            out.append(game.copy())
    return out


def test_sizes_follow_the_documented_layout() -> None:
    sq = ActionCodec(Rules(), 64)
    assert sq.positions == 32 * 32
    assert sq.box_base == 64 * 32 * 32
    assert sq.swap_base == sq.box_base + 64 * 64
    assert sq.pass_action == sq.swap_base + 4
    assert sq.size == sq.pass_action + 2
    sp = ActionCodec(Rules(layout="splitzkies"), 64)
    assert sp.positions == 63 * 63
    assert (sq.lo, sq.hi) == (-32, 31)
    assert default_window(2) == DEFAULT_WINDOW[2] == 64
    with pytest.raises(ValueError, match="multiple of 4"):
        ActionCodec(Rules(), 30)


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.label())
def test_every_legal_move_round_trips(rules: Rules) -> None:
    for players in (2, 4):
        codec = ActionCodec(rules, default_window(players))
        for game in _positions(rules, players, seed=11 + players):
            if game.finished:
                continue
            tray = game.trays[game.to_move]
            moves = game.legal_moves()
            legal = codec.legal(moves, tray)
            # Real games stay inside the window: every legal move has an index,
            # and no two legal moves share one.
            assert len(legal) == len(moves)
            assert codec.outside_action not in legal
            for action, move in legal.items():
                assert codec.encode(move, tray) == action
                assert codec.decode(action, tray) == move
                assert codec.from_notation(str(move), tray) == action
                assert codec.to_notation(action, tray) == str(move)
            mask = codec.mask(legal)
            assert mask.dtype == np.int8 and mask.shape == (codec.size,)
            assert set(np.flatnonzero(mask)) == set(legal)


def test_place_index_formula() -> None:
    codec = ActionCodec(Rules(), 64)
    tray = ["CCSS", "RCSH", "HHBB", "CCSS"]
    move = Move.place("RCSH", 4, -2, 90, "H")
    channel = 1 * 16 + 1 * 4 + 2  # slot 1, rotation 90, lock H
    position = ((-2 + 32) // 2) * 32 + (4 + 32) // 2
    assert codec.encode(move, tray) == channel * codec.positions + position
    assert codec.describe(codec.encode(move, tray)) == "slot1@4,-2/90 lock2"
    # A repeated face is always encoded by its first slot.
    assert codec.encode(Move.place("CCSS", 0, 2), tray) < codec.positions * 16
    assert codec.encode(Move.swap("CCSS"), tray) == codec.swap_base
    assert codec.describe(codec.swap_base + 3) == "swap slot3"
    assert codec.describe(codec.pass_action) == "pass"
    assert codec.describe(codec.outside_action) == "outside"
    assert codec.describe(codec.box_base) == "box@-32,-32"
    splitz = ActionCodec(Rules(layout="splitzkies"), 64)
    assert splitz.encode(Move.place("CCSS", -32, -32), tray) == 0
    assert splitz.decode(splitz.positions - 1, tray) == Move.place("CCSS", 30, 30)


def test_bad_indices_and_moves_are_refused() -> None:
    codec = ActionCodec(Rules(), 64)
    tray = ["CCSS", "RCSH"]
    with pytest.raises(ValueError, match="slot 2 is empty"):
        codec.decode(2 * 16 * codec.positions, tray)
    with pytest.raises(ValueError, match="no R to lock"):
        codec.decode(1 * codec.positions, tray)  # slot 0, lock index 1
    with pytest.raises(ValueError, match="outside"):
        codec.decode(codec.size, tray)
    with pytest.raises(ValueError, match="outside"):
        codec.decode(codec.outside_action, tray)
    with pytest.raises(ValueError, match="not in the tray"):
        codec.encode(Move.place("HHBB", 0, 2), tray)
    with pytest.raises(ValueError, match="lock"):
        codec.encode(Move.place("RCSH", 0, 2, 0), tray)
    with pytest.raises(OutsideWindow):
        codec.encode(Move.place("CCSS", 32, 0), tray)
    with pytest.raises(OutsideWindow):
        codec.encode(Move.box(-33, 0), tray)
    with pytest.raises(OutsideWindow):  # Squared Away has no odd positions
        codec.encode(Move.place("CCSS", 1, 2), tray)


def test_outside_action_stands_in_when_the_window_is_too_small() -> None:
    codec = ActionCodec(Rules(), 8)  # cells -4..3: room for few cards
    game = Game.new(Rules(), 2, seed=3)
    rng = random.Random(3)
    seen_outside = False
    while not game.finished:
        moves = game.legal_moves()
        legal = codec.legal(moves, game.trays[game.to_move])
        assert legal, "the mask is never empty while there are legal moves"
        if codec.outside_action in legal:
            seen_outside = True
            assert len(legal) == 1
            first = next(m for m in moves if not _inside(codec, m, game))
            assert legal[codec.outside_action] == first
        action = rng.choice(sorted(legal))
        game.play(legal[action])
    assert seen_outside


def _inside(codec: ActionCodec, move: Move, game: Game) -> bool:
    try:
        codec.encode(move, game.trays[game.to_move])
    except OutsideWindow:
        return False
    return True


def _twins() -> tuple[Game, Game]:
    """Two games player 0 cannot tell apart: the same own deck and public
    moves, but player 1's hidden tray and pile differ."""
    deck0 = list(STANDARD_DECK)
    random.Random(1).shuffle(deck0)
    deck1 = list(STANDARD_DECK)
    random.Random(2).shuffle(deck1)
    deck1b = deck1[:]
    # Same first card for player 1 (it plays it), different hidden rest.
    rest = deck1b[1:]
    random.Random(3).shuffle(rest)
    deck1b[1:] = rest
    a = Game.deal([deck0, deck1])
    b = Game.deal([deck0, deck1b])
    m0 = a.legal_moves()[0]
    a.play(m0)
    b.play(m0)
    m1 = next(m for m in a.legal_moves() if m.kind == "place" and m.face == deck1[0])
    a.play(m1)
    b.play(m1)
    assert a.trays[1] != b.trays[1]
    return a, b


def test_observation_sees_only_the_players_view() -> None:
    a, b = _twins()
    enc = ObservationEncoder(2, 64)
    assert np.array_equal(enc.encode(a.view(0)), enc.encode(b.view(0)))
    assert not np.array_equal(enc.encode(a.view(1)), enc.encode(b.view(1)))


def test_observation_layout_and_bounds() -> None:
    for players in (2, 3, 4):
        enc = ObservationEncoder(players, default_window(players))
        layout = enc.layout
        low, high = layout.bounds()
        for game in _positions(Rules(layout="splitzkies"), players, seed=5, every=15):
            for p in range(players):
                obs = enc.encode(game.view(p))
                assert obs.dtype == np.float32 and obs.shape == (layout.size,)
                assert np.all(obs >= low) and np.all(obs <= high)
                board = layout.board(obs)
                donuts = game.counter.donuts()
                assert board[:4].sum() == len(donuts)  # one flavour per cell
                assert board[6].sum() == 4  # the start card
                assert sum(board[7 + k].sum() for k in range(players)) == len(donuts) - 4
                tray = layout.feature(obs, "tray").reshape(4, 4, 5)
                assert tray.sum() == 4 * len(game.trays[p])
                assert list(layout.feature(obs, "scores")) == [
                    game.scores[(p + k) % players] for k in range(players)
                ]
                assert layout.feature(obs, "cards_left")[0] == game.cards_left
                if not game.finished:
                    assert layout.feature(obs, "to_move")[(game.to_move - p) % players] == 1
    # Seat 0 is always the observer: the cells of player 1's cards are
    # "own" cells in player 1's observation.
    game = _positions(Rules(), 2, seed=9, every=10)[1]
    enc = ObservationEncoder(2, 64)
    own = enc.layout.board(enc.encode(game.view(1)))[7]
    mine = sum(1 for d in game.counter.donuts() if d.owner == 1)
    assert own.sum() == mine
