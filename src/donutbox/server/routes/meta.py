"""Assets and reference: the API's metadata, the rules card, the
print-and-play PDF, the donut drawings."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

from ...ai import catalogue
from ...core import GAME_INFO, RULE_OPTIONS
from ..models import MAX_NAME

router = APIRouter()

_DONUT_KEYS = frozenset(["C", "S", "H", "B", "R", "RC", "RS", "RH", "RB"])


@functools.lru_cache(maxsize=4)
def _print_pdf(paper: str, backs: bool) -> bytes:
    """The PDF's bytes: the same for the same options, so made once (about a
    second of CPU)."""
    from ...render.pdf import make_pdf

    return make_pdf(paper, 2, backs)[0]


@router.get("/api/meta")
async def meta() -> dict[str, Any]:
    """What a new-game form offers, read from the one place each is decided:
    the rule options (``donutbox.core.RULE_OPTIONS``), the agents
    (``donutbox.ai.catalogue()``), the player counts and name length, and
    the palette of players and flavours (``donutbox.render.look``)."""
    return {
        "rules": [o.to_dict() for o in RULE_OPTIONS],
        "agents": [a.to_dict() for a in catalogue()],
        "players": {"min": GAME_INFO.min_players, "max": GAME_INFO.max_players},
        "max_name_length": MAX_NAME,
        "palette": _palette(),
    }


def _palette() -> dict[str, Any]:
    from ...render import look

    make = getattr(look, "palette", None)
    if make is not None:
        palette: dict[str, Any] = make()
        return palette
    # Until render.look.palette() lands: the same data from its tables.
    return {
        "players": [{"name": d.name, "colour": d.colour, "mark": d.mark} for d in look.DECKS],
        "flavours": dict(look.FLAVOUR_COLOUR),
        "neutral": look.NEUTRAL,
    }


@router.get("/api/rules")
async def rules() -> dict[str, Any]:
    """The reference card (the same text as the print-and-play PDF's), for
    the page's How to play panel.  Items use <b> and <i> only."""
    from ...render.pdf import REFERENCE, REFERENCE_TITLE

    columns = [[{"heading": h, "items": list(items)} for h, items in col] for col in REFERENCE]
    return {"title": REFERENCE_TITLE, "columns": columns}


@router.get("/api/print.pdf", response_class=Response)
async def print_and_play(paper: Literal["a4", "letter"] = "a4", backs: bool = False) -> Response:
    """The print-and-play PDF (two decks: the cards, the rules, a reference
    card), as ``donutbox print`` makes it."""
    data = await asyncio.to_thread(_print_pdf, paper, backs)
    return Response(
        data,
        media_type="application/pdf",
        headers={"Content-Disposition": 'attachment; filename="donutbox-print-and-play.pdf"'},
    )


@router.get("/api/look/donut/{key}.svg", include_in_schema=False)
async def donut_look(key: str) -> Response:
    """One donut drawn by the same code as the PDF and ``render``: C, S,
    H, B, R, or R plus the flavour a Cinnamon Roll locked to (e.g. RC).
    Its letter is the screen's (``look.SCREEN``): 12 px at the smallest
    size the page draws a donut."""
    if key not in _DONUT_KEYS:
        raise HTTPException(404, "no such donut")
    from ...render.look import SCREEN
    from ...render.svg import donut_svg

    body = donut_svg(key[0], locked=key[1] if len(key) == 2 else None, lettering=SCREEN)
    return Response(
        body, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"}
    )
