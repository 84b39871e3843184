// The counter: the donuts laid, where the picked card fits, the open boxes;
// panning and zooming.  Draws from the store; what a click means is the
// caller's (`on`: {choose(moves), hover(face, x, y, moves), run(box, mine)}).

import { $, el, NAMES, PLACE_RE, SVGNS, rotate } from "./dom.js";
import { store, curtained, hintShown } from "./store.js";
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

// Where each (face, rotation) of the legal moves may go: "FACE/rot" ->
// "x,y" -> the moves (several when a Cinnamon Roll's lock is to choose).
function placements() {
  const out = new Map();
  for (const m of store.state.legal) {
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

// `refit`: zoom out to the whole counter if a card lies outside the view
// (a redraw after the player zoomed keeps their zoom).
export function drawBoard(on, refit = false) {
  const svg = $("#board");
  svg.replaceChildren();
  const s = store.state;
  if (!s) return;
  if (refit && outsideView()) fit();
  svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  for (const c of cells()) {
    const g = donut(c.x, c.y, c.flavour, c.roll, { class: c.delivered ? "delivered" : "" });
    const owner = c.owner === null ? null : player(c.owner);
    const edge = owner ? owner.colour : neutral();
    g.append(el("rect", { x: c.x + 0.03, y: c.y + 0.03, width: 0.94, height: 0.94, fill: "none", stroke: edge, "stroke-width": 0.06, "stroke-dasharray": owner ? "" : "0.1 0.08" }));
    if (owner) g.append(markShape(owner.mark, c.x + 0.13, c.y + 0.13, 0.2, { fill: owner.colour, stroke: "#fff", "stroke-width": 0.025, class: "owner-mark" }));
    g.querySelector("title").textContent = cellLabel(c) + (owner ? `, ${s.players[c.owner] || owner.name}'s` : ", the start card");
    svg.append(g);
  }
  if (!store.replay && !s.finished) {
    // The cards placed since the viewer's last turn, outlined in their
    // player's colour; each open box's value and its leader's mark.
    for (const r of recentPlaces(s)) {
      const c = player(r.mover).colour;
      svg.append(el("rect", { x: r.x + 0.02, y: r.y + 0.02, width: 1.96, height: 1.96, rx: 0.12, class: "last", stroke: c, fill: c, "fill-opacity": 0.16, "data-ply": r.ply }));
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
    const ghost = el("rect", { x, y, width: 2, height: 2, class: hint ? "ghost hint" : "ghost", tabindex: 0, role: "button", "aria-label": `place ${face} at ${x},${y}` });
    ghost.addEventListener("click", () => on.choose(moves, { face, x, y }));
    ghost.addEventListener("dragover", (e) => { e.preventDefault(); on.hover(face, x, y, moves); });
    ghost.addEventListener("drop", (e) => { e.preventDefault(); on.choose(moves); });
    ghost.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); on.choose(moves); } });
    ghost.addEventListener("mouseenter", () => on.hover(face, x, y, moves));
    ghost.addEventListener("focus", () => on.hover(face, x, y, moves));
    svg.append(ghost);
  }
  for (const box of s.boxes) {
    const mine = s.legal.includes(`box@${box.x},${box.y}`);
    const hint = hinted === `box@${box.x},${box.y}`;
    for (const [x, y] of box.cells) {
      const hit = el("rect", { x, y, width: 1, height: 1, fill: "transparent", stroke: mine ? "#ffb000" : "none", "stroke-width": hint ? 0.14 : 0.05, class: hint ? "run hint" : "run" });
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
