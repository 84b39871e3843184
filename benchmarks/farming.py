"""Rating farming from outside (docs/community.md, "Rating integrity"): a
fresh ``donutbox serve`` on loopback (a new SQLite file), two accounts of
one person signed up from one address, ``--games`` rated table games
between them played to the end over HTTP (each seat plays its first legal
move), then both queue for quick match.  Prints, game by game, the weight
the game counted with and both shown ratings, then the leaderboard and
whether quick match paired them.

    python3 benchmarks/farming.py [--games 8]

Loopback only, bounded (at most 30 games), stops by itself.  Not run in CI.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Paced(httpx.Client):
    """A client that waits out the server's per-address request limit (429,
    ``Retry-After``) as a patient farmer would."""

    def request(self, *args: Any, **kw: Any) -> httpx.Response:  # type: ignore[override]
        for _ in range(100):
            r = super().request(*args, **kw)
            if r.status_code != 429:
                return r
            time.sleep(float(r.headers.get("retry-after", "0.2") or 0.2))
        return r


class Browser:
    """One account's cookies and CSRF token (both from one address)."""

    def __init__(self, base: str, name: str) -> None:
        self.http = Paced(base_url=base, timeout=30)
        self.name = name
        self.csrf = str(self.http.get("/api/account").json()["csrf"])

    def post(self, path: str, body: Any = None) -> Any:
        r = self.http.post(path, json=body or {}, headers={"X-CSRF-Token": self.csrf})
        r.raise_for_status()
        return r.json()

    def sign_up(self) -> None:
        self.csrf = self.post(
            "/api/account/signup", {"name": self.name, "password": "correct horse battery"}
        )["csrf"]

    def token_of(self, game: str) -> str:
        games = self.http.get("/api/lobby").json()["games"]
        return str(next(g["token"] for g in games if g["game"] == game))

    def rating(self) -> dict[str, Any]:
        ratings = self.http.get(f"/api/players/{self.name}").json()["ratings"]
        return dict(next(iter(ratings.values()))) if ratings else {}


def _play(http: Paced, game: str, tokens: list[str]) -> None:
    auth = [{"Authorization": f"Bearer {t}"} for t in tokens]
    for _ in range(2000):
        state = http.get(f"/api/online/{game}", headers=auth[0]).json()
        if state["finished"]:
            return
        mine = http.get(f"/api/online/{game}", headers=auth[state["to_move"]]).json()
        http.post(
            f"/api/online/{game}/moves",
            json={"move": mine["legal"][0], "version": mine["version"]},
            headers=auth[state["to_move"]],
        ).raise_for_status()
    raise RuntimeError("the game did not end")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=8, help="rated games (1 to 30; default 8)")
    args = ap.parse_args()
    if not 1 <= args.games <= 30:
        ap.error("--games must be from 1 to 30")
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
        db = f"sqlite:///{tmp}/farm.db"
        server = subprocess.Popen(
            [sys.executable, "-m", "donutbox", "serve", "--port", str(port), "--db", db],
            env=env,
            stdout=subprocess.DEVNULL,
        )
        try:
            for _ in range(300):
                try:
                    if httpx.get(f"{base}/api/meta", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            main_, alt = Browser(base, "main"), Browser(base, "alt")
            main_.sign_up()
            alt.sign_up()
            print("| game | weight | main | alt |")
            print("|---|---|---|---|")
            for k in range(1, args.games + 1):
                table = main_.post("/api/lobby/tables", {"players": 2, "rated": True})
                game = alt.post(f"/api/lobby/tables/{table['id']}/join")["game"]
                _play(main_.http, game, [main_.token_of(game), alt.token_of(game)])
                history = main_.http.get("/api/players/main").json()["history"]
                # (.get: the same script measures the code before the weights)
                weight = next(h for h in history if h["game"] == game)["rating"].get("weight", "-")
                shown = []
                for b in (main_, alt):
                    r = b.rating()
                    shown.append(f"{r['rating']}{'?' if r.get('provisional') else ''}")
                print(f"| {k} | {weight} | {shown[0]} | {shown[1]} |")
            board = main_.http.get("/api/leaderboard").json()["boards"]
            listed = [e["name"] for b in board for e in b["players"]]
            print(f"\nleaderboard: {listed or 'nobody listed'}")
            first = main_.post("/api/lobby/queue", {"players": 2})
            second = alt.post("/api/lobby/queue", {"players": 2})
            paired = bool(first["game"] or second["game"])
            print(f"quick match paired them: {'yes' if paired else 'no'}")
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
