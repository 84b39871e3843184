"""OpenSpiel's Python ISMCTSBot at its default settings on ``python_donutbox``.

    python benchmarks/ismcts_defaults.py [--sims 100 1000] [--games 4]

Every setting of ``open_spiel.python.algorithms.ismcts.ISMCTSBot`` is its
default (UCT, ``max_world_samples`` unlimited, ``MAX_VISIT_COUNT``,
``allow_inconsistent_action_sets=False``) with a one-rollout random
evaluator and ``uct_c=2``.  The bot takes seat ``game % 2`` against a
uniformly random player; each line is one whole game (its result for the
bot, its moves, CPU seconds a move).
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from donutbox.envs import register_openspiel


def play(game: pyspiel.Game, sims: int, seed: int) -> tuple[float, int, float]:
    rs = np.random.RandomState(seed)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), 2.0, sims, random_state=rs)
    seat = seed % 2
    state = game.new_initial_state()
    rng = random.Random(seed)
    moves, spent = 0, 0.0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(outcomes, probs)[0])
        elif state.current_player() == seat:
            t = time.process_time()
            state.apply_action(bot.step(state))
            spent += time.process_time() - t
            moves += 1
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state.returns()[seat], moves, spent / max(moves, 1)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--first", type=int, default=0, help="the first game's seed")
    args = ap.parse_args(argv)
    game = pyspiel.load_game(register_openspiel())
    for sims in args.sims:
        results = []
        for seed in range(args.first, args.first + args.games):
            ret, moves, per_move = play(game, sims, seed)
            results.append(ret)
            print(
                f"sims {sims} game {seed} seat {seed % 2}: result {ret:+.0f}, "
                f"{moves} moves, {per_move:.2f} CPU s a move",
                flush=True,
            )
        print(
            f"sims {sims}: {len(results)} of {args.games} games finished; "
            f"bot won {sum(r > 0 for r in results)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
