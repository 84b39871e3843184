// Places and boxes in words: "at the top left (2,0)", "6 Chocolate Cruller".
// Players find a place on the counter by where it lies on it, not by the
// coordinates the rules engine uses: those come second, in brackets.

import { NAMES } from "./dom.js";

// The counter's extent in `s` (its cells): {x0, y0, x1, y1}, inclusive.
function extent(s) {
  const cs = s.cells || [];
  if (!cs.length) return { x0: 0, y0: 0, x1: 1, y1: 1 };
  const xs = cs.map((c) => c.x), ys = cs.map((c) => c.y);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

// Which third of [lo, hi] the point t falls in: 0, 1 or 2.
function third(t, lo, hi) {
  if (hi - lo < 3) return 1;
  const f = (t - lo) / (hi - lo);
  return f < 1 / 3 ? 0 : f > 2 / 3 ? 2 : 1;
}

// Where the area (x, y, w x h cells) lies on the counter, in words: "at
// the top left", "at the bottom", "in the middle".
export function region(s, x, y, w = 1, h = 1) {
  const e = extent(s);
  const col = third(x + (w - 1) / 2, e.x0, e.x1);
  const row = third(y + (h - 1) / 2, e.y0, e.y1);
  if (row === 1 && col === 1) return "in the middle";
  const v = ["top", "", "bottom"][row], hz = ["left", "", "right"][col];
  return `at the ${[v, hz].filter(Boolean).join(" ")}`;
}

// The region and the coordinates after it: "at the top left (2,0)".
export function where(s, x, y, w = 1, h = 1) {
  return `${region(s, x, y, w, h)} (${x},${y})`;
}

// The flavour of an open box (every donut of a run is of one flavour; a
// locked Cinnamon Roll counts as its lock's): the letter, or null.
export function boxFlavour(s, box) {
  const at = new Map((s.cells || []).map((c) => [`${c.x},${c.y}`, c]));
  for (const [x, y] of box.cells || []) {
    const c = at.get(`${x},${y}`);
    if (c && c.flavour !== "R") return c.flavour;
  }
  return null;
}

// A box in words: "6 Chocolate Cruller, 12 pts, at the top left (2,0)".
export function boxWords(s, box) {
  const f = boxFlavour(s, box);
  const what = `${box.size} ${f ? NAMES[f] : "donuts"}`;
  const [x0, y0, w, h] = span(box.cells || [[box.x, box.y]]);
  return `${what}, ${box.points} pts, ${region(s, x0, y0, w, h)} (${box.x},${box.y})`;
}

// The cells' bounding box: [x, y, w, h].
export function span(cells) {
  const xs = cells.map((c) => c[0]), ys = cells.map((c) => c[1]);
  const x = Math.min(...xs), y = Math.min(...ys);
  return [x, y, Math.max(...xs) - x + 1, Math.max(...ys) - y + 1];
}

// "Ann's", and "Your" for a player named You (the page's default name).
export function whose(name) {
  return name === "You" ? "Your" : `${name}'s`;
}

// The owner said after the thing owned ("Chocolate Cruller, yours"; "…, Ann's").
export function owned(name) {
  return name === "You" ? "yours" : `${name}'s`;
}
