"""Tables and plots for docs/deck-lab.md from the sweeps' sweep.json files."""
import json, sys, shutil
from pathlib import Path
sys.path.insert(0, "/work/wt/decks/src")
from donutbox.lab.sweep import write_plots, _pc, _num, _leader

run = Path("/work/wt/decks-run")
docs = Path("/work/wt/decks/docs/deck-lab")

def load(name):
    d = json.loads((run / name / "sweep.json").read_text())
    for p in d["points"]:
        p.setdefault("short", str(p["settings"].get("rolls", p["point"])))
    return d

def rows(points):
    out = ["| point | deck | first player wins | share of points from rolls | roll leader wins | other-points leader wins | plies | swaps | deadlocks | points sealed / boxed / end | mean margin |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for f in points:
        src = f["points_by_source"]
        out.append(f"| {f['point']} | {f['deck']} | {_pc(f['first_player_win'], f['first_ci'])} | {_pc(f['roll_share'], f['roll_share_ci'])} | {_leader(f)} | {_pc(f['other_leader_win'], f['other_leader_ci'])} of {f['other_decided']} | {_num(f['plies'])} | {_num(f['swaps'], 2)} | {_pc(f['deadlocks'], f['deadlock_ci'])} | {src['sealed'][0]:.1f} / {src['boxed'][0]:.1f} / {src['end'][0]:.1f} | {f['margin']:.1f} |")
    return "\n".join(out)

rolls = load("rolls")
pts = rolls["points"]
# The main sweep ran before the lab reported the other-points leader: the
# same figure from its records (leaders.py, the lab's definition).
sys.path.insert(0, str(run))
from leaders import leaders
for f, row in zip(pts, leaders(run / "rolls" / "records.jsonl", 72, 36)):
    _, n, rw, rd, rl, ow, od, ol, sw = row
    f.setdefault("other_leader_win", ow / od if od else 0.0)
    f.setdefault("other_leader_ci", list(ol))
    f.setdefault("other_decided", int(od))
if (run / "rolls1" / "sweep.json").exists():
    one = load("rolls1")["points"]
    for p in one:
        p["skill"] = {"heuristic,greedy": None}
    pts = sorted(pts + one, key=lambda p: p["settings"]["rolls"])
print("## rolls\n" + rows(pts))
print("\nskill")
for p in pts:
    s = p["skill"].get("heuristic,greedy")
    if s: print(f"| {p['point']} | {_pc(s['win_rate'], s['ci'])} of {s['games']} |")
def inject(points, name, per, selfg):
    for f, row in zip(points, leaders(run / name / "records.jsonl", per, selfg)):
        _, n, rw, rd, rl, ow, od, ol, sw = row
        f.setdefault("other_leader_win", ow / od if od else 0.0)
        f.setdefault("other_leader_ci", list(ol))
        f.setdefault("other_decided", int(od))

MIX = {}
for name, per in (("mix", 32), ("closers", 16)):
    if (run / name / "sweep.json").exists():
        d = load(name)
        inject(d["points"], name, per, 16)
        MIX[name] = d
        print(f"\n## {name}: {d['command']}\n" + rows(d["points"]))
        for p in d["points"]:
            s = p["skill"].get("heuristic,greedy")
            if s: print(f"| {p['point']} | {_pc(s['win_rate'], s['ci'])} of {s['games']} |")
for name in ("mcts", "mcts12"):
    if (run / name / "sweep.json").exists():
        d = load(name)
        print(f"\n## {name}: {d['command']}")
        for p in d["points"]:
            s = p["skill"]["mcts,heuristic"]
            print(f"| {p['point']} | {_pc(s['win_rate'], s['ci'])} of {s['games']} | {s['seconds_per_game']:.1f} s |")
# plots: the roll sweep (with rolls 1 if any); skill plot from the roll sweep only
self_pts = [p for p in pts]
for p in self_pts:
    if p["skill"].get("heuristic,greedy") is None:
        p["skill"]["heuristic,greedy"] = {"win_rate": float("nan"), "ci": [float("nan")] * 2, "games": 0}
written = write_plots(self_pts, [("heuristic", "greedy")], docs, "rolls per deck")
for name in ("mix",):
    if (run / name / "sweep.json").exists():
        sub = docs / name
        sub.mkdir(exist_ok=True)
        write_plots(MIX[name]["points"], [("heuristic", "greedy")], sub, "rainbows per deck (6 rolls)")
print(written)
