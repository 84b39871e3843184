// The players' colours and marks, and the flavours' colours: one palette for
// the page, the SVG drawings and the print-and-play PDF, served by the
// server (/api/meta's `palette`, from donutbox.render.look.palette()).
// Player i uses players[i] everywhere; each also has a mark (circle,
// triangle, square, diamond) so owners are told apart without colour.

import { store } from "./store.js";
import { SVGNS, el } from "./dom.js";

const GREY = "#a8a8a8";
const MARKS = ["circle", "triangle", "square", "diamond"];

export function player(p) {
  const players = (store.meta && store.meta.palette && store.meta.palette.players) || [];
  const entry = players[p % Math.max(players.length, 1)];
  return entry || { name: `player ${p + 1}`, colour: GREY, mark: MARKS[p % 4] };
}

export function neutral() {
  return (store.meta && store.meta.palette && store.meta.palette.neutral) || GREY;
}

// The palette as CSS custom properties (--p0..--p3, --neutral), for the
// style sheet's owner colours.
export function applyPalette() {
  const root = document.documentElement.style;
  for (let p = 0; p < 4; p++) root.setProperty(`--p${p}`, player(p).colour);
  root.setProperty("--neutral", neutral());
}

// A mark centred on (cx, cy), `size` across (the shapes of look.mark).
export function markShape(kind, cx, cy, size, attrs = {}) {
  const r = size / 2;
  const poly = (pts) => el("polygon", { points: pts.map((p) => p.join(",")).join(" "), ...attrs });
  if (kind === "circle") return el("circle", { cx, cy, r: r * 0.9, ...attrs });
  if (kind === "square") { const s = r * 0.8; return el("rect", { x: cx - s, y: cy - s, width: 2 * s, height: 2 * s, ...attrs }); }
  if (kind === "diamond") return poly([[cx, cy - r], [cx + r * 0.8, cy], [cx, cy + r], [cx - r * 0.8, cy]]);
  return poly([[cx, cy - r], [cx + r, cy + r * 0.75], [cx - r, cy + r * 0.75]]);
}

// A small inline picture of player p's mark in their colour (beside names).
export function markIcon(p) {
  const { colour, mark, name } = player(p);
  const svg = document.createElementNS(SVGNS, "svg");
  svg.setAttribute("viewBox", "0 0 10 10");
  svg.setAttribute("class", "mark");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${name} ${mark}`);
  svg.append(markShape(mark, 5, 5, 9, { fill: colour, stroke: "#fff", "stroke-width": 0.6 }));
  return svg;
}
