"""``donutbox balance --sweep``: the designer's deck lab.

A sweep runs the same paired games (the same deal seeds, every seat
rotation of each) at every point of a grid of deck compositions and rule
options, e.g. ``--sweep rolls=0..10`` or ``--sweep rolls=4,8 --sweep
closers=off,on`` (every combination of the axes).  Deck axes are the kinds
of the standard deck (``halves``, ``threes``, ``rainbows``, ``rolls``: cards
per deck; kinds not swept share the rest of the 30 cards in the standard
proportions, ``core.decks.fill``); rule axes are the rule options
(``match``, ``layout``, ``closers``).

At every point the ``--players`` agents play ``games`` games against each
other (the figures of the game itself), and each ``--skill STRONG,WEAK``
pair plays ``skill_games`` paired games (how often the stronger agent wins:
a game the cards decide lets the weaker one win often).  Every game of the
sweep goes to one pool of workers; a game is a pure function of its spec, so
the figures are the same whatever the number of workers.
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import DonutboxError, Rules
from ..core.decks import KINDS, Composition, DeckError, from_kinds
from ..core.rules import RULE_OPTIONS
from .balance import variant_figures
from .match import GameResult
from .sim import GameSpec, run_specs, specs
from .stats import mean_ci, wilson

if TYPE_CHECKING:
    from .cluster import Cluster

#: More points than this is a typing mistake, not a sweep (each costs games).
MAX_POINTS = 200
_FLAGS = {"on": True, "true": True, "yes": True, "off": False, "false": False, "no": False}


class SweepError(DonutboxError):
    """A ``--sweep`` that cannot be run; the message names the axis."""


@dataclass(frozen=True)
class Axis:
    name: str
    values: tuple[Any, ...]

    @property
    def deck(self) -> bool:
        return self.name in KINDS


def parse_axis(text: str) -> Axis:
    """``NAME=A..B``, ``NAME=A..B:STEP`` or ``NAME=V1,V2,...``; A..B counts
    down when B is less than A (``rolls=10..0:5``: 10, 5, 0), and the points
    come in the order given."""
    name, eq, spec = text.partition("=")
    name = name.strip().replace("-", "_")
    rules = {o.name: o for o in RULE_OPTIONS}
    known = ", ".join([*KINDS, *rules])
    if not eq or not spec.strip():
        raise SweepError(f"--sweep {text!r}: write NAME=VALUES, e.g. rolls=0..10 or closers=off,on")
    if name not in KINDS and name not in rules:
        raise SweepError(f"--sweep {name!r}: unknown; sweep one of {known}")
    spec = spec.strip()
    if name in KINDS:
        values: list[Any] = []
        try:
            if ".." in spec:
                lo_text, _, rest = spec.partition("..")
                hi_text, _, step_text = rest.partition(":")
                lo, hi, step = int(lo_text), int(hi_text), int(step_text or 1)
                if step < 1:
                    raise SweepError(f"--sweep {name}: {spec!r}: the step must be 1 or more")
                if not (0 <= lo <= 30 and 0 <= hi <= 30):
                    values = [lo, hi]  # refused below, naming the value
                else:
                    down = -1 if hi < lo else 1
                    values = list(range(lo, hi + down, down * step))
            else:
                values = [int(v) for v in spec.split(",")]
        except SweepError:
            raise
        except ValueError:
            raise SweepError(
                f"--sweep {name}: {spec!r} is not A..B, A..B:STEP or a list of whole numbers"
            ) from None
        for v in sorted(values, key=lambda v: 0 <= v <= 30):
            if not 0 <= v <= 30:
                raise SweepError(f"--sweep {name}: {v} cards is not from 0 to 30")
    else:
        option = rules[name]
        values = []
        for v in (x.strip() for x in spec.split(",")):
            if option.kind == "flag":
                if v.lower() not in _FLAGS:
                    raise SweepError(f"--sweep {name}: {v!r} is not on or off")
                values.append(_FLAGS[v.lower()])
            elif v not in option.values:
                raise SweepError(f"--sweep {name}: {v!r} is not one of {', '.join(option.values)}")
            else:
                values.append(v)
    if len(set(values)) != len(values):
        raise SweepError(f"--sweep {name}: a value is given twice")
    return Axis(name, tuple(values))


@dataclass(frozen=True)
class Point:
    """One point of a sweep: its settings, deck and rules."""

    settings: tuple[tuple[str, Any], ...]
    deck: Composition
    rules: Rules

    def label(self) -> str:
        parts = []
        for name, value in self.settings:
            if isinstance(value, bool):
                parts.append(name if value else f"no {name}")
            elif isinstance(value, int):
                parts.append(f"{name} {value}")
            else:
                parts.append(str(value))
        return ", ".join(parts) or self.deck.name

    def short(self) -> str:
        """A short name for a plot's axis."""
        only = self.settings[0][1] if len(self.settings) == 1 else None
        if isinstance(only, int) and not isinstance(only, bool):
            return str(only)
        out = []
        for name, value in self.settings:
            if isinstance(value, bool):
                out.append(name[:3] if value else f"no-{name[:3]}")
            elif isinstance(value, int):
                out.append(f"{name[:2]}{value}")
            else:
                out.append("".join(w[0] for w in str(value).split("-")))
        return " ".join(out)


def points(
    axes: list[Axis], deck: Composition | None = None, rules: Rules | None = None
) -> list[Point]:
    """Every combination of the axes' values, in order (the last axis
    varies fastest); each checked before any game is played."""
    base_rules = rules or Rules()
    names = [a.name for a in axes]
    if len(set(names)) != len(names):
        raise SweepError("--sweep: an axis is given twice; give each NAME once with all its values")
    if deck is not None and any(a.deck for a in axes):
        raise SweepError(
            "--sweep over deck kinds builds its own decks; leave out --deck "
            "(or sweep only rule options over it)"
        )
    total = 1
    for a in axes:
        total *= len(a.values)
    if total > MAX_POINTS:
        raise SweepError(f"--sweep: {total} points; at most {MAX_POINTS}")
    out = []
    for combo in itertools.product(*(a.values for a in axes)):
        settings = tuple(zip(names, combo, strict=True))
        kinds = {n: v for n, v in settings if n in KINDS}
        if kinds:
            try:
                comp = from_kinds(kinds)
            except DeckError as err:
                raise SweepError(f"--sweep point {dict(settings)}: {err}") from None
        else:
            comp = deck if deck is not None else from_kinds({}, "standard")
        rule_values = {n: v for n, v in settings if n not in KINDS}
        point_rules = replace(base_rules, **rule_values) if rule_values else base_rules
        out.append(Point(settings, comp, point_rules))
    return out


@dataclass
class SweepResults:
    points: list[Point]
    agents: list[str]
    skill: list[tuple[str, str]]
    #: per point: "self" -> the agents' games, "STRONG,WEAK" -> that pair's games
    games: list[dict[str, list[GameResult]]] = field(default_factory=list)


def sweep_specs(
    pts: list[Point],
    agents: list[str],
    games: int,
    skill: list[tuple[str, str]],
    skill_games: int,
    seed: int,
    options: dict[str, dict[str, Any]] | None = None,
) -> tuple[list[GameSpec], list[tuple[int, str]]]:
    """Every game of the sweep, numbered through, and (point, match) of each.
    Every point uses the same deal seeds, from ``seed`` up: two different
    agents play each deal from both seats (paired); one agent alone plays
    one game per deal."""
    todo: list[GameSpec] = []
    where: list[tuple[int, str]] = []
    for i, p in enumerate(pts):
        matches: list[tuple[str, list[str], int]] = []
        if games:
            matches.append(("self", agents, games))
        matches += [(f"{a},{b}", [a, b], skill_games) for a, b in skill]
        for key, seats, n in matches:
            games_here = specs(seats, n, p.rules, seed, options, p.deck)
            if len(set(seats)) == 1:
                # One agent in every seat: a seat rotation would replay the
                # very same game (each seat's generator comes from the deal
                # seed and the seat), so every game gets a deal of its own.
                games_here = [replace(s, seed=seed + k) for k, s in enumerate(games_here)]
            for s in games_here:
                todo.append(replace(s, index=len(todo)))
                where.append((i, key))
    return todo, where


def run_sweep(
    pts: list[Point],
    agents: list[str],
    games: int,
    skill: list[tuple[str, str]],
    skill_games: int,
    seed: int,
    jobs: int,
    options: dict[str, dict[str, Any]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_result: Callable[[int, GameResult], None] | None = None,
    cluster: Cluster | None = None,
) -> SweepResults:
    """Play the sweep in ``jobs`` processes or on ``cluster``.  Ctrl-C
    raises ``sim.Interrupted``."""
    todo, where = sweep_specs(pts, agents, games, skill, skill_games, seed, options)
    results = run_specs(todo, jobs, progress, on_result, cluster)
    out = SweepResults(pts, agents, skill, [{} for _ in pts])
    for (i, key), r in zip(where, results, strict=True):
        out.games[i].setdefault(key, []).append(r)
    return out


def total_games(n_points: int, games: int, skill: list[tuple[str, str]], skill_games: int) -> int:
    return n_points * (games + len(skill) * skill_games)


def _wins(results: list[GameResult], agent: str) -> tuple[float, int]:
    wins = 0.0
    played = 0
    for r in results:
        for seat, name in enumerate(r.seats):
            if name == agent:
                played += 1
                if seat in r.winners:
                    wins += 1.0 / len(r.winners)
    return wins, played


def point_figures(point: Point, games: dict[str, list[GameResult]]) -> dict[str, Any]:
    """What a designer reads about one point, each with its 95% interval."""
    out: dict[str, Any] = {
        "point": point.label(),
        "short": point.short(),
        "settings": {k: v for k, v in point.settings},
        "deck": point.deck.label(),
        "rules": point.rules.key(),
    }
    own = games.get("self", [])
    if own:
        f = variant_figures(own)
        n = len(own)
        decided = f["roll_decided"]
        shares = [sum(r.roll_points) / sum(r.scores) if sum(r.scores) else 0.0 for r in own]
        deadlocks = sum(1 for r in own if r.ended_by == "deadlock")
        # The contrast to the roll leader: the leader in every other point.
        other_won, other_decided = _leader_wins(
            own, lambda r: [s - x for s, x in zip(r.scores, r.roll_points, strict=True)]
        )
        out.update(
            {
                "games": n,
                "first_player_win": f["first_player_win"],
                "first_ci": list(f["first_ci"]),
                # The mean of each game's share (so that its interval holds it).
                "roll_share": mean_ci(shares)[0],
                "roll_share_ci": list(mean_ci(shares)[1:]),
                "roll_leader_win": f["roll_leader_win"],
                "roll_leader_ci": list(wilson(f["roll_leader_win"] * decided, decided)),
                "roll_decided": decided,
                "other_leader_win": other_won / other_decided if other_decided else 0.0,
                "other_leader_ci": list(wilson(other_won, other_decided)),
                "other_decided": other_decided,
                "plies": list(mean_ci([r.plies for r in own])),
                "swaps": list(mean_ci([r.swaps for r in own])),
                "deadlocks": deadlocks / n,
                "deadlock_ci": list(wilson(deadlocks, n)),
                "points": list(mean_ci([sum(r.scores) for r in own])),
                "points_by_source": {
                    k: list(mean_ci([sum(r.points_by_source[k]) for r in own]))
                    for k in ("sealed", "boxed", "end")
                },
                "boxes": f["boxes"],
                "margin": f["margin"],
                "seconds_per_game": statistics.fmean(r.seconds for r in own),
            }
        )
    skill = {}
    for key, res in games.items():
        if key == "self":
            continue
        strong = key.split(",")[0]
        wins, played = _wins(res, strong)
        skill[key] = {
            "games": played,
            "win_rate": wins / played if played else 0.0,
            "ci": list(wilson(wins, played)),
            "seconds_per_game": statistics.fmean(r.seconds for r in res),
        }
    out["skill"] = skill
    return out


def write_sweep_report(res: SweepResults, out: Path, command: str, budget: str = "") -> list[Path]:
    """``sweep.md``, ``sweep.json`` and the ``sweep-*.png`` plots in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    figs = [point_figures(p, g) for p, g in zip(res.points, res.games, strict=True)]
    xlabel = res.points[0].settings[0][0] if len(res.points[0].settings) == 1 else "point"
    has_self = bool(figs and "games" in figs[0])
    written = write_plots(figs, res.skill, out, xlabel)
    return _write_text(res, figs, written, out, command, budget, has_self)


def write_plots(
    figs: list[dict[str, Any]], skill: list[tuple[str, str]], out: Path, xlabel: str = "point"
) -> list[Path]:
    """The ``sweep-*.png`` plots of a sweep's figures (``point_figures``, as
    in ``sweep.json``, so that the plots of several sweeps can be drawn
    together)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [f["short"] for f in figs]
    has_self = bool(figs and "games" in figs[0])
    written: list[Path] = []

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        path = out / name
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)

    def line(ax: Any, ys: list[float], cis: list[list[float]], label: str, colour: str) -> None:
        err = [
            [max(0.0, y - c[0]) for y, c in zip(ys, cis, strict=True)],
            [max(0.0, c[1] - y) for y, c in zip(ys, cis, strict=True)],
        ]
        ax.errorbar(xs, ys, yerr=err, capsize=4, marker="o", label=label, color=colour)

    if has_self:
        fig, ax = plt.subplots(figsize=(9, 4))
        line(
            ax,
            [f["first_player_win"] for f in figs],
            [f["first_ci"] for f in figs],
            "first player wins",
            "#c98b4a",
        )
        ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
        ax.set_ylim(0, 1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("win rate (95% CI)")
        ax.set_title("First-player edge")
        save(fig, "sweep-first-player.png")

        fig, ax = plt.subplots(figsize=(9, 4))
        line(
            ax,
            [f["roll_share"] for f in figs],
            [f["roll_share_ci"] for f in figs],
            "share of points from doubled boxes",
            "#8b4513",
        )
        line(
            ax,
            [f["roll_leader_win"] if f["roll_decided"] else math.nan for f in figs],
            [f["roll_leader_ci"] for f in figs],
            "roll leader wins",
            "#4169e1",
        )
        if all("other_leader_win" in f for f in figs):
            line(
                ax,
                [f["other_leader_win"] for f in figs],
                [f["other_leader_ci"] for f in figs],
                "leader in the other points wins",
                "#999999",
            )
        ax.set_ylim(0, 1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("share (95% CI)")
        ax.set_title("How much the Cinnamon Rolls decide")
        ax.legend()
        save(fig, "sweep-rolls.png")

        fig, ax = plt.subplots(figsize=(9, 4))
        bottom = [0.0] * len(figs)
        for k, colour in zip(
            ("sealed", "boxed", "end"), ("#6b3e26", "#e07aa0", "#4169e1"), strict=True
        ):
            vals = [f["points_by_source"][k][0] for f in figs]
            ax.bar(xs, vals, bottom=bottom, label=k, color=colour)
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        ax.set_xlabel(xlabel)
        ax.set_ylabel("points per game (both players)")
        ax.set_title("Points by how boxes were delivered")
        ax.legend()
        save(fig, "sweep-points.png")

        fig, ax = plt.subplots(figsize=(9, 4))
        line(
            ax,
            [f["plies"][0] for f in figs],
            [f["plies"][1:] for f in figs],
            "plies per game",
            "#6b3e26",
        )
        ax.set_xlabel(xlabel)
        ax.set_ylabel("plies (95% CI)")
        ax2 = ax.twinx()
        ax2.plot(
            xs, [f["swaps"][0] for f in figs], marker="s", color="#e07aa0", label="swaps per game"
        )
        ax2.set_ylabel("swaps per game")
        ax.set_title("Game length and swaps")
        fig.legend(loc="upper right")
        save(fig, "sweep-length.png")

    if skill:
        fig, ax = plt.subplots(figsize=(9, 4))
        for (a, b), colour in zip(
            skill, ("#009e73", "#d55e00", "#0072b2", "#cc79a7"), strict=False
        ):
            key = f"{a},{b}"
            line(
                ax,
                [f["skill"][key]["win_rate"] for f in figs],
                [f["skill"][key]["ci"] for f in figs],
                f"{a} beats {b}",
                colour,
            )
        ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
        ax.set_ylim(0, 1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("stronger agent's win rate (95% CI)")
        ax.set_title("Skill expression")
        ax.legend()
        save(fig, "sweep-skill.png")

    return written


def _write_text(
    res: SweepResults,
    figs: list[dict[str, Any]],
    written: list[Path],
    out: Path,
    command: str,
    budget: str,
    has_self: bool,
) -> list[Path]:
    path = out / "sweep.json"
    path.write_text(
        json.dumps({"command": command, "points": figs}, indent=1) + "\n", encoding="utf-8"
    )
    written.append(path)

    lines = ["# Deck lab sweep", "", f"Made by `{command}`.", ""]
    if has_self:
        lines += [
            f"Each point: {figs[0]['games']} games of {' vs '.join(res.agents)} "
            "(the same deal seeds at every point, every deal from every seat)"
            + (f"; {budget}" if budget else "")
            + ".",
            "",
            "| point | deck | first player wins | share of points from rolls | roll leader wins "
            "| other-points leader wins | plies | swaps | deadlocks "
            "| points sealed / boxed / end |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for f in figs:
            src = f["points_by_source"]
            lines.append(
                f"| {f['point']} | {f['deck']} | {_pc(f['first_player_win'], f['first_ci'])} | "
                f"{_pc(f['roll_share'], f['roll_share_ci'])} | "
                f"{_leader(f)} | "
                f"{_pc(f['other_leader_win'], f['other_leader_ci'])} of {f['other_decided']} | "
                f"{_num(f['plies'])} | {_num(f['swaps'], 2)} | "
                f"{_pc(f['deadlocks'], f['deadlock_ci'])} | "
                f"{src['sealed'][0]:.1f} / {src['boxed'][0]:.1f} / {src['end'][0]:.1f} |"
            )
        lines.append("")
    if res.skill:
        heads = [f"{a} beats {b}" for a, b in res.skill]
        lines += [
            "Skill expression: the stronger agent's win rate over paired games "
            "(every deal played from both seats; a shared win counts half).",
            "",
            "| point | " + " | ".join(heads) + " |",
            "| --- | " + " | ".join("---" for _ in heads) + " |",
        ]
        for f in figs:
            cells = []
            for a, b in res.skill:
                s = f["skill"][f"{a},{b}"]
                cells.append(f"{_pc(s['win_rate'], s['ci'])} of {s['games']}")
            lines.append(f"| {f['point']} | " + " | ".join(cells) + " |")
        lines.append("")
    for p in written:
        if p.suffix == ".png":
            lines += [f"![{p.stem}]({p.name})", ""]
    md = out / "sweep.md"
    md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written.insert(0, md)
    return written


def _pc(x: float, ci: list[float]) -> str:
    return f"{x:.0%} ({ci[0]:.0%}-{ci[1]:.0%})"


def _num(m: list[float], digits: int = 1) -> str:
    return f"{m[0]:.{digits}f} ({m[1]:.{digits}f}-{m[2]:.{digits}f})"


def _leader(f: dict[str, Any]) -> str:
    if not f["roll_decided"]:
        return "no roll points"
    return f"{_pc(f['roll_leader_win'], f['roll_leader_ci'])} of {f['roll_decided']}"


def _leader_wins(
    results: list[GameResult], points: Callable[[GameResult], list[int]]
) -> tuple[float, int]:
    """How often the one player with the most ``points`` won (a shared win
    counts half), over the games where one player has the most."""
    won = 0.0
    decided = 0
    for r in results:
        pts = points(r)
        best = max(pts)
        if pts.count(best) != 1:
            continue
        decided += 1
        lead = pts.index(best)
        if lead in r.winners:
            won += 1.0 / len(r.winners)
    return won, decided
