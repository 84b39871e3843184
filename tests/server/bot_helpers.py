"""Shared by the Bot API tests: a person signed in to a running server over
real HTTP (httpx), making bots and their tokens."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

import donutbox

PASSWORD = "correct horse battery"
#: The source tree under test (the one this interpreter imports).
SRC = Path(donutbox.__file__).resolve().parents[1]


@contextlib.contextmanager
def reaped(*procs: subprocess.Popen[str]) -> Iterator[None]:
    """Child processes killed on the way out if a test left them running."""
    try:
        yield
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def bot_process(server: str, token: str, *args: str) -> subprocess.Popen[str]:
    """``donutbox bot`` of this source tree in a child process, its token
    in the environment (as a user should pass it), output captured."""
    env = dict(os.environ, DONUTBOX_BOT_TOKEN=token, NO_COLOR="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH", "")]))
    return subprocess.Popen(
        [sys.executable, "-m", "donutbox.cli", "bot", "--server", server, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


class Person:
    """A browser's cookie jar on a real server: signs up, then calls the
    community routes with its CSRF token."""

    def __init__(self, base: str, name: str) -> None:
        self.name = name
        self.http = httpx.Client(base_url=base, timeout=30.0)
        self.csrf = self.http.get("/api/account").json()["csrf"]
        r = self.post("/api/account/signup", {"name": name, "password": PASSWORD})
        assert r.status_code == 200, r.text
        self.csrf = r.json()["csrf"]

    def post(self, path: str, body: Any = None) -> httpx.Response:
        return self.http.post(path, json=body, headers={"X-CSRF-Token": self.csrf})

    def get(self, path: str) -> httpx.Response:
        return self.http.get(path)

    def bot(self, name: str) -> str:
        """A new bot of this person's, and a token for it."""
        r = self.post("/api/account/bots", {"name": name})
        assert r.status_code == 200, r.text
        r = self.post(f"/api/account/bots/{name}/tokens")
        assert r.status_code == 200, r.text
        token: str = r.json()["token"]
        return token


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def ndjson(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The messages of a streamed NDJSON response (keepalive lines skipped)."""
    for text in response.iter_lines():
        if text.strip():
            yield json.loads(text)
