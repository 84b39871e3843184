// The counter: the donuts laid, where the picked card fits, the open boxes;
// panning and zooming.  Draws from the store; what a click means is the
// caller's (`on`: {choose(moves), hover(face, x, y, moves), run(box, mine)}).

import { $, el, NAMES, PLACE_RE, SVGNS, rotate } from "./dom.js";
import { store, curtained, hintShown, looking } from "./store.js";
import { allowed } from "./tutorial.js";
import { player, neutral, markShape } from "./palette.js";
import { recentPlaces, leader, leadText } from "./recent.js";

let view = { x: -6, y: -6, w: 14, h: 14 };
const SPOTS = [[0, 0], [1, 0], [1, 1], [0, 1]];

// One donut, drawn by the server's shared drawing code (the same look as
// the print-and-play PDF and `donutbox render`); its title names it.
export function donut(x, y, flavour, roll, extra = {}) {
  const g = el("g", extra);
  const key = roll ? (flavour === "R" ? "R" : "R" + flavour) : flavour;
  g.append(el("image", { href: `/api/look/donut/${key}.svg`, x, y, width: 1, height: 1 }));
  g.append(el("title", {}, (roll && flavour !== "R" ? "Cinnamon Roll locked to " : "") + (NAMES[flavour] || flavour)));
  return g;
}

export function cardSvg(face, rot) {
  const svg = document.createElementNS(SVGNS, "svg");
  svg.setAttribute("viewBox", "0 0 2 2");
  const q = rotate(face, rot);
  q.split("").forEach((f, i) => svg.append(donut(SPOTS[i][0], SPOTS[i][1], f, f === "R")));
  return svg;
}

function cells() {
  return store.replay ? store.replay.state.cells : store.state.cells;
}

// Which placement each cell came with: "x,y" -> {ply, x, y, mover} (the
// start card's cells have none).  A card covers x..x+1, y..y+1.
export function cardsOf(s) {
  const out = new Map();
  const n = s.players.length;
  s.history.forEach((m, ply) => {
    const p = PLACE_RE.exec(m);
    if (!p) return;
    const x = Number(p[2]), y = Number(p[3]);
    for (const [dx, dy] of SPOTS) out.set(`${x + dx},${y + dy}`, { ply, x, y, mover: ply % n });
  });
  return out;
}

// A card in words: "Chocolate Cruller, Strawberry Sprinkles, Donut Holes,
// Blueberry Glaze" (from the top left, clockwise); a roll not yet placed is wild.
export function faceWords(face) {
  return face.split("").map((f) => (f === "R" ? "Cinnamon Roll (wild)" : NAMES[f] || f)).join(", ");
}

// The moves the board offers (the tutorial's lesson may allow fewer).
function legalMoves(s) {
  return allowed(s) || s.legal;
}

// Animations: each move since your last turn comes in after the one
// before (a pause between moves, so a fast AI's move can be followed); a
// redraw during them carries on where they are (a negative delay).
const PAUSE = 0.7; // seconds between moves
let shown = { key: "", t: 0, delivered: new Set(), fresh: new Set() };
function animation(s) {
  const key = `${s.id}:${s.version}`;
  if (shown.key !== key) {
    const delivered = new Set(s.cells.filter((c) => c.delivered).map((c) => `${c.x},${c.y}`));
    const sameGame = shown.key.split(":")[0] === String(s.id);
    const fresh = sameGame ? new Set([...delivered].filter((k) => !shown.delivered.has(k))) : new Set();
    shown = { key, t: performance.now(), delivered, fresh };
  }
  return { elapsed: (performance.now() - shown.t) / 1000, fresh: shown.fresh };
}

// Where each (face, rotation) of the legal moves may go: "FACE/rot" ->
// "x,y" -> the moves (several when a Cinnamon Roll's lock is to choose).
function placements() {
  const out = new Map();
  for (const m of legalMoves(store.state)) {
    const p = PLACE_RE.exec(m);
    if (!p) continue;
    const key = `${p[1]}/${p[4]}`;
    if (!out.has(key)) out.set(key, new Map());
    const at = `${p[2]},${p[3]}`;
    if (!out.get(key).has(at)) out.get(key).set(at, []);
    out.get(key).get(at).push(m);
  }
  return out;
}

export function fit() {
  const cs = cells();
  if (!cs.length) return;
  const xs = cs.map((c) => c.x), ys = cs.map((c) => c.y);
  // The whole counter and a margin, in the board's own proportions (a long
  // counter uses the width it has).
  const board = $("#board");
  const aspect = board && board.clientWidth && board.clientHeight ? board.clientWidth / board.clientHeight : 1;
  const x0 = Math.min(...xs) - 3, y0 = Math.min(...ys) - 3;
  const dx = Math.max(...xs) - x0 + 4, dy = Math.max(...ys) - y0 + 4;
  const w = Math.max(dx, dy * aspect, 10 * Math.max(aspect, 1));
  const h = w / aspect;
  view = { x: x0 - (w - dx) / 2, y: y0 - (h - dy) / 2, w, h };
}

// Whether a card, or a place beside one (2 cells out), falls outside the view.
function outsideView() {
  return cells().some((c) => c.x < view.x + 2 || c.y < view.y + 2 || c.x > view.x + view.w - 3 || c.y > view.y + view.h - 3);
}

function cellLabel(c) {
  const what = c.roll && c.flavour !== "R" ? `Cinnamon Roll locked to ${NAMES[c.flavour]}` : NAMES[c.flavour] || c.flavour;
  return what;
}

// The card a group of cells makes, in words: "Ann's card at 2,0:
// Chocolate Cruller, Strawberry Sprinkles, Donut Holes; Cinnamon Roll locked to Donut Holes".
function cardLabel(s, card, group) {
  const plain = [], rolls = [];
  for (const c of group) (c.roll && c.flavour !== "R" ? rolls : plain).push(c.roll ? cellLabel(c) : NAMES[c.flavour] || c.flavour);
  const what = plain.join(", ") + (rolls.length ? `; ${rolls.join(", ")}` : "");
  const whose = card ? `${s.players[card.mover]}'s card at ${card.x},${card.y}` : "The start card";
  const sealed = group.some((c) => c.delivered) ? " (some delivered)" : "";
  return `${whose}: ${what}${sealed}`;
}

// `refit`: zoom out to the whole counter if a card lies outside the view
// (a redraw after the player zoomed keeps their zoom).
export function drawBoard(on, refit = false) {
  const svg = $("#board");
  svg.replaceChildren();
  const s = store.state;
  if (!s) return;
  if (refit && outsideView()) fit();
  svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  const look = store.replay ? null : looking();
  const made = cardsOf(s);
  const live = !store.replay && !s.finished && !look;
  const { elapsed, fresh } = animation(s);
  const recent = live ? recentPlaces(s) : [];
  // The order each recent move comes in: ply -> index.
  const order = new Map(recent.map((r, i) => [r.ply, i]));
  const lastIndex = recent.length ? recent.length - 1 : 0;
  // Owner marks stay at least 8 screen pixels across when zoomed out (a
  // phone showing a large counter), and at most 0.42 of a donut.
  const px = svg.clientWidth ? svg.clientWidth / view.w : 40;
  const markSize = Math.min(0.42, Math.max(0.24, 8 / px));
  const groups = new Map();
  const cardGroup = (c) => {
    const card = made.get(`${c.x},${c.y}`) || null;
    const key = card ? `${card.x},${card.y}` : "start";
    if (!groups.has(key)) {
      const g = el("g", { role: "img", class: "card-on" });
      if (card && order.has(card.ply)) {
        g.classList.add("arrive");
        g.style.animationDelay = `${order.get(card.ply) * PAUSE - elapsed}s`;
      }
      groups.set(key, { g, card, cells: [] });
      svg.append(g);
    }
    return groups.get(key);
  };
  for (const c of cells()) {
    const card = made.get(`${c.x},${c.y}`);
    if (look && card && card.ply > look.ply) continue; // placed after the move looked at
    const into = cardGroup(c);
    into.cells.push(c);
    const gone = live && fresh.has(`${c.x},${c.y}`);
    const g = donut(c.x, c.y, c.flavour, c.roll, { class: (c.delivered && !look ? "delivered" : "") + (gone ? " gone" : "") });
    if (gone) g.style.animationDelay = `${lastIndex * PAUSE + 0.45 - elapsed}s`;
    const owner = c.owner === null ? null : player(c.owner);
    const edge = owner ? owner.colour : neutral();
    g.append(el("rect", { x: c.x + 0.03, y: c.y + 0.03, width: 0.94, height: 0.94, fill: "none", stroke: edge, "stroke-width": 0.06, "stroke-dasharray": owner ? "" : "0.1 0.08" }));
    if (owner) g.append(markShape(owner.mark, c.x + markSize / 2 + 0.12, c.y + markSize / 2 + 0.12, markSize, { fill: owner.colour, stroke: "#fff", "stroke-width": markSize / 8, class: "owner-mark" }));
    g.querySelector("title").textContent = cellLabel(c) + (owner ? `, ${s.players[c.owner] || owner.name}'s` : ", the start card");
    into.g.append(g);
  }
  for (const { g, card, cells: group } of groups.values()) g.setAttribute("aria-label", cardLabel(s, card, group));
  if (look) {
    // The card of the move looked at, outlined.
    const card = [...made.values()].find((c) => c.ply === look.ply);
    if (card) svg.append(el("rect", { x: card.x + 0.02, y: card.y + 0.02, width: 1.96, height: 1.96, rx: 0.12, class: "looked", stroke: player(card.mover).colour }));
    return;
  }
  if (store.replay && !store.replay.state.finished) {
    // In the replay, the open boxes of the move shown as in play: each
    // one's value and the mark of who leads it.
    for (const box of store.replay.state.boxes || []) svg.append(badge(s, box));
  }
  if (live) {
    // The cards placed since the viewer's last turn, outlined in their
    // player's colour; each open box's value and its leader's mark.
    for (const [i, r] of recent.entries()) {
      const c = player(r.mover).colour;
      const mark = el("rect", { x: r.x + 0.02, y: r.y + 0.02, width: 1.96, height: 1.96, rx: 0.12, class: "last", stroke: c, fill: c, "fill-opacity": 0.16, "data-ply": r.ply });
      mark.style.animationDelay = `${i * PAUSE - elapsed}s`;
      svg.append(mark);
    }
    for (const box of s.boxes) svg.append(badge(s, box));
  }
  if (store.replay || s.finished || !s.legal.length || curtained()) return;
  const face = s.tray[store.selected];
  const spots = placements().get(`${face}/${store.rotation}`) || new Map();
  const hinted = hintShown() ? store.hinted.move : null;
  for (const [at, moves] of spots) {
    const [x, y] = at.split(",").map(Number);
    const hint = hinted !== null && moves.includes(hinted);
    const ghost = el("rect", { x, y, width: 2, height: 2, class: hint ? "ghost hint" : "ghost", tabindex: 0, role: "button", "data-place": `${face}@${x},${y}`, "aria-label": `Place ${faceWords(rotate(face, store.rotation))} at ${x},${y}` + (moves.length > 1 ? ", then choose the Cinnamon Roll's lock" : "") });
    ghost.addEventListener("click", () => on.choose(moves, { face, x, y }));
    ghost.addEventListener("dragover", (e) => { e.preventDefault(); on.hover(face, x, y, moves); });
    ghost.addEventListener("drop", (e) => { e.preventDefault(); on.choose(moves); });
    ghost.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); on.choose(moves); } });
    ghost.addEventListener("mouseenter", () => on.hover(face, x, y, moves));
    ghost.addEventListener("focus", () => on.hover(face, x, y, moves));
    svg.append(ghost);
  }
  const offered = legalMoves(s);
  for (const box of s.boxes) {
    const mine = offered.includes(`box@${box.x},${box.y}`);
    const hint = hinted === `box@${box.x},${box.y}`;
    for (const [x, y] of box.cells) {
      const hit = el("rect", { x, y, width: 1, height: 1, fill: "transparent", stroke: mine ? "#ffb000" : "none", "stroke-width": hint ? 0.14 : 0.05, class: hint ? "run hint" : "run", "data-box": `${box.x},${box.y}` });
      hit.addEventListener("click", () => on.run(box, mine));
      hit.append(el("title", {}, `${box.size} donuts, ${box.points} points; ${leadText(s, box)}`));
      svg.append(hit);
    }
  }
}

// An open box's value, at its first cell, with the mark of who leads it.
function badge(s, box) {
  const { leaders } = leader(box);
  const [x, y] = box.cells.reduce((a, b) => (b[1] < a[1] || (b[1] === a[1] && b[0] < a[0]) ? b : a));
  const g = el("g", { class: "badge", "pointer-events": "none" });
  g.append(el("rect", { x: x + 0.42, y: y + 0.02, width: 0.56, height: 0.26, rx: 0.08 }));
  g.append(el("text", { x: x + 0.6, y: y + 0.22 }, String(box.points)));
  if (leaders.length === 1) {
    const who = player(leaders[0]);
    g.append(markShape(who.mark, x + 0.87, y + 0.15, 0.17, { fill: who.colour, stroke: "#fff", "stroke-width": 0.02 }));
  } else if (leaders.length > 1) {
    g.append(el("text", { x: x + 0.83, y: y + 0.22, class: "tie" }, "="));
  }
  return g;
}

// The picked card drawn faintly at (x, y), turned as chosen.
export function phantom(face, x, y) {
  const svg = $("#board");
  svg.querySelectorAll(".phantom").forEach((n) => n.remove());
  const q = rotate(face, store.rotation);
  const g = el("g", { class: "phantom", opacity: 0.6, "pointer-events": "none" });
  q.split("").forEach((f, i) => g.append(donut(x + SPOTS[i][0], y + SPOTS[i][1], f, f === "R")));
  svg.append(g);
}

export function clearPhantom() {
  $("#board").querySelectorAll(".phantom").forEach((n) => n.remove());
}

function zoom(factor, redraw) {
  const cx = view.x + view.w / 2, cy = view.y + view.h / 2;
  const aspect = view.w / view.h;
  view.w = Math.min(80 * Math.max(aspect, 1), Math.max(4, view.w * factor));
  view.h = view.w / aspect;
  view.x = cx - view.w / 2;
  view.y = cy - view.h / 2;
  redraw();
}

// Pan (drag, arrows on the focused board), zoom (wheel, pinch, + and -, the
// buttons).  `redraw()` draws the board again.
export function setupBoard(redraw) {
  const board = $("#board");
  document.querySelectorAll("#zoom button").forEach((b) => b.addEventListener("click", () => {
    const z = b.dataset.zoom;
    if (z === "fit") { fit(); redraw(); } else zoom(z === "in" ? 0.8 : 1.25, redraw);
  }));
  board.addEventListener("wheel", (e) => { e.preventDefault(); zoom(e.deltaY < 0 ? 0.9 : 1.1, redraw); }, { passive: false });
  let drag = null;
  const touches = new Map();
  let pinch = null;
  board.addEventListener("pointerdown", (e) => {
    touches.set(e.pointerId, [e.clientX, e.clientY]);
    if (touches.size === 2) {
      const [a, b] = [...touches.values()];
      pinch = { d: Math.hypot(a[0] - b[0], a[1] - b[1]), w: view.w };
      drag = null;
    } else if (e.target === board) drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y };
  });
  const lift = (e) => { touches.delete(e.pointerId); if (touches.size < 2) pinch = null; };
  board.addEventListener("pointerup", lift);
  board.addEventListener("pointercancel", lift);
  board.addEventListener("pointermove", (e) => {
    if (touches.has(e.pointerId)) touches.set(e.pointerId, [e.clientX, e.clientY]);
    if (pinch && touches.size === 2) {
      const [a, b] = [...touches.values()];
      const d = Math.hypot(a[0] - b[0], a[1] - b[1]);
      if (d > 0) zoom((pinch.w * pinch.d / d) / view.w, redraw);
      return;
    }
    if (!drag) return;
    const scale = view.w / board.clientWidth;
    view.x = drag.vx - (e.clientX - drag.x) * scale;
    view.y = drag.vy - (e.clientY - drag.y) * scale;
    board.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  });
  addEventListener("pointerup", () => { drag = null; });
  return {
    zoomIn: () => zoom(0.8, redraw),
    zoomOut: () => zoom(1.25, redraw),
    pan: (dx, dy) => { view.x += dx * view.w / 10; view.y += dy * view.h / 10; redraw(); },
  };
}
