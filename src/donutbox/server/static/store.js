// The page's state, and the one path by which it changes.
//
// A game state comes from many places: the HTTP reply to a move, an undo or
// a load; the game's WebSocket (the AI's moves, another tab's); an online
// game's socket.  They race: the reply to a move can arrive after the
// socket already brought the position after the AI's answer.  Every one of
// them goes through `offer`, which never goes back to an older version of
// the game shown, and ignores states of a game no longer shown.  What the
// player chose on the page (card, rotation, hint, the replay shown) lives
// here too, changed through `set`; every change tells the subscribers (the
// page redraws).

export const store = {
  /** The id of the game shown (or being opened), null for none. */
  gameId: null,
  /** A Cinnamon Roll's lock being chosen: {id, version, moves} (play.js),
   *  drawn again by every redraw of that version (tray.js). */
  pendingLock: null,
  /** The latest state of that game the server sent, null until one came. */
  state: null,
  /** GET /api/meta: rule options, agents, the palette. */
  meta: null,
  /** The tray card picked, and its rotation (degrees). */
  selected: 0,
  rotation: 0,
  /** The last hint: {id, version, move}; shown only at that version. */
  hinted: null,
  /** Hotseat: the player whose tray may be shown ({id, player}). */
  revealed: null,
  /** The replay shown: {ply, of, state}, or null. */
  replay: null,
  /** The online game shown: {client, id, token, seat, arrived, busy}, or null. */
  online: null,
  /** The tutorial shown: {id, step, played}, or null. */
  tutorial: null,
  /** A look at an earlier move of the game in progress: {id, version, ply}, or null. */
  look: null,
  /** The analysis of a finished game: {id, state, done, total, doc}, or null (analysis.js). */
  analysis: null,
};

const listeners = new Set();

// `fn(why, before)` after every change; why is "state" (a new game or a new
// version: `before` is the state it replaced, or null) or "ui".
export function subscribe(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function emit(why, before = null) {
  for (const fn of listeners) fn(why, before);
}

// Show game `id` from now on (its state follows through `offer`).  Opening
// the game already shown keeps its state: a reply to a load must not take
// it back either.
export function open(id) {
  if (store.gameId === id) return;
  store.gameId = id;
  store.state = null;
  store.selected = 0;
  store.rotation = 0;
  store.hinted = null;
  store.replay = null;
}

// Stop showing any game.
export function close() {
  store.gameId = null;
  store.state = null;
  store.replay = null;
  store.hinted = null;
}

const sameTray = (a, b) => a.length === b.length && a.every((f, i) => f === b[i]);

// The one way a state gets in.  Accepted (true): a state of the game shown,
// at the version shown or newer.  Refused (false): an older version, or
// another game's state (a reply that arrived after the player moved on).
export function offer(fresh) {
  if (!fresh || typeof fresh.version !== "number" || fresh.id !== store.gameId) return false;
  const before = store.state;
  if (before && fresh.version < before.version) return false;
  if (before && fresh.version !== before.version) {
    // A new position: what was picked for the old one no longer applies.
    // A newly drawn card starts unturned.
    store.look = null; // a look at an earlier move ends with a new position
    if (!sameTray(before.tray, fresh.tray)) {
      store.selected = 0;
      store.rotation = 0;
    }
  }
  if (store.selected >= fresh.tray.length) store.selected = 0;
  store.state = fresh;
  emit("state", before);
  return true;
}

// Change what the player picked on the page (card, rotation, hint, replay,
// curtain): `changes` holds store fields.
export function set(changes) {
  Object.assign(store, changes);
  emit("ui");
}

// `set` without telling the subscribers, for a change that must not redraw
// the page by itself: one an `offer` or `set` right after announces (no
// redraw of a half-made change), one made while the page is being drawn
// (a redraw there would loop), or one whose caller redraws only the part
// it concerns (a card picked up to drag keeps the drag going).
export function setQuietly(changes) {
  Object.assign(store, changes);
}

// Whether it is the viewer's turn in `s`.
export function myTurn(s) {
  return Boolean(s) && !s.finished && s.player >= 0 && s.to_move === s.player;
}

// Hotseat on one device: between players, the next player's tray (and where
// its cards fit) stays covered until they take the device and say so.
export function curtained() {
  const s = store.state;
  return Boolean(s) && !store.online && !store.replay && s.mode === "hotseat" && !s.finished
    && !(store.tutorial && store.tutorial.id === s.id)
    && !(store.revealed && store.revealed.id === s.id && store.revealed.player === s.to_move);
}

// The look shown at an earlier move (the game in progress), or null.
export function looking() {
  const l = store.look, s = store.state;
  return l && s && l.id === s.id && l.version === s.version ? l : null;
}

export function hintShown() {
  const h = store.hinted, s = store.state;
  return Boolean(h) && Boolean(s) && h.id === s.id && h.version === s.version;
}
