// Sound, off by default (one toggle, remembered in this browser): a short
// rising pair of notes when it becomes your turn, a bright chord when a box
// is sealed or boxed.  Made with the Web Audio API: no sound files.

import { $ } from "./dom.js";
import { myTurn } from "./store.js";

const KEY = "donutbox.sound";
let ctx = null;

export function soundOn() {
  try { return localStorage.getItem(KEY) === "on"; } catch (err) { return false; }
}

function drawToggle() {
  const b = $("#btn-sound");
  const on = soundOn();
  b.setAttribute("aria-pressed", on ? "true" : "false");
  b.textContent = on ? "♪ Sound on" : "♪ Sound off";
  b.title = on ? "Sound is on: your turn, a seal" : "Sound is off";
}

function notes(freqs, { gap = 0.12, length = 0.18, volume = 0.15, type = "sine" } = {}) {
  if (!soundOn()) return;
  try {
    ctx = ctx || new AudioContext();
    if (ctx.state === "suspended") ctx.resume();
    const t0 = ctx.currentTime + 0.02;
    freqs.forEach((f, i) => {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.type = type;
      osc.frequency.value = f;
      const t = t0 + i * gap;
      gain.gain.setValueAtTime(0.0001, t);
      gain.gain.exponentialRampToValueAtTime(volume, t + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, t + length);
      osc.connect(gain).connect(ctx.destination);
      osc.start(t);
      osc.stop(t + length + 0.05);
    });
  } catch (err) { /* no audio here */ }
}

export const yourTurn = () => notes([523.25, 783.99]);
// A game found (the lobby took you to it) or a rematch offered: three
// rising notes, unlike your turn's two.
export const gameFound = () => notes([392.0, 523.25, 659.25], { gap: 0.1, length: 0.22 });
export const sealed = () => notes([659.25, 830.61, 987.77], { gap: 0.05, length: 0.35, volume: 0.12, type: "triangle" });

// After a new state: your turn now (and not before), or a delivery made by
// the moves since the last state seen.
export function soundFor(before, s) {
  if (!before || before.id !== s.id || s.version <= before.version) return;
  const newer = s.deliveries.filter((d) => d.ply !== null && d.ply >= before.history.length);
  if (newer.length) sealed();
  if (myTurn(s) && !myTurn(before)) setTimeout(yourTurn, newer.length ? 450 : 0);
}

export function setupSound() {
  $("#btn-sound").addEventListener("click", () => {
    try { localStorage.setItem(KEY, soundOn() ? "off" : "on"); } catch (err) { /* private mode */ }
    drawToggle();
    if (soundOn()) yourTurn(); // what it sounds like (and the click lets audio start)
  });
  drawToggle();
}
