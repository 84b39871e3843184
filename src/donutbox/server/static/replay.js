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
  set({ replay: null });
}

export function drawReplay() {
  const r = store.replay;
  $("#replay").hidden = !r;
  if (r) $("#rp-ply").textContent = `move ${r.ply} of ${r.of}`;
}

export function setupReplay() {
  $("#btn-replay").addEventListener("click", () => showReplay(0));
  $("#rp-prev").addEventListener("click", () => store.replay && store.replay.ply > 0 && showReplay(store.replay.ply - 1));
  $("#rp-next").addEventListener("click", () => store.replay && store.replay.ply < store.replay.of && showReplay(store.replay.ply + 1));
  $("#rp-close").addEventListener("click", closeReplay);
}
