"""The ``places`` encoding: actions against the open places, a centred board.

Property: at any position of any game, every legal move of the engine has
exactly one action, that action decodes back to the move and its notation,
and every action the mask lets through is a legal move of the engine.
"""

from __future__ import annotations

import random
import warnings

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed: pip install '.[rl]'")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from donutbox.core import Game, Rules  # noqa: E402
from donutbox.core.geometry import cell  # noqa: E402
from donutbox.core.sampling import sample_move  # noqa: E402
from donutbox.envs.encoding import (  # noqa: E402
    CHANNELS,
    DEFAULT_BOARD,
    CentredEncoder,
    Encoder,
    PlacesCodec,
)
from donutbox.envs.length import max_game_length  # noqa: E402

ALL_RULES = Rules.all()


def _play(rules: Rules, players: int, seed: int, plies: int) -> Game:
    game = Game.new(rules, players, seed=seed)
    rng = random.Random(seed)
    while not game.finished and game.ply < plies:
        game.play(sample_move(game, rng))
    return game


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=st.sampled_from(ALL_RULES),
    players=st.integers(2, 4),
    seed=st.integers(0, 2**31),
    plies=st.integers(0, 140),
)
def test_every_legal_move_has_one_action_and_every_masked_action_is_legal(
    rules: Rules, players: int, seed: int, plies: int
) -> None:
    game = _play(rules, players, seed, plies)
    if game.finished:
        return
    enc = Encoder(rules, players)
    codec = enc.codec
    assert isinstance(codec, PlacesCodec)
    turn = enc.turn(game)
    legal = enc.legal(game)
    moves = game.legal_moves()
    mask = enc.mask(game, game.to_move)
    assert mask.dtype == np.int8 and mask.shape == (codec.size,)
    if enc.overflow(game, game.to_move)["places"]:
        # More open places than the observation's K (possible, rarely, in
        # random Splitzkies play): the keep rule's own test covers it
        # (test_splitzkies_one_direction_play_keeps_the_fitting_places_first).
        assert 0 < int(mask.sum()) <= len(moves)
        return
    assert int(mask.sum()) == len(moves) == len(legal)  # nothing lost, nothing shared
    assert enc.overflow(game, game.to_move) == {"cells": 0, "moves": 0, "places": 0, "boxes": 0}
    for move in moves:
        action = codec.encode(move, turn)
        assert mask[action] == 1
        assert codec.decode(action, turn) == move
        assert codec.to_notation(action, turn) == str(move)
        assert codec.from_notation(str(move), turn) == action
    for action in np.flatnonzero(mask):
        move = legal[int(action)]
        assert game.is_legal(move)
        assert codec.encode(move, turn) == action


def test_index_formula_by_hand() -> None:
    # The deal of seed 0, first turn: the start card at 0,0; the open places
    # in reading order are the card positions next to it.
    game = Game.new(Rules(), 2, seed=0)
    codec = PlacesCodec(Rules(), 2)
    turn = codec.turn(game.counter, game.trays[0])
    # Squared Away: the four neighbours of the start card, in reading order:
    # (0,-2) north, (-2,0) west, (2,0) east, (0,2) south.
    assert turn.places == [cell(0, -2), cell(-2, 0), cell(2, 0), cell(0, 2)]
    assert codec.places == 128 and codec.box_base == 128 * 64
    assert codec.boxes == 80  # 4 * 60 donuts / 3: a proven bound
    assert codec.size == 128 * 64 + 80 + 4 + 1 + 1
    # Tray HHBC CHSB CSBH RCSH.  RCSH@2,0/270=B: place 2 (east), slot 3,
    # rotation index 3, lock B (index 3): 2*64 + 3*16 + 3*4 + 3 = 191.
    assert game.trays[0] == ["HHBC", "CHSB", "CSBH", "RCSH"]
    assert codec.from_notation("RCSH@2,0/270=B", turn) == 191
    assert codec.to_notation(191, turn) == "RCSH@2,0/270=B"
    # CHSB@2,0/0: place 2, slot 1, rotation 0, no lock: 128 + 16 = 144.
    assert codec.to_notation(144, turn) == "CHSB@2,0/0"
    assert Encoder(Rules(), 2).legal(game)[144] == game.check("CHSB@2,0/0")
    assert codec.describe(codec.pass_action) == "pass"
    assert codec.describe(codec.box_base + 3) == "box3"
    with pytest.raises(ValueError, match="no candidate place"):
        codec.decode(5 * CHANNELS, turn)
    with pytest.raises(ValueError, match="outside"):
        codec.decode(codec.size, turn)


def _east(game: Game, rng: random.Random) -> None:
    """Adversarial play: always the placement furthest east."""
    moves = game.legal_moves()
    places = [m for m in moves if m.kind == "place"]
    if places:
        far = max(m.x for m in places)
        game.play(rng.choice([m for m in places if m.x == far]))
    else:
        game.play(rng.choice(moves))


def test_two_player_games_never_exceed_the_bounds_even_one_direction() -> None:
    rules = Rules()
    enc = Encoder(rules, 2, observation="board")
    for seed in range(3):
        game = Game.new(rules, 2, seed=seed)
        rng = random.Random(seed)
        while not game.finished:
            for seat in (0, 1):
                assert enc.overflow(game, seat) == {
                    "cells": 0,
                    "moves": 0,
                    "places": 0,
                    "boxes": 0,
                }
            _east(game, rng)
        assert game.ply <= max_game_length(2)
        board = enc.centred.encode_game(game, 0)[0]
        planes = enc.centred.layout.part(board, "board")
        assert planes[:4].sum() == len(game.counter.cells)  # every donut is seen


def test_splitzkies_one_direction_play_keeps_the_fitting_places_first() -> None:
    # Splitzkies' K (136) is below the 208 open places of one-direction
    # play: the keep rule keeps the places where a tray card fits (the
    # places of the engine's legal placements) first, and what is left out
    # is counted, never hidden.
    rules = Rules(layout="splitzkies")
    enc = Encoder(rules, 2)
    codec = enc.codec
    assert isinstance(codec, PlacesCodec) and codec.places == 136
    from donutbox.envs import encoding

    saved = set(encoding._WARNED)
    encoding._WARNED.clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _one_direction_keep_rule(enc)
        said = {str(w.message).split("encoding's ")[1].split()[0] for w in caught}
        assert said == {"places", "moves"}  # once each, never silent
    finally:
        encoding._WARNED.clear()
        encoding._WARNED.update(saved)


def _one_direction_keep_rule(enc: Encoder) -> None:
    rules = enc.codec.rules
    game = Game.new(rules, 2, seed=0)
    rng = random.Random(0)
    kept_rule_used = lost_seen = False
    while not game.finished:
        turn = enc.turn(game)
        assert turn is not None
        moves = game.legal_moves()
        fitting = sorted({cell(m.x, m.y) for m in moves if m.kind == "place"})
        open_places = sorted(game.counter.places)
        if len(open_places) > 136:
            kept_rule_used = True
            assert len(turn.places) == 136 and turn.places == sorted(turn.places)
            if len(fitting) >= 136:
                assert turn.places == fitting[:136]
            else:
                others = [p for p in open_places if p not in set(fitting)]
                assert turn.places == sorted(fitting + others[: 136 - len(fitting)])
        else:
            assert turn.places == open_places
        over = enc.overflow(game, game.to_move)
        assert over["places"] == max(0, len(fitting) - 136)
        assert over["cells"] == over["boxes"] == 0
        mask = enc.mask(game, game.to_move)
        named = [m for m in moves if m.kind != "place" or cell(m.x, m.y) in turn.place_index]
        assert int(mask.sum()) == (len(named) if named else 1)
        assert over["moves"] == len(moves) - len(named)
        lost_seen = lost_seen or over["moves"] > 0
        _east(game, rng)
    assert kept_rule_used and lost_seen


def test_overflow_is_flagged_and_the_mask_is_never_empty() -> None:
    import gymnasium

    import donutbox.envs  # noqa: F401

    env = gymnasium.make("donutbox/Donutbox-v0", max_places=2, window=8, opponent="random")
    flagged = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, info = env.reset(seed=3)
        rng = np.random.default_rng(0)
        done = False
        while not done:
            assert info["action_mask"].any()
            if info["truncated_encoding"]:
                flagged = True
                assert info["overflow"]["places"] > 0 or info["overflow"]["cells"] > 0
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, _, term, trunc, info = env.step(action)
            done = term or trunc
    assert flagged
    assert any("exceeds the encoding" in str(w.message) for w in caught)


def _twins() -> tuple[Game, Game]:
    """Two games player 0 cannot tell apart: the same own deck and public
    moves, but player 1's hidden tray and pile differ."""
    from donutbox.core import STANDARD_DECK

    deck0 = list(STANDARD_DECK)
    random.Random(1).shuffle(deck0)
    deck1 = list(STANDARD_DECK)
    random.Random(2).shuffle(deck1)
    deck1b = deck1[:]
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


def test_places_observation_sees_only_the_players_view() -> None:
    a, b = _twins()
    enc = Encoder(a.rules, 2)
    assert np.array_equal(enc.observe(a, 0), enc.observe(b, 0))
    assert not np.array_equal(enc.observe(a, 1), enc.observe(b, 1))
    centred = CentredEncoder(2, DEFAULT_BOARD, PlacesCodec(a.rules, 2))
    assert np.array_equal(centred.encode(a.view(0))[0], centred.encode_game(a, 0)[0])
    # And in every world sampled from player 0's view, the same observation.
    from donutbox.core.worlds import sample_world

    game = _play(Rules(layout="splitzkies"), 3, seed=4, plies=20)
    enc = Encoder(game.rules, 3)
    seen = enc.observe(game, 0)
    for k in range(5):
        world = sample_world(game.view(0), random.Random(k))
        assert np.array_equal(Encoder(game.rules, 3).observe(world, 0), seen)


def test_observation_layout() -> None:
    game = _play(Rules(), 2, seed=9, plies=30)
    enc = Encoder(Rules(), 2, observation="board")
    lay = enc.centred.layout
    obs = enc.observe(game, game.to_move)
    low, high = enc.bounds()
    assert obs.shape == (lay.size,) and np.all(obs >= low) and np.all(obs <= high)
    board = lay.part(obs, "board")
    assert board.shape == (11, 112, 112)
    assert board[6].sum() == 4  # the start card
    places = lay.part(obs, "places")
    assert places[:, 0].sum() == len(game.counter.places)
    assert board[10].sum() == len(game.counter.places)  # one NW cell each
    boxes = lay.part(obs, "boxes")
    assert boxes[:, 0].sum() == len(game.counter.box_ids)
    assert list(lay.feature(obs, "scores")) == [
        game.scores[(game.to_move + k) % 2] for k in range(2)
    ]


def test_game_length_bound_by_hand() -> None:
    # Two players: 50 placements (25 + 26 - 1), 1 Final Lap action; box-its
    # as early as floor(4 (k + 1) / 3) allows; streaks of cards_left - 1.
    total = 50 + 1
    done = 0
    for k in range(50):
        boxes = (4 * (k + 1)) // 3 - done
        done += boxes
        total += boxes + (boxes + 1) * (59 - k - 1)
    assert max_game_length(2) == total == 4003
    from donutbox.core.rules import GAME_INFO

    for n in (2, 3, 4):
        assert max_game_length(n) < GAME_INFO.max_game_length(n)


@pytest.mark.parametrize("players", [3, 4])
def test_the_board_holds_every_card_of_one_direction_play(players: int) -> None:
    from donutbox.envs.encoding import default_board

    # 2 + 2 * (26 n - 1) cells of spread at most, + 5 for centring: by hand
    assert default_board(players) == {3: 168, 4: 216}[players]
    rules = Rules(layout="splitzkies")
    enc = Encoder(rules, players, observation="board")
    game = Game.new(rules, players, seed=1)
    rng = random.Random(1)
    while not game.finished:
        assert enc.lost_cells(game) == 0
        _east(game, rng)
    planes = enc.centred.layout.part(enc.observe(game, 0), "board")
    assert planes[:4].sum() == len(game.counter.cells)


def _observations_digest() -> str:
    """A digest of every seat's observation, mask and overflow at every ply
    of three games and the start of a fourth (2-4 players, random and
    one-direction play, and a board too small for the play, so that the
    exact edge checks run)."""
    import hashlib

    from donutbox.envs import encoding

    h = hashlib.sha256()
    saved = set(encoding._WARNED)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the small board's overflow
            for players, layout, east, window, plies in (
                (2, "squared-away", False, None, 200),
                (3, "splitzkies", True, None, 200),
                (2, "splitzkies", True, 24, 200),
                (4, "squared-away", False, None, 40),  # 2.4 MB observations: a start
            ):
                rules = Rules(layout=layout)
                # the K of the recording: 64 n, Splitzkies 128 n (since cut)
                k = (128 if layout == "splitzkies" else 64) * players
                enc = Encoder(rules, players, window=window, max_places=k, observation="board")
                game = Game.new(rules, players, seed=players + 10 * east)
                rng = random.Random(players)
                while True:
                    for seat in range(players):
                        obs = enc.observe(game, seat)
                        nz = np.flatnonzero(obs)
                        h.update(nz.astype(np.int64).tobytes())
                        h.update(obs[nz].astype(np.float32).tobytes())
                        h.update(np.flatnonzero(enc.mask(game, seat)).astype(np.int64).tobytes())
                        h.update(repr(sorted(enc.overflow(game, seat).items())).encode())
                    if game.finished or game.ply >= plies:
                        break
                    moves = game.legal_moves()
                    places = [m for m in moves if m.kind == "place"]
                    if east and places:
                        far = max(m.x for m in places)
                        moves = [m for m in places if m.x == far]
                    game.play(moves[rng.randrange(len(moves))])
    finally:
        encoding._WARNED.clear()
        encoding._WARNED.update(saved)
    return h.hexdigest()


def test_observations_and_masks_are_the_recorded_ones() -> None:
    """The speed work changed no value: the digest was recorded with the
    encoder before it (commit 41b11d7), which built every observation from
    scratch."""
    assert _observations_digest() == (
        "21fae5de480a92317b7bc287901eb135fb136610f49fd2eb1c513abea37b6819"
    )


@pytest.mark.parametrize(
    ("players", "layout", "window", "east"),
    [
        (2, "squared-away", None, False),
        (3, "squared-away", None, False),
        (3, "splitzkies", None, True),
        (2, "splitzkies", 24, True),
    ],
)
def test_cells_kept_between_plies_equal_a_full_pass(
    players: int, layout: str, window: int | None, east: bool
) -> None:
    """The environments keep the occupied cells and their bounding box from
    ply to ply (``_CellTrack``); every ply of random play (boxes delivered
    mark cells) and of one-direction play (the box grows on one side; on
    a small board up to and past its edge) the result equals a pass over
    the whole counter, and each seat's observation equals one a fresh
    encoder builds from that seat's view alone."""
    from donutbox.envs import encoding

    rules = Rules(layout=layout)
    enc = Encoder(rules, players, window=window, observation="board")
    fresh = CentredEncoder(players, enc.board, PlacesCodec(rules, players))
    game = Game.new(rules, players, seed=5)
    rng = random.Random(5)
    saved = set(encoding._WARNED)
    near = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            while not game.finished:
                got = enc.origin(game)
                want = enc.centred._origin(game.counter)
                assert got[:3] == want[:3] and got[6] == want[6]
                for a, b in zip(got[3:6], want[3:6], strict=True):
                    assert (a is None and b is None) or np.array_equal(a, b)
                near += want[6]
                for seat in range(players):
                    obs = enc.observe(game, seat)
                    assert np.array_equal(obs, fresh.encode(game.view(seat))[0])
                if east:
                    _east(game, rng)
                else:
                    game.play(sample_move(game, rng))
    finally:
        encoding._WARNED.clear()
        encoding._WARNED.update(saved)
    assert (near > 0) == (window is not None)  # the small board reaches its edge
    if not east:
        assert len(game.counter.cells) > len(game.counter.run_of)  # cells were delivered


def test_fit_bits_are_the_rules_fits() -> None:
    """The legal-action memo's 16-bit sets (read from the matching tables)
    are exactly the matching rule's ``fits``, for every rule, the standard
    deck's faces and requirements both sampled and made by hand."""
    from donutbox.core.cards import FLAVOUR_INDEX, ROTATIONS, STANDARD_DECK
    from donutbox.envs.encoding import _FitMemo

    rng = random.Random(0)
    keys = [
        0,
        1,
        0x1111,
        0xFFFF,
        0x8421,
        0x0010,
        0x2000,
        *(rng.randrange(1 << 16) for _ in range(150)),
    ]
    rules = {r.match_rule.name: r.match_rule for r in ALL_RULES}
    assert len(rules) >= 2
    nonzero = 0
    for match in rules.values():
        for face in sorted(set(STANDARD_DECK)):
            memo = _FitMemo(match, face)
            for key in keys:
                want = 0
                for rot, lock in match.fits(face, key):
                    want |= 1 << (ROTATIONS.index(rot) * 4 + (FLAVOUR_INDEX[lock] if lock else 0))
                assert memo[key] == want, (match, face, key)
                nonzero += want != 0
    assert nonzero > 100
