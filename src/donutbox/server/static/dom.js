// Small DOM helpers shared by the page's modules.  Names typed by players
// are only ever set with textContent, never as HTML.

export const $ = (sel) => document.querySelector(sel);
export const SVGNS = "http://www.w3.org/2000/svg";
export const NAMES = { C: "Chocolate Cruller", S: "Strawberry Sprinkles", H: "Donut Holes", B: "Blueberry Glaze", R: "Cinnamon Roll" };
export const PLACE_RE = /^([A-Z]{4})@(-?\d+),(-?\d+)\/(\d+)(?:=([CSHB]))?$/;

// An SVG element.
export function el(tag, attrs = {}, text) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

// An HTML element with text (as text) and attributes.
export function h(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "className") node.className = v;
    else node.setAttribute(k, v);
  }
  if (text !== undefined) node.textContent = text;
  return node;
}

export function button(text, action, attrs = {}) {
  const b = h("button", { type: "button", ...attrs }, text);
  b.addEventListener("click", action);
  return b;
}

let errorTimer = null;
export function showError(message) {
  const box = $("#error");
  box.textContent = String(message).split("\n")[0];
  box.hidden = false;
  clearTimeout(errorTimer);
  errorTimer = setTimeout(() => { box.hidden = true; }, 4000);
}

// What happened that is no error (a game found, an invitation, a rematch
// offered, a report sent): one line in the notice area (a polite live
// region, never the red error box), kept a little longer.
let noticeTimer = null;
export function showNotice(message) {
  const box = $("#notice");
  box.textContent = String(message).split("\n")[0];
  box.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { box.hidden = true; }, 8000);
}

// Show one of the main panels and hide the others.
export function show(id) {
  $("#loading").hidden = true;
  for (const panel of ["setup", "saved", "rules", "online-links", "play", "community"]) {
    const node = $(`#${panel}`);
    if (node) node.hidden = panel !== id;
  }
}

// A card's face turned clockwise by `rot` degrees.
export function rotate(face, rot) {
  const steps = (rot / 90) % 4;
  return face.slice(4 - steps) + face.slice(0, 4 - steps);
}
