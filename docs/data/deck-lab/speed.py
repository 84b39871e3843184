"""CPU cost of a sweep point against the same games in `balance` (one process)."""
import sys, time, timeit
sys.path.insert(0, "/work/wt/decks/src")
from donutbox.core import Game, Rules
from donutbox.core.decks import from_kinds, STANDARD
from donutbox.lab.balance import grid_specs
from donutbox.lab.sim import run_specs
from donutbox.lab.sweep import points, parse_axis, sweep_specs

agents = ["heuristic", "heuristic"]
N = 12
# balance today: the first rule combination's N games (its grid, cut to One Good Match, Squared Away)
bal = [s for s in grid_specs(agents, N, 1) if s.rules == Rules()]
sw8, _ = sweep_specs(points([parse_axis("rolls=8")]), agents, N, [], 0, 1)
sw6, _ = sweep_specs(points([parse_axis("rolls=6")]), agents, N, [], 0, 1)
for name, todo in (("balance (standard deck)", bal), ("sweep point rolls=8", sw8), ("sweep point rolls=6", sw6)):
    t = time.process_time()
    res = run_specs(todo, 1)
    cpu = time.process_time() - t
    plies = sum(r.plies for r in res)
    print(f"{name}: {len(todo)} games, {len({s.seed for s in todo})} deals, {cpu:.2f} CPU-s, {cpu / len(todo):.3f} CPU-s a game, {cpu / plies * 1000:.1f} ms a ply")
six = from_kinds({"rolls": 6})
n = 2000
print("deal, standard Game.new:", f"{timeit.timeit(lambda: Game.new(Rules(), 2, 7), number=n) / n * 1e6:.0f} us")
print("deal, composition rolls 6:", f"{timeit.timeit(lambda: six.new_game(Rules(), 2, 7), number=n) / n * 1e6:.0f} us")
