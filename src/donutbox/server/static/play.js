// What the player does on the counter and the tray: pick, turn, preview,
// place (choosing a Cinnamon Roll's lock), box a run, ask for a hint.
// Every state that comes back goes through the store's `offer`.

import { $, NAMES, PLACE_RE, button, h, showError } from "./dom.js";
import { api } from "./api.js";
import { store, set, setQuietly } from "./store.js";
import { phantom } from "./board.js";
import { lockButtons } from "./tray.js";
import { sendOnline } from "./online.js";
import { busy, previewLocal, sendLocal } from "./local.js";
import { refused } from "./tutorial.js";

let previewTimer = null;

export function send(move, force = false) {
  if (!force && refused(move)) return undefined;
  clearTimeout(previewTimer); // no preview of a move already made
  previewTimer = null;
  $("#preview").textContent = "";
  return store.online ? sendOnline(move) : sendLocal(move);
}

function moving() {
  return busy() || Boolean(store.online && store.online.busy);
}

// Show the card where it would go, and (asked of the server once the
// pointer rests a moment: online, every message counts against the
// connection's rate limit) what it would seal for whom.
export function hover(face, x, y, moves, rest = 120) {
  if (moving()) return;
  phantom(face, x, y);
  const base = `${face} at ${x},${y}, turned ${store.rotation}°` + (moves.length > 1 ? " (choose the Cinnamon Roll's lock)" : "");
  $("#preview").textContent = base;
  const { id, version } = store.state;
  const current = () => store.state && store.state.id === id && store.state.version === version && !moving();
  clearTimeout(previewTimer);
  previewTimer = setTimeout(async () => {
    previewTimer = null;
    if (!current()) return;
    try {
      const p = store.online ? await store.online.client.preview(moves[0]) : await previewLocal(moves[0]);
      if (!current() || $("#preview").textContent !== base) return;
      const s = store.state;
      const to = (d) => (d.to.length ? d.to.map((i) => s.players[i]).join(" and ") : "nobody");
      const seals = p.deliveries.map((d) => `seals ${d.size} donuts: ${d.points} points to ${to(d)}`);
      $("#preview").textContent = base + (seals.length ? " — " + seals.join("; ") : " — seals nothing");
    } catch (err) { /* the state moved on: nothing to preview */ }
  }, rest);
}

// On a touch screen a tap first previews (what it seals, for whom) and asks
// to confirm; a second tap on the same place, or the button, places it.
const coarse = () => matchMedia("(pointer: coarse)").matches;
let tapped = null; // {id, version, key} of the place tapped once

// Play a place, or first ask which flavour the Cinnamon Roll locks to.
// `at` ({face, x, y}): where it was tapped or clicked.
export function choose(moves, at = null) {
  const s = store.state;
  if (at && coarse()) {
    const key = `${at.face}/${store.rotation}@${at.x},${at.y}`;
    if (!tapped || tapped.id !== s.id || tapped.version !== s.version || tapped.key !== key) {
      tapped = { id: s.id, version: s.version, key };
      hover(at.face, at.x, at.y, moves, 0);
      const ok = button(moves.length > 1 ? "Place here (then choose the lock)" : "Place here", () => { tapped = null; choose(moves); }, { className: "confirm" });
      $("#extra").replaceChildren(ok);
      return undefined;
    }
  }
  tapped = null;
  setQuietly({ pendingLock: null });
  if (moves.length === 1) return send(moves[0]);
  // Kept in the store: a redraw of the same version (a clock, a reader
  // arriving) draws the choice again instead of dropping it.
  setQuietly({ pendingLock: { id: s.id, version: s.version, moves } });
  const extra = $("#extra");
  extra.replaceChildren();
  lockButtons(extra, moves, send);
  extra.querySelector("button").focus();
}

export function selectRun(box, mine) {
  const s = store.state;
  const held = box.held.map((n, p) => `${s.players[p]} ${n}`).join(", ");
  const neutral = box.size - box.held.reduce((a, b) => a + b, 0);
  const out = $("#preview");
  out.replaceChildren(h("span", {}, `Box of ${box.size} donuts worth ${box.points} points; held: ${held}${neutral ? `, start card ${neutral}` : ""}. `));
  if (mine) out.append(button(`Box it for ${box.points} points`, () => send(`box@${box.x},${box.y}`)));
}

export function turn() {
  set({ rotation: (store.rotation + 90) % 360 });
}

export function pick(i) {
  set({ selected: i });
}

// Ask the server's strongest agent (searching from this player's view only)
// for a move, then show it: the card picked and turned, its place marked.
export async function askHint() {
  const { id, version } = store.state;
  const b = $("#btn-hint");
  b.disabled = true;
  $("#preview").textContent = "Looking for a good move…";
  try {
    const r = await api(`/api/games/${encodeURIComponent(id)}/hint`, { version });
    // A hint is for the position it was asked for: dropped if the game moved on.
    if (store.state && store.state.id === id && store.state.version === version) showHint(r.move);
  } catch (err) {
    showError(err.message);
  } finally {
    b.disabled = false;
  }
}

function showHint(move) {
  const s = store.state;
  const p = PLACE_RE.exec(move);
  const changes = { hinted: { id: s.id, version: s.version, move } };
  let text;
  if (p) {
    const i = s.tray.indexOf(p[1]);
    changes.selected = i >= 0 ? i : store.selected;
    changes.rotation = Number(p[4]);
    text = `Hint: card ${changes.selected + 1} (${p[1]}) turned ${changes.rotation}° at ${p[2]},${p[3]}`
      + (p[5] ? `, the Cinnamon Roll locked to ${NAMES[p[5]]}` : "") + ": marked on the counter.";
  } else if (move.startsWith("box@")) {
    const box = s.boxes.find((b) => `box@${b.x},${b.y}` === move);
    text = `Hint: box the run at ${move.slice(4)}` + (box ? ` (${box.size} donuts, ${box.points} points)` : "") + ".";
  } else if (move === "pass") {
    text = "Hint: pass.";
  } else {
    text = `Hint: swap ${move.slice(5)}.`;
  }
  set(changes);
  if (p) phantom(p[1], Number(p[2]), Number(p[3]));
  $("#preview").textContent = text;
}
