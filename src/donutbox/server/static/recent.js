// What happened since the viewer's last turn: the moves the others made
// (marked on the counter, told in words in a live region), and who leads
// each open box.

import { PLACE_RE, NAMES } from "./dom.js";
import { region, span, where } from "./places.js";

// The seat whose "last turn" counts: the viewer, or in hotseat the player to
// move (who now holds the device).
function viewer(s) {
  if (s.mode === "hotseat" && s.to_move !== null && s.to_move !== undefined) return s.to_move;
  return s.player;
}

// The plies since the viewer's last move: [{ply, mover, move}], oldest first
// (the server counts plies in turn order: ply % players made ply).  A
// spectator sees the last move only.
export function recentMoves(s) {
  const n = s.players.length;
  const me = viewer(s);
  const out = [];
  for (let ply = s.history.length - 1; ply >= 0; ply--) {
    const mover = ply % n;
    if (mover === me) break;
    out.unshift({ ply, mover, move: s.history[ply] });
    if (me < 0) break;
  }
  return out;
}

const names = (s, ps) => (ps.length ? ps.map((p) => s.players[p]).join(" and ") : "nobody");

// One move in words: "Bob placed a card at 2,0 and sealed a box of 4: 4
// points to Bob."
export function say(s, { ply, mover, move }) {
  const who = s.players[mover];
  const p = PLACE_RE.exec(move);
  let text;
  if (p) text = `${who} placed a card ${where(s, Number(p[2]), Number(p[3]), 2, 2)}` + (p[5] ? ` (Cinnamon Roll locked to ${NAMES[p[5]]})` : "");
  else if (move.startsWith("box@")) text = `${who} boxed the ${boxedFlavour(s, ply)}run ${region(s, ...span(moveCells(s, ply)))} (${move.slice(4)})`;
  else if (move === "pass") text = `${who} passed`;
  else text = `${who} swapped a card`;
  const seals = s.deliveries.filter((d) => d.ply === ply && !move.startsWith("box@"));
  const boxed = s.deliveries.filter((d) => d.ply === ply && move.startsWith("box@"));
  for (const d of boxed) text += `: ${d.size} donuts, ${d.points} points to ${names(s, d.to)}`;
  if (seals.length) text += " and sealed " + seals.map((d) => `a box of ${d.size}: ${d.points} points to ${names(s, d.to)}`).join(", ");
  return text + ".";
}

// The flavour of the box boxed at `ply`, with a space ("Chocolate Cruller "),
// or "" when the state does not tell.
function boxedFlavour(s, ply) {
  const [x, y] = (s.history[ply] || "").slice(4).split(",").map(Number);
  const c = (s.cells || []).find((k) => k.x === x && k.y === y);
  return c && NAMES[c.flavour] && c.flavour !== "R" ? `${NAMES[c.flavour]} ` : "";
}

// The cells a move concerns, to pick out on the counter: a card's four, a
// boxed run's donuts (where the state tells them), else its first donut.
export function moveCells(s, ply) {
  const move = s.history[ply] || "";
  const p = PLACE_RE.exec(move);
  if (p) {
    const x = Number(p[2]), y = Number(p[3]);
    return [[x, y], [x + 1, y], [x + 1, y + 1], [x, y + 1]];
  }
  if (move.startsWith("box@")) return runFrom(s, move.slice(4).split(",").map(Number));
  return [];
}

// The donuts of one flavour joined to (x, y) on the counter (a run: a
// Cinnamon Roll counts as its lock's flavour).
function runFrom(s, [x, y]) {
  const at = new Map((s.cells || []).map((c) => [`${c.x},${c.y}`, c]));
  const first = at.get(`${x},${y}`);
  if (!first) return [[x, y]];
  const seen = new Set([`${x},${y}`]);
  const todo = [[x, y]];
  while (todo.length) {
    const [cx, cy] = todo.pop();
    for (const [dx, dy] of [[1, 0], [-1, 0], [0, 1], [0, -1]]) {
      const key = `${cx + dx},${cy + dy}`;
      const c = at.get(key);
      if (c && !seen.has(key) && c.flavour === first.flavour && c.delivered === first.delivered) {
        seen.add(key);
        todo.push([cx + dx, cy + dy]);
      }
    }
  }
  return [...seen].map((k) => k.split(",").map(Number));
}

// Where the recent placements lie: [{x, y, mover}].
export function recentPlaces(s) {
  const out = [];
  for (const r of recentMoves(s)) {
    const p = PLACE_RE.exec(r.move);
    if (p) out.push({ x: Number(p[2]), y: Number(p[3]), mover: r.mover, ply: r.ply });
  }
  return out;
}

// Who holds the most of an open box's donuts: {leaders: [seat...], by}
// (`by`: the lead over the next; 0 when tied).
export function leader(box) {
  const held = box.held;
  const top = Math.max(...held);
  if (top <= 0) return { leaders: [], by: 0 };
  const leaders = held.flatMap((h, p) => (h === top ? [p] : []));
  const rest = held.filter((h) => h !== top);
  return { leaders, by: leaders.length > 1 ? 0 : top - (rest.length ? Math.max(...rest) : 0) };
}

export function leadText(s, box) {
  const { leaders, by } = leader(box);
  if (!leaders.length) return "nobody holds any of it yet";
  if (leaders.length > 1) return `tied: ${names(s, leaders)}`;
  return `${s.players[leaders[0]]} ahead by ${by}`;
}
