// The tutorial: a prepared deal (tutorial/deal.json, imported as a game of
// this browser's) played on the real board, one lesson at a time.  The
// cards are chosen so that every lesson happens: placing and matching, a
// box and who leads it, the Cinnamon Roll's lock, sealing, the Final Lap,
// Box it and the end scoring.  The tutor's two moves are played by the
// page; on your turns only the lesson's move is offered.

import { $, NAMES, showError } from "./dom.js";
import { api } from "./api.js";
import { store, set, setQuietly } from "./store.js";

// Each lesson applies at a number of moves played (`ply`): `move` is what
// you are asked to do; `auto`, the tutor's move (played after a pause);
// otherwise a Next button goes on.
export const LESSONS = [
  { ply: 0, title: "Welcome to donutbox", text: "You and the tutor lay square cards of four donuts on the counter. The grey dashed card in the middle is the start card: it belongs to nobody. Your four cards are in your tray below the counter; the tutor's are hidden from you, as every player's are." },
  { ply: 0, title: "Placing and matching", move: "BBSC@2,0/90", text: "A card goes edge to edge beside the cards already down, and at least one of its donuts must touch a donut of the same flavour. Pick your first card (1), turn it once (⟳ Rotate or R), and place it on the place marked in orange, right of the start card: its Chocolate Cruller touches Chocolate, its Strawberry touches Strawberry." },
  { ply: 1, title: "The tutor's turn", auto: "HHBB@0,2/0", text: "Now the tutor plays. Watch the counter: the card the tutor places is outlined in the tutor's colour, and the line above the counter says what happened." },
  { ply: 2, title: "Runs, boxes and who leads them", text: "Donuts of one flavour that touch form a run; a run of 3 or more is a box. The tutor's Donut Holes joined the start card's into a box of 3: its badge (top right of its first donut) shows its value (1 point a donut) and the mark of who holds most of it, or = when two players hold the same number: a tied box scores its full value to each of them. Your own cards carry your mark in each corner, the tutor's cards the tutor's mark: owners are told apart by shape as well as colour." },
  { ply: 2, title: "The Cinnamon Roll lock and sealing", move: "RBCC@2,2/0=S", text: "Your card with the Cinnamon Roll is wild: when you place it, you lock the roll to one flavour it touches, for good, and a box with a roll is worth double. Pick card 1, place it below your first card (the orange place), and lock the roll to Strawberry (S): the Strawberry run then has no empty cell beside it, so it is sealed and scores at once for whoever holds most of it." },
  { ply: 3, title: "Sealed: 6 points", text: "The sealed box of 3 Strawberry, doubled by the roll, scored 6 points to you (you hold 2 of its donuts, the start card 1). Sealed donuts are faded: they are delivered and no longer match. Your three Blueberry Glaze on the right are an open box of 3, all yours." },
  { ply: 3, title: "The tutor's last card", auto: "BBHB@-2,0/0", text: "The tutor places its last card from its pile. When a player's draw leaves their pile empty, the Final Lap begins: every other player gets exactly one more turn." },
  { ply: 4, title: "Final Lap: Box it", move: "box@3,0", text: "The banner says Final Lap: this is your last turn. Instead of placing a card you may Box it: deliver an open box of which you hold at least half, for its value, now. Box your Blueberry run for 3 points: press the Box it button, or click the run on the counter." },
  { ply: 5, title: "The end scoring", text: "The game is over. Every box still open scored its full value to whoever held most of it: the tutor's Donut Holes went to the tutor, the Chocolate box (start card 2, you 1) to you. The end screen splits each player's points into sealed, boxed and end scoring. Two more rules: when no card of your tray fits anywhere, you must swap one (it goes under your pile and you draw the top card), and with an empty pile you pass; and a tie on points goes to whoever delivered more boxes. You have learned the whole game: press New game to play a real one." },
];

const KEY = "donutbox.tutorial";

export function tutorialOn() {
  const t = store.tutorial, s = store.state;
  return Boolean(t && s && t.id === s.id);
}

export function lesson() {
  return tutorialOn() ? LESSONS[store.tutorial.step] : null;
}

// The moves the lesson allows (all of the lesson's placement, every lock
// included, so the lock is still a choice); null outside the tutorial.
export function allowed(s) {
  if (!tutorialOn()) return null;
  const l = lesson();
  if (!l || !l.move || s.history.length !== l.ply) return [];
  const base = l.move.split("=")[0];
  return s.legal.filter((m) => m.split("=")[0] === base);
}

// A move the lesson does not ask for: said why, not sent.
export function refused(move) {
  const l = lesson();
  if (!l || move === l.move) return false;
  if (!l.move) { showError("Read the lesson, then press Next."); return true; }
  const lock = l.move.split("=")[1];
  const text = lock && move.split("=")[0] === l.move.split("=")[0]
    ? `Lock it to ${NAMES[lock]} this time: that seals the run.`
    : "The lesson asks for the marked move.";
  showError(text);
  return true;
}

export async function startTutorial(load) {
  try {
    const record = await api("/static/tutorial/deal.json");
    const game = await api("/api/games/import", record);
    setQuietly({ tutorial: { id: game.id, step: 0, played: -1 } }); // shown by the load
    try {
      localStorage.setItem(KEY, game.id);
      // Every tutorial game of this browser (the last 50): Saved games leaves them out.
      const all = JSON.parse(localStorage.getItem(`${KEY}s`) || "[]");
      localStorage.setItem(`${KEY}s`, JSON.stringify([...all, game.id].slice(-50)));
    } catch (err) { /* private mode */ }
    await load(game.id);
  } catch (err) { showError(`tutorial: ${err.message}`); }
}

// Reopened after a reload: the lesson follows from the moves played.
export function resumeTutorial(id) {
  let saved = null;
  try { saved = localStorage.getItem(KEY); } catch (err) { /* private mode */ }
  // Shown by the load that follows.
  if (saved === id && !(store.tutorial && store.tutorial.id === id)) setQuietly({ tutorial: { id, step: 0, played: -1 } });
}

export function leaveTutorial() {
  try { localStorage.removeItem(KEY); } catch (err) { /* private mode */ }
  set({ tutorial: null });
}

// After every change: move on to the lesson of the moves played, play the
// tutor's move after a pause, and draw the lesson.  Called while the page
// is drawn, so its changes to the store are quiet (a redraw would loop).
export function followTutorial(send) {
  const box = $("#tutorial");
  $("#play").classList.toggle("tutoring", tutorialOn());
  if (!tutorialOn()) { box.hidden = true; return; }
  const s = store.state;
  const n = s.history.length;
  let step = store.tutorial.step;
  while (step + 1 < LESSONS.length && LESSONS[step].ply < n) step++;
  if (step !== store.tutorial.step) setQuietly({ tutorial: { ...store.tutorial, step } });
  const t = store.tutorial;
  const l = LESSONS[t.step];
  box.hidden = false;
  $("#tut-step").textContent = `Lesson ${t.step + 1} of ${LESSONS.length}`;
  $("#tut-title").textContent = l.title;
  $("#tut-text").textContent = l.text;
  const next = $("#tut-next");
  next.hidden = Boolean(l.move || l.auto) || t.step + 1 >= LESSONS.length;
  if (l.move && n === l.ply) setQuietly({ hinted: { id: s.id, version: s.version, move: l.move } });
  if (l.auto && n === l.ply && t.played !== n && !s.finished) {
    setQuietly({ tutorial: { ...t, played: n } });
    const version = s.version;
    setTimeout(() => {
      const now = store.state;
      if (tutorialOn() && now.version === version) send(l.auto, true);
    }, 1800);
  }
}

export function setupTutorial(load) {
  $("#btn-tutorial").addEventListener("click", () => startTutorial(load));
  $("#btn-learn").addEventListener("click", () => startTutorial(load)); // the first screen's
  $("#tut-next").addEventListener("click", () => {
    const t = store.tutorial;
    if (t && t.step + 1 < LESSONS.length) set({ tutorial: { ...t, step: t.step + 1 } });
    $("#tut-title").focus();
  });
  $("#tut-leave").addEventListener("click", leaveTutorial);
}
