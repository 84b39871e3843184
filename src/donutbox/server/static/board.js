// The counter: the donuts laid, where the picked card fits, the open boxes;
// panning and zooming.  Draws from the store; what a click means is the
// caller's (`on`: {choose(moves), hover(face, x, y, moves), run(box, mine)}).

import { $, el, NAMES, PLACE_RE, SVGNS, rotate } from "./dom.js";
import { store, curtained, hintShown, looking } from "./store.js";
import { allowed } from "./tutorial.js";
import { player, neutral, markShape } from "./palette.js";
import { recentPlaces, leader, leadText } from "./recent.js";
import { boxWords, span, where, owned, whose } from "./places.js";

let view = { x: -6, y: -6, w: 14, h: 14 };
// The smallest drawing of a donut, in CSS pixels: the page never zooms out
// further, so the open boxes' values (0.3 of a donut) stay at least 12 px
// and owner marks stay in their corner.  A counter too big for the board at
// this size is shown in part, with a mini-map of the whole.
export const MIN_PX = 40;
// The donut images are cached for a day: a new drawing of them (the
// screen lettering, render/look.py) takes a new LOOK, so no browser keeps
// the old one.
const LOOK = 2;
const BADGE_FONT = 0.32; // of a donut: 12.8 px at MIN_PX
const BADGE_HEIGHT = 0.36; // of a donut: the value's box, clear of the letter
// The cells picked out on the counter while a description of them (an open
// box, a move of the log, the last move) is pointed at or focused: {cells,
// colour}, or null.
let spot = null;
let redrawFn = () => {};
const SPOTS = [[0, 0], [1, 0], [1, 1], [0, 1]];

// One donut, drawn by the server's shared drawing code (the same look as
// the print-and-play PDF and `donutbox render`); its title names it.
export function donut(x, y, flavour, roll, extra = {}) {
  const g = el("g", extra);
  const key = roll ? (flavour === "R" ? "R" : "R" + flavour) : flavour;
  g.append(el("image", { href: `/api/look/donut/${key}.svg?look=${LOOK}`, x, y, width: 1, height: 1 }));
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

// The board's size in CSS pixels (a hidden board: a guess).
function boardSize() {
  const board = $("#board");
  const w = board && board.clientWidth ? board.clientWidth : 600;
  const h = board && board.clientHeight ? board.clientHeight : 400;
  return { w, h };
}

// The widest view (in cells) the board may show: MIN_PX a donut.
function widest() {
  return boardSize().w / MIN_PX;
}

// The whole counter and a margin, in the board's own proportions; where
// that would draw donuts under MIN_PX, the view at MIN_PX centred on the
// last move (or the counter's middle): the mini-map shows the rest.
export function fit() {
  const cs = cells();
  if (!cs.length) return;
  const xs = cs.map((c) => c.x), ys = cs.map((c) => c.y);
  const { w: bw, h: bh } = boardSize();
  const aspect = bw / bh;
  const x0 = Math.min(...xs) - 3, y0 = Math.min(...ys) - 3;
  const dx = Math.max(...xs) - x0 + 4, dy = Math.max(...ys) - y0 + 4;
  let w = Math.max(dx, dy * aspect, 10 * Math.max(aspect, 1));
  if (w <= widest()) {
    const h = w / aspect;
    view = { x: x0 - (w - dx) / 2, y: y0 - (h - dy) / 2, w, h };
    return;
  }
  w = widest();
  const h = w / aspect;
  const s = store.state;
  const last = s && !store.replay ? recentPlaces(s).slice(-1)[0] : null;
  const [cx, cy] = last ? [last.x + 1, last.y + 1] : [x0 + dx / 2, y0 + dy / 2];
  view = { x: cx - w / 2, y: cy - h / 2, w, h };
}

// Centre the view on (cx, cy) if any of `cells` lies outside it; true if it moved.
function bringIntoView(cs) {
  const out = cs.some(([x, y]) => x < view.x || y < view.y || x + 1 > view.x + view.w || y + 1 > view.y + view.h);
  if (!out) return false;
  const [x, y, w, h] = span(cs);
  view.x = x + w / 2 - view.w / 2;
  view.y = y + h / 2 - view.h / 2;
  return true;
}

// Pick out `cs` ([[x, y]...]) on the counter (moving the view to them if
// they lie outside it), in `colour`; null clears.
export function spotlight(cs, colour = "#1f5fa8") {
  spot = cs && cs.length ? { cells: cs, colour } : null;
  if (spot && bringIntoView(cs)) { redrawFn(); return; }
  drawSpot();
}

function drawSpot() {
  const svg = $("#board");
  if (!svg) return;
  svg.querySelectorAll(".spot").forEach((n) => n.remove());
  if (!spot) return;
  const g = el("g", { class: "spot", "pointer-events": "none", "aria-hidden": "true" });
  for (const [x, y] of spot.cells) g.append(el("rect", { x: x + 0.04, y: y + 0.04, width: 0.92, height: 0.92, rx: 0.1, stroke: spot.colour }));
  // Under the open boxes' values (a value is never covered), over the rest.
  const badge = svg.querySelector(".badge");
  if (badge) svg.insertBefore(g, badge); else svg.append(g);
}

// Whether a card, or a place beside one (2 cells out), falls outside the view.
function outsideView() {
  return cells().some((c) => c.x < view.x + 2 || c.y < view.y + 2 || c.x > view.x + view.w - 3 || c.y > view.y + view.h - 3);
}

function cellLabel(c) {
  // (the flavour first: a screen reader's user hears it before the owner)
  const what = c.roll && c.flavour !== "R" ? `Cinnamon Roll locked to ${NAMES[c.flavour]}` : NAMES[c.flavour] || c.flavour;
  return what;
}

// The card a group of cells makes, in words: "Ann's card at 2,0:
// Chocolate Cruller, Strawberry Sprinkles, Donut Holes; Cinnamon Roll locked to Donut Holes".
function cardLabel(s, card, group) {
  const plain = [], rolls = [];
  for (const c of group) (c.roll && c.flavour !== "R" ? rolls : plain).push(c.roll ? cellLabel(c) : NAMES[c.flavour] || c.flavour);
  const what = plain.join(", ") + (rolls.length ? `; ${rolls.join(", ")}` : "");
  const who = card ? `${whose(s.players[card.mover])} card ${where(s, card.x, card.y, 2, 2)}` : "The start card";
  const sealed = group.some((c) => c.delivered) ? " (some delivered)" : "";
  return `${who}: ${what}${sealed}`;
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
  if (svg.clientWidth && view.w > widest() + 1e-9) {
    // (the board got narrower: a phone turned, a window resized)
    const c = [view.x + view.w / 2, view.y + view.h / 2];
    view.w = widest();
    view.h = view.w * svg.clientHeight / svg.clientWidth;
    view.x = c[0] - view.w / 2;
    view.y = c[1] - view.h / 2;
    svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  }
  const px = svg.clientWidth ? svg.clientWidth / view.w : MIN_PX;
  // Owner marks: in the cell's corner, at least 8 screen pixels across,
  // never over the donut's letter (the hole it sits in: a circle of radius
  // 0.18 of the cell round its middle, the server's screen lettering).
  const markSize = Math.min(0.28, Math.max(0.2, 8 / px));
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
    if (owner) g.append(markShape(owner.mark, c.x + markSize / 2 + 0.07, c.y + markSize / 2 + 0.07, markSize, { fill: owner.colour, stroke: "#fff", "stroke-width": markSize / 8, class: "owner-mark" }));
    g.querySelector("title").textContent = cellLabel(c) + (owner ? `, ${owned(s.players[c.owner] || owner.name)}` : ", the start card");
    into.g.append(g);
  }
  for (const { g, card, cells: group } of groups.values()) g.setAttribute("aria-label", cardLabel(s, card, group));
  if (look) {
    // The card of the move looked at, outlined.
    const card = [...made.values()].find((c) => c.ply === look.ply);
    if (card) svg.append(el("rect", { x: card.x + 0.02, y: card.y + 0.02, width: 1.96, height: 1.96, rx: 0.12, class: "looked", stroke: player(card.mover).colour }));
    finish();
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
  if (store.replay || s.finished || !s.legal.length || curtained()) { finish(); return; }
  const face = s.tray[store.selected];
  const spots = placements().get(`${face}/${store.rotation}`) || new Map();
  const hinted = hintShown() ? store.hinted.move : null;
  for (const [at, moves] of spots) {
    const [x, y] = at.split(",").map(Number);
    const hint = hinted !== null && moves.includes(hinted);
    const ghost = el("rect", { x, y, width: 2, height: 2, class: hint ? "ghost hint" : "ghost", tabindex: 0, role: "button", "data-place": `${face}@${x},${y}`, "aria-label": `Place ${faceWords(rotate(face, store.rotation))} ${where(s, x, y, 2, 2)}` + (moves.length > 1 ? ", then choose the Cinnamon Roll's lock" : "") });
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
      hit.append(el("title", {}, `${boxWords(s, box)}; ${leadText(s, box)}`));
      svg.append(hit);
    }
  }
  finish();
}

// What every drawing of the counter ends with: the picked-out cells on top
// (but for the open boxes' values), and the mini-map when part of the
// counter lies outside the view.
function finish() {
  drawSpot();
  drawMinimap();
}

// The whole counter in small (no text: flavour colours only), the part the
// board shows outlined; a click or a drag on it moves the view there.
function drawMinimap() {
  const map = $("#minimap");
  if (!map) return;
  const cs = cells();
  const out = cs.some((c) => c.x < view.x || c.y < view.y || c.x + 1 > view.x + view.w || c.y + 1 > view.y + view.h);
  // (an SVG element has no `hidden` property: the attribute itself)
  map.toggleAttribute("hidden", !cs.length || !out);
  if (!cs.length || !out) return;
  const xs = cs.map((c) => c.x), ys = cs.map((c) => c.y);
  const x0 = Math.min(...xs, view.x) - 1, y0 = Math.min(...ys, view.y) - 1;
  const x1 = Math.max(...xs.map((x) => x + 1), view.x + view.w) + 1, y1 = Math.max(...ys.map((y) => y + 1), view.y + view.h) + 1;
  map.setAttribute("viewBox", `${x0} ${y0} ${x1 - x0} ${y1 - y0}`);
  // At most 9rem on its longer side, in the counter's proportions.
  const longest = innerWidth < 720 ? 96 : 144, ratio = (x1 - x0) / (y1 - y0);
  map.style.width = `${ratio >= 1 ? longest : longest * ratio}px`;
  map.style.height = `${ratio >= 1 ? longest / ratio : longest}px`;
  map.replaceChildren();
  const flavours = (store.meta && store.meta.palette && store.meta.palette.flavours) || {};
  map.append(el("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, class: "mm-bg" }));
  for (const c of cs) map.append(el("rect", { x: c.x, y: c.y, width: 1, height: 1, fill: flavours[c.flavour] || "#999", opacity: c.delivered ? 0.35 : 1 }));
  if (spot) for (const [x, y] of spot.cells) map.append(el("rect", { x: x - 0.3, y: y - 0.3, width: 1.6, height: 1.6, class: "mm-spot" }));
  map.append(el("rect", { x: view.x, y: view.y, width: view.w, height: view.h, class: "mm-view" }));
}

// Centre the view on the mini-map's point under the pointer.
function minimapTo(e, redraw) {
  const map = $("#minimap");
  const box = map.getBoundingClientRect();
  const vb = map.viewBox.baseVal;
  if (!box.width || !vb) return;
  const x = vb.x + ((e.clientX - box.left) / box.width) * vb.width;
  const y = vb.y + ((e.clientY - box.top) / box.height) * vb.height;
  view.x = x - view.w / 2;
  view.y = y - view.h / 2;
  redraw();
}

// An open box's value, in the top right corner of its first cell (clear
// of the owner mark at the top left and of the donut's letter), with the
// mark of who leads it; read out as the box in words.
function badge(s, box) {
  const { leaders } = leader(box);
  const [x, y] = box.cells.reduce((a, b) => (b[1] < a[1] || (b[1] === a[1] && b[0] < a[0]) ? b : a));
  const f = BADGE_FONT;
  const g = el("g", { class: "badge", "pointer-events": "none", role: "img", "aria-label": `Open box: ${boxWords(s, box)}; ${leadText(s, box)}` });
  const digits = String(box.points).length;
  const w = f * (0.62 * digits + 0.35) + (leaders.length ? f * 0.95 : 0);
  // BADGE_HEIGHT from the cell's top edge: the letter of the donut (the
  // server's screen lettering) starts 0.386 down, below it.
  g.append(el("rect", { x: x + 0.98 - w, y, width: w, height: BADGE_HEIGHT, rx: f * 0.3 }));
  const textX = x + 0.98 - (leaders.length ? f * 0.95 : 0) - f * (0.62 * digits + 0.35) / 2;
  const baseline = y + (BADGE_HEIGHT + f * 0.72) / 2; // digits centred
  g.append(el("text", { x: textX, y: baseline, "font-size": f }, String(box.points)));
  if (leaders.length === 1) {
    const who = player(leaders[0]);
    g.append(markShape(who.mark, x + 0.98 - f * 0.55, y + BADGE_HEIGHT / 2, f * 0.75, { fill: who.colour, stroke: "#fff", "stroke-width": f * 0.08 }));
  } else if (leaders.length > 1) {
    g.append(el("text", { x: x + 0.98 - f * 0.5, y: baseline, "font-size": f, class: "tie" }, "="));
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
  view.w = Math.min(widest(), Math.max(4, view.w * factor));
  view.h = view.w / aspect;
  view.x = cx - view.w / 2;
  view.y = cy - view.h / 2;
  redraw();
}

// Pan (drag, arrows on the focused board), zoom (wheel, pinch, + and -, the
// buttons).  `redraw()` draws the board again.
export function setupBoard(redraw) {
  const board = $("#board");
  redrawFn = redraw;
  const map = $("#minimap");
  if (map) {
    let dragging = false;
    map.addEventListener("pointerdown", (e) => { dragging = true; map.setPointerCapture(e.pointerId); minimapTo(e, redraw); });
    map.addEventListener("pointermove", (e) => { if (dragging) minimapTo(e, redraw); });
    map.addEventListener("pointerup", () => { dragging = false; });
  }
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
    drawMinimap();
  });
  addEventListener("pointerup", () => { drag = null; });
  return {
    zoomIn: () => zoom(0.8, redraw),
    zoomOut: () => zoom(1.25, redraw),
    pan: (dx, dy) => { view.x += dx * view.w / 10; view.y += dy * view.h / 10; redraw(); },
  };
}
