"""Deck compositions (core/decks.py): valid files, one-line errors naming
the field, and games dealt from them that replay from their records."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from donutbox.core import DonutboxError, Game, Rules, replay
from donutbox.core.cards import STANDARD_DECK
from donutbox.core.decks import (
    STANDARD,
    DeckError,
    fill,
    from_kinds,
    kind_of,
    parse_composition,
    parse_text,
)
from donutbox.core.record import dump


def test_standard_forms_all_give_the_standard_deck() -> None:
    for data in (
        {"deck": "standard"},
        {"deck": {"rolls": 8}},
        {"deck": {"halves": 12, "threes": 6, "rainbows": 4, "rolls": 8}},
        {"deck": {"cards": list(reversed(STANDARD_DECK))}},
        {"deck": {"cards": dict(Counter(STANDARD_DECK))}},
    ):
        comp = parse_composition(data)
        assert comp.decks == (STANDARD_DECK,), data
        assert comp.standard


def test_the_standard_composition_deals_what_game_new_deals() -> None:
    for seed in (0, 1, 12345, 2**64 - 1):
        dealt = Game.deal(STANDARD.deal(3, seed), Rules(), 3, seed)
        assert dump(dealt) == dump(Game.new(Rules(), 3, seed))


def test_kind_counts_fill_the_rest_in_standard_proportions() -> None:
    # Worked by hand: 6 rolls leave 24 cards for halves : threes : rainbows
    # = 12 : 6 : 4 (of 22): 13.09, 6.55, 4.36 -> floors 13, 6, 4 = 23; the
    # one card left goes to the largest remainder, threes (.55) -> 13, 7, 4.
    assert fill({"rolls": 6}) == {"halves": 13, "threes": 7, "rainbows": 4, "rolls": 6}
    # 0 rolls: 30 * 12/22 = 16.36, 30 * 6/22 = 8.18, 30 * 4/22 = 5.45 ->
    # 16, 8, 5 = 29; the last card to rainbows (.45 is the largest remainder).
    assert fill({"rolls": 0}) == {"halves": 16, "threes": 8, "rainbows": 6, "rolls": 0}
    # Two kinds given: the other two share 30 - 10 - 8 = 12 as 12 : 6 -> 8, 4.
    assert fill({"rainbows": 10, "rolls": 8}) == {
        "halves": 8,
        "threes": 4,
        "rainbows": 10,
        "rolls": 8,
    }
    comp = from_kinds({"rolls": 6})
    assert comp.counts() == {"halves": 13, "threes": 7, "rainbows": 4, "rolls": 6}
    assert len(comp.decks[0]) == 30
    # Rolls cycle RCSH, RCHB, RCSB, RSHB, RHSC, RBHC: each once; the flavour
    # a roll card lacks is B, S, H, C, B, S.
    rolls = [f for f in comp.decks[0] if "R" in f]
    assert sorted(rolls) == sorted(["RCSH", "RCHB", "RCSB", "RSHB", "RHSC", "RBHC"])


def test_ten_rolls_repeat_the_first_two_roll_cards() -> None:
    comp = from_kinds({"rolls": 10})
    rolls = Counter(f for f in comp.decks[0] if "R" in f)
    assert rolls["RCSH"] == 2 and rolls["RCHB"] == 2 and sum(rolls.values()) == 10


def test_kind_of() -> None:
    assert [kind_of(f) for f in ("CCSS", "SCCS", "CCSH", "CSHB", "RCSH", "CSCS", "CCCC")] == [
        "halves",
        "halves",
        "threes",
        "rainbows",
        "rolls",
        "other",
        "other",
    ]


def test_one_deck_per_player_and_its_errors() -> None:
    comp = parse_composition({"name": "uneven", "decks": [{"rolls": 10}, {"rolls": 4}]})
    decks = comp.for_players(2)
    assert [sum("R" in f for f in d) for d in decks] == [10, 4]
    with pytest.raises(DeckError, match="has 2 decks; a 3-player game needs 1"):
        comp.for_players(3)


def test_toml_and_json_read_the_same() -> None:
    toml = 'name = "six"\n[deck]\nrolls = 6\nrainbows = 6\n'
    js = json.dumps({"name": "six", "deck": {"rolls": 6, "rainbows": 6}})
    assert parse_text(toml, "toml") == parse_text(js, "json")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "composition must be an object"),
        ({"deck": "standard", "colour": 1}, 'unknown key "colour"'),
        ({}, 'needs "deck"'),
        ({"deck": "standard", "decks": ["standard"]}, 'needs "deck"'),
        ({"deck": "standard", "name": ""}, "composition.name must be a non-empty string"),
        ({"deck": "standard", "name": "x" * 61}, "composition.name must be printable"),
        ({"deck": "standard", "name": "a\x1bb"}, "composition.name must be printable"),
        ({"deck": "big"}, 'composition.deck must be "standard" or an object'),
        ({"deck": {"rolls": 31}}, "composition.deck.rolls must be from 0 to 30, not 31"),
        ({"deck": {"rolls": -1}}, "composition.deck.rolls must be from 0 to 30"),
        ({"deck": {"rolls": 2.5}}, "composition.deck.rolls must be a whole number"),
        ({"deck": {"rolls": True}}, "composition.deck.rolls must be a whole number"),
        ({"deck": {"roll": 6}}, 'composition.deck: unknown key "roll"'),
        ({"deck": {}}, "composition.deck is empty"),
        (
            {"deck": {"rolls": 20, "rainbows": 20}},
            "composition.deck: rainbows 20 \\+ rolls 20 = 40 cards; a deck has exactly 30",
        ),
        (
            {"deck": {"halves": 10, "threes": 10, "rainbows": 5, "rolls": 4}},
            "halves 10 \\+ threes 10 \\+ rainbows 5 \\+ rolls 4 = 29 cards; a deck has exactly 30",
        ),
        (
            {"deck": {"cards": {"CCSS": 29}}},
            "composition.deck.cards has 29 cards; a deck has exactly 30",
        ),
        (
            {"deck": {"cards": {"CCSS": 20, "HHBB": 20}}},
            "cards has 40 cards; a deck has exactly 30",
        ),
        ({"deck": {"cards": ["CCSS"] * 31}}, "has 31 cards; a deck has exactly 30"),
        ({"deck": {"cards": {"CCXS": 30}}}, "composition.deck.cards: bad face 'CCXS'"),
        ({"deck": {"cards": {"RRSS": 30}}}, "at most one R"),
        ({"deck": {"cards": ["CCSS"] * 29 + [5]}}, "composition.deck.cards\\[29\\]: a face"),
        ({"deck": {"cards": "CCSS"}}, "composition.deck.cards must be an object"),
        ({"deck": {"cards": {"CCSS": 30}, "rolls": 2}}, 'give "cards" or kind counts, not both'),
        ({"decks": []}, "composition.decks must be a list of 1 to 4 decks"),
        ({"decks": ["standard"] * 5}, "composition.decks must be a list of 1 to 4"),
        ({"decks": ["standard", {"rolls": 40}]}, "composition.decks\\[1\\].rolls"),
    ],
)
def test_bad_compositions_say_what_is_wrong_in_one_line(data: object, message: str) -> None:
    with pytest.raises(DeckError, match=message) as err:
        parse_composition(data)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, DonutboxError)


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        ("{", "json", "not JSON"),
        ("[" * 100_000, "json", "at most 20000 characters"),
        ("[" * 5000, "json", "not JSON"),
        ("deck = ", "toml", "not TOML"),
        ("deck = " + "[" * 5000 + "]" * 5000, "toml", "not TOML: nested too deeply"),
        ("deck = " + "{a = " * 3000 + "1" + "}" * 3000, "toml", "not TOML: nested too deeply"),
        ("{}", "yaml", "unknown format"),
    ],
)
def test_bad_text(text: str, fmt: str, message: str) -> None:
    with pytest.raises(DeckError, match=message) as err:
        parse_text(text, fmt)
    assert "\n" not in str(err.value)


def test_a_custom_deck_game_replays_from_its_record() -> None:
    comp = parse_composition(
        {"name": "all rolls and halves", "deck": {"cards": {"RCSH": 15, "CCSS": 15}}}
    )
    game = Game.deal(comp.deal(2, 99), Rules(), ["Ann", "Bob"], 99)
    rng = random.Random(5)
    while not game.finished:
        game.play(rng.choice(game.legal_moves()))
    record = json.loads(json.dumps(dump(game)))
    # The record carries the custom decks: only RCSH and CCSS cards, 15 each.
    assert [Counter(d) for d in record["decks"]] == [Counter({"RCSH": 15, "CCSS": 15})] * 2
    again = replay(record)
    assert again.finished
    assert again.scores == game.scores and again.winners == game.winners
    assert dump(again)["moves"] == record["moves"]


def test_every_example_deck_file_reads() -> None:
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "examples" / "decks"
    files = sorted(folder.iterdir())
    assert len(files) >= 4
    seen = {}
    for path in files:
        comp = parse_text(path.read_text(), "toml" if path.suffix == ".toml" else "json")
        seen[comp.name] = comp
    assert seen["six rolls"].counts() == {"halves": 13, "threes": 7, "rainbows": 4, "rolls": 6}
    assert seen["rainbow heavy"].counts() == {"halves": 8, "threes": 6, "rainbows": 8, "rolls": 8}
    assert seen["standard, card by card"].standard
    assert [seen["handicap"].counts(i)["rolls"] for i in (0, 1)] == [6, 10]


def test_new_game_checks_the_number_of_decks_even_for_standard_ones() -> None:
    comp = parse_composition({"decks": ["standard"] * 3})
    with pytest.raises(DeckError, match="has 3 decks; a 2-player game needs 1"):
        comp.new_game(Rules(), 2, 1)
    assert dump(comp.new_game(Rules(), 3, 1)) == dump(Game.new(Rules(), 3, 1))
    six = from_kinds({"rolls": 6})
    game = six.new_game(Rules(), ["Ann", "Bob"], 7)
    assert dump(game)["deck"] == "rolls 6"
    assert dump(game)["seed"] == 7
