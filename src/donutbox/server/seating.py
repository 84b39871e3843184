"""Who sits at a new game's seats: agents from the AI's catalogue, and the
thinking time they may be given (bounded by each agent's ``max_seconds``,
so that one request cannot book the AI workers for minutes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ai import AgentInfo, agent_info
from .errors import Invalid


def agent(name: str, where: str) -> AgentInfo:
    """The catalogue entry of ``name``; Invalid naming ``where`` if unknown."""
    try:
        return agent_info(name)
    except ValueError as err:
        raise Invalid(f"{where}: {err}") from None


def thinking(agents: Sequence[AgentInfo], seconds: float | None) -> dict[str, Any]:
    """The agent options of a game whose AI seats are ``agents``: a
    ``seconds`` budget if any of them is timed (the default, or what was
    asked, at most the smallest ``max_seconds`` among them)."""
    timed = [a for a in agents if a.timed]
    if not timed:
        return {}
    most = min((a.max_seconds for a in timed if a.max_seconds is not None), default=None)
    if seconds is None:
        seconds = max((a.default_seconds or 1.0) for a in timed)
    if most is not None and seconds > most:
        names = ", ".join(sorted({a.name for a in timed}))
        raise Invalid(f"seconds: at most {most:g} for {names}, not {seconds:g}")
    return {"agent": {"seconds": seconds}}


def bounded(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """A stored game's agent options for seat agent ``name``, as they may be
    used now: ``seconds`` only for a timed agent, and at most its
    ``max_seconds`` (a game stored under an older, looser bound)."""
    try:
        info = agent_info(name)
    except ValueError:
        return dict(options)
    out = dict(options)
    if not info.timed:
        out.pop("seconds", None)
    elif info.max_seconds is not None and isinstance(out.get("seconds"), int | float):
        out["seconds"] = min(float(out["seconds"]), info.max_seconds)
    return out
