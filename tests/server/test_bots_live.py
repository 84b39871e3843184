"""Two ``donutbox bot`` processes play a rated game through a real
``donutbox serve`` (issue 37: "two donutbox bot processes with tokens play a
rated bot game to the end through the running server"), and the ratings
settle in the bots' own pool."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bot_helpers import SRC, Person, bot_process, reaped
from community_helpers import fresh_pg_database

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bot_pettingzoo.py"


PG_URL = os.environ.get("DONUTBOX_TEST_PG_URL")


@contextlib.contextmanager
def _database(kind: str) -> Iterator[tuple[str, ...]]:
    """``serve``'s extra arguments: none (its SQLite file), or a fresh
    PostgreSQL database of DONUTBOX_TEST_PG_URL's server."""
    if kind == "sqlite":
        yield ()
        return
    if not PG_URL:
        pytest.skip("no PostgreSQL server (DONUTBOX_TEST_PG_URL)")
    pytest.importorskip("psycopg")
    with fresh_pg_database(PG_URL, "bots") as url:
        yield ("--db", url)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_two_bot_processes_play_a_rated_game_rated_in_the_bot_pool(serve, kind: str) -> None:  # type: ignore[no-untyped-def]
    with _database(kind) as db:
        _two_bots_play(serve(*db))


def _two_bots_play(server) -> None:  # type: ignore[no-untyped-def]
    owner = Person(server.url, "Owner")
    alpha, beta = owner.bot("alpha"), owner.bot("beta")
    waiter = bot_process(server.url, beta, "--games", "1")
    time.sleep(1.0)  # beta's event stream open before the challenge (it would be read anyway)
    challenger = bot_process(
        server.url, alpha, "--games", "1", "--challenge", "beta", "--minutes", "3"
    )
    outs = []
    with reaped(challenger, waiter):
        for proc in (challenger, waiter):
            out, _ = proc.communicate(timeout=240)
            outs.append(out)
            assert proc.returncode == 0, out
    assert "accepted alpha's challenge" in outs[1], outs[1]
    assert "finished" in outs[0] and "finished" in outs[1], outs

    # Settled by the lobby's ticker (every 2 s).
    deadline = time.monotonic() + 30
    while True:
        profiles = {n: owner.get(f"/api/players/{n}").json() for n in ("alpha", "beta")}
        if all(p["history"] and p["history"][0]["rating"] for p in profiles.values()):
            break
        assert time.monotonic() < deadline, profiles
        time.sleep(0.5)

    game = {n: p["history"][0] for n, p in profiles.items()}
    assert game["alpha"]["game"] == game["beta"]["game"]
    assert game["alpha"]["rated"] and game["alpha"]["finished"]
    assert sorted(game["alpha"]["players"]) == ["alpha", "beta"]
    for n, p in profiles.items():
        # One rating, in the bot pool (the human pool's key has no prefix).
        assert list(p["ratings"]) == ["bot:ogm-sa"], p["ratings"]
        assert game[n]["rules"] == "bot:ogm-sa"
        assert p["ratings"]["bot:ogm-sa"]["games"] == 1
    a, b = game["alpha"], game["beta"]
    # Two new players (docs/community.md's worked example, by hand): the
    # winner goes 1500 -> 1578, the loser 1500 -> 1422; a draw leaves 1500.
    if a["score"] != b["score"]:
        win, lose = (a, b) if a["score"] > b["score"] else (b, a)
        assert (win["place"], lose["place"]) == (1, 2)
    if a["place"] == b["place"]:
        assert a["rating"]["after"] == b["rating"]["after"] == 1500
    else:
        win, lose = (a, b) if a["place"] < b["place"] else (b, a)
        assert (win["rating"]["before"], win["rating"]["after"]) == (1500, 1578)
        assert (lose["rating"]["before"], lose["rating"]["after"]) == (1500, 1422)
    # The owner (a person) has no rating at all: bots never move the human pool.
    assert owner.get("/api/players/Owner").json()["ratings"] == {}
    owner.http.close()


def test_the_pettingzoo_example_plays_a_bot_to_the_end(serve) -> None:  # type: ignore[no-untyped-def]
    """examples/bot_pettingzoo.py: a PettingZoo policy (random masked
    actions) plays a heuristic ``donutbox bot`` through the server."""
    pytest.importorskip("pettingzoo")
    server = serve()
    owner = Person(server.url, "Owner")
    zoo, heur = owner.bot("zoo"), owner.bot("heur")
    waiter = bot_process(server.url, heur, "--games", "1")
    env = dict(os.environ, DONUTBOX_BOT_TOKEN=zoo)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH", "")]))
    example = subprocess.Popen(
        [
            sys.executable,
            str(EXAMPLE),
            "--server",
            server.url,
            "--games",
            "1",
            "--challenge",
            "heur",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    outs = []
    with reaped(example, waiter):
        for proc in (example, waiter):
            out, _ = proc.communicate(timeout=240)
            outs.append(out)
            assert proc.returncode == 0, out
    assert "finished" in outs[0] and "accepted zoo's challenge" in outs[1], outs
    deadline = time.monotonic() + 30
    while True:  # settled by the lobby's ticker (every 2 s)
        history = owner.get("/api/players/zoo").json()["history"]
        if history[0]["finished"] or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(history) == 1 and history[0]["opponents"] == ["heur"]
    assert history[0]["finished"] and history[0]["score"] is not None
    owner.http.close()


def test_revoking_a_token_stops_the_bot_that_uses_it(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve()
    owner = Person(server.url, "Owner")
    token = owner.bot("gamma")
    proc = bot_process(server.url, token)
    with reaped(proc):
        deadline = time.monotonic() + 30
        while not owner.get("/api/bots/gamma").json()["online"]:  # its event stream is open
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.2)
        (listed,) = owner.get("/api/account/bots").json()
        (tid,) = [t["id"] for t in listed["tokens"]]
        assert owner.post(f"/api/account/bots/gamma/tokens/{tid}/revoke").status_code == 200
        # The open event stream ends at its next keepalive (6 s), and the
        # client, refused when it opens it again, stops.
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1, out
    assert "token: revoked" in out and "no such bot token, or it was revoked" in out
    owner.http.close()
