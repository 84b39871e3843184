// donutbox browser client: plain ES module, no build step.
// The server is the authority: this page sends intents and draws the state
// it is sent (which only ever holds this player's own tray).  Online play
// (invite links, one WebSocket per seat or spectator) is in online.js.
//
// Player names are free text typed by other people: they are only ever set
// with textContent, never as HTML.

import {
  OnlineClient, parseLink, linkHash, remember, rememberedGames, forget,
  setupOnlineForm, showLinks, timeLeft, formatClock,
} from "./online.js";

const $ = (sel) => document.querySelector(sel);
const SVGNS = "http://www.w3.org/2000/svg";
const NAMES = { C: "Chocolate Cruller", S: "Strawberry Sprinkles", H: "Donut Holes", B: "Blueberry Glaze", R: "Cinnamon Roll" };
const OWNERS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];
const PLACE_RE = /^([A-Z]{4})@(-?\d+),(-?\d+)\/(\d+)(?:=([CSHB]))?$/;

let state = null;
let selected = 0;
let rotation = 0;
let socket = null;
let view = { x: -6, y: -6, w: 14, h: 14 };
let replay = null;
// The online game shown, if any: {client, id, token, seat (null until the
// server's welcome; -1 for a spectator), arrived (when the state came), busy}.
let online = null;
let previewTimer = null;
// The last hint ({id, version, move}): drawn on the counter while the position
// it was asked for is shown.
let hinted = null;
// Hotseat on one device: the player whose tray may be shown ({id, player}).
// When the turn passes to another player, their tray (and where its cards
// fit) stays covered until they take the device and say so.
let revealed = null;

function el(tag, attrs = {}, text) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function showError(message) {
  const box = $("#error");
  box.textContent = String(message).split("\n")[0];
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { box.hidden = true; }, 4000);
}

async function api(path, body, headers = {}) {
  const opts = body === undefined
    ? { headers }
    : { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  const data = await r.json().catch(() => ({}));
  if (!r.ok) {
    const detail = Array.isArray(data.detail) ? data.detail.map((d) => d.msg).join("; ") : data.detail;
    throw new Error(detail || `HTTP ${r.status}`);
  }
  return data;
}

function rotate(face, rot) {
  const steps = (rot / 90) % 4;
  return face.slice(4 - steps) + face.slice(0, 4 - steps);
}

// One donut, drawn by the server's shared drawing code (the same look as
// the print-and-play PDF and `donutbox render`); its title names it.
function donut(x, y, flavour, roll, extra = {}) {
  const g = el("g", extra);
  const key = roll ? (flavour === "R" ? "R" : "R" + flavour) : flavour;
  g.append(el("image", { href: `/api/look/donut/${key}.svg`, x, y, width: 1, height: 1 }));
  g.append(el("title", {}, (roll && flavour !== "R" ? "Cinnamon Roll locked to " : "") + (NAMES[flavour] || flavour)));
  return g;
}

function placements() {
  const out = new Map();
  if (!state) return out;
  for (const m of state.legal) {
    const p = PLACE_RE.exec(m);
    if (!p) continue;
    const key = `${p[1]}/${p[4]}`;
    if (!out.has(key)) out.set(key, new Map());
    const at = `${p[2]},${p[3]}`;
    if (!out.get(key).has(at)) out.get(key).set(at, []);
    out.get(key).get(at).push(m);
  }
  return out;
}

function drawBoard() {
  const svg = $("#board");
  svg.replaceChildren();
  svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  const cells = replay ? replay.state.cells : state.cells;
  for (const c of cells) {
    const g = donut(c.x, c.y, c.flavour, c.roll, { class: c.delivered ? "delivered" : "" });
    const edge = c.owner === null ? "#777" : OWNERS[c.owner];
    g.append(el("rect", { x: c.x + 0.03, y: c.y + 0.03, width: 0.94, height: 0.94, fill: "none", stroke: edge, "stroke-width": 0.06, "stroke-dasharray": c.owner === null ? "0.1 0.08" : "" }));
    svg.append(g);
  }
  if (replay || !state.legal.length || curtained()) return;
  const face = state.tray[selected];
  const spots = placements().get(`${face}/${rotation}`) || new Map();
  for (const [at, moves] of spots) {
    const [x, y] = at.split(",").map(Number);
    const hint = hintFor(state) && moves.includes(hinted.move);
    const ghost = el("rect", { x, y, width: 2, height: 2, class: hint ? "ghost hint" : "ghost", tabindex: 0, role: "button", "aria-label": `place ${face} at ${x},${y}` });
    ghost.addEventListener("click", () => choose(moves));
    ghost.addEventListener("dragover", (e) => { e.preventDefault(); preview(face, x, y, moves); });
    ghost.addEventListener("drop", (e) => { e.preventDefault(); choose(moves); });
    ghost.addEventListener("keydown", (e) => { if (e.key === "Enter") choose(moves); });
    ghost.addEventListener("mouseenter", () => preview(face, x, y, moves));
    svg.append(ghost);
  }
  for (const box of state.boxes) {
    const mine = state.legal.includes(`box@${box.x},${box.y}`);
    const hint = hintFor(state) && hinted.move === `box@${box.x},${box.y}`;
    for (const [x, y] of box.cells) {
      const hit = el("rect", { x, y, width: 1, height: 1, fill: "transparent", stroke: mine ? "#ffb000" : "none", "stroke-width": hint ? 0.14 : 0.05, class: hint ? "hint" : "", style: "cursor:pointer" });
      hit.addEventListener("click", () => selectRun(box, mine));
      hit.append(el("title", {}, `${box.size} donuts, ${box.points} points`));
      svg.append(hit);
    }
  }
}

function curtained() {
  return Boolean(state) && !online && !replay && state.mode === "hotseat" && !state.finished
    && !(revealed && revealed.id === state.id && revealed.player === state.to_move);
}

function hintFor(s) {
  return Boolean(hinted) && Boolean(s) && hinted.id === s.id && hinted.version === s.version;
}

// Ask the server's strongest agent (searching from this player's view only)
// for a move, then show it: the card picked and turned, its place marked.
async function askHint() {
  const { id, version } = state;
  const button = $("#btn-hint");
  button.disabled = true;
  $("#preview").textContent = "Looking for a good move…";
  try {
    const h = await api(`/api/games/${id}/hint`, { version });
    if (state && state.id === id && state.version === version) showHint(h.move);
  } catch (err) {
    showError(err.message);
  } finally {
    button.disabled = false;
  }
}

function showHint(move) {
  hinted = { id: state.id, version: state.version, move };
  const p = PLACE_RE.exec(move);
  let text;
  if (p) {
    const i = state.tray.indexOf(p[1]);
    if (i >= 0) selected = i;
    rotation = Number(p[4]);
    text = `Hint: card ${selected + 1} (${p[1]}) turned ${rotation}° at ${p[2]},${p[3]}`
      + (p[5] ? `, the Cinnamon Roll locked to ${NAMES[p[5]]}` : "") + ": marked on the counter.";
  } else if (move.startsWith("box@")) {
    const box = state.boxes.find((b) => `box@${b.x},${b.y}` === move);
    text = `Hint: box the run at ${move.slice(4)}` + (box ? ` (${box.size} donuts, ${box.points} points)` : "") + ".";
  } else if (move === "pass") {
    text = "Hint: pass.";
  } else {
    text = `Hint: swap ${move.slice(5)}.`;
  }
  render();
  if (p) phantom(p[1], Number(p[2]), Number(p[3]));
  $("#preview").textContent = text;
}

function selectRun(box, mine) {
  const held = box.held.map((h, p) => `${state.players[p]} ${h}`).join(", ");
  const neutral = box.size - box.held.reduce((a, b) => a + b, 0);
  const info = document.createElement("span");
  info.textContent = `Box of ${box.size} donuts worth ${box.points} points; held: ${held}${neutral ? `, start card ${neutral}` : ""}. `;
  const out = $("#preview");
  out.replaceChildren(info);
  if (mine) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = `Box it for ${box.points} points`;
    b.addEventListener("click", () => send(`box@${box.x},${box.y}`));
    out.append(b);
  }
}

// The selected card drawn faintly at (x, y), turned as chosen.
function phantom(face, x, y) {
  const svg = $("#board");
  svg.querySelectorAll(".phantom").forEach((n) => n.remove());
  const q = rotate(face, rotation);
  const spots = [[0, 0], [1, 0], [1, 1], [0, 1]];
  const g = el("g", { class: "phantom", opacity: 0.6, "pointer-events": "none" });
  q.split("").forEach((f, i) => g.append(donut(x + spots[i][0], y + spots[i][1], f, f === "R")));
  svg.append(g);
}

async function preview(face, x, y, moves) {
  // Show the card where it would go, and what it would seal for whom.
  phantom(face, x, y);
  const base = `${face} at ${x},${y}, turned ${rotation}°` + (moves.length > 1 ? " (choose the Cinnamon Roll's lock)" : "");
  $("#preview").textContent = base;
  // Ask the server only once the pointer rests a moment (online, every
  // message counts against the connection's rate limit).
  clearTimeout(previewTimer);
  await new Promise((resolve) => { previewTimer = setTimeout(resolve, 120); });
  if (!state) return;
  const version = state.version;
  try {
    const p = online
      ? await online.client.preview(moves[0])
      : await api(`/api/games/${state.id}/preview?move=${encodeURIComponent(moves[0])}`);
    if (!state || state.version !== version || $("#preview").textContent !== base) return;
    const seals = p.deliveries.map((d) => `seals ${d.size} donuts: ${d.points} points to ${d.to.length ? d.to.map((i) => state.players[i]).join(" and ") : "nobody"}`);
    $("#preview").textContent = base + (seals.length ? " — " + seals.join("; ") : " — seals nothing");
  } catch (err) { /* the state moved on: nothing to preview */ }
}

function choose(moves) {
  if (moves.length === 1) return send(moves[0]);
  const extra = $("#extra");
  extra.replaceChildren(document.createTextNode("Lock the Cinnamon Roll to: "));
  for (const m of moves) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = m.split("=")[1];
    b.addEventListener("click", () => send(m));
    extra.append(b);
  }
}

function cardSvg(face, rot) {
  const svg = document.createElementNS(SVGNS, "svg");
  svg.setAttribute("viewBox", "0 0 2 2");
  const q = rotate(face, rot);
  const spots = [[0, 0], [1, 0], [1, 1], [0, 1]];
  q.split("").forEach((f, i) => svg.append(donut(spots[i][0], spots[i][1], f === "R" ? "R" : f, f === "R")));
  return svg;
}

function drawTray() {
  const tray = $("#tray");
  tray.replaceChildren();
  state.tray.forEach((face, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "card";
    b.setAttribute("role", "option");
    b.setAttribute("aria-selected", i === selected ? "true" : "false");
    b.setAttribute("aria-label", `tray card ${i + 1}: ${face}`);
    b.append(cardSvg(face, i === selected ? rotation : 0));
    b.addEventListener("click", () => { selected = i; render(); });
    b.draggable = true;
    b.addEventListener("dragstart", (e) => {
      if (selected !== i) { selected = i; drawBoard(); }
      e.dataTransfer.setData("text/plain", face);
    });
    tray.append(b);
  });
}

function drawActions() {
  const boxes = $("#boxes");
  boxes.replaceChildren();
  const extra = $("#extra");
  extra.replaceChildren();
  // Covered (hotseat, between players): no box or swap buttons either, as
  // they tell what the hidden tray can do; undo stays for the last mover.
  for (const m of curtained() ? [] : state.legal) {
    if (m.startsWith("box@")) {
      const box = state.boxes.find((b) => `box@${b.x},${b.y}` === m);
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = `Box it: ${box ? box.size + " donuts, " + box.points + " pts" : m}`;
      b.addEventListener("click", () => send(m));
      boxes.append(b);
    } else if (m.startsWith("swap") || m === "pass") {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = m === "pass" ? "Pass" : `Swap ${m.slice(5)}`;
      b.addEventListener("click", () => send(m));
      extra.append(b);
    }
  }
  $("#btn-undo").hidden = Boolean(online);
  // Hints are for local games: online, the opponent has not agreed to them.
  $("#btn-hint").hidden = Boolean(online) || !myTurn(state) || state.thinking || !state.legal.length || curtained();
  $("#btn-export").hidden = !state.finished;
  $("#btn-replay").hidden = !state.finished;
}

function drawSide() {
  const t = $("#scores");
  t.replaceChildren();
  state.players.forEach((name, p) => {
    const tr = document.createElement("tr");
    if (state.to_move === p) tr.className = "turn";
    const who = state.seats[p] === "human" ? "" : ` (${state.seats[p]})`;
    for (const text of [`${name}${who}`, `${state.scores[p]} pts`, `${state.delivered[p]} box${state.delivered[p] === 1 ? "" : "es"}`, `pile ${state.pile_sizes[p]}`]) {
      const td = document.createElement("td");
      td.textContent = text;
      td.style.color = OWNERS[p];
      tr.append(td);
    }
    const first = tr.firstChild;
    if (state.presence || state.clock) { // online: the name, a presence dot, the clock
      const label = document.createElement("span");
      label.className = "name";
      label.textContent = first.textContent;
      first.replaceChildren(label);
    }
    if (state.presence) first.prepend(presenceDot(p));
    if (state.clock) {
      const clock = document.createElement("span");
      clock.className = "clock";
      clock.dataset.seat = p;
      first.append(clock);
    }
    t.append(tr);
  });
  drawWatchers();
  drawClocks();
  const log = $("#log");
  log.replaceChildren();
  for (const m of state.history) {
    const li = document.createElement("li");
    li.textContent = m;
    log.append(li);
  }
  log.scrollTop = log.scrollHeight;
  const summary = $("#summary");
  summary.hidden = !state.finished;
  if (state.finished) {
    const lines = state.deliveries.map((d) => `${d.how}${d.ply === null ? "" : " at move " + (d.ply + 1)}: ${d.size} donuts, ${d.points} points to ${d.to.length ? d.to.map((p) => state.players[p]).join(" and ") : "nobody"}`);
    summary.innerHTML = "";
    const h = document.createElement("h3");
    h.textContent = `Game over — winner: ${state.winners.map((p) => state.players[p]).join(", ")}`;
    const ul = document.createElement("ul");
    for (const line of lines) { const li = document.createElement("li"); li.textContent = line; ul.append(li); }
    summary.append(h, ul);
  }
}

// A dot by each name online: filled when that seat is connected.
function presenceDot(p) {
  const dot = document.createElement("span");
  const ai = state.seats[p] !== "human";
  const on = ai || state.presence.connected[p];
  dot.className = `dot ${ai ? "ai" : on ? "on" : "off"}`;
  dot.title = ai ? "the server's AI" : on ? "connected" : "not connected";
  dot.setAttribute("aria-label", dot.title);
  return dot;
}

function drawWatchers() {
  const w = $("#watchers");
  const n = state && state.presence ? state.presence.spectators : 0;
  w.hidden = !state || !state.presence;
  w.textContent = `${n} spectator${n === 1 ? "" : "s"} watching`;
}

function drawClocks() {
  if (!state || !state.clock || !online) return;
  const now = performance.now();
  document.querySelectorAll("#scores .clock").forEach((span) => {
    const p = Number(span.dataset.seat);
    const left = timeLeft(state.clock, p, online.arrived, now);
    span.textContent = (state.clock.flagged[p] ? "⚑ " : "") + formatClock(left);
    span.classList.toggle("running", state.clock.running === p && !state.finished);
    span.classList.toggle("low", left !== null && left < 30000);
    span.title = state.clock.flagged[p] ? "ran out of time once: plays on with the increment" : "time left";
  });
}

// Whether `seat` has a move that a takeback could take back (the server
// counts plies in turn order: ply % players is the seat that made it).
function hasMove(seat) {
  return seat >= 0 && state.history.length > seat;
}

function drawOnline() {
  const bar = $("#online-bar");
  bar.hidden = !online;
  if (!online) return;
  const me = state.player;
  const watching = me < 0;
  $("#role").textContent = watching ? "Spectating" : `Seat ${me + 1}: ${state.players[me]}`;
  const notify = $("#btn-notify");
  notify.hidden = watching || !("Notification" in window) || Notification.permission !== "default";
  const box = $("#takeback");
  box.replaceChildren();
  const t = state.takeback;
  if (watching || state.finished) return;
  const say = (text) => { const s = document.createElement("span"); s.textContent = text; box.append(s); };
  const button = (text, action) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.addEventListener("click", action);
    box.append(b);
  };
  if (t === null || t === undefined) {
    if (hasMove(me)) button("Take back", () => online.client.takeback(state.version));
  } else if (t.by === me) {
    say("You asked to take back your last move: waiting for an answer…");
  } else if (!t.agreed.includes(me)) {
    say(`${state.players[t.by]} asks to take back their last move. `);
    button("Accept", () => online.client.answer(true, state.version));
    button("Decline", () => online.client.answer(false, state.version));
  } else {
    say(`Waiting for the others to answer ${state.players[t.by]}'s takeback…`);
  }
}

function myTurn(s) {
  return Boolean(s) && !s.finished && s.player >= 0 && s.to_move === s.player;
}

function outsideView() {
  return state.cells.some((c) => c.x < view.x + 1 || c.y < view.y + 1 || c.x > view.x + view.w - 2 || c.y > view.y + view.h - 2);
}

// Show one of the main panels and hide the others.
function show(id) {
  for (const panel of ["setup", "saved", "rules", "online-links", "play"]) $(`#${panel}`).hidden = panel !== id;
}

function render() {
  if (!state) return;
  if (!replay && outsideView()) fit();
  if (selected >= state.tray.length) selected = 0;
  const me = state.player;
  const watching = me < 0;
  let status;
  if (state.finished) status = "Game over.";
  else if (state.thinking) status = `${state.players[state.to_move]} is thinking…`;
  else if (curtained()) status = `Pass the device to ${state.players[state.to_move]}.`;
  else if (state.to_move === me) status = `Your turn, ${state.players[me]}: pick a card, rotate (R), click a highlighted place.`;
  else if (watching) status = `Spectating: ${state.players[state.to_move]} to move.`;
  else status = `Waiting for ${state.players[state.to_move]}.`;
  $("#status").textContent = status;
  document.title = (myTurn(state) ? "▶ Your turn — " : "") + "donutbox";
  $("#tray").hidden = watching; // a spectator has no tray (and is sent none)
  const cover = curtained();
  $("#curtain").hidden = !cover;
  if (cover) {
    $("#tray").hidden = true;
    $("#preview").textContent = "";
    $("#btn-reveal").textContent = `I am ${state.players[state.to_move]}: show my cards`;
  }
  $("#btn-rotate").hidden = watching || cover;
  const banner = $("#banner");
  banner.hidden = state.final_lap_turns === null || state.finished;
  banner.textContent = `Final Lap: ${state.final_lap_turns} turn(s) left`;
  drawBoard();
  drawTray();
  drawActions();
  drawSide();
  drawOnline();
}

function fit() {
  const cells = (replay ? replay.state.cells : state.cells);
  const xs = cells.map((c) => c.x), ys = cells.map((c) => c.y);
  const x0 = Math.min(...xs) - 3, y0 = Math.min(...ys) - 3;
  const size = Math.max(Math.max(...xs) - x0 + 4, Math.max(...ys) - y0 + 4, 10);
  view = { x: x0, y: y0, w: size, h: size };
}

async function send(move) {
  if (online) return sendOnline(move);
  try {
    state = await api(`/api/games/${state.id}/moves`, { move, version: state.version });
    render();
  } catch (err) {
    showError(err.message);
    await load(state.id, false);
  }
}

// Show a stored game.  ``reveal``: whoever opened it may see the tray of the
// player to move (false when a refused move makes the page reload the game:
// the turn may have passed to someone else meanwhile).
async function load(id, reveal = true) {
  const fresh = await api(`/api/games/${id}`);
  leaveOnline();
  if (!state || state.id !== id) { selected = 0; rotation = 0; hinted = null; }
  replay = null;
  $("#replay").hidden = true;
  state = fresh;
  if (reveal) revealed = { id: state.id, player: state.to_move };
  location.hash = `game=${id}`;
  localStorage.setItem("donutbox.game", id);
  // Keep an open socket to this game (e.g. after a refused move).
  if (!socket || socket.gameId !== id || socket.readyState > WebSocket.OPEN) connect(id);
  fit();
  show("play");
  render();
}

// -- online games ---------------------------------------------------------------

// A move over the game's socket, made on the version shown.
async function sendOnline(move) {
  if (online.busy) return;
  online.busy = true;
  $("#extra").replaceChildren();
  try {
    await online.client.move(move, state.version);
  } catch (err) {
    showError(err.message);
    online.client.sync();
  } finally {
    if (online) online.busy = false;
  }
}

function onlineState(fresh) {
  // Versions only grow: a state older than the one shown is stale news.
  if (state && state.id === fresh.id && fresh.version < state.version) return;
  const first = !state || state.id !== fresh.id;
  const wasMyTurn = myTurn(state);
  state = fresh;
  online.arrived = performance.now();
  if (first) { selected = 0; rotation = 0; fit(); }
  if (online.seat !== null) {
    remember(online.id, { title: state.title, players: state.players, finished: state.finished, moves: state.history.length });
  }
  render();
  if (!wasMyTurn && myTurn(state)) notifyTurn();
}

function notifyTurn() {
  if (!document.hidden || !("Notification" in window) || Notification.permission !== "granted") return;
  try {
    const n = new Notification("donutbox: your turn", { body: `${state.players[state.player]}, it is your move.`, tag: `donutbox-${state.id}` });
    n.onclick = () => { window.focus(); n.close(); };
  } catch (err) { /* some browsers only notify from a service worker */ }
}

function connection(status) {
  const c = $("#conn");
  c.hidden = status === "connected";
  c.className = status;
  c.textContent = { connecting: "Connecting…", reconnecting: "Reconnecting…", failed: "Not connected" }[status] || "";
}

// Open an online game with a link's token (the page's hash holds the link).
function openOnline(id, token) {
  if (online && online.id === id && online.token === token) { show("play"); return; }
  leaveOnline();
  if (socket) { const s = socket; socket = null; s.onclose = null; s.close(); }
  state = null;
  replay = null;
  $("#replay").hidden = true;
  const hash = linkHash(id, token);
  if (location.hash !== hash) location.hash = hash;
  online = { id, token, seat: null, arrived: performance.now(), busy: false, client: null };
  const mine = online;
  online.client = new OnlineClient(id, token, {
    welcome: (msg) => {
      if (online !== mine) return;
      online.seat = msg.seat;
      remember(id, { links: [{ seat: msg.seat, token }] });
    },
    state: (s) => { if (online === mine) onlineState(s); },
    presence: (p) => { if (online === mine && state) { state.presence = p; drawSide(); } },
    error: (reason) => { if (online === mine) showError(reason); },
    connection: (status) => { if (online === mine) connection(status); },
  });
  $("#status").textContent = "Connecting…";
  $("#board").replaceChildren();
  $("#tray").replaceChildren();
  $("#scores").replaceChildren();
  $("#log").replaceChildren();
  $("#online-bar").hidden = false;
  $("#role").textContent = "";
  $("#takeback").replaceChildren();
  show("play");
  online.client.start();
}

function leaveOnline() {
  if (!online) return;
  online.client.stop();
  online = null;
  connection("connected");
  $("#online-bar").hidden = true;
  $("#watchers").hidden = true;
}

function onlineCreated(game) {
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

function authHeaders() {
  return online ? { Authorization: `Bearer ${online.token}` } : {};
}

function connect(id) {
  // The old socket is closed on purpose: its onclose must not reconnect
  // (that would close this new one, and so on every 1.5 s).
  if (socket) { const old = socket; old.onclose = null; old.close(); }
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const mine = socket = new WebSocket(`${proto}://${location.host}/api/games/${id}/ws`);
  socket.gameId = id;
  socket.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "state" && (!state || msg.state.id !== state.id || msg.state.version >= state.version)) {
      state = msg.state;
      render();
    }
  };
  // A dropped connection (network, server restart) is opened again, unless
  // another game's socket has replaced it meanwhile.
  socket.onclose = () => setTimeout(() => { if (socket === mine && state && state.id === id) connect(id); }, 1500);
}

// Text with <b> and <i> only (the reference card's), as DOM nodes: never
// parsed as HTML.
function marked(text) {
  const out = document.createDocumentFragment();
  let into = out;
  for (const part of text.split(/(<\/?[bi]>)/)) {
    if (part === "<b>" || part === "<i>") {
      const e = document.createElement(part[1]);
      out.append(e);
      into = e;
    } else if (part === "</b>" || part === "</i>") {
      into = out;
    } else if (part) {
      into.append(document.createTextNode(part));
    }
  }
  return out;
}

async function showRules() {
  const card = $("#rules-card");
  if (!card.childElementCount) {
    try {
      const rules = await api("/api/rules");
      for (const column of rules.columns) {
        const div = document.createElement("div");
        div.className = "rules-column";
        for (const section of column) {
          const h = document.createElement("h3");
          h.textContent = section.heading;
          const ul = document.createElement("ul");
          for (const item of section.items) {
            const li = document.createElement("li");
            li.append(marked(item));
            ul.append(li);
          }
          div.append(h, ul);
        }
        card.append(div);
      }
    } catch (err) { showError(err.message); return; }
  }
  show("rules");
}

async function showSaved() {
  const games = await api("/api/games");
  const ul = $("#saved-list");
  ul.replaceChildren();
  for (const g of games) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = `${g.title} — ${(g.players || []).join(" vs ")}, ${g.moves} moves${g.finished ? " (finished)" : ""}`;
    b.addEventListener("click", () => load(g.id));
    li.append(b);
    ul.append(li);
  }
  if (!games.length) ul.textContent = "No saved games yet.";
  showRemembered();
  show("saved");
}

// The online games this browser has links for.
function showRemembered() {
  const ul = $("#online-list");
  ul.replaceChildren();
  for (const g of rememberedGames()) {
    const li = document.createElement("li");
    const what = document.createElement("span");
    const players = (g.players || []).join(" vs ");
    what.textContent = `${players || g.id}${g.moves ? `, ${g.moves} moves` : ""}${g.finished ? " (finished)" : ""} `;
    li.append(what);
    for (const link of g.links || []) {
      const b = document.createElement("button");
      b.type = "button";
      const name = link.seat >= 0 ? (g.players && g.players[link.seat]) || link.name || `seat ${link.seat + 1}` : "";
      b.textContent = link.seat < 0 ? "Watch" : `Play as ${name}`;
      b.addEventListener("click", () => openOnline(g.id, link.token));
      li.append(b);
    }
    const x = document.createElement("button");
    x.type = "button";
    x.textContent = "Forget";
    x.title = "Forget this game's links in this browser";
    x.addEventListener("click", () => { forget(g.id); showRemembered(); });
    li.append(x);
    ul.append(li);
  }
  if (!ul.children.length) ul.textContent = "No online games yet.";
}

async function showReplay(ply) {
  replay = await api(`/api/games/${state.id}/replay/${ply}`, undefined, authHeaders());
  $("#replay").hidden = false;
  $("#rp-ply").textContent = `move ${replay.ply} of ${replay.of}`;
  drawBoard();
}

function zoom(factor) {
  const cx = view.x + view.w / 2, cy = view.y + view.h / 2;
  view.w = Math.min(80, Math.max(4, view.w * factor));
  view.h = view.w;
  view.x = cx - view.w / 2;
  view.y = cy - view.h / 2;
  drawBoard();
}

function setup() {
  $("#btn-new").addEventListener("click", () => show("setup"));
  setupOnlineForm(api, showError, onlineCreated);
  $("#btn-notify").addEventListener("click", async () => {
    await Notification.requestPermission();
    if (state) drawOnline();
  });
  setInterval(drawClocks, 250);
  addEventListener("online", () => online && online.client.retryNow());
  document.addEventListener("visibilitychange", () => { if (!document.hidden && online) online.client.retryNow(); });
  addEventListener("hashchange", () => {
    const link = parseLink(location.hash);
    if (link) { openOnline(link.id, link.token); return; }
    const id = new URLSearchParams(location.hash.slice(1)).get("game");
    if (id && (online || !state || state.id !== id)) load(id).catch((err) => showError(err.message));
  });
  $("#btn-games").addEventListener("click", showSaved);
  $("#btn-rules").addEventListener("click", showRules);
  $("#new-game").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    const body = {
      match: f.get("match"), layout: f.get("layout"), closers: f.get("closers") === "on",
      opponent: f.get("opponent"), players: Number(f.get("players")),
      human_seat: f.get("opponent") === "hotseat" ? 0 : Number(f.get("human_seat")),
      seconds: Number(f.get("seconds")),
    };
    try {
      const game = await api("/api/games", body);
      selected = 0; rotation = 0; replay = null;
      await load(game.id);
    } catch (err) { showError(err.message); }
  });
  $("#btn-rotate").addEventListener("click", () => { rotation = (rotation + 90) % 360; render(); });
  $("#btn-hint").addEventListener("click", askHint);
  $("#btn-reveal").addEventListener("click", () => {
    revealed = { id: state.id, player: state.to_move };
    selected = 0; rotation = 0;
    render();
  });
  $("#btn-undo").addEventListener("click", async () => {
    try {
      // Hotseat: a move taken back while the next player's cards are still
      // covered is taken back by the one who made it, and it is their turn
      // again: show their cards.  Otherwise whoever holds the device may not
      // be the player now to move, and the curtain asks.
      const byMover = curtained();
      state = await api(`/api/games/${state.id}/undo`, { version: state.version });
      if (byMover) revealed = { id: state.id, player: state.to_move };
      render();
    }
    catch (err) { showError(err.message); }
  });
  $("#btn-export").addEventListener("click", async () => {
    try {
      const record = await api(`/api/games/${state.id}/record`, undefined, authHeaders());
      const blob = new Blob([JSON.stringify(record, null, 1)], { type: "application/json" });
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = `donutbox-${state.id}.json`;
      a.click();
    } catch (err) { showError(err.message); }
  });
  $("#btn-replay").addEventListener("click", () => showReplay(0));
  $("#rp-prev").addEventListener("click", () => replay && replay.ply > 0 && showReplay(replay.ply - 1));
  $("#rp-next").addEventListener("click", () => replay && replay.ply < replay.of && showReplay(replay.ply + 1));
  $("#rp-close").addEventListener("click", () => { replay = null; $("#replay").hidden = true; render(); });
  $("#import").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    try {
      const record = JSON.parse(await file.text());
      const game = await api("/api/games/import", record);
      await load(game.id);
    } catch (err) { showError(`import: ${err.message}`); }
  });
  document.querySelectorAll("#zoom button").forEach((b) => b.addEventListener("click", () => {
    const z = b.dataset.zoom;
    if (z === "fit") { fit(); drawBoard(); } else zoom(z === "in" ? 0.8 : 1.25);
  }));
  const board = $("#board");
  board.addEventListener("wheel", (e) => { e.preventDefault(); zoom(e.deltaY < 0 ? 0.9 : 1.1); }, { passive: false });
  let drag = null;
  const touches = new Map();
  let pinch = null;
  board.addEventListener("pointerdown", (e) => {
    touches.set(e.pointerId, [e.clientX, e.clientY]);
    if (touches.size === 2) {
      const [a, b] = [...touches.values()];
      pinch = { d: Math.hypot(a[0] - b[0], a[1] - b[1]), w: view.w };
      drag = null;
    } else if (e.target === board) drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y };
  });
  const lift = (e) => { touches.delete(e.pointerId); if (touches.size < 2) pinch = null; };
  board.addEventListener("pointerup", lift);
  board.addEventListener("pointercancel", lift);
  board.addEventListener("pointermove", (e) => {
    if (touches.has(e.pointerId)) touches.set(e.pointerId, [e.clientX, e.clientY]);
    if (pinch && touches.size === 2) {
      const [a, b] = [...touches.values()];
      const d = Math.hypot(a[0] - b[0], a[1] - b[1]);
      if (d > 0) zoom((pinch.w * pinch.d / d) / view.w);
      return;
    }
    if (!drag) return;
    const scale = view.w / board.clientWidth;
    view.x = drag.vx - (e.clientX - drag.x) * scale;
    view.y = drag.vy - (e.clientY - drag.y) * scale;
    board.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  });
  addEventListener("pointerup", () => { drag = null; });
  addEventListener("keydown", (e) => {
    if (!state || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    const step = view.w / 10;
    const keys = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    if (e.key === "r" || e.key === "R") { rotation = (rotation + 90) % 360; render(); }
    else if ((e.key === "h" || e.key === "H") && !$("#btn-hint").hidden && !$("#btn-hint").disabled) askHint();
    else if (e.key === "+" || e.key === "=") zoom(0.8);
    else if (e.key === "-") zoom(1.25);
    else if (keys[e.key] && document.activeElement === board) { view.x += keys[e.key][0]; view.y += keys[e.key][1]; drawBoard(); e.preventDefault(); }
    else if (/^[1-4]$/.test(e.key) && Number(e.key) <= state.tray.length) { selected = Number(e.key) - 1; render(); }
  });
  const link = parseLink(location.hash);
  if (link) { openOnline(link.id, link.token); return; }
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("game");
  const last = fromHash || localStorage.getItem("donutbox.game");
  if (last) load(last).catch(() => show("setup"));
  else show("setup");
}

// For tests and the console: what the page shows (read it, do not change it).
window.donutbox = {
  get state() { return state; },
  get selected() { return selected; },
  get rotation() { return rotation; },
  get connected() { return online ? online.client.connected : null; },
};

setup();
