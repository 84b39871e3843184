// Online play, the browser's side: the WebSocket client, invite links, the
// online games this browser remembers, and the online game shown (its
// states go through the store's one update path, as a local game's do).
//
// A link is `/#/online/<game>/<token>`: the token sits in the fragment, which
// a browser never sends to a server; the page sends it once, in the socket's
// first message ("hello").  Every name shown comes from other people: it is
// only ever set with textContent.

import { $, button, h, show, showError } from "./dom.js";
import { store, offer, open, close, myTurn, set, setQuietly } from "./store.js";
import { fit } from "./board.js";
import { agentSelect, agent, ruleFields, ruleValues, sayRules } from "./forms.js";
import { disconnect } from "./local.js";

const STORE = "donutbox.online";
const LINK_RE = /^#\/online\/([^/]+)\/([^/]+)$/;
const FIRST_DELAY = 500; // ms before the first reconnect; doubles up to MAX_DELAY
const MAX_DELAY = 5000;
const PING_EVERY = 20000; // a connection that misses a pong for this long is dropped
const REQUEST_TIMEOUT = 15000;

// -- links ---------------------------------------------------------------------

export function parseLink(hash) {
  const m = LINK_RE.exec(hash || "");
  return m ? { id: decodeURIComponent(m[1]), token: decodeURIComponent(m[2]) } : null;
}

export function linkHash(id, token) {
  return `#/online/${encodeURIComponent(id)}/${encodeURIComponent(token)}`;
}

export function absoluteLink(link) {
  return location.origin + link;
}

// -- the games this browser has links for ----------------------------------------

export function rememberedGames() {
  try {
    const games = JSON.parse(localStorage.getItem(STORE) || "[]");
    return Array.isArray(games) ? games : [];
  } catch (err) {
    return [];
  }
}

// Merge what we know about a game (`links` are {seat, name, token}; seat -1
// is the spectator link) into the stored list, newest first.
export function remember(id, facts) {
  const games = rememberedGames();
  const old = games.find((g) => g.id === id) || { id, links: [] };
  const links = [...old.links];
  for (const link of facts.links || []) {
    const i = links.findIndex((l) => l.seat === link.seat);
    if (i >= 0) links[i] = { ...links[i], ...link };
    else links.push(link);
  }
  links.sort((a, b) => (a.seat < 0) - (b.seat < 0) || a.seat - b.seat);
  const entry = { ...old, ...facts, id, links, updated: Date.now() };
  const rest = games.filter((g) => g.id !== id);
  localStorage.setItem(STORE, JSON.stringify([entry, ...rest].slice(0, 50)));
}

export function forget(id) {
  localStorage.setItem(STORE, JSON.stringify(rememberedGames().filter((g) => g.id !== id)));
}

// -- clocks ----------------------------------------------------------------------

// Milliseconds `seat` has left, counted down locally from when the state
// arrived (`arrived`, a performance.now() time); null when it has no clock.
export function timeLeft(clock, seat, arrived, now = performance.now()) {
  const left = clock.remaining_ms[seat];
  if (left === null || left === undefined) return null;
  return clock.running === seat ? Math.max(0, left - (now - arrived)) : left;
}

export function formatClock(ms) {
  if (ms === null) return "";
  const s = Math.ceil(ms / 1000);
  // A turn-based move has days: shown in days and hours, or hours and minutes.
  if (s >= 86400) return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// A time control in words: "5 min + 3 s" or "3 days a move".
export function clockLabel(c) {
  if (!c) return "no clock";
  if (c.days) return `${c.days} day${c.days === 1 ? "" : "s"} a move`;
  return `${c.minutes} min + ${c.increment} s`;
}

// -- the connection -------------------------------------------------------------------

// One seat's (or a spectator's) connection to one online game.  `on` holds
// the callbacks: welcome(msg), state(state), presence(presence),
// error(reason), connection("connecting" | "connected" | "reconnecting" |
// "failed").  It reconnects by itself, with a backoff, until stopped.
export class OnlineClient {
  constructor(id, token, on) {
    this.id = id;
    this.token = token;
    this.on = on;
    this.ws = null;
    this.welcomed = false;
    this.stopped = false;
    this.delay = FIRST_DELAY;
    this.timer = null;
    this.ref = 0;
    this.pending = new Map();
    this.ping = null; // the ref of a ping not yet answered
    this.pinger = null;
  }

  start() {
    this.stopped = false;
    this.on.connection("connecting");
    this.open();
    this.pinger = setInterval(() => this.keepAlive(), PING_EVERY);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.pinger);
    this.drop();
  }

  get connected() {
    return this.welcomed && this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  // Reconnect at once (the network came back, the tab became visible).
  retryNow() {
    if (this.stopped || this.connected || this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.open();
  }

  open() {
    this.timer = null;
    const proto = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${proto}://${location.host}/api/online/${encodeURIComponent(this.id)}/ws`);
    this.ws = ws;
    this.welcomed = false;
    this.ping = null;
    ws.onopen = () => ws.send(JSON.stringify({ type: "hello", token: this.token }));
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (err) { return; }
      this.receive(msg);
    };
    ws.onclose = (ev) => { if (this.ws === ws) this.lost(ev.code); };
  }

  // Forget the current socket (it is closed, or dead) and what waits on it.
  drop() {
    const ws = this.ws;
    this.ws = null;
    this.welcomed = false;
    if (ws !== null) {
      ws.onclose = null;
      ws.onmessage = null;
      ws.onopen = null;
      if (ws.readyState <= WebSocket.OPEN) ws.close();
    }
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(new Error("the connection was lost: the game as it is now follows when it is back"));
    }
    this.pending.clear();
  }

  lost(code) {
    this.drop();
    if (this.stopped) return;
    if (code === 4404 || code === 4403) {
      this.fail(code === 4404 ? "game: no such online game" : "game: this is not an online game");
      return;
    }
    this.on.connection("reconnecting");
    this.timer = setTimeout(() => this.open(), this.delay);
    this.delay = Math.min(MAX_DELAY, this.delay * 2);
  }

  fail(reason) {
    this.stop();
    this.on.connection("failed");
    this.on.error(reason);
  }

  keepAlive() {
    if (!this.connected) return;
    if (this.ping !== null) { // no pong since the last ping: the line is dead
      this.lost(1006);
      return;
    }
    this.ping = `ping-${++this.ref}`;
    this.ws.send(JSON.stringify({ type: "ping", ref: this.ping }));
  }

  receive(msg) {
    const waiting = msg.ref === undefined || msg.ref === null ? undefined : this.pending.get(msg.ref);
    switch (msg.type) {
      case "welcome":
        this.welcomed = true;
        this.delay = FIRST_DELAY;
        this.on.connection("connected");
        this.on.welcome(msg);
        break;
      case "state":
        this.on.state(msg.state);
        break;
      case "presence":
        this.on.presence(msg.presence);
        break;
      case "pong":
        if (msg.ref === this.ping) this.ping = null;
        break;
      case "ack":
      case "preview":
        if (waiting) this.settle(msg.ref).resolve(msg);
        break;
      case "error":
        if (waiting) this.settle(msg.ref).reject(new Error(msg.reason));
        else if (!this.welcomed && String(msg.reason).startsWith("token:")) this.fail(msg.reason);
        else this.on.error(msg.reason);
        break;
      default:
        break;
    }
  }

  settle(ref) {
    const waiting = this.pending.get(ref);
    this.pending.delete(ref);
    clearTimeout(waiting.timer);
    return waiting;
  }

  send(msg) {
    if (!this.connected) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  // A message answered by an ack or a preview with the same ref.
  request(msg) {
    return new Promise((resolve, reject) => {
      const ref = ++this.ref;
      if (!this.send({ ...msg, ref })) {
        reject(new Error("not connected: wait until the game is back"));
        return;
      }
      const timer = setTimeout(() => {
        if (this.pending.delete(ref)) reject(new Error("no answer from the server"));
      }, REQUEST_TIMEOUT);
      this.pending.set(ref, { resolve, reject, timer });
    });
  }

  move(move, version) { return this.request({ type: "move", move, version }); }
  preview(move) { return this.request({ type: "preview", move }); }
  takeback(version) { return this.send({ type: "takeback", version }); }
  answer(accept, version) { return this.send({ type: "answer", accept, version }); }
  resign(version) { return this.request({ type: "resign", version }); }
  sync() { return this.send({ type: "sync" }); }
}

// -- the "Play online" form and the invite links ------------------------------------------

function seatRow(i) {
  const row = h("div", { className: "seat-row" });
  const label = h("span", {}, `Seat ${i + 1}`);
  const kind = h("select", { name: "kind", "aria-label": `seat ${i + 1}: who plays` });
  agentSelect(kind, null, { before: [["human", "A friend (invite link)", ""]], chosen: "human" });
  const name = h("input", { name: "name", placeholder: `Player ${i + 1}`, "aria-label": `seat ${i + 1}: name` });
  name.maxLength = (store.meta && store.meta.max_name_length) || 40;
  row.append(label, kind, name);
  return row;
}

async function copy(text, input, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (err) { // no clipboard API (or no permission): select it for Ctrl+C
    input.select();
    document.execCommand("copy");
  }
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, 2000);
}

function linkItem(label, link, play) {
  const li = document.createElement("li");
  const who = document.createElement("span");
  who.className = "who";
  who.textContent = label;
  const input = document.createElement("input");
  input.readOnly = true;
  input.value = absoluteLink(link);
  input.setAttribute("aria-label", `link: ${label}`);
  input.addEventListener("focus", () => input.select());
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = "Copy";
  b.addEventListener("click", () => copy(input.value, input, b));
  li.append(who, input, b);
  if (play) li.append(play);
  return li;
}

// Show the links of a game just created.  `open(id, token)` opens one here.
export function showLinks(created, open) {
  const ul = document.querySelector("#link-list");
  ul.replaceChildren();
  for (const seat of created.seats) {
    if (!seat.link) {
      const li = document.createElement("li");
      li.textContent = `Seat ${seat.seat + 1}: ${seat.name} (AI: ${seat.kind})`;
      ul.append(li);
      continue;
    }
    const play = document.createElement("button");
    play.type = "button";
    play.className = "play-seat";
    play.textContent = `Play as seat ${seat.seat + 1}`;
    play.addEventListener("click", () => open(created.id, seat.token));
    ul.append(linkItem(`Seat ${seat.seat + 1}: ${seat.name}`, seat.link, play));
  }
  const watch = document.createElement("button");
  watch.type = "button";
  watch.textContent = "Watch";
  watch.addEventListener("click", () => open(created.id, created.spectator.token));
  ul.append(linkItem("Spectators", created.spectator.link, watch));
}

// Wire the "Play online" form.  `api(path, body)` posts; `created(game)` is
// called with the server's answer.
export function setupOnlineForm(api, created) {
  const form = document.querySelector("#new-online");
  ruleFields(form.querySelector(".rule-fields"), "online");
  sayRules(form);
  const seats = form.querySelector("#online-seats");
  const count = form.querySelector("select[name=online_players]");
  const seconds = form.querySelector(".seconds");
  // The thinking time matters only when a seat's AI takes a time budget.
  const timed = () => {
    seconds.hidden = ![...seats.querySelectorAll("select[name=kind]")].some((s) => agent(s.value) && agent(s.value).timed);
  };
  const layout = () => {
    const n = Number(count.value);
    while (seats.children.length < n) {
      const row = seatRow(seats.children.length);
      row.querySelector("select").addEventListener("change", timed);
      seats.append(row);
    }
    while (seats.children.length > n) seats.lastElementChild.remove();
    timed();
  };
  count.addEventListener("change", layout);
  layout();
  const clock = form.querySelector("input[name=clock]");
  const clockFields = form.querySelector("#clock-fields");
  const toggle = () => { clockFields.disabled = !clock.checked; };
  clock.addEventListener("change", toggle);
  toggle();
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const body = {
      ...ruleValues(form),
      seats: [...seats.children].map((row) => ({
        kind: row.querySelector("select[name=kind]").value,
        name: row.querySelector("input[name=name]").value,
      })),
      clock: !clock.checked ? null : f.get("days") ? { days: Number(f.get("days")) } : { minutes: Number(f.get("minutes")), increment: Number(f.get("increment")) },
      takebacks: form.querySelector("input[name=takebacks]").checked,
      seconds: Number(f.get("seconds")),
    };
    try {
      created(await api("/api/online", body));
    } catch (err) { showError(err.message); }
  });
}

// -- the online game shown ------------------------------------------------------------

// A move over the game's socket, made on the version shown.
export async function sendOnline(move) {
  const online = store.online;
  if (online.busy) return;
  online.busy = true;
  $("#extra").replaceChildren();
  try {
    await online.client.move(move, store.state.version);
  } catch (err) {
    showError(err.message);
    online.client.sync();
  } finally {
    online.busy = false;
  }
}

function onlineState(fresh) {
  const online = store.online;
  const wasMyTurn = myTurn(store.state);
  const first = !store.state;
  const arrived = online.arrived;
  online.arrived = performance.now(); // the clocks count down from here
  if (!offer(fresh)) { online.arrived = arrived; return; }
  if (first) { fit(); set({}); }
  const s = store.state;
  if (online.seat !== null) {
    remember(online.id, { title: s.title, players: s.players, finished: s.finished, moves: s.history.length });
  }
  if (!wasMyTurn && myTurn(s)) notifyTurn();
}

function notifyTurn() {
  const s = store.state;
  if (!document.hidden || !("Notification" in window) || Notification.permission !== "granted") return;
  try {
    const n = new Notification("donutbox: your turn", { body: `${s.players[s.player]}, it is your move.`, tag: `donutbox-${s.id}` });
    n.addEventListener("click", () => { window.focus(); n.close(); });
  } catch (err) { /* some browsers only notify from a service worker */ }
}

function connection(status) {
  const c = $("#conn");
  c.hidden = status === "connected";
  c.className = status;
  c.textContent = { connecting: "Connecting…", reconnecting: "Reconnecting…", failed: "Not connected" }[status] || "";
}

// Open an online game with a link's token (the page's hash holds the link).
export function openOnline(id, token) {
  const now = store.online;
  if (now && now.id === id && now.token === token) { show("play"); return; }
  leaveOnline();
  disconnect();
  close();
  open(id);
  const hash = linkHash(id, token);
  if (location.hash !== hash) location.hash = hash;
  const mine = { id, token, seat: null, arrived: performance.now(), busy: false, client: null };
  setQuietly({ online: mine }); // the page is cleared below; the first state draws it
  const current = () => store.online === mine;
  mine.client = new OnlineClient(id, token, {
    welcome: (msg) => {
      if (!current()) return;
      mine.seat = msg.seat;
      remember(id, { links: [{ seat: msg.seat, token }] });
    },
    state: (s) => { if (current()) onlineState(s); },
    presence: (p) => {
      if (current() && store.state) offer({ ...store.state, presence: p });
    },
    error: (reason) => {
      if (!current()) return;
      if (mine.client.stopped && !store.state) noSuchGame(); // the link opens no game
      else showError(reason);
    },
    connection: (status) => { if (current()) connection(status); },
  });
  $("#status").textContent = "Connecting…";
  for (const sel of ["#board", "#tray", "#scores", "#log", "#takeback", "#open-boxes", "#extra", "#boxes"]) $(sel).replaceChildren();
  // Nothing to act on until the game's first state (drawn then).
  for (const sel of ["#btn-rotate", "#btn-undo", "#btn-hint"]) $(sel).hidden = true;
  $("#replay").hidden = true;
  $("#summary").hidden = true;
  $("#online-bar").hidden = false;
  $("#role").textContent = "";
  show("play");
  mine.client.start();
}

// A link that opens no game (a wrong id or token): one line, and nothing
// on the page to act on.
function noSuchGame() {
  connection("connected"); // no "Not connected" beside it: one line says it
  $("#status").textContent = "No such game: the link is wrong, or the game was deleted.";
  $("#role").textContent = "";
  for (const sel of ["#btn-rotate", "#btn-undo", "#btn-hint", "#btn-notify"]) $(sel).hidden = true;
}

export function leaveOnline() {
  const online = store.online;
  if (!online) return;
  online.client.stop();
  setQuietly({ online: null }); // every caller shows another game next
  connection("connected");
  $("#online-bar").hidden = true;
  $("#watchers").hidden = true;
}

export function onlineCreated(game) {
  const players = game.seats.map((s) => s.name);
  remember(game.id, {
    title: "online", players, finished: false, moves: 0,
    links: [
      ...game.seats.filter((s) => s.token).map((s) => ({ seat: s.seat, name: s.name, token: s.token })),
      { seat: -1, name: "Spectator", token: game.spectator.token },
    ],
  });
  showLinks(game, openOnline);
  show("online-links");
}

// Resign: a button, then an explicit confirmation in place (a game lost by
// a slip of the finger cannot be taken back).  The confirmation stays open
// across redraws until answered; any answer closes it.
let confirmingResign = null;
function resignButton(box, online, s) {
  const game = s.id;
  if (confirmingResign !== game) {
    box.append(button("Resign", () => { confirmingResign = game; drawOnline(); $("#btn-resign-yes")?.focus(); }));
    return;
  }
  const rated = s.rated ? " This rated game counts as lost." : "";
  box.append(h("span", {}, `Resign this game? You drop out and rank last.${rated} `));
  const yes = button("Yes, resign", async () => {
    confirmingResign = null;
    try {
      await online.client.resign(store.state.version);
    } catch (err) {
      showError(err.message);
    }
    drawOnline();
  });
  yes.id = "btn-resign-yes";
  box.append(yes, button("Cancel", () => { confirmingResign = null; drawOnline(); }));
}

// Sentences for what forfeits and flags did in `s`, from the viewer's side.
export function forfeitNotes(s) {
  const me = s.player;
  const who = (p) => (p === me ? "You" : s.players[p]);
  const out = [];
  for (const f of s.forfeits || []) {
    const gone = f.how === "time" ? `${p2(who(f.seat))} clock ran out: ${f.seat === me ? "you lose" : "they lose"} on time` : `${who(f.seat)} resigned`;
    const rest = s.finished ? "." : `; the server's AI plays ${f.seat === me ? "your" : "their"} cards from now on.`;
    out.push(`${gone}${rest}`);
  }
  const forfeited = new Set((s.forfeits || []).map((f) => f.seat));
  if (s.clock && !s.rated) {
    s.clock.flagged.forEach((flag, p) => {
      if (!flag || forfeited.has(p)) return;
      // A turn-based clock (days per move) has no increment: a missed
      // deadline starts the next player's full time.
      if (s.clock.days) out.push(p === me
        ? "You missed a deadline: the server's AI made that move for you; you play on."
        : `${s.players[p]} missed a deadline: the server's AI made that move for them; they play on.`);
      else out.push(p === me
        ? "Your clock ran out: the server's AI made that move for you; you play on with the increment."
        : `${p2(s.players[p])} clock ran out: the server's AI made that move for them; they play on with the increment.`);
    });
  }
  return out;
}

// "You" -> "Your", "Ann" -> "Ann's".
function p2(name) {
  return name === "You" ? "Your" : `${name}'s`;
}

// Whether `seat` has a move that a takeback could take back (the server
// counts plies in turn order: ply % players is the seat that made it).
function hasMove(s, seat) {
  return seat >= 0 && s.history.length > seat;
}

export function drawOnline() {
  const online = store.online;
  const bar = $("#online-bar");
  bar.hidden = !online;
  if (!online) return;
  const s = store.state;
  const me = s.player;
  const watching = me < 0;
  $("#role").textContent = watching ? "Spectating" : `Seat ${me + 1}: ${s.players[me]}`;
  const notify = $("#btn-notify");
  notify.hidden = watching || s.finished || !("Notification" in window) || Notification.permission !== "default";
  const box = $("#takeback");
  box.replaceChildren();
  const t = s.takeback;
  const say = (text, className = "") => box.append(h("span", { className }, text));
  // Who resigned or ran out of time, said on every screen (the player's
  // own, the others', a spectator's), during the game and after it.
  for (const line of forfeitNotes(s)) say(`${line} `, "forfeit-note");
  if (watching || s.finished) return;
  if (!(s.forfeits || []).some((f) => f.seat === me)) resignButton(box, online, s);
  if (t === null || t === undefined) {
    // Offered only in a game made with takebacks allowed (`takebacks_on`).
    if (hasMove(s, me) && s.takebacks_on !== false) box.append(button("Take back", () => online.client.takeback(s.version)));
  } else if (t.by === me) {
    say("You asked to take back your last move: waiting for an answer…");
  } else if (!t.agreed.includes(me)) {
    say(`${s.players[t.by]} asks to take back their last move. `);
    box.append(button("Accept", () => online.client.answer(true, s.version)));
    box.append(button("Decline", () => online.client.answer(false, s.version)));
  } else {
    say(`Waiting for the others to answer ${s.players[t.by]}'s takeback…`);
  }
}
