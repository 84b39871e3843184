"""From the sweep's records: how often the leader in roll points, and the
leader in the other points, win (self-play games only)."""
import json, sys
sys.path.insert(0, "/work/wt/decks/src")
from donutbox.core import replay
from donutbox.lab.stats import wilson

def leaders(path, per_point, self_games):
    recs = [json.loads(l) for l in open(path)]
    out = []
    for start in range(0, len(recs), per_point):
        chunk = recs[start:start + self_games]
        roll_dec = roll_won = other_dec = other_won = 0.0
        swings = 0
        for rec in chunk:
            g = replay(rec)
            roll = [0, 0]; other = [0, 0]
            for d in g.deliveries:
                for p in d.to:
                    (roll if d.points == 2 * d.size else other)[p] += d.points
            w = g.winners
            if roll[0] != roll[1]:
                roll_dec += 1
                lead = 0 if roll[0] > roll[1] else 1
                roll_won += (1 / len(w)) if lead in w else 0
            if other[0] != other[1]:
                other_dec += 1
                lead = 0 if other[0] > other[1] else 1
                other_won += (1 / len(w)) if lead in w else 0
            # games where the roll leader and the other-points leader differ
            if roll[0] != roll[1] and other[0] != other[1] and (roll[0] > roll[1]) != (other[0] > other[1]):
                swings += 1
        rl = wilson(roll_won, int(roll_dec)); ol = wilson(other_won, int(other_dec))
        out.append((rec["rules"], len(chunk), roll_won, roll_dec, rl, other_won, other_dec, ol, swings))
    return out

if __name__ == "__main__":
  for name, per, selfg in (("rolls", 72, 36), ("rolls1", 36, 36), ("mix", 32, 16), ("closers", 16, 16)):
    try:
        res = leaders(f"{name}/records.jsonl", per, selfg)
    except FileNotFoundError:
        continue
    print(name)
    for r in res:
        _, n, rw, rd, rl, ow, od, ol, sw = r
        print(f"  n={n} roll leader {rw:.0f}/{rd:.0f} ({rl[0]:.0%}-{rl[1]:.0%}) other-points leader {ow:.0f}/{od:.0f} = {ow/max(od,1):.0%} ({ol[0]:.0%}-{ol[1]:.0%}) leaders differ {sw}")
