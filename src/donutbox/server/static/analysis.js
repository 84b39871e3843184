// The analysis of a finished local game (POST/GET /api/games/{id}/analysis):
// the Analyse button on the Game over screen, the progress while the server
// searches each move (from its mover's own view), then a winning-chance
// graph per player, the marked moves in the log, and in the replay the best
// alternative of a marked move outlined on the board with its text.

import { $, el, h, PLACE_RE, SVGNS, rotate, showError } from "./dom.js";
import { store, set } from "./store.js";
import { api } from "./api.js";
import { markIcon, player } from "./palette.js";
import { showReplay } from "./replay.js";
import { boxWords, where } from "./places.js";
import { faceWords } from "./board.js";
import { say } from "./recent.js";

const POLL_MS = 400;
const WORDS = { inaccuracy: "inaccuracy", mistake: "mistake", blunder: "blunder" };

// The analysis of the game shown: {id, state, done, total, doc} or null.
export function current() {
  const a = store.analysis, s = store.state;
  return a && s && a.id === s.id ? a : null;
}

// The analysed move i (0-based) of the game shown, if its analysis is done.
export function analysedMove(i) {
  const a = current();
  return a && a.doc ? a.doc.moves[i] || null : null;
}

function analysable(s) {
  return Boolean(s) && s.finished && s.history.length > 0 && (store.online ? s.player >= 0 : s.mode !== "online");
}

let polling = null;
let asked = null; // the game whose analysis was looked for on opening

async function poll(id) {
  if (polling === id) return;
  polling = id;
  try {
    for (;;) {
      const r = await api(`/api/games/${encodeURIComponent(id)}/analysis`);
      if (!store.state || store.state.id !== id) return;
      if (r.state === "done") { set({ analysis: { id, state: "done", done: r.moves.length, total: r.moves.length, doc: r } }); return; }
      if (r.state === "failed") { set({ analysis: null }); showError(r.reason); return; }
      if (r.state === "none") { set({ analysis: null }); return; }
      set({ analysis: { id, state: "running", done: r.done, total: r.total, doc: null } });
      await new Promise((ok) => setTimeout(ok, POLL_MS));
    }
  } catch (err) { showError(err.message); }
  finally { if (polling === id) polling = null; }
}

async function start() {
  const s = store.state;
  if (!analysable(s)) return;
  try {
    const r = await api(`/api/games/${encodeURIComponent(s.id)}/analysis`, {});
    set({ analysis: { id: s.id, state: r.state, done: r.done, total: r.total, doc: null } });
    poll(s.id);
  } catch (err) { showError(err.message); }
}

// The graph: each player's winning chance after each of their moves
// (moves[].after), x the move number, y from 0 to 1.
function graph(doc) {
  const W = 320, H = 120, pad = 4;
  const n = doc.moves.length;
  const svg = document.createElementNS(SVGNS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("id", "analysis-graph");
  // A group, not an image: its marked moves are buttons.
  svg.setAttribute("role", "group");
  svg.setAttribute("aria-label", "Winning chance after each move, per player; each marked move is a button");
  const x = (ply) => pad + (n > 1 ? (ply / (n - 1)) * (W - 2 * pad) : (W - 2 * pad) / 2);
  const y = (v) => H - pad - v * (H - 2 * pad);
  svg.append(el("rect", { x: 0, y: 0, width: W, height: H, fill: "none", stroke: "#ccc" }));
  svg.append(el("line", { x1: pad, x2: W - pad, y1: y(0.5), y2: y(0.5), stroke: "#bbb", "stroke-dasharray": "3 3" }));
  for (const [v, text] of [[1, "100%"], [0.5, "50%"], [0, "0%"]]) {
    svg.append(el("text", { x: pad + 1, y: Math.min(H - pad - 1, Math.max(pad + 12, y(v) - 2)), "font-size": 13, fill: "#5c4a3b", "aria-hidden": "true" }, text));
  }
  // A click anywhere on the graph opens the replay at the nearest move (as
  // lichess's graph does); the marked moves' dots are buttons too.
  svg.addEventListener("click", (e) => {
    const box = svg.getBoundingClientRect();
    if (!box.width || !n) return;
    const at = ((e.clientX - box.left) / box.width) * W;
    const ply = Math.max(0, Math.min(n - 1, Math.round(n > 1 ? ((at - pad) / (W - 2 * pad)) * (n - 1) : 0)));
    showReplay(ply + 1);
  });
  svg.style.cursor = "pointer";
  doc.players.forEach((name, p) => {
    const mine = doc.moves.filter((m) => m.player === p);
    if (!mine.length) return;
    const colour = player(p).colour;
    svg.append(el("polyline", { points: mine.map((m) => `${x(m.ply)},${y(m.after)}`).join(" "), fill: "none", stroke: colour, "stroke-width": 2, class: "chance" }, undefined));
    for (const m of mine) {
      if (!m.mark) continue;
      // A button 24 units across (a finger's target), the dot drawn inside.
      const dot = el("g", { class: "marked", tabindex: 0, role: "button", "aria-label": `${name}, move ${m.ply + 1}: ${m.mark}, ${m.points_lost ?? 0} points lost; show it in the replay`, "data-ply": m.ply });
      dot.append(el("circle", { cx: x(m.ply), cy: y(m.after), r: 12, fill: "transparent" }));
      dot.append(el("circle", { cx: x(m.ply), cy: y(m.after), r: m.mark === "blunder" ? 6 : m.mark === "mistake" ? 5 : 4, fill: colour, stroke: "#fff", "stroke-width": 1.5 }));
      dot.append(el("title", {}, `${name}, move ${m.ply + 1}: ${m.mark}`));
      dot.addEventListener("click", (e) => { e.stopPropagation(); showReplay(m.ply + 1); });
      dot.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); showReplay(m.ply + 1); } });
      svg.append(dot);
    }
  });
  return svg;
}

export function drawAnalysis() {
  const s = store.state;
  const box = $("#analysis");
  const btn = $("#btn-analyse");
  if (!box || !btn) return;
  const show = analysable(s);
  const a = current();
  if (show && !a && asked !== s.id) { asked = s.id; poll(s.id); } // one already asked for?
  btn.hidden = !show || Boolean(a);
  box.hidden = !show || !a;
  $("#rp-marks").hidden = !show || !markedPlies().length;
  if (!show || !a) return;
  box.replaceChildren();
  if (!a.doc) {
    const bar = h("progress", { max: String(a.total || 1), value: String(a.done), "aria-label": "Analysis" });
    box.append(h("p", { id: "analysis-progress", role: "status" }, `Analysing: move ${a.done} of ${a.total}`), bar);
    return;
  }
  const doc = a.doc;
  box.append(h("p", { id: "analysis-progress", role: "status" }, `Analysis done: ${doc.moves.length} of ${doc.moves.length} moves`));
  box.append(graph(doc));
  // Per player: the points their moves lost (in all and a move: the
  // figure to compare), then the marks; the name in ink, the colour in
  // the mark beside it.
  const legend = h("ul", { className: "analysis-legend" });
  doc.summary.forEach((row) => {
    const count = (k, one, many) => `${k} ${k === 1 ? one : many}`;
    const li = h("li");
    li.append(markIcon(row.player), h("b", {}, doc.players[row.player]));
    const lost = row.points_lost === undefined ? "" : `: ${row.points_lost} points lost (${row.mean_points_lost} a move); `;
    li.append(`${lost || ": "}${count(row.blunder, "blunder", "blunders")}, ${count(row.mistake, "mistake", "mistakes")}, ${count(row.inaccuracy, "inaccuracy", "inaccuracies")}`);
    legend.append(li);
  });
  box.append(legend);
  drawBest();
}

// The positions before marked moves (the server's replay), to say the
// best alternative in words: "id:ply" -> state.
const before = new Map();

async function positionBefore(id, ply) {
  const key = `${id}:${ply}`;
  if (before.has(key)) return before.get(key);
  const r = await api(`/api/games/${encodeURIComponent(id)}/replay/${ply}`);
  before.set(key, r.state);
  return r.state;
}

// The best move in words, on the position it was to be played in:
// "box the 6 Chocolate Cruller, 12 pts, at the top (3,0) for 12 instead".
export function bestWords(s, best) {
  const place = PLACE_RE.exec(best);
  if (place) {
    const face = rotate(place[1], Number(place[4]));
    const lock = place[5] ? ` (the Cinnamon Roll locked to ${faceWords(place[5])})` : "";
    return `place the card ${faceWords(face)}${lock} ${where(s, Number(place[2]), Number(place[3]), 2, 2)} instead`;
  }
  const boxed = /^box@(-?\d+),(-?\d+)$/.exec(best);
  if (boxed) {
    const box = (s.boxes || []).find((b) => b.x === Number(boxed[1]) && b.y === Number(boxed[2]));
    return box ? `box the ${boxWords(s, box).replace(/, \d+ pts,/, "")} for ${box.points} instead` : `box the run at ${boxed[1]},${boxed[2]} instead`;
  }
  if (best === "pass") return "pass instead";
  return `swap a card (${best.slice(5)}) instead`;
}

// In the replay, at a marked move: the search's best move outlined at its
// place on the counter, and said in words with what the move cost.
export function drawBest() {
  const r = store.replay;
  const text = $("#analysis-best");
  if (text) text.remove();
  $("#board").querySelectorAll(".best-move").forEach((n) => n.remove());
  if (!current() || !$("#analysis") || $("#analysis").hidden) return;
  if (!r || r.ply < 1) return;
  const m = analysedMove(r.ply - 1);
  if (!m || !m.mark) return;
  const s = store.state;
  const played = say({ ...s, ...r.state, history: s.history, players: s.players, deliveries: s.deliveries }, { ply: m.ply, mover: m.player, move: m.move });
  const lost = m.points_lost === undefined ? "" : `, ${m.points_lost} points lost`;
  const chances = `(winning chance ${Math.round(m.before * 100)}% instead of ${Math.round(m.after * 100)}%)`;
  const say1 = h("p", { id: "analysis-best", role: "status" }, `Move ${m.ply + 1}, ${m.mark === "inaccuracy" ? "an" : "a"} ${WORDS[m.mark]}${lost}: ${played} Best: ${m.best} ${chances}, outlined on the counter.`);
  $("#replay").prepend(say1);
  const id = s.id, at = r.ply;
  positionBefore(id, m.ply).then((pos) => {
    const now = store.replay;
    if (!now || now.ply !== at || !store.state || store.state.id !== id || !say1.isConnected) return;
    say1.textContent = `Move ${m.ply + 1}, ${m.mark === "inaccuracy" ? "an" : "a"} ${WORDS[m.mark]}${lost}: ${played} Best: ${bestWords(pos, m.best)} ${chances}; outlined on the counter.`;
  }).catch(() => {});
  // A placement: the card's 2x2 place; a box: the donut named.
  const place = PLACE_RE.exec(m.best);
  const boxed = /^box@(-?\d+),(-?\d+)$/.exec(m.best);
  const spot = place ? [Number(place[2]), Number(place[3]), 2] : boxed ? [Number(boxed[1]), Number(boxed[2]), 1] : null;
  if (spot) {
    const [bx, by, size] = spot;
    const outline = el("rect", { x: bx + 0.02, y: by + 0.02, width: size - 0.04, height: size - 0.04, rx: 0.12, class: "best-move", fill: "none", stroke: player(m.player).colour, "stroke-width": 0.1, "stroke-dasharray": "0.2 0.12" });
    outline.append(el("title", {}, `The best move: ${m.best}`));
    $("#board").append(outline);
  }
}

// The marked moves' plies (1-based, as the replay counts), in order.
export function markedPlies() {
  const a = current();
  return a && a.doc ? a.doc.moves.filter((m) => m.mark).map((m) => m.ply + 1) : [];
}

// Step the replay to the next (+1) or previous (-1) marked move; false
// when there is none that way.
export function stepMark(dir) {
  const marks = markedPlies();
  const at = store.replay ? store.replay.ply : dir > 0 ? 0 : Infinity;
  const to = dir > 0 ? marks.find((p) => p > at) : [...marks].reverse().find((p) => p < at);
  if (to === undefined) return false;
  showReplay(to);
  return true;
}

// The mark of move i, for the log (null when none).
export function markOf(i) {
  const m = analysedMove(i);
  return m && m.mark ? m.mark : null;
}

export function setupAnalysis() {
  $("#btn-analyse").addEventListener("click", start);
  $("#rp-prev-mark").addEventListener("click", () => stepMark(-1));
  $("#rp-next-mark").addEventListener("click", () => stepMark(1));
}
