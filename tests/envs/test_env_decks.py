"""The research environments deal from a deck composition given as ``deck=``."""

from __future__ import annotations

import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

from donutbox.core import Game, Rules
from donutbox.core.decks import from_kinds
from donutbox.core.record import dump
from donutbox.envs import DonutboxEnv
from donutbox.envs.pettingzoo_env import aec_env

ALL_HALVES = {"name": "halves", "deck": {"cards": {"CCSS": 30}}}


def test_gym_env_deals_from_the_deck() -> None:
    env = DonutboxEnv(opponent="random", deck=ALL_HALVES)
    env.reset(seed=5)
    game = env.game
    assert game is not None
    assert game.decks == (("CCSS",) * 30, ("CCSS",) * 30)
    assert dump(game)["deck"] == "halves"


def test_no_deck_and_the_standard_deck_deal_alike() -> None:
    plain = DonutboxEnv(opponent="random")
    plain.reset(seed=9)
    standard = DonutboxEnv(opponent="random", deck={"deck": "standard"})
    standard.reset(seed=9)
    assert plain.game is not None and standard.game is not None
    assert plain.game.decks == standard.game.decks == Game.new(Rules(), 2, 9).decks


def test_pettingzoo_env_deals_from_the_deck() -> None:
    six = from_kinds({"rolls": 6})
    env = aec_env(deck=six)
    env.reset(seed=3)
    game = env.unwrapped.game
    assert [sum("R" in f for f in d) for d in game.decks] == [6, 6]


def test_bad_decks() -> None:
    with pytest.raises(ValueError, match=r"deck\.deck\.rolls must be from 0 to 30"):
        DonutboxEnv(deck={"deck": {"rolls": 31}})
    with pytest.raises(TypeError, match="deck must be a Composition or a dict"):
        DonutboxEnv(deck="six rolls")  # type: ignore[arg-type]
    # The window encoding's bounds count a standard deck's donuts (28 a
    # flavour, 8 R): 10 rolls is 10 R a deck, and its 11 halves, 5 threes
    # and 4 rainbows print 30 C (core/decks.py: KIND_FACES).
    with pytest.raises(ValueError, match=r"deck 0 of 'rolls 10' has 30 C, 10 R$"):
        DonutboxEnv(deck=from_kinds({"rolls": 10}), encoding="window")
    DonutboxEnv(deck=from_kinds({"rolls": 10}))  # the places encoding has no such bound
