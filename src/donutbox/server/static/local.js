// A game played in this browser (against the AI, or hotseat): intents go
// over HTTP, and the game's WebSocket brings every new state (the AI's
// moves, another tab's).  Both kinds of answer go through the store's
// `offer`, so a late HTTP reply never takes the page back.

import { $, show, showError } from "./dom.js";
import { api, gameSocketUrl } from "./api.js";
import { store, offer, open, set, setQuietly, curtained } from "./store.js";
import { leaveOnline } from "./online.js";
import { fit } from "./board.js";

let socket = null;

// Close the local game's socket, on purpose: its onclose must not reconnect.
export function disconnect() {
  if (!socket) return;
  const old = socket;
  socket = null;
  old.onclose = null;
  old.close();
}

function connect(id) {
  disconnect();
  const mine = socket = new WebSocket(gameSocketUrl(id));
  mine.gameId = id;
  mine.onmessage = (ev) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch (err) { return; }
    if (msg.type === "state") offer(msg.state);
  };
  // A dropped connection (network, server restart) is opened again, unless
  // another game's socket has replaced it meanwhile.
  mine.onclose = () => setTimeout(() => { if (socket === mine && store.gameId === id) connect(id); }, 1500);
}

// Show a stored game.  `reveal`: whoever opened it may see the tray of the
// player to move (false when a refused move makes the page reload the game:
// the turn may have passed to someone else meanwhile).
export async function load(id, reveal = true) {
  const fresh = await api(`/api/games/${encodeURIComponent(id)}`);
  const other = store.gameId !== id || Boolean(store.online);
  leaveOnline();
  open(id);
  // Shown by the offer below (or the set at the end).
  setQuietly({ replay: null });
  if (reveal && (!store.state || fresh.version >= store.state.version)) setQuietly({ revealed: { id, player: fresh.to_move } });
  offer(fresh);
  location.hash = `game=${id}`;
  localStorage.setItem("donutbox.game", id);
  // Keep an open socket to this game (e.g. after a refused move).
  if (!socket || socket.gameId !== id || socket.readyState > WebSocket.OPEN) connect(id);
  show("play"); // first: the counter is fitted to the board's shown size
  if (other) fit();
  set({});
}

let moving = false; // a move is on its way: no preview request after it

export function busy() {
  return moving;
}

export async function sendLocal(move) {
  const s = store.state;
  if (moving) return;
  moving = true;
  $("#extra").replaceChildren();
  try {
    offer(await api(`/api/games/${encodeURIComponent(s.id)}/moves`, { move, version: s.version }));
  } catch (err) {
    showError(err.message);
    await load(s.id, false).catch(() => {});
  } finally {
    moving = false;
  }
}

export async function undo() {
  const s = store.state;
  // Hotseat: a move taken back while the next player's cards are still
  // covered is taken back by the one who made it, and it is their turn
  // again: show their cards.  Otherwise whoever holds the device may not be
  // the player now to move, and the curtain asks.
  const byMover = curtained();
  try {
    const fresh = await api(`/api/games/${encodeURIComponent(s.id)}/undo`, { version: s.version });
    if (byMover && fresh.id === store.gameId) setQuietly({ revealed: { id: fresh.id, player: fresh.to_move } });
    if (!offer(fresh)) set({});
  } catch (err) { showError(err.message); }
}

// What a move would seal, from the server (local games).
export function previewLocal(move) {
  return api(`/api/games/${encodeURIComponent(store.state.id)}/preview?move=${encodeURIComponent(move)}`);
}
