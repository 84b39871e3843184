"""PNG plots of simulation results (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from ..ai.analysis import MoveAnalysis
from ..core import Game
from ..render.look import palette
from .match import GameResult


def plot_scores(results: list[GameResult], path: Path, title: str) -> Path:
    agents = sorted({a for r in results for a in r.seats})
    data = {
        a: [r.scores[i] for r in results for i, s in enumerate(r.seats) if s == a] for a in agents
    }
    fig, ax = plt.subplots(figsize=(7, 4))
    for a in agents:
        ax.hist(data[a], bins=20, alpha=0.55, label=a)
    ax.set_xlabel("final score")
    ax.set_ylabel("games")
    ax.set_title(f"{title}: score distribution")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_seats(summary: dict[str, Any], path: Path, title: str) -> Path:
    seats = summary["seats"]
    fig, ax = plt.subplots(figsize=(5, 4))
    xs = [f"seat {s['seat'] + 1}" for s in seats]
    ys = [s["win_rate"] for s in seats]
    err = [
        [s["win_rate"] - s["ci95"][0] for s in seats],
        [s["ci95"][1] - s["win_rate"] for s in seats],
    ]
    ax.bar(xs, ys, yerr=err, capsize=6, color="#c98b4a")
    ax.axhline(1 / len(seats), color="grey", linestyle="--", linewidth=1)
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (95% CI)")
    ax.set_title(f"{title}: win rate by seat")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_points_by_source(results: list[GameResult], path: Path, title: str) -> Path:
    agents = sorted({a for r in results for a in r.seats})
    sources = ("sealed", "boxed", "end")
    totals = {a: {k: 0.0 for k in sources} for a in agents}
    counts = {a: 0 for a in agents}
    for r in results:
        for i, a in enumerate(r.seats):
            counts[a] += 1
            for k in sources:
                totals[a][k] += r.points_by_source[k][i]
    fig, ax = plt.subplots(figsize=(6, 4))
    bottom = [0.0] * len(agents)
    for k, colour in zip(sources, ("#6b3e26", "#e07aa0", "#4169e1"), strict=True):
        vals = [totals[a][k] / max(1, counts[a]) for a in agents]
        ax.bar(agents, vals, bottom=bottom, label=k, color=colour)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_ylabel("points per game")
    ax.set_title(f"{title}: points by source")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_analysis(game: Game, analysis: list[MoveAnalysis], path: str) -> None:
    """The winning-chance graph: each player's estimate after each of their
    moves, over the plies, marked moves circled; PNG or SVG by the suffix."""
    # One palette for the page, SVG and PDF (docs/web.md).
    players = cast(list[dict[str, str]], palette()["players"])
    colours = [p["colour"] for p in players]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    for p, name in enumerate(game.names):
        mine = [a for a in analysis if a.player == p]
        if not mine:
            continue
        colour = colours[p % len(colours)]
        ax.plot([a.ply + 1 for a in mine], [a.after for a in mine], "-", color=colour, label=name)
        for a in mine:
            if a.mark is not None:
                size = {"inaccuracy": 40, "mistake": 70, "blunder": 110}[a.mark]
                ax.scatter([a.ply + 1], [a.after], s=size, facecolors="none", edgecolors=colour)
    ax.axhline(0.5, color="#a8a8a8", linewidth=0.8)
    ax.set_ylim(0, 1)
    ax.set_xlabel("move")
    ax.set_ylabel("winning chance (mover's view)")
    ax.set_title("Game analysis: circles mark inaccuracies, mistakes and blunders")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
