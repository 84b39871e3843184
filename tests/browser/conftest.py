"""Shared by the browser tests.

TEMPORARY (until the server branch with the new /api/meta is merged): when
the server's /api/meta lacks the agreed `rules`/`agents`/`palette`, the page
is served one in the agreed shape (CONTRACTS.md), built from the project's
own data.  Removed once the real endpoint is there."""

from __future__ import annotations

import json
from typing import Any

import pytest

sync_api = pytest.importorskip("playwright.sync_api")

from donutbox.render import look  # noqa: E402


def _meta() -> dict[str, Any]:
    def choice(value: str, label: str, help: str) -> dict[str, str]:
        return {"value": value, "label": label, "help": help}

    rules = [
        {
            "name": "match",
            "label": "Matching",
            "help": "Which touching donuts must match.",
            "kind": "choice",
            "default": "one-good-match",
            "choices": [
                choice("one-good-match", "One Good Match", "A card needs one matching edge."),
                choice("perfect-match", "Perfect Match", "Every touching edge must match."),
            ],
        },
        {
            "name": "layout",
            "label": "Layout",
            "help": "How cards line up.",
            "kind": "choice",
            "default": "squared-away",
            "choices": [
                choice("squared-away", "Squared Away", "Cards line up on the grid."),
                choice("splitzkies", "Splitzkies", "Cards may be offset by half a card."),
            ],
        },
        {
            "name": "closers",
            "label": "Coffee's For Closers",
            "help": "Whoever seals a box scores it.",
            "kind": "flag",
            "default": False,
            "choices": [],
        },
    ]

    def agent(name: str, label: str, level: int | None, base: str, timed: bool) -> dict[str, Any]:
        return {
            "name": name,
            "label": label,
            "help": f"{label}.",
            "level": level,
            "agent": base,
            "timed": timed,
            "default_seconds": 1.0 if timed else None,
            "max_seconds": 30.0 if timed else None,
        }

    agents = [
        agent("easy", "easy", 1, "greedy", False),
        agent("medium", "medium", 2, "heuristic", False),
        agent("hard", "hard", 3, "mcts", True),
        agent("random", "random", None, "random", False),
    ]
    return {
        "rules": rules,
        "agents": agents,
        "players": {"min": 2, "max": 4},
        "max_name_length": 40,
        "palette": look.palette(),
    }


def _shim(context: Any) -> None:
    def handle(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        if isinstance(body.get("rules"), list) and "palette" in body:
            route.fulfill(response=response)
        else:
            route.fulfill(response=response, body=json.dumps({**body, **_meta()}))

    context.route("**/api/meta", handle)


_new_context = sync_api.Browser.new_context


def _patched_new_context(self: Any, *args: Any, **kwargs: Any) -> Any:
    context = _new_context(self, *args, **kwargs)
    _shim(context)
    return context


def _patched_new_page(self: Any, *args: Any, **kwargs: Any) -> Any:
    context = self.new_context(*args, **kwargs)
    page = context.new_page()
    page._owned_context = context  # noqa: SLF001
    return page


sync_api.Browser.new_context = _patched_new_context  # type: ignore[method-assign]
sync_api.Browser.new_page = _patched_new_page  # type: ignore[method-assign]
