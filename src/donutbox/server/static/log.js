// The side panel: scores (with each player's mark), who is watching, the
// clocks, the moves, the end-of-game summary.

import { $, h } from "./dom.js";
import { store, set, looking } from "./store.js";
import { markIcon, player } from "./palette.js";
import { timeLeft, formatClock } from "./online.js";
import { recentMoves, say, leadText, moveCells } from "./recent.js";
import { markOf } from "./analysis.js";
import { spotlight } from "./board.js";
import { boxWords } from "./places.js";

// Pointing at or focusing `node` picks out `cells` on the counter.
function pointsAt(node, cells, colour) {
  for (const [type, on] of [["mouseenter", true], ["focus", true], ["mouseleave", false], ["blur", false]]) {
    node.addEventListener(type, () => spotlight(on ? cells() : null, colour));
  }
}

const joined = new Set(); // "game:seat" seen connected on this page

export function drawSide() {
  // In the replay: the scores and counts of the move shown, not the end's.
  const r = store.replay;
  const s = r ? { ...store.state, ...r.state, seats: store.state.seats, presence: store.state.presence, clock: null, history: store.state.history } : store.state;
  const t = $("#scores");
  t.replaceChildren();
  const head = h("tr");
  for (const [text, title] of [["Player", ""], ["Points", "points scored so far"], ["If ended now", "points if the game ended now: each open box scores its full value to whoever holds most of it"], ["Boxes", "boxes delivered"], ["Pile", "cards left in the pile"]]) {
    head.append(h("th", { scope: "col", ...(title ? { title } : {}) }, text));
  }
  const thead = h("thead");
  thead.append(head);
  const tbody = h("tbody");
  t.append(thead, tbody);
  const projected = endNow(s);
  s.players.forEach((name, p) => {
    const tr = h("tr");
    if (s.to_move === p && !s.finished) tr.className = "turn";
    // An AI seat's agent after its name, unless the name says it already
    // ("Hard 2", not "Hard 2 (hard)").
    const agentName = s.seats[p] === "human" ? "" : s.seats[p];
    const who = !agentName || name.toLowerCase().includes(agentName.toLowerCase()) ? "" : ` (${agentName})`;
    const first = h("td", { className: "who" });
    // A long name is cut with an ellipsis on screen; its full text stays
    // the cell's text (what a screen reader reads) and its tooltip.
    first.append(markIcon(p), h("span", { className: "name", title: `${name}${who}` }, `${name}${who}`));
    first.style.setProperty("--owner", player(p).colour);
    if (s.presence) {
      first.prepend(presenceDot(p));
      const key = `${s.id}:${p}`;
      if (s.presence.connected[p]) joined.add(key);
      if (s.seats[p] === "human" && !s.presence.connected[p] && p !== s.player) {
        tr.classList.add("away");
        first.append(h("span", { className: "away-tag" }, s.history.length || joined.has(key) ? "disconnected" : "not joined"));
      }
    }
    if (s.clock) first.append(h("span", { className: "clock", "data-seat": String(p) }));
    tr.append(first);
    for (const text of [`${s.scores[p]} pts`, `→ ${projected[p]}`, `${s.delivered[p]} box${s.delivered[p] === 1 ? "" : "es"}`, String(s.pile_sizes[p])]) {
      tr.append(h("td", {}, text));
    }
    tr.cells[2].className = "ifnow";
    tbody.append(tr);
  });
  drawNotes();
  drawOpenBoxes(s);
  drawWatchers();
  drawClocks();
  const log = $("#log");
  log.replaceChildren();
  const n = s.players.length;
  s.history.forEach((m, i) => {
    // The move in words, and its notation (to read or copy).
    // Each entry shows its move on the board: in the replay (a finished
    // game) that position; during the game a look at it, drawn here from
    // the moves' placements (the server's replay opens only at the end).
    const li = h("li");
    const words = say(s, { ply: i, mover: i % n, move: m });
    const b = h("button", { type: "button", className: "say", title: `Show move ${i + 1} on the board` }, words);
    b.addEventListener("click", () => showMove(i));
    pointsAt(b, () => moveCells(s, i), player(i % n).colour);
    li.append(b, " ", h("code", { title: "notation" }, m));
    const flagged = markOf(i);
    if (flagged) li.append(" ", h("span", { className: `flag flag-${flagged}`, title: "the analysis marked this move" }, flagged));
    const look = looking();
    if (look && look.ply === i) {
      li.className = "current";
      li.setAttribute("aria-current", "step");
    }
    if (r && i === r.ply - 1) {
      li.className = "current";
      li.setAttribute("aria-current", "step");
    }
    log.append(li);
  });
  const current = log.querySelector(".current");
  if (current) keepInView(current);
  else log.scrollTop = log.scrollHeight;
  if (!resized) {
    // The list's box changes size as the text above it does (a marked
    // move's best alternative, said in words once its position arrives):
    // the move shown stays in view.
    resized = new ResizeObserver(() => { const c = log.querySelector(".current"); if (c) keepInView(c); });
    resized.observe(log);
  }
  drawSummary(s);
  drawLook();
}

let resized = null; // the ResizeObserver of the move list

// Scroll the move list (its own box only, never the page: on a phone the
// step controls above it stay where they are) to show `li`.
function keepInView(li) {
  const log = li.parentElement;
  const box = log.getBoundingClientRect(), at = li.getBoundingClientRect();
  if (at.top < box.top) log.scrollTop -= box.top - at.top;
  else if (at.bottom > box.bottom) log.scrollTop += Math.min(at.bottom - box.bottom, at.top - box.top);
}

let replayer = null; // showReplay, given by app.js (replay.js imports this module)
export function setReplayer(fn) { replayer = fn; }

// Show move `i` (0-based) on the board.
export function showMove(i) {
  const s = store.state;
  if (s.finished || store.replay) {
    if (replayer) replayer(i + 1);
    return;
  }
  set({ look: { id: s.id, version: s.version, ply: i } });
}

function drawLook() {
  const bar = $("#look");
  const look = store.replay ? null : looking();
  bar.hidden = !look;
  if (!look) return;
  const s = store.state;
  $("#look-text").textContent = `The counter after move ${look.ply + 1} of ${s.history.length}: ${say(s, { ply: look.ply, mover: look.ply % s.players.length, move: s.history[look.ply] })} (Cards placed later are hidden; Escape goes back.)`;
}

// The end of the game: the winner, the ranking with each player's points
// split into sealed / boxed / end scoring, the tiebreak when it decided,
// takebacks if any.
function drawSummary(s) {
  const summary = $("#summary");
  summary.hidden = !s.finished;
  const body = $("#summary-body");
  body.replaceChildren();
  if (!s.finished) return;
  const names = (ps) => (ps.length ? ps.map((p) => s.players[p]).join(" and ") : "nobody");
  // Who resigned or lost on time (online games: they rank last, the
  // earliest to leave last of all; docs/online.md).
  const gone = (s.forfeits || []).map((f) => f.seat);
  const left = (f) => `${s.players[f.seat]} ${f.how === "time" ? "lost on time" : "resigned"}`;
  $("#summary-head").textContent = s.ended_by === "aborted"
    ? "Game aborted — not every player arrived in time; nobody won and it is not rated"
    : `Game over — ${[...(s.forfeits || []).map(left), `winner: ${s.winners.map((p) => s.players[p]).join(", ")}`].join("; ")}`;
  const split = s.players.map(() => ({ sealed: 0, boxed: 0, end: 0 }));
  for (const d of s.deliveries) {
    const how = d.how in split[0] ? d.how : d.ply === null ? "end" : "sealed";
    for (const p of d.to) split[p][how] += d.points;
  }
  const rank = (p) => (gone.includes(p) ? 1 + gone.length - gone.indexOf(p) : 0);
  const order = s.players.map((_, p) => p).sort((a, b) => rank(a) - rank(b) || s.scores[b] - s.scores[a] || s.delivered[b] - s.delivered[a]);
  const table = h("table", { className: "ranking" });
  const head = h("tr");
  for (const t of ["", "Player", "Points", "sealed", "boxed", "end", "Boxes"]) head.append(h("th", { scope: "col" }, t));
  table.append(head);
  // Equal points and boxes share a place.
  const ahead = (p) => order.filter((q) => rank(q) < rank(p) || (rank(q) === rank(p) && (s.scores[q] > s.scores[p] || (s.scores[q] === s.scores[p] && s.delivered[q] > s.delivered[p])))).length;
  order.forEach((p) => {
    const tr = h("tr");
    if (s.winners.includes(p)) tr.className = "winner";
    // A long name is cut with an ellipsis (the table must fit a phone);
    // its full text stays the cell's text and its tooltip.
    const who = h("td");
    who.append(markIcon(p), h("span", { className: "name", title: s.players[p] }, s.players[p]));
    tr.append(h("td", {}, `${ahead(p) + 1}.`), who);
    for (const v of [s.scores[p], split[p].sealed, split[p].boxed, split[p].end, s.delivered[p]]) tr.append(h("td", {}, String(v)));
    table.append(tr);
  });
  body.append(table);
  const top = Math.max(...s.scores);
  const tied = s.scores.filter((x) => x === top).length;
  if (tied > s.winners.length && !gone.length && s.ended_by !== "aborted") body.append(h("p", {}, `Tied on ${top} points: the tiebreak, most boxes delivered, decided it.`));
  if (typeof s.takebacks === "number" && s.takebacks > 0) body.append(h("p", {}, `${s.takebacks} takeback${s.takebacks === 1 ? "" : "s"}.`));
  if (s.deliveries.length) { // (none in a game aborted before its first move)
    const details = h("details");
    details.append(h("summary", {}, "Every box that scored"));
    const ul = h("ul");
    for (const d of s.deliveries) {
      ul.append(h("li", {}, `${d.how}${d.ply === null ? "" : " at move " + (d.ply + 1)}: ${d.size} donuts, ${d.points} points to ${names(d.to)}`));
    }
    details.append(ul);
    body.append(details);
  }
  $("#btn-rematch").hidden = Boolean(store.online) || s.mode === "online";
}

// Each player's points if the game ended now: every open box scores its full
// value to each of its majority holders (the rules' end scoring).
export function endNow(s) {
  const out = [...s.scores];
  if (s.finished) return out;
  // Who an open box would score for is the server's (its scoring rule's
  // ``end_to``), never worked out here.
  for (const box of s.boxes) for (const p of box.end_to) out[p] += box.points;
  return out;
}

// What the others did since the viewer's last turn, in words (a live
// region: screen readers announce it).  Drawn for a new position only.
export function drawLastMoves() {
  const s = store.state;
  const out = $("#last-move");
  const recent = store.replay || s.finished ? [] : recentMoves(s);
  // Each move a button: pointed at or focused, its card is picked out on
  // the counter; clicked, the counter shows the position after it.
  out.replaceChildren();
  recent.forEach((r, i) => {
    const b = h("button", { type: "button", className: "say", title: "Show it on the counter" }, say(s, r));
    pointsAt(b, () => moveCells(s, r.ply), player(r.mover).colour);
    b.addEventListener("click", () => spotlight(moveCells(s, r.ply), player(r.mover).colour));
    out.append(...(i ? [" ", b] : [b]));
  });
  out.hidden = !recent.length;
}

// Each open box: its size and value, and who holds the most of it (in the
// replay, those of the move shown).
function drawOpenBoxes(s) {
  const ul = $("#open-boxes");
  ul.replaceChildren();
  const open = s.finished ? [] : [...s.boxes].sort((a, b) => b.points - a.points);
  $("#open-boxes-head").hidden = !open.length;
  // (the count on the toggle that shows them in the desktop review, where
  // the list is folded to leave the side column to the moves: style.css)
  $("#open-boxes-count").textContent = `(${open.length})`;
  const SHOWN = 6; // the most valuable ones; the rest in one line
  // Each one a button: pointed at or focused, its donuts are picked out on
  // the counter (the view moves to them if they lie outside it).
  open.forEach((box, i) => {
    const li = h("li", i < SHOWN ? {} : { className: "more-box" });
    const b = h("button", { type: "button", className: "say" }, `${boxWords(s, box)}: ${leadText(s, box)}`);
    pointsAt(b, () => box.cells, "#1f5fa8");
    b.addEventListener("click", () => spotlight(box.cells, "#1f5fa8"));
    li.append(b);
    ul.append(li);
  });
  if (open.length > SHOWN && !ul.classList.contains("all")) {
    const more = h("li", { className: "more" });
    const b = h("button", { type: "button", className: "say" }, `and ${open.length - SHOWN} smaller ones: show them`);
    b.addEventListener("click", () => { ul.classList.add("all"); more.remove(); });
    more.append(b);
    ul.append(more);
  }
}

// "Practice game" (an undo used against the AI, or a chosen deal) and how
// many moves were taken back, where the server says so.
function drawNotes() {
  const s = store.state;
  const notes = [];
  if (s.practice) notes.push("Practice game");
  if (typeof s.takebacks === "number" && s.takebacks > 0) notes.push(`${s.takebacks} takeback${s.takebacks === 1 ? "" : "s"}`);
  const p = $("#notes");
  p.hidden = !notes.length;
  p.textContent = notes.join(" · ");
}

// A dot by each name online: filled when that seat is connected.
function presenceDot(p) {
  const s = store.state;
  const ai = s.seats[p] !== "human";
  const on = ai || s.presence.connected[p];
  const title = ai ? "the server's AI" : on ? "connected" : "not connected";
  return h("span", { className: `dot ${ai ? "ai" : on ? "on" : "off"}`, title, role: "img", "aria-label": title });
}

export function drawWatchers() {
  const s = store.state;
  const w = $("#watchers");
  const n = s && s.presence ? s.presence.spectators : 0;
  // Only when someone watches: a lobby game has no spectator link to share,
  // and "0 spectators watching" tells nobody anything.
  w.hidden = !s || !s.presence || n === 0;
  w.textContent = `${n} spectator${n === 1 ? "" : "s"} watching`;
}

export function drawClocks() {
  const s = store.state, online = store.online;
  if (!s || !s.clock || !online) return;
  const now = performance.now();
  document.querySelectorAll("#scores .clock").forEach((span) => {
    const p = Number(span.dataset.seat);
    const left = timeLeft(s.clock, p, online.arrived, now);
    span.textContent = (s.clock.flagged[p] ? "⚑ " : "") + formatClock(left);
    span.classList.toggle("running", s.clock.running === p && !s.finished);
    span.classList.toggle("low", left !== null && left < 30000);
    span.title = !s.clock.flagged[p] ? "time left" : s.rated ? "lost on time" : "ran out of time once: plays on with the increment";
  });
}
