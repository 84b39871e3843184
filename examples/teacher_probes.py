"""Probes of the afterstate learner's two-ply teacher (docs/research.md,
"An afterstate value learner"): how strong the teacher is as an agent, and
how the learner's choices compare with the heuristic's by its values.

    python examples/teacher_probes.py agent --worlds 4 --deals 30
    python examples/teacher_probes.py agent --oracle --deals 40
    python examples/teacher_probes.py regret value.npz --games 6
    python examples/teacher_probes.py lookahead value.npz --width 6 --worlds 2 --deals 20 --jobs 2

``agent``: plays the argmax of the two-ply value over the heuristic's 8 best
moves against ``heuristic`` on paired deals (those of ``--evaluate``),
averaging over ``--worlds`` worlds sampled from the player's view, or with
``--oracle`` in the real game (the other player's real tray, as the
trainer labels).  ``regret``: in games of the learner against
``heuristic``, each of the learner's turns: the two-ply value (real game)
of the best of the heuristic's 6 best moves and the learner's choice, less
that of the learner's choice, and the same for the heuristic's own choice.
``lookahead``: the learner with a two-ply search on its own network,
against ``heuristic`` on the paired deals of ``--evaluate``: its ``--width``
best moves by the network are each played in ``--worlds`` worlds sampled
from its view, the other player answers with the move the network values
most from the other's side, and the position is valued by the network
(by the final score difference if the game ends).
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from multiprocessing import get_context

import numpy as np

from donutbox.ai import make_agent
from donutbox.ai.simple import rank_moves
from donutbox.core import Move, PlayerView
from donutbox.core.game import Game
from donutbox.core.rules import Rules
from donutbox.core.worlds import sample_world
from donutbox.envs.afterstate import afterstate_values, evaluate
from donutbox.envs.teacher import two_ply_value
from donutbox.envs.valueagent import final_lead, observe
from donutbox.envs.valuenet import ValueNet, batch

HEURISTIC = make_agent("heuristic")


def two_ply_choice(game: Game, view: PlayerView, rng: random.Random, worlds: int) -> Move:
    """The best of the heuristic's 8 best moves by the two-ply value, in the
    real game (``worlds`` 0) or averaged over sampled worlds."""
    moves = view.legal_moves()
    if len(moves) == 1:
        return moves[0]
    candidates = [m for _, m in rank_moves(view, moves, rng)][:8]
    games = [game] if worlds == 0 else [sample_world(view, rng) for _ in range(worlds)]
    totals = [
        sum(two_ply_value(g, view.player, m, HEURISTIC, rng)[1] for g in games) for m in candidates
    ]
    return candidates[int(np.argmax(totals))]


def agent(deals: int, worlds: int, seed: int = 500_000) -> None:
    wins = 0.0
    for d in range(deals):
        for seat in (0, 1):
            game = Game.new(Rules(), 2, seed=seed + d)
            rng = random.Random((seed + d) * 2 + seat)
            while not game.finished:
                p = game.to_move
                assert p is not None
                view = game.view(p)
                move = two_ply_choice(game, view, rng, worlds) if p == seat else None
                game.play(move or HEURISTIC.choose(view, rng))
            if seat in game.winners:
                wins += 1.0 / len(game.winners)
    who = "oracle (real game)" if worlds == 0 else f"{worlds} sampled worlds"
    print(f"two-ply, {who}: {wins:g} of {2 * deals} against heuristic")


def regret(path: str, games: int) -> None:
    net = ValueNet.load(path)
    mine: list[float] = []
    theirs: list[float] = []
    for d in range(games):
        game = Game.new(Rules(), 2, seed=277 + d)
        rng = random.Random(d)
        while not game.finished:
            p = game.to_move
            assert p is not None
            view = game.view(p)
            moves = view.legal_moves()
            if p != d % 2 or len(moves) == 1:
                game.play(HEURISTIC.choose(view, rng))
                continue
            chosen = moves[int(np.argmax(afterstate_values(net, game, p, moves)))]
            ranked = [m for _, m in rank_moves(view, moves, rng)]
            value = {
                m: two_ply_value(game, p, m, HEURISTIC, random.Random(1))[1]
                for m in dict.fromkeys([*ranked[:6], chosen])
            }
            best = max(value.values())
            mine.append(best - value[chosen])
            theirs.append(best - value[ranked[0]])
            game.play(chosen)
    a, b = np.array(mine), np.array(theirs)
    print(f"{len(a)} turns; mean regret (tens of points):")
    print(f"  learner {a.mean():.3f}, heuristic {b.mean():.3f}")
    for q in (0.5, 1.0, 2.0):
        share = f"learner {np.mean(a > q):.3f}, heuristic {np.mean(b > q):.3f}"
        print(f"  turns with regret > {q}: {share}")


class Lookahead:
    """The ``lookahead`` probe's agent (module doc)."""

    name = "learned-lookahead"

    def __init__(self, net: ValueNet, width: int, worlds: int) -> None:
        self.net, self.width, self.worlds = net, width, worlds

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        moves = view.legal_moves()
        if len(moves) == 1:
            return moves[0]
        me = view.player
        first = sample_world(view, rng)
        order = np.argsort(-afterstate_values(self.net, first, me, moves))[: self.width]
        totals = np.zeros(len(order))
        for w in range(self.worlds):
            world = first if w == 0 else sample_world(view, rng)
            for j, i in enumerate(order):
                after = world.copy()
                after.play(moves[i])
                while not after.finished and after.to_move != me:
                    other = after.to_move
                    replies = after.legal_moves()
                    values = afterstate_values(self.net, after, other, replies)
                    after.play(replies[int(np.argmax(values))])
                if after.finished:
                    totals[j] += final_lead(after, me)
                else:
                    totals[j] += float(self.net.value(batch([observe(after, me)]))[0])
        return moves[int(order[int(np.argmax(totals))])]


def _lookahead_share(job: tuple[str, int, int, int, int]) -> tuple[float, float]:
    path, width, worlds, first, count = job
    t0 = time.process_time()
    agent = Lookahead(ValueNet.load(path), width, worlds)
    score = evaluate(agent, "heuristic", count, 500_000 + first)
    return score.wins, time.process_time() - t0


def lookahead(path: str, width: int, worlds: int, deals: int, jobs: int) -> None:
    cuts = [k * deals // jobs for k in range(jobs + 1)]
    work = [(path, width, worlds, a, b - a) for a, b in itertools.pairwise(cuts) if b > a]
    with get_context("fork").Pool(len(work)) as pool:
        results = pool.map(_lookahead_share, work)
    wins = sum(w for w, _ in results)
    cpu = sum(c for _, c in results)
    print(
        f"two-ply lookahead on the network (width {width}, {worlds} worlds): "
        f"{wins:g} of {2 * deals} against heuristic ({cpu / 60:.1f} CPU min)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="probe", required=True)
    a = sub.add_parser("agent")
    a.add_argument("--worlds", type=int, default=1)
    a.add_argument("--oracle", action="store_true")
    a.add_argument("--deals", type=int, default=30)
    r = sub.add_parser("regret")
    r.add_argument("network")
    r.add_argument("--games", type=int, default=6)
    look = sub.add_parser("lookahead")
    look.add_argument("network")
    look.add_argument("--width", type=int, default=6)
    look.add_argument("--worlds", type=int, default=2)
    look.add_argument("--deals", type=int, default=20)
    look.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if args.probe == "agent":
        agent(args.deals, 0 if args.oracle else max(1, args.worlds))
    elif args.probe == "lookahead":
        lookahead(args.network, args.width, args.worlds, args.deals, max(1, args.jobs))
    else:
        regret(args.network, args.games)


if __name__ == "__main__":
    main()
