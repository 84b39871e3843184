// The replay viewer of a finished game: the position after any move.

import { $, showError } from "./dom.js";
import { store, set } from "./store.js";
import { api } from "./api.js";

let asked = 0; // the latest request: an older answer arriving late is dropped

export async function showReplay(ply) {
  const s = store.state;
  if (!s) return;
  const mine = ++asked;
  const token = store.online ? store.online.token : undefined;
  try {
    const r = await api(`/api/games/${encodeURIComponent(s.id)}/replay/${ply}`, undefined, token);
    if (mine !== asked || !store.state || store.state.id !== s.id) return;
    set({ replay: r });
  } catch (err) { showError(err.message); }
}

export function closeReplay() {
  asked++;
  const link = plyInLink();
  if (link && store.state && link.id === store.state.id) history.replaceState(null, "", `#game=${encodeURIComponent(link.id)}`);
  set({ replay: null });
}

export function drawReplay() {
  const r = store.replay;
  $("#replay").hidden = !r;
  if (!r) return;
  $("#rp-ply").textContent = `move ${r.ply} of ${r.of}`;
  const slider = $("#rp-slider");
  slider.max = String(r.of);
  slider.value = String(r.ply);
  slider.setAttribute("aria-valuetext", `move ${r.ply} of ${r.of}`);
  $("#rp-prev").disabled = r.ply <= 0;
  $("#rp-next").disabled = r.ply >= r.of;
  // Playing it out: a local game, from a position with a move to make.
  $("#rp-play-out").hidden = Boolean(store.online) || r.ply >= r.of;
  // A link to this move (a local game's: an online game's address is its
  // invite link, a secret of its own); the address bar follows the move.
  const link = $("#rp-link");
  const s = store.state;
  link.hidden = Boolean(store.online) || !s;
  if (!link.hidden) {
    link.href = `#game=${encodeURIComponent(s.id)}&ply=${r.ply}`;
    if (new URLSearchParams(location.hash.slice(1)).get("game") === s.id) history.replaceState(null, "", link.href);
  }
}

// The move a link asks for (`#game=ID&ply=N`), or null.
export function plyInLink(hash = location.hash) {
  const q = new URLSearchParams(hash.slice(1));
  const ply = q.get("ply");
  return ply !== null && /^\d{1,4}$/.test(ply) ? { id: q.get("game"), ply: Number(ply) } : null;
}

// Step the replay by `delta` moves (the arrow keys).
export function step(delta) {
  const r = store.replay;
  if (!r) return false;
  const ply = Math.max(0, Math.min(r.of, r.ply + delta));
  if (ply !== r.ply) showReplay(ply);
  return true;
}

export function setupReplay() {
  $("#btn-replay").addEventListener("click", () => showReplay(0));
  $("#rp-prev").addEventListener("click", () => store.replay && store.replay.ply > 0 && showReplay(store.replay.ply - 1));
  $("#rp-next").addEventListener("click", () => store.replay && store.replay.ply < store.replay.of && showReplay(store.replay.ply + 1));
  $("#rp-close").addEventListener("click", closeReplay);
  $("#rp-slider").addEventListener("input", (e) => showReplay(Number(e.target.value)));
}
