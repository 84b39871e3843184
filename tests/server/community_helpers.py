"""Shared by the community tests: players with their own cookie jars."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from typing import Any

from fastapi.testclient import TestClient

from donutbox.server.app import create_app

PASSWORD = "correct horse battery"


class Jar:
    """The app's one TestClient (its lifespan, its event loop) with this
    browser's cookies put in for each request."""

    def __init__(self, client: TestClient) -> None:
        self.main = client
        self.cookies = type(client.cookies)()

    def __getattr__(self, verb: str) -> Any:
        method = getattr(self.main, verb)

        def call(*args: Any, **kw: Any) -> Any:
            self.main.cookies = self.cookies
            try:
                return method(*args, **kw)
            finally:
                self.cookies = self.main.cookies

        return call


class Player:
    """One browser: its own cookies (session, CSRF) on the same app (whose
    TestClient the fixture keeps in ``app.state.test_client``)."""

    def __init__(self, app: Any, name: str) -> None:
        self.client: Any = Jar(app.state.test_client)
        self.name = name
        self.csrf = ""

    def get(self, url: str, **kw: Any) -> Any:
        return self.client.get(url, **kw)

    def post(self, url: str, body: Any = None, csrf: bool = True, **kw: Any) -> Any:
        headers = dict(kw.pop("headers", {}))
        if csrf:
            headers.setdefault("X-CSRF-Token", self.csrf)
        return self.client.post(url, json=body, headers=headers, **kw)

    def fetch_csrf(self) -> None:
        self.csrf = self.get("/api/account").json()["csrf"]

    def sign_up(self, password: str = PASSWORD) -> Any:
        self.fetch_csrf()
        r = self.post("/api/account/signup", {"name": self.name, "password": password})
        if r.status_code == 200:
            self.csrf = r.json()["csrf"]
        return r

    def sign_in(self, password: str = PASSWORD) -> Any:
        self.fetch_csrf()
        r = self.post("/api/account/signin", {"name": self.name, "password": password})
        if r.status_code == 200:
            self.csrf = r.json()["csrf"]
        return r


def play_to_the_end(client: Any, game_id: str, tokens: list[str]) -> dict[str, Any]:
    """Each seat plays its first legal move until the game ends (HTTP)."""
    auth = [{"Authorization": f"Bearer {t}"} for t in tokens]
    state = client.get(f"/api/online/{game_id}", headers=auth[0]).json()
    for _ in range(2000):
        if state["finished"]:
            return state
        p = state["to_move"]
        mine = client.get(f"/api/online/{game_id}", headers=auth[p]).json()
        r = client.post(
            f"/api/online/{game_id}/moves",
            json={"move": mine["legal"][0], "version": mine["version"]},
            headers=auth[p],
        )
        assert r.status_code == 200, r.text
        state = r.json()
    raise AssertionError("the game did not end")


@contextlib.contextmanager
def running_app(url: str) -> Iterator[Any]:
    """The app on the database ``url``, started (its lifespan) with one
    TestClient, kept in ``app.state.test_client`` for the players."""
    application = create_app(url, inline_ai=True)
    with TestClient(application) as c:
        application.state.test_client = c
        yield application


def signed_up(app: Any, *names: str) -> list[Player]:
    """A player per name, each signed up (its own cookies)."""
    out = []
    for n in names:
        p = Player(app, n)
        assert p.sign_up().status_code == 200
        out.append(p)
    return out


@contextlib.contextmanager
def fresh_pg_database(pg_url: str, prefix: str) -> Iterator[str]:
    """A PostgreSQL database of its own on ``pg_url``'s server, made now and
    dropped after: its SQLAlchemy URL."""
    import psycopg

    name = f"{prefix}_{secrets.token_hex(5)}"
    admin = pg_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield pg_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def rated_table_game(host: Player, guest: Player) -> str:
    """A rated two-player table game (host opens, guest joins) played to the
    end with first legal moves: its id (not settled yet)."""
    t = host.post("/api/lobby/tables", {"players": 2, "rated": True}).json()
    game_id: str = guest.post(f"/api/lobby/tables/{t['id']}/join").json()["game"]
    tokens = []
    for p in (host, guest):
        games = p.get("/api/lobby").json()["games"]
        tokens.append(next(g["token"] for g in games if g["game"] == game_id))
    play_to_the_end(host.client, game_id, tokens)
    return game_id


def engine_at_revision(url: str, revision: str) -> Any:
    """An engine on ``url`` whose schema is migrated only up to ``revision``
    (a database the code of that time left)."""
    from alembic import command
    from alembic.config import Config

    from donutbox.server import migrate
    from donutbox.server.storage import make_engine

    engine = make_engine(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(migrate.MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
    return engine
