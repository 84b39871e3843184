"""The HTTP/WebSocket API through the ASGI test client, on a real SQLite file."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from donutbox.server.app import create_app
from donutbox.server.online import digest
from donutbox.server.storage import Store, make_engine

#: This browser's owner token: every request of these tests carries it (the
#: owner checks themselves are in test_access.py).
OWNER = "test-owner-token-0123456789abcdefghijklmnop"
AUTH = {"Authorization": f"Bearer {OWNER}"}


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'games.db'}"


@pytest.fixture
def client(db: str):  # type: ignore[no-untyped-def]
    with TestClient(create_app(db, inline_ai=True), headers=AUTH) as c:
        yield c


def _wait_for_turn(client: TestClient, game_id: str, seat: int = 0) -> dict[str, Any]:
    for _ in range(200):
        state = client.get(f"/api/games/{game_id}").json()
        if state["finished"] or (state["to_move"] == seat and not state["thinking"]):
            return state
        time.sleep(0.02)
    raise AssertionError("the AI never answered")


def test_new_game_against_the_ai_and_a_move(client: TestClient) -> None:
    r = client.post("/api/games", json={"opponent": "random", "seed": 4})
    assert r.status_code == 200
    state = r.json()
    assert state["version"] == 0 and state["to_move"] == 0 and state["player"] == 0
    assert len(state["tray"]) == 4 and state["legal"]
    r = client.post(
        f"/api/games/{state['id']}/moves", json={"move": state["legal"][0], "version": 0}
    )
    assert r.status_code == 200
    assert r.json()["version"] == 1
    after = _wait_for_turn(client, state["id"])
    assert after["version"] == 2  # the AI answered, and both moves were stored
    assert len(after["history"]) == 2


def test_illegal_stale_and_malformed_intents_change_nothing(client: TestClient) -> None:
    state = client.post("/api/games", json={"opponent": "hotseat", "seed": 4}).json()
    gid = state["id"]
    r = client.post(f"/api/games/{gid}/moves", json={"move": "CCSS@1,0/0", "version": 0})
    assert r.status_code == 422
    assert "tray" in r.json()["detail"] or "Squared Away" in r.json()["detail"]
    r = client.post(f"/api/games/{gid}/moves", json={"move": "nonsense", "version": 0})
    assert r.status_code == 422 and "bad move" in r.json()["detail"]
    r = client.post(f"/api/games/{gid}/moves", json={"move": state["legal"][0], "version": 7})
    assert r.status_code == 409 and "stale" in r.json()["detail"]
    r = client.post(f"/api/games/{gid}/moves", content=b"{not json")
    assert r.status_code == 422
    r = client.post(f"/api/games/{gid}/moves", json={"move": "x" * 1000, "version": 0})
    assert r.status_code == 422
    again = client.get(f"/api/games/{gid}").json()
    assert again["version"] == 0 and again["history"] == []


def test_a_move_is_applied_once_even_when_sent_twice(client: TestClient) -> None:
    state = client.post("/api/games", json={"opponent": "hotseat", "seed": 9}).json()
    gid, move = state["id"], state["legal"][0]
    first = client.post(f"/api/games/{gid}/moves", json={"move": move, "version": 0})
    second = client.post(f"/api/games/{gid}/moves", json={"move": move, "version": 0})
    assert first.status_code == 200 and second.status_code == 409
    assert client.get(f"/api/games/{gid}").json()["history"] == [move]


def test_games_survive_a_restart(db: str) -> None:
    with TestClient(create_app(db, inline_ai=True), headers=AUTH) as c:
        state = c.post("/api/games", json={"opponent": "hotseat", "seed": 2}).json()
        c.post(f"/api/games/{state['id']}/moves", json={"move": state["legal"][0], "version": 0})
    with TestClient(create_app(db, inline_ai=True), headers=AUTH) as c:
        again = c.get(f"/api/games/{state['id']}").json()
        assert again["version"] == 1 and again["history"] == [state["legal"][0]]
        assert [g["id"] for g in c.get("/api/games").json()] == [state["id"]]


def test_undo_against_the_ai_takes_back_the_reply_too(client: TestClient) -> None:
    state = client.post("/api/games", json={"opponent": "random", "seed": 5}).json()
    gid = state["id"]
    client.post(f"/api/games/{gid}/moves", json={"move": state["legal"][0], "version": 0})
    after = _wait_for_turn(client, gid)
    r = client.post(f"/api/games/{gid}/undo", json={"version": after["version"]})
    assert r.status_code == 200
    assert r.json()["history"] == [] and r.json()["tray"] == state["tray"]


def test_record_is_only_exported_when_the_game_is_over(client: TestClient) -> None:
    state = client.post("/api/games", json={"opponent": "hotseat", "seed": 3}).json()
    r = client.get(f"/api/games/{state['id']}/record")
    assert r.status_code == 403


def test_import_and_replay_a_finished_record(client: TestClient) -> None:
    record = json.loads(
        (Path(__file__).resolve().parents[2] / "tests" / "data" / "deadlock.json").read_text()
    )
    r = client.post("/api/games/import", json=record)
    assert r.status_code == 200, r.text
    state = r.json()
    assert state["finished"]
    gid = state["id"]
    exported = client.get(f"/api/games/{gid}/record").json()
    assert exported["moves"] == record["moves"]
    step = client.get(f"/api/games/{gid}/replay/0").json()
    assert step["ply"] == 0 and step["state"]["history"] == []
    assert client.get(f"/api/games/{gid}/replay/999").status_code == 422
    bad = client.post("/api/games/import", json={"format": "donutbox/1"})
    assert bad.status_code == 422 and "players" in bad.json()["detail"]
    # A record with a move after the end is refused, naming the rule.
    late = json.loads(
        (Path(__file__).resolve().parents[2] / "tests" / "data" / "final-lap-4p.json").read_text()
    )
    r = client.post("/api/games/import", json=late)
    detail = r.json()["detail"]
    assert r.status_code == 422 and detail.endswith("the game is over")
    last = len(late["moves"]) - 1  # the move named as every command names it
    assert detail.startswith(f"move {last + 1} (ply {last}, {late['moves'][-1]}) is illegal: ")


def test_the_replay_shows_the_open_boxes_of_the_move_shown(client: TestClient) -> None:
    """The replay's state carries the open boxes at that move (the side
    panel's "if ended now" and open-box list read them), not the end's.
    Worked out by hand from RULES.md sections 5 and 6: the start card is
    four B (a box of 4 nobody holds); BCRC@2,0/0=C puts B at 2,0 (joining the start card's four: a
    run of 5, value 5, one donut player 0's) and C, C, R locked to C at
    3,0 / 3,1 / 2,1; CCCB@2,2/0 adds player 1's three C at 2,2 / 3,2 /
    3,3: a C run of 6 with an R, value 12, held 3 and 3; box@3,0 (move 4)
    delivers it to player 1."""
    import donutbox
    from donutbox.core import dump

    game = donutbox.Game.deal(
        [
            ["BCRC", "HHHH", "HHHH", "HHHH", "BBBB", "HHHH", "HHHH"],
            ["CCCB", "HHHH", "HHHH", "HHHH", "HHHH", "HHHH"],
        ]
    )
    for move in ["BCRC@2,0/0=C", "CCCB@2,2/0", "swap HHHH", "box@3,0"] + ["swap HHHH"] * 10:
        game.play(move)
    gid = client.post("/api/games/import", json=dump(game)).json()["id"]

    def boxes(ply: int) -> list[tuple[int, int, int, int, list[int]]]:
        state = client.get(f"/api/games/{gid}/replay/{ply}").json()["state"]
        return [(b["x"], b["y"], b["size"], b["points"], b["held"]) for b in state["boxes"]]

    assert boxes(0) == [(0, 0, 4, 4, [0, 0])]  # the start card: a box nobody holds
    blue = (0, 0, 5, 5, [1, 0])
    assert boxes(2) == [blue, (3, 0, 6, 12, [3, 3])]
    assert boxes(4) == [blue]  # the C box delivered by player 1
    # The end: end scoring is no delivery (section 8), the B box stays open.
    assert boxes(14) == [blue]


def _paths_with(value: Any, needle: str, path: str = "") -> list[str]:
    if isinstance(value, str):
        return [path] if needle in value else []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _paths_with(v, needle, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _paths_with(v, needle, f"{path}[{i}]")]
    return []


def test_no_response_contains_the_ai_tray(db: str) -> None:
    # The AI (seat 1) holds four faces that appear nowhere in the human's deck.
    secret = ["RBBB", "BRBB", "BBRB", "BBBR"]
    decks = [["CCSS", "CCHH", "SSHH", "CSHB", "CCCC", "CCSS", "SSHH"], [*secret, "HHBB", "HHBB"]]
    record = {"format": "donutbox/1", "players": ["You", "AI"], "decks": decks, "moves": []}
    store = Store(make_engine(db))
    stored = store.create("secret", "ai", ["human", "random"], {"owner": digest(OWNER)}, record)
    with TestClient(create_app(db, inline_ai=True), headers=AUTH) as c:
        responses = [c.get(f"/api/games/{stored.id}").json(), c.get("/api/games").json()]
        with c.websocket_connect(f"/api/games/{stored.id}/ws?token={OWNER}") as ws:
            responses.append(ws.receive_json())
        for data in responses:
            for face in secret:
                leaks = [p for p in _paths_with(data, face) if ".unseen" not in p]
                assert leaks == [], f"{face} leaked at {leaks}"
        # The unseen multiset is sorted: it never tells the order.
        unseen = responses[0]["unseen"][1]
        assert unseen == sorted(unseen)


def test_websocket_pushes_the_ai_reply(client: TestClient) -> None:
    state = client.post("/api/games", json={"opponent": "random", "seed": 6}).json()
    gid = state["id"]
    with client.websocket_connect(f"/api/games/{gid}/ws?token={OWNER}") as ws:
        first = ws.receive_json()
        assert first["type"] == "state" and first["state"]["version"] == 0
        client.post(f"/api/games/{gid}/moves", json={"move": state["legal"][0], "version": 0})
        versions = set()
        while 2 not in versions:
            versions.add(ws.receive_json()["state"]["version"])


def test_bad_new_game_requests(client: TestClient) -> None:
    assert client.post("/api/games", json={"players": 5}).status_code == 422
    assert client.post("/api/games", json={"opponent": "nobody"}).status_code == 422
    assert client.post("/api/games", json={"human_seat": 3}).status_code == 422
    # A name too long for the page (40) is refused before anything is stored.
    before = client.get("/api/games").json()
    r = client.post("/api/games", json={"opponent": "hotseat", "names": ["x" * 41, "Bob"]})
    assert r.status_code == 422 and "names" in r.json()["detail"]
    assert client.get("/api/games").json() == before
    assert client.get("/api/games/nope").status_code == 404
    assert client.get("/openapi.json").status_code == 200


def test_preview_names_what_a_move_would_seal(client: TestClient) -> None:
    # The hand-worked seal-majority example: before B's last card, CCCC@2,-2/0
    # would seal the H run of 4 for A (2 held by A, 2 neutral).
    record = {
        "format": "donutbox/1",
        "players": ["A", "B"],
        "start": "SHHS",
        "moves": ["HHCC@2,0/270", "SSSS@0,2/0", "SSSS@0,-2/0", "CCCC@2,2/0", "SSSS@-2,0/0"],
    }
    state = client.post("/api/games/import", json=record).json()
    r = client.get(f"/api/games/{state['id']}/preview", params={"move": "CCCC@2,-2/0"})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["deliveries"] == [{"ply": 5, "how": "sealed", "size": 4, "points": 4, "to": [0]}]
    assert data["scores"] == [4, 0]
    again = client.get(f"/api/games/{state['id']}").json()
    assert again["history"] == record["moves"]  # nothing was played
    bad = client.get(f"/api/games/{state['id']}/preview", params={"move": "CCCC@9,9/0"})
    assert bad.status_code == 422


@pytest.mark.parametrize(
    ("rules", "written"),
    [
        (
            {"match": "one-good-match", "layout": "splitzkies", "closers": False},
            {"layout": "splitzkies"},
        ),
        (
            {"match": "perfect-match", "layout": "squared-away", "closers": True},
            {"match": "perfect-match", "closers": True},
        ),
    ],
)
def test_a_whole_game_against_the_ai_through_the_api(
    client: TestClient,
    rules: dict,  # type: ignore[type-arg]
    written: dict,  # type: ignore[type-arg]
) -> None:
    """The record writes only the rule options not at their default."""
    state = client.post("/api/games", json={"opponent": "random", "seed": 14, **rules}).json()
    gid = state["id"]
    while True:
        state = _wait_for_turn(client, gid)
        if state["finished"]:
            break
        # Every state sent is the human's own view, with the legal moves listed.
        assert state["player"] == 0 and state["legal"]
        r = client.post(
            f"/api/games/{gid}/moves",
            json={"move": state["legal"][-1], "version": state["version"]},
        )
        assert r.status_code == 200, r.text
    assert state["winners"]
    total = sum(d["points"] * len(d["to"]) for d in state["deliveries"])
    assert total == sum(state["scores"])
    record = client.get(f"/api/games/{gid}/record").json()
    assert record["rules"] == written and len(record["moves"]) == len(state["history"])


def test_meta_and_the_shared_donut_look(client: TestClient) -> None:
    meta = client.get("/api/meta").json()
    assert set(meta) == {"rules", "agents", "players", "max_name_length", "palette"}
    # The rule options, in the core's order, with the layout's two choices.
    assert [r["name"] for r in meta["rules"]] == ["match", "layout", "closers"]
    layout = meta["rules"][1]
    assert layout["kind"] == "choice" and layout["default"] == "squared-away"
    assert [c["value"] for c in layout["choices"]] == ["squared-away", "splitzkies"]
    assert meta["rules"][2]["kind"] == "flag" and meta["rules"][2]["default"] is False
    # The catalogue: the four levels first, then the plain agents; only
    # the searching ones take a time budget.
    names = [a["name"] for a in meta["agents"]]
    assert names[:4] == ["easy", "medium", "hard", "expert"]
    assert "mcts" in names and "random" in names
    timed = {a["name"] for a in meta["agents"] if a["timed"]}
    assert timed == {"hard", "expert", "mcts"}
    expert = next(a for a in meta["agents"] if a["name"] == "expert")
    assert expert["level"] == 4 and expert["default_seconds"] == 5.0
    assert all(a["max_seconds"] > 0 for a in meta["agents"] if a["timed"])
    assert meta["players"] == {"min": 2, "max": 4} and meta["max_name_length"] == 40
    palette = meta["palette"]
    assert len(palette["players"]) == 4 and set(palette["flavours"]) == set("CSHBR")
    assert all(p["colour"].startswith("#") for p in palette["players"])
    r = client.get("/api/look/donut/RC.svg")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.lstrip().startswith("<?xml") and "<svg" in r.text
    assert client.get("/api/look/donut/X.svg").status_code == 404


def test_a_hint_is_a_legal_move_of_the_player_to_move_and_changes_nothing(
    client: TestClient,
) -> None:
    # Start card CCCC; Ann lays CCCC beside it; Bob holds only BBBB cards and
    # none fits (worked out by hand in the box-it browser test), so his one
    # legal move is to swap: the hint must be exactly that.
    record = {
        "format": "donutbox/1",
        "players": ["Ann", "Bob"],
        "decks": [["CCCC", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB", "BBBB"], ["BBBB"] * 6],
        "moves": ["CCCC@2,0/0"],
    }
    state = client.post("/api/games/import", json=record).json()
    gid = state["id"]
    r = client.post(f"/api/games/{gid}/hint", json={"version": state["version"]})
    assert r.status_code == 200, r.text
    assert r.json() == {"move": "swap BBBB", "version": state["version"]}
    # Now Ann has choices (box the run of 8, or place a card): the hint is
    # one of her legal moves, and asking for it played nothing.
    state = client.post(
        f"/api/games/{gid}/moves", json={"move": "swap BBBB", "version": state["version"]}
    ).json()
    r = client.post(f"/api/games/{gid}/hint", json={"version": state["version"]})
    assert r.status_code == 200, r.text
    assert r.json()["move"] in state["legal"] and len(state["legal"]) > 1
    after = client.get(f"/api/games/{gid}").json()
    assert after["version"] == state["version"] and after["history"] == state["history"]
    # Two hints asked at once for one game: one is worked out, the other
    # refused (a search takes a worker for a second).
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        codes = sorted(
            pool.map(
                lambda _: (
                    client.post(
                        f"/api/games/{gid}/hint", json={"version": state["version"]}
                    ).status_code
                ),
                range(2),
            )
        )
    assert codes == [200, 429]
    # A stale version, a finished game and an online game get no hint.
    stale = client.post(f"/api/games/{gid}/hint", json={"version": state["version"] - 1})
    assert stale.status_code == 409 and "stale" in stale.json()["detail"]
    done = client.post(
        "/api/games/import",
        json=json.loads(
            (Path(__file__).resolve().parents[2] / "tests" / "data" / "deadlock.json").read_text()
        ),
    ).json()
    r = client.post(f"/api/games/{done['id']}/hint", json={"version": done["version"]})
    assert r.status_code == 403 and r.json()["detail"] == "hint: it is not your turn"
    free = client.post(
        "/api/games/import", json={"format": "donutbox/1", "players": ["a", "b"], "start": "CCSS"}
    ).json()
    r = client.post(f"/api/games/{free['id']}/hint", json={"version": free["version"]})
    assert r.status_code == 422 and "free game" in r.json()["detail"]
    online = client.post("/api/online", json={"seats": [{"name": "Ann"}, {"name": "Bob"}]}).json()
    r = client.post(f"/api/games/{online['id']}/hint", json={"version": 0})
    assert r.status_code == 404  # not a local game: no owner token opens it
    seat = {"Authorization": f"Bearer {online['seats'][0]['token']}"}
    r = client.post(f"/api/games/{online['id']}/hint", json={"version": 0}, headers=seat)
    assert r.status_code == 404


def test_how_to_play_and_the_print_and_play_pdf(client: TestClient) -> None:
    import io
    import re

    rules = client.get("/api/rules").json()
    headings = [section["heading"] for column in rules["columns"] for section in column]
    for wanted in ("Your turn: do exactly one", "Setup", "Laying a card", "Scoring", "The end"):
        assert wanted in headings
    items = [i for column in rules["columns"] for section in column for i in section["items"]]
    # The page turns only <b> and <i> into elements: nothing else may be used.
    assert all(set(re.findall(r"</?(\w+)", i)) <= {"b", "i"} for i in items)
    assert any("Box it" in i for i in items)
    pypdf = pytest.importorskip("pypdf")
    r = client.get("/api/print.pdf", params={"paper": "a4"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf"
    # Two decks of 30 cards at 12 a sheet: 5 sheets, then 3 rules pages and
    # the reference card (docs/print-and-play.md).
    assert len(pypdf.PdfReader(io.BytesIO(r.content)).pages) == 9
    assert client.get("/api/print.pdf", params={"paper": "a3"}).status_code == 422
