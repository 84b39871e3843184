"""docs/spec.md, 'Components' and 'Setup', worked by hand."""

from __future__ import annotations

from collections import Counter

import pytest

import donutbox
from donutbox.core.record import dump

# The table of docs/spec.md, 'Components', copied by hand.
HALVES = ["CCSS", "CCSS", "CCHH", "CCHH", "CCBB", "CCBB"]
HALVES += ["SSHH", "SSHH", "SSBB", "SSBB", "HHBB", "HHBB"]
THREES = ["CCSH", "SSHB", "HHBC", "BBCS", "CCBH", "SSBH"]
RAINBOWS = ["CSHB", "CSBH", "CHSB", "CHBS"]
ROLLS = ["RCSH", "RHSC", "RCSB", "RBCS", "RCHB", "RBHC", "RSHB", "RBSH"]
TABLE = HALVES + THREES + RAINBOWS + ROLLS


def cells(game: donutbox.Game) -> dict[tuple[int, int], tuple[str, bool, int | None, bool]]:
    return {(d.x, d.y): (d.flavour, d.roll, d.owner, d.delivered) for d in game.counter.donuts()}


def all_cards(game: donutbox.Game, player: int) -> Counter[str]:
    cards = Counter(game.trays[player]) + Counter(game.piles[player])
    if player == 0:  # the start card was turned from player 0's pile
        cards[game.start] += 1
    return cards


def test_standard_deck_is_the_printed_table() -> None:
    assert len(TABLE) == 30
    assert Counter(donutbox.STANDARD_DECK) == Counter(TABLE)


def test_standard_deck_donut_counts() -> None:
    # 12 halves x 4 = 48 donuts, 12 of each flavour; threes 6 each; rainbows
    # 4 each; rolls 6 each and one R per card: 28 of each flavour, 8 R.
    letters = Counter("".join(donutbox.STANDARD_DECK))
    assert letters == {"C": 28, "S": 28, "H": 28, "B": 28, "R": 8}
    assert all(face.count("R") <= 1 for face in donutbox.STANDARD_DECK)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_new_game_gives_every_player_a_standard_deck(players: int) -> None:
    game = donutbox.Game.new(donutbox.Rules(), players=players, seed=2024)
    for p in range(players):
        assert len(game.trays[p]) == 4
        assert all_cards(game, p) == Counter(TABLE)
    # Player 0 turned the start card: 30 - 4 - 1 = 25 in the pile, others 26.
    assert len(game.piles[0]) == 25
    assert all(len(game.piles[p]) == 26 for p in range(1, players))
    assert game.to_move == 0
    assert game.scores == [0] * players


def test_same_seed_same_deal_and_the_record_replays() -> None:
    a = donutbox.Game.new(donutbox.Rules(), players=2, seed=99)
    b = donutbox.Game.new(donutbox.Rules(), players=2, seed=99)
    assert a.trays == b.trays and a.piles == b.piles and a.start == b.start
    record = dump(a)
    assert "decks" in record and len(record["decks"]) == 2
    c = donutbox.load(record)
    assert c.trays == a.trays and c.piles == a.piles and c.start == a.start


def test_face_reads_clockwise_from_top_left() -> None:
    # CSHR: C top-left, S top-right, H bottom-right, R bottom-left.  The start
    # card lies at (0,0) unturned, so NW (0,0), NE (1,0), SE (1,1), SW (0,1).
    game = donutbox.Game.free_game("CSHB", donutbox.Rules(), 2)
    assert cells(game) == {
        (0, 0): ("C", False, None, False),
        (1, 0): ("S", False, None, False),
        (1, 1): ("H", False, None, False),
        (0, 1): ("B", False, None, False),
    }


@pytest.mark.parametrize("face", ["RRCS", "RCRS", "CRSR", "RRRR"])
def test_a_card_holds_at_most_one_roll(face: str) -> None:
    with pytest.raises(donutbox.DonutboxError):
        donutbox.Game.free_game(face, donutbox.Rules(), 2)
    with pytest.raises(donutbox.NotationError):
        donutbox.Move.parse(f"{face}@2,0/0")
    with pytest.raises(donutbox.DonutboxError):
        donutbox.Game.deal([["BBBB"] * 4 + [face, "BBBB"], ["BBBB"] * 5], donutbox.Rules(), 2)
    record = {"format": "donutbox/1", "players": ["A", "B"], "start": face}
    with pytest.raises(donutbox.RecordError):
        donutbox.load(record)


@pytest.mark.parametrize("face", ["CCSX", "ccss", "CCS", "CCSSS", "", "C SS", "CCSŠ"])
def test_bad_faces_are_rejected(face: str) -> None:
    record = {"format": "donutbox/1", "players": ["A", "B"], "start": face}
    with pytest.raises(donutbox.RecordError):
        donutbox.load(record)
    with pytest.raises(donutbox.DonutboxError):
        donutbox.Game.free_game(face, donutbox.Rules(), 2)


def test_deal_takes_trays_from_the_top_and_the_start_card_fifth() -> None:
    # Section 3: each player draws a tray of 4 from the top; then the start card
    # is turned from the top of player 0's pile (so it is player 0's 5th card).
    decks = [
        ["CCSS", "SSHH", "HHBB", "CCBB", "RCSH", "SSBB", "CCHH"],
        ["CSHB", "CSBH", "CHSB", "CHBS", "BBCS", "SSHB"],
    ]
    game = donutbox.Game.deal(decks, donutbox.Rules(), 2)
    assert game.start == "RCSH"
    assert sorted(game.trays[0]) == sorted(["CCSS", "SSHH", "HHBB", "CCBB"])
    assert sorted(game.trays[1]) == sorted(["CSHB", "CSBH", "CHSB", "CHBS"])
    # Pile top is the last element: the next card in deck order.
    assert game.piles[0] == ["CCHH", "SSBB"]
    assert game.piles[1] == ["SSHB", "BBCS"]
    # Start card at (0,0), rotation 0, neutral; its R locks to the next
    # quadrant clockwise (NE = C).
    assert cells(game) == {
        (0, 0): ("C", True, None, False),
        (1, 0): ("C", False, None, False),
        (1, 1): ("S", False, None, False),
        (0, 1): ("H", False, None, False),
    }


def test_trays_are_hidden_from_other_players() -> None:
    decks = [
        ["CCSS", "SSHH", "HHBB", "CCBB", "RCSH", "SSBB"],
        ["CSHB", "CSBH", "CHSB", "CHBS", "BBCS"],
    ]
    game = donutbox.Game.deal(decks, donutbox.Rules(), 2)
    view = game.view(1)
    assert sorted(view.tray) == sorted(["CSHB", "CSBH", "CHSB", "CHBS"])
    assert not set(game.trays[0]) & set(view.tray)
    assert view.tray_sizes == (4, 4)
    assert view.pile_sizes == (1, 1)


@pytest.mark.parametrize(
    ("decks", "players"),
    [
        ([["BBBB"] * 5, ["BBBB"] * 5], 2),  # player 0 needs 6 cards
        ([["BBBB"] * 6, ["BBBB"] * 4], 2),  # others need 5
        ([["BBBB"] * 6, ["BBBB"] * 5, ["BBBB"] * 5], 2),  # a deck too many
        ([["BBBB"] * 6], 2),  # a deck too few
    ],
)
def test_deal_rejects_wrong_decks(decks: list[list[str]], players: int) -> None:
    record = {"format": "donutbox/1", "players": ["A", "B"], "decks": decks}
    with pytest.raises(donutbox.RecordError):
        donutbox.load(record)
    with pytest.raises(ValueError):
        donutbox.Game.deal(decks, donutbox.Rules(), players)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_two_to_four_players_with_minimal_decks(players: int) -> None:
    decks = [["CCCC"] * 6] + [["CCCC"] * 5 for _ in range(players - 1)]
    game = donutbox.Game.deal(decks, donutbox.Rules(), players)
    assert [len(p) for p in game.piles] == [1] * players
    assert [len(t) for t in game.trays] == [4] * players


@pytest.mark.parametrize("players", [1, 5])
def test_player_count_out_of_range(players: int) -> None:
    with pytest.raises(ValueError):
        donutbox.Game.new(donutbox.Rules(), players=players, seed=1)
    record = {"format": "donutbox/1", "players": [f"P{i}" for i in range(players)], "seed": 1}
    with pytest.raises(donutbox.RecordError):
        donutbox.load(record)
