"""A custom deck through the API: POST /api/games takes an optional
``deck`` composition (object, or JSON/TOML text) read by the core's loader."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from donutbox.core import replay
from donutbox.server.app import create_app
from donutbox.server.storage import Store, make_engine

AUTH = {"Authorization": "Bearer test-owner-token-0123456789abcdefghijklmnop"}


DB: dict[int, str] = {}


@pytest.fixture
def client(tmp_path: Path):  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'g.db'}"
    with TestClient(create_app(url, inline_ai=True), headers=AUTH) as c:
        DB[id(c)] = url
        yield c


def _record(client: TestClient, game_id: str) -> dict:  # type: ignore[type-arg]
    """The stored record (the API exports it only once the game is over:
    it shows every hidden card)."""
    store = Store(make_engine(DB[id(client)]))
    try:
        stored = store.get(game_id)
        assert stored is not None
        return stored.record
    finally:
        store.close()


def test_a_custom_deck_object_deals_its_cards(client: TestClient) -> None:
    deck = {"name": "rolls and halves", "deck": {"cards": {"RCSH": 12, "CCSS": 18}}}
    r = client.post("/api/games", json={"opponent": "hotseat", "deck": deck})
    assert r.status_code == 200, r.text
    record = _record(client, r.json()["id"])
    assert record["deck"] == "rolls and halves"
    assert [Counter(d) for d in record["decks"]] == [Counter({"RCSH": 12, "CCSS": 18})] * 2
    assert replay(record).ply == 0


def test_a_custom_deck_as_toml_text(client: TestClient) -> None:
    text = 'name = "no rolls"\n[deck]\nrolls = 0\n'
    r = client.post("/api/games", json={"opponent": "random", "deck": text})
    assert r.status_code == 200, r.text
    record = _record(client, r.json()["id"])
    assert all("R" not in f for d in record["decks"] for f in d)
    assert record["deck"] == "no rolls"


def test_no_deck_is_the_standard_deck(client: TestClient) -> None:
    r = client.post("/api/games", json={"opponent": "hotseat", "seed": 3, "deck": None})
    assert r.status_code == 200
    record = _record(client, r.json()["id"])
    assert "deck" not in record
    assert Counter(record["decks"][0]) == Counter(
        {"CCSS": 2, "CCHH": 2, "CCBB": 2, "SSHH": 2, "SSBB": 2, "HHBB": 2}
    ) + Counter(["CCSH", "SSHB", "HHBC", "BBCS", "CCBH", "SSBH", "CSHB", "CSBH", "CHSB"]) + Counter(
        ["CHBS", "RCSH", "RHSC", "RCSB", "RBCS", "RCHB", "RBHC", "RSHB", "RBSH"]
    )


@pytest.mark.parametrize(
    ("deck", "message"),
    [
        ({"deck": {"rolls": 40}}, "deck: composition.deck.rolls must be from 0 to 30, not 40"),
        ({"deck": {"cards": {"CCSS": 29}}}, "deck: composition.deck.cards has 29 cards"),
        ({"decks": ["standard"] * 3}, "has 3 decks; a 2-player game needs 1"),
        ("rolls = ", "deck: not TOML"),
        ("rolls = " + "[" * 5000 + "]" * 5000, "deck: not TOML: nested too deeply"),
        ("{", "deck: not JSON"),
        ({"deck": "standard", "about": "x" * 30_000}, "at most 20000 characters"),
    ],
)
def test_bad_decks_are_refused_and_create_nothing(
    client: TestClient, deck: object, message: str
) -> None:
    r = client.post("/api/games", json={"opponent": "hotseat", "deck": deck})
    assert r.status_code == 422
    assert message in r.json()["detail"] and "\n" not in r.json()["detail"]
    assert client.get("/api/games").json() == []


def test_a_deck_text_over_the_bound_is_refused(client: TestClient) -> None:
    r = client.post("/api/games", json={"opponent": "hotseat", "deck": " " * 20_001})
    assert r.status_code == 422
    assert "deck" in r.text
    assert client.get("/api/games").json() == []
