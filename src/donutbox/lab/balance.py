"""``donutbox balance``: every rule combination, one report for the designer.

For each of the eight combinations (matching x layout x Coffee's For
Closers) the chosen agents play paired games (every seat rotation per deal).
The report answers: how big is the first player's advantage, how long are
games, how do boxes end (sealed, boxed early, scored at the end), and do the
Cinnamon Roll and Coffee's For Closers change who wins.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import Rules
from ..core.decks import Composition
from ..core.replay import replay
from ..usage import plural
from .match import GameResult, result_of
from .sim import GameSpec, run_specs, specs, summarize
from .stats import wilson

if TYPE_CHECKING:
    from .cluster import Cluster

#: Below this many games per rule combination a 95% interval is wider than
#: about +-15 percentage points (wilson(20, 40) = 35.2%-64.8%): the report
#: then says so first, and its findings only repeat what the intervals say.
MIN_GAMES = 40


def grid_specs(
    agents: list[str],
    games: int,
    seed: int,
    options: dict[str, dict[str, Any]] | None = None,
    deck: Composition | None = None,
) -> list[GameSpec]:
    """Every rule combination's games, numbered through (one pool runs them all)."""
    todo = []
    for rules in Rules.all():
        todo.extend(specs(agents, games, rules, seed, options, deck))
    return [replace(s, index=i) for i, s in enumerate(todo)]


def play_order(todo: list[GameSpec], games: int) -> list[GameSpec]:
    """The grid's games in the order they are handed out: the first game of
    every rule combination, then the second of each, ... so that a long run
    stopped early has about as many games of each (the games and their
    numbers are the same in any order)."""
    return sorted(todo, key=lambda s: (s.index % games, s.index // games))


def run_balance(
    agents: list[str],
    games: int,
    seed: int,
    jobs: int,
    options: dict[str, dict[str, Any]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_result: Callable[[int, GameResult], None] | None = None,
    deck: Composition | None = None,
    cluster: Cluster | None = None,
) -> dict[Rules, list[GameResult]]:
    """The games of every rule combination, keyed by its rules (in
    ``Rules.all()`` order), dealt from ``deck`` (default: the standard
    deck), in ``jobs`` processes or on ``cluster``.  Ctrl-C raises
    ``sim.Interrupted``."""
    todo = grid_specs(agents, games, seed, options, deck)
    results = run_specs(play_order(todo, games), jobs, progress, on_result, cluster)
    out: dict[Rules, list[GameResult]] = {}
    for spec, result in zip(todo, results, strict=True):
        out.setdefault(spec.rules, []).append(result)
    return out


def finished_grid(results: dict[int, GameResult]) -> dict[Rules, list[GameResult]]:
    """The games that finished (game index -> result) of a stopped run, by
    rule combination (in ``Rules.all()`` order, in game order within each;
    combinations without a finished game left out)."""
    out: dict[Rules, list[GameResult]] = {rules: [] for rules in Rules.all()}
    for _, r in sorted(results.items()):
        out.setdefault(r.rules, []).append(r)
    return {rules: res for rules, res in out.items() if res}


def result_from_record(record: dict[str, Any], seconds: float = 0.0) -> GameResult:
    """The figures of a game played by ``match.play_game`` (a line of its
    ``records.jsonl``), worked out again by replaying the record: so that a
    stopped run's report can be written later from the games it kept.
    ``seconds`` (not in the record) is the game's time, if known."""
    game = replay(record)
    swaps = sum(m.kind == "swap" for m in game.history)
    passes = sum(m.kind == "pass" for m in game.history)
    if not game.finished:
        raise ValueError(f"the record of seed {record.get('seed')} is of an unfinished game")
    return result_of(
        game,
        seed=int(record["seed"]),
        seats=list(record["agents"]),
        swaps=swaps,
        passes=passes,
        seconds=seconds,
        record=record,
    )


def report_stopped_run(
    out: Path, agents: list[str], seed: int, asked: int, budget: str = ""
) -> Path:
    """``balance.md`` (and its plots) in ``out`` of the games that a stopped
    ``donutbox balance --out OUT`` kept there (its ``records.jsonl`` and
    ``games.csv``); ``asked``: its ``--games``."""
    import csv
    import json

    with (out / "games.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with (out / "records.jsonl").open(encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    results = {
        int(row["game"]): result_from_record(record, float(row["seconds"]))
        for row, record in zip(rows, records, strict=True)
    }
    return write_report(finished_grid(results), agents, out, seed, budget, asked=asked)


def small_sample_warning(
    games: int, per: str = " per rule combination", about: str = "the findings"
) -> str:
    """One line when ``games`` (``per`` what) is too few to conclude anything
    from; empty otherwise.  ``balance``, ``sim`` (``per=""``, about the win
    rates) and sweeps (per point) say it alike."""
    if games >= MIN_GAMES:
        return ""
    lo, hi = wilson(games / 2, games)
    return (
        f"only {games} games{per}: even an even 50% would have a 95% "
        f"interval of {lo:.0%}-{hi:.0%}; use --games {MIN_GAMES} or more before "
        f"reading anything into {about}"
    )


def variant_figures(results: list[GameResult]) -> dict[str, Any]:
    n = len(results)
    first_wins = sum(1.0 / len(r.winners) for r in results if 0 in r.winners)
    lo, hi = wilson(first_wins, n)
    roll_total = sum(sum(r.roll_points) for r in results)
    points_total = sum(sum(r.scores) for r in results)
    # Did the player with more roll points win?  (Games where they differ.)
    decided = [r for r in results if len(set(r.roll_points)) > 1]
    roll_leader_won = sum(
        1.0 / len(r.winners)
        for r in decided
        if max(range(len(r.roll_points)), key=lambda p: r.roll_points[p]) in r.winners
    )
    return {
        "games": n,
        "first_player_win": first_wins / n,
        "first_ci": (lo, hi),
        "plies": statistics.fmean(r.plies for r in results),
        "boxes": {
            k: statistics.fmean(r.boxes[k] for r in results) for k in ("sealed", "boxed", "end")
        },
        "points": points_total / n,
        "roll_share": roll_total / points_total if points_total else 0.0,
        "roll_leader_win": roll_leader_won / len(decided) if decided else 0.0,
        "roll_decided": len(decided),
        "margin": statistics.fmean(abs(r.scores[0] - r.scores[1]) for r in results)
        if results and len(results[0].scores) == 2
        else 0.0,
        "summary": summarize(results),
    }


def write_report(
    grid: dict[Rules, list[GameResult]],
    agents: list[str],
    out: Path,
    seed: int,
    budget: str = "",
    deck: str = "",
    asked: int | None = None,
) -> Path:
    """Write ``balance.md`` and its plots into ``out``.  ``budget``: the
    search options given on the command line (e.g. ``--iterations 100``), so
    that the report names the exact command that made it; ``deck``: the
    ``--deck FILE`` given, if any; ``asked``: the games per rule combination
    asked for, when the run was stopped before they all finished (the
    report is then of the games that did)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    figures = {rules: variant_figures(res) for rules, res in grid.items()}
    variants = list(figures)
    short = [_short(rules) for rules in variants]

    fig, ax = plt.subplots(figsize=(9, 4))
    ys = [figures[v]["first_player_win"] for v in variants]
    err = [
        [y - figures[v]["first_ci"][0] for v, y in zip(variants, ys, strict=True)],
        [figures[v]["first_ci"][1] - y for v, y in zip(variants, ys, strict=True)],
    ]
    ax.bar(short, ys, yerr=err, capsize=5, color="#c98b4a")
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_ylim(0, 1)
    ax.set_ylabel("first player's win rate (95% CI)")
    ax.set_title("First-player advantage by variant")
    fig.tight_layout()
    fig.savefig(out / "balance-first-player.png", dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(9, 4))
    bottom = [0.0] * len(variants)
    for k, colour in zip(
        ("sealed", "boxed", "end"), ("#6b3e26", "#e07aa0", "#4169e1"), strict=True
    ):
        vals = [figures[v]["boxes"][k] for v in variants]
        ax.bar(short, vals, bottom=bottom, label=k, color=colour)
        bottom = [b + x for b, x in zip(bottom, vals, strict=True)]
    ax.set_ylabel("boxes per game")
    ax.set_title("How boxes end, by variant")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "balance-boxes.png", dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(9, 4))
    ax.boxplot([[r.plies for r in grid[v]] for v in variants], tick_labels=short)
    ax.set_ylabel("plies per game")
    ax.set_title("Game length by variant")
    fig.tight_layout()
    fig.savefig(out / "balance-length.png", dpi=100)
    plt.close(fig)

    games = min(figures[v]["games"] for v in variants)
    played = sum(figures[v]["games"] for v in variants)
    pairing = (
        "every game a deal of its own (one agent in every seat)"
        if len(set(agents)) == 1
        else "paired seats (every deal is played from every seat)"
    )
    lines = [
        "# Balance report",
        "",
        f"Made by `donutbox balance --players {','.join(agents)} --games {asked or games} "
        f"--seed {seed}{' ' + budget if budget else ''}{' --deck ' + deck if deck else ''}`: "
        + (
            f"{games} games per variant ({played} in all)"
            if asked is None
            else f"stopped early, {played} of {len(Rules.all()) * asked} games finished "
            f"({games} to {max(figures[v]['games'] for v in variants)} per variant)"
        )
        + f", agents {' vs '.join(agents)}, {pairing}.",
        "",
    ]
    warning = small_sample_warning(games)
    if warning:
        lines += [f"**Small sample**: {warning}.", ""]
    lines += [
        "| variant | first player wins (95% CI) | plies | boxes sealed / boxed / end | "
        "points per game | share of points from rolls | roll leader wins |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for v in variants:
        f = figures[v]
        lo, hi = f["first_ci"]
        b = f["boxes"]
        lines.append(
            f"| {v.label()}{'' if asked is None else ' (' + plural(f['games'], 'game') + ')'} | "
            f"{f['first_player_win']:.1%} ({lo:.1%}-{hi:.1%}) | "
            f"{f['plies']:.1f} | "
            f"{b['sealed']:.1f} / {b['boxed']:.1f} / {b['end']:.1f} | {f['points']:.1f} | "
            f"{f['roll_share']:.1%} | {f['roll_leader_win']:.1%} of {f['roll_decided']} |"
        )
    lines += [
        "",
        "![first player](balance-first-player.png)",
        "",
        "![boxes](balance-boxes.png)",
        "",
        "![length](balance-length.png)",
        "",
    ]
    lines += ["## Reading it", "", *findings(figures)]
    path = out / "balance.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _short(rules: Rules) -> str:
    """A short name for a plot's axis: the rules' stable key (``ogm-sa``,
    ``pm-spl-closers``), from the core's schema of the variants."""
    return rules.key()


def _rate(f: dict[str, Any]) -> str:
    lo, hi = f["first_ci"]
    return f"{f['first_player_win']:.1%} (95% interval {lo:.1%}-{hi:.1%})"


def findings(figures: dict[Rules, dict[str, Any]]) -> list[str]:
    """The report's findings, each worded by what its 95% interval says:
    an interval that excludes 50% says the first player wins more (or less)
    often than not; one that holds 50% says the games cannot tell."""
    out = []
    games = min(f["games"] for f in figures.values())
    if small_sample_warning(games):
        out.append(
            f"- With {games} games per variant the intervals are too wide to draw "
            "conclusions; the lines below only repeat what they show."
        )
    above = [v for v, f in figures.items() if f["first_ci"][0] > 0.5]
    below = [v for v, f in figures.items() if f["first_ci"][1] < 0.5]
    if above:
        out.append(
            "- The first player's 95% interval lies above 50% in: "
            + "; ".join(f"{v.label()}: {_rate(figures[v])}" for v in above)
            + "."
        )
    if below:
        out.append(
            "- The first player's 95% interval lies below 50% (the later seats win more) "
            "in: " + "; ".join(f"{v.label()}: {_rate(figures[v])}" for v in below) + "."
        )
    if not above and not below:
        out.append(
            "- In every variant the first player's 95% interval holds 50%: these games "
            "cannot tell a first-player advantage from none."
        )
    for plain, closers in _pairs(figures):
        a, b = figures[plain], figures[closers]
        out.append(
            f"- Coffee's For Closers in {plain.label()}: first player {_rate(a)} -> "
            f"{_rate(b)}; boxes sealed {a['boxes']['sealed']:.1f} -> "
            f"{b['boxes']['sealed']:.1f}, boxed early {a['boxes']['boxed']:.1f} -> "
            f"{b['boxes']['boxed']:.1f} per game."
        )
    rl = [f["roll_leader_win"] for f in figures.values() if f["roll_decided"]]
    if rl:
        out.append(
            f"- Cinnamon Rolls: {statistics.fmean(f['roll_share'] for f in figures.values()):.1%} "
            f"of all points come from doubled boxes; the player with more roll points won "
            f"{statistics.fmean(rl):.1%} of the games where roll points differed."
        )
    return out


def _pairs(figures: dict[Rules, Any]) -> list[tuple[Rules, Rules]]:
    """(rules, the same rules with Coffee's For Closers), for each such pair."""
    out = []
    for v in figures:
        if not v.closers:
            c = replace(v, closers=True)
            if c in figures:
                out.append((v, c))
    return out
