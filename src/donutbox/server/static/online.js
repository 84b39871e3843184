// Online play, the browser's side: the WebSocket client, invite links, and
// the online games this browser remembers.  Plain ES module, no build step.
//
// A link is `/#/online/<game>/<token>`: the token sits in the fragment, which
// a browser never sends to a server; the page sends it once, in the socket's
// first message ("hello").  Every name shown comes from other people: it is
// only ever set with textContent.

const STORE = "donutbox.online";
const LINK_RE = /^#\/online\/([^/]+)\/([^/]+)$/;
const FIRST_DELAY = 500; // ms before the first reconnect; doubles up to MAX_DELAY
const MAX_DELAY = 5000;
const PING_EVERY = 20000; // a connection that misses a pong for this long is dropped
const REQUEST_TIMEOUT = 15000;

export const KINDS = [
  ["human", "A friend (invite link)"],
  ["easy", "AI: easy"],
  ["medium", "AI: medium"],
  ["hard", "AI: hard"],
  ["random", "AI: random"],
];

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
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
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
  sync() { return this.send({ type: "sync" }); }
}

// -- the "Play online" form and the invite links ------------------------------------------

function option(value, text, selected = false) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  o.selected = selected;
  return o;
}

function seatRow(i) {
  const row = document.createElement("div");
  row.className = "seat-row";
  const label = document.createElement("span");
  label.textContent = `Seat ${i + 1}`;
  const kind = document.createElement("select");
  kind.name = "kind";
  kind.setAttribute("aria-label", `seat ${i + 1}: who plays`);
  for (const [value, text] of KINDS) kind.append(option(value, text, value === "human"));
  const name = document.createElement("input");
  name.name = "name";
  name.maxLength = 40;
  name.placeholder = `Player ${i + 1}`;
  name.setAttribute("aria-label", `seat ${i + 1}: name`);
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
export function setupOnlineForm(api, showError, created) {
  const form = document.querySelector("#new-online");
  const seats = form.querySelector("#online-seats");
  const count = form.querySelector("select[name=online_players]");
  const layout = () => {
    const n = Number(count.value);
    while (seats.children.length < n) seats.append(seatRow(seats.children.length));
    while (seats.children.length > n) seats.lastElementChild.remove();
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
      match: f.get("match"),
      layout: f.get("layout"),
      closers: f.get("closers") === "on",
      seats: [...seats.children].map((row) => ({
        kind: row.querySelector("select[name=kind]").value,
        name: row.querySelector("input[name=name]").value,
      })),
      clock: clock.checked ? { minutes: Number(f.get("minutes")), increment: Number(f.get("increment")) } : null,
      seconds: Number(f.get("seconds")),
    };
    try {
      created(await api("/api/online", body));
    } catch (err) { showError(err.message); }
  });
}
