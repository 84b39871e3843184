// donutbox browser client: plain ES modules, no build step.
// The server is the authority: this page sends intents and draws the state
// it is sent (which only ever holds this player's own tray).
//
//   store.js   the page's state and its one update path (never an older version)
//   api.js     HTTP, the owner token of this browser's games
//   local.js   a game played here: moves over HTTP, states over its socket
//   online.js  online play: the socket client, invite links, the game shown
//   board.js   the counter;  tray.js  the tray and the action buttons
//   log.js     scores, moves, the end summary;  replay.js  the replay viewer
//   play.js    what the player does: pick, turn, preview, place, hint
//   forms.js   the new-game forms, from /api/meta;  palette.js  colours, marks
//
// Player names are free text typed by other people: they are only ever set
// with textContent, never as HTML.

import { $, h, show, showError } from "./dom.js";
import { api } from "./api.js";
import { store, subscribe, myTurn, curtained, set, setQuietly } from "./store.js";
import { applyPalette } from "./palette.js";
import { drawBoard, setupBoard } from "./board.js";
import { drawTray, drawActions } from "./tray.js";
import { drawSide, drawClocks, drawLastMoves, setReplayer } from "./log.js";
import { drawReplay, plyInLink, setupReplay, showReplay, step } from "./replay.js";
import { drawAnalysis, drawBest, setupAnalysis, stepMark } from "./analysis.js";
import { followTutorial, resumeTutorial, setupTutorial, tutorialOn } from "./tutorial.js";
import { setupSound, soundFor } from "./sound.js";
import { drawOnline, openOnline, onlineCreated, parseLink, rememberedGames, forget, setupOnlineForm } from "./online.js";
import { load, undo } from "./local.js";
import { agent, agentGroups, agentSelect, offeredAs, ruleFields, ruleValues, sayRules } from "./forms.js";
import { askHint, choose, hover, pick, selectRun, send, turn } from "./play.js";

const onBoard = { choose, hover, run: selectRun };
const redrawBoard = () => { if (store.state) { drawBoard(onBoard); drawBest(); } };

function status(s) {
  const text = turnStatus(s);
  // Online: a friend who has not opened their link (or dropped out).
  if (s.presence && !s.finished) {
    const away = s.seats.flatMap((kind, p) => (kind === "human" && p !== s.player && !s.presence.connected[p] ? [s.players[p]] : []));
    if (away.length) return `${text} Waiting for ${away.join(" and ")} to ${s.history.length ? "reconnect" : "join"}.`;
  }
  return text;
}

function turnStatus(s) {
  const me = s.player;
  if (store.replay) return `Replay: move ${store.replay.ply} of ${store.replay.of}.`;
  if (s.finished) return "Game over.";
  if (s.thinking) return `${s.players[s.to_move]} is thinking…`;
  if (tutorialOn() && s.to_move !== 0) return "The tutor is playing…";
  if (tutorialOn() && s.to_move === 0) return "Your turn: follow the lesson.";
  if (curtained()) return `Pass the device to ${s.players[s.to_move]}.`;
  if (s.to_move === me) return `Your turn, ${s.players[me]}: pick a card, rotate (R), click a highlighted place.`;
  if (me < 0) return `Spectating: ${s.players[s.to_move]} to move.`;
  return `Waiting for ${s.players[s.to_move]}.`;
}

let replayShown = null; // the replay's game and move last drawn ("id:ply")

// Draw everything from the store (subscribed: after every change).
function render(why, before) {
  const s = store.state;
  if (!s) return;
  const moved = why === "state" && (!before || before.id !== s.id || before.version !== s.version);
  if (moved) {
    $("#preview").textContent = ""; // it was about the old position
    drawLastMoves();
    soundFor(before, s);
  }
  followTutorial(send);
  $("#status").textContent = status(s);
  document.title = (myTurn(s) ? "▶ Your turn — " : "") + "donutbox";
  const cover = curtained();
  $("#curtain").hidden = !cover;
  if (cover) {
    $("#preview").textContent = "";
    $("#btn-reveal").textContent = `I am ${s.players[s.to_move]}: show my cards`;
  }
  const banner = $("#banner");
  banner.hidden = s.final_lap_turns === null || s.finished;
  const lap = s.final_lap_turns;
  // Fewer turns left than players: whoever moves now will not come round again.
  const last = lap !== null && lap <= s.players.length && !s.finished && (myTurn(s) || (s.mode === "hotseat" && !cover));
  banner.textContent = `Final Lap: ${lap} turn${lap === 1 ? "" : "s"} left` + (last ? " — your last turn" : "");
  // The review (a finished game's replay): on a desktop the page keeps to
  // the viewport, the moves scrolling in their own box (style.css); set
  // before the board is drawn, which fits the counter to the board's size.
  $("#play").classList.toggle("review", Boolean(store.replay) || Boolean(s.finished));
  // A step of the replay refits the view too, when a card of the move shown
  // lies outside it (the view kept from the end can miss an early counter).
  const shown = store.replay ? `${s.id}:${store.replay.ply}` : null;
  const stepped = shown !== replayShown;
  replayShown = shown;
  drawBoard(onBoard, moved || stepped);
  drawTray(redrawBoard);
  drawActions(send);
  drawSide();
  drawOnline();
  drawReplay();
  drawAnalysis();
}

// -- the first screen: the new-game form ----------------------------------------------

// The last choices of the new-game form (opponent, rules, players, who
// starts, thinking time), kept in this browser so that a returning player's
// Play is their last game's table; the name is kept on its own.
const CHOICES = "donutbox.newgame";

function rememberedChoices() {
  try {
    const saved = JSON.parse(localStorage.getItem(CHOICES) || "{}");
    return saved && typeof saved === "object" && !Array.isArray(saved) ? saved : {};
  } catch (err) { return {}; }
}

// Set a form field to a remembered value, if the field offers it.
function restore(field, value) {
  if (!field || value === undefined || value === null) return;
  if (field.type === "checkbox") { field.checked = value === true; return; }
  if (field.tagName === "SELECT" && ![...field.options].some((o) => o.value === String(value))) return;
  field.value = String(value);
}

// The "Table: 2 players, you start — change" disclosure's words.
function tableInWords(form) {
  const f = form.elements;
  const hotseat = f.opponent.value === "hotseat";
  const parts = [];
  const name = f.name.value.trim();
  if (name) parts.push(name);
  parts.push(`${f.players.value} players${hotseat ? " at this screen" : ""}`);
  if (!hotseat) parts.push(f.human_seat.value === "0" ? "you start" : "the computer starts");
  const a = agent(f.opponent.value);
  if (a && a.timed) parts.push(`${f.seconds.value} s a move`);
  return parts.join(", ");
}

function setupNewGame() {
  const form = $("#new-game");
  const saved = rememberedChoices();
  ruleFields(form.querySelector(".rule-fields"), "local");
  const opponent = form.querySelector("select[name=opponent]");
  // A newcomer meets the middle level; a returning player their last one
  // (a plain agent's second name, e.g. greedy, as its level).
  const middle = (agentGroups()[0][1].find((a) => a.level === 2) || store.meta.agents[0] || {}).name;
  const hotseatHelp = "Two to four players take turns at this screen; each one's cards are covered between turns.";
  agentSelect(opponent, $("#opponent-help"), { extra: [["Friends at this screen", [["hotseat", "Hotseat (pass the device)", hotseatHelp]]]], chosen: middle });
  if (saved.opponent) restore(opponent, offeredAs(saved.opponent));
  opponent.dispatchEvent(new Event("change")); // its help line
  const players = form.querySelector("select[name=players]");
  players.replaceChildren();
  const { min, max } = store.meta.players || { min: 2, max: 4 };
  for (let n = min; n <= max; n++) players.append(h("option", { value: String(n) }, String(n)));
  restore(players, saved.players);
  restore(form.elements.human_seat, saved.human_seat);
  if (saved.rules && typeof saved.rules === "object") {
    for (const o of store.meta.rules || []) restore(form.elements.namedItem(o.name), saved.rules[o.name]);
    for (const select of form.querySelectorAll(".rule-fields select")) select.dispatchEvent(new Event("change"));
  }
  const seconds = form.querySelector(".seconds");
  const starts = form.querySelector(".starts");
  const sync = () => {
    const a = agent(opponent.value);
    seconds.hidden = !(a && a.timed);
    if (a && a.default_seconds) form.elements.seconds.value = a.default_seconds;
    if (a && a.max_seconds) form.elements.seconds.max = a.max_seconds;
    starts.hidden = opponent.value === "hotseat";
  };
  opponent.addEventListener("change", sync);
  sync();
  if (saved.seconds && agent(opponent.value) && agent(opponent.value).timed) restore(form.elements.seconds, saved.seconds);
  // Hotseat: a name for each of the other players.
  const others = form.querySelector(".hotseat-names");
  const drawNames = () => {
    const hotseat = opponent.value === "hotseat";
    others.hidden = !hotseat;
    const into = $("#hotseat-names");
    const n = Number(players.value);
    const kept = [...into.querySelectorAll("input")].map((i) => i.value);
    into.replaceChildren();
    for (let p = 1; p < n; p++) {
      const input = h("input", { type: "text", name: `name${p}`, maxlength: "40", placeholder: `Player ${p + 1}`, "aria-label": `Player ${p + 1}'s name` });
      input.value = kept[p - 1] || "";
      into.append(input);
    }
  };
  opponent.addEventListener("change", drawNames);
  players.addEventListener("change", drawNames);
  drawNames();
  try { form.elements.name.value = localStorage.getItem("donutbox.name") || ""; } catch (err) { /* private mode */ }
  // The disclosures say the current choice in words.
  sayRules(form);
  const tableNow = form.querySelector(".table-choice .now");
  const sayTable = () => { tableNow.textContent = tableInWords(form); };
  form.addEventListener("change", sayTable);
  form.addEventListener("input", sayTable);
  sayTable();
  // A custom deck (docs/deck-lab.md): a file fills the text box; the server
  // reads and checks the composition.
  form.elements.deck_file.addEventListener("change", async () => {
    const file = form.elements.deck_file.files[0];
    if (!file) return;
    if (file.size > 20000) { showError("Custom deck: the file is over 20000 bytes"); return; }
    form.elements.deck.value = await file.text();
    form.dispatchEvent(new Event("change"));
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const hotseat = f.get("opponent") === "hotseat";
    const n = Number(f.get("players"));
    const seat = hotseat ? 0 : Number(f.get("human_seat"));
    const body = {
      ...ruleValues(form),
      opponent: f.get("opponent"), players: n,
      human_seat: seat,
    };
    const mine = String(f.get("name") || "").trim();
    try { localStorage.setItem("donutbox.name", mine); } catch (err) { /* private mode */ }
    const title = (x) => x.charAt(0).toUpperCase() + x.slice(1);
    body.names = Array.from({ length: n }, (_, p) => {
      if (p === seat) return mine || (hotseat ? "Player 1" : "You");
      if (hotseat) return String(f.get(`name${p}`) || "").trim() || `Player ${p + 1}`;
      return `${title(body.opponent)} ${p + 1}`;
    });
    const a = agent(f.get("opponent"));
    if (a && a.timed) body.seconds = Number(f.get("seconds"));
    const deck = String(f.get("deck") || "").trim();
    if (deck) body.deck = deck;
    try {
      const game = await api("/api/games", body);
      try {
        localStorage.setItem(CHOICES, JSON.stringify({ opponent: body.opponent, players: n, human_seat: body.human_seat, seconds: body.seconds, rules: ruleValues(form) }));
      } catch (err) { /* private mode */ }
      await load(game.id);
    } catch (err) { showError(err.message); }
  });
}

// -- the other panels ---------------------------------------------------------------

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
        const div = h("div", { className: "rules-column" });
        for (const section of column) {
          const ul = h("ul");
          for (const item of section.items) {
            const li = h("li");
            li.append(marked(item));
            ul.append(li);
          }
          div.append(h("h3", {}, section.heading), ul);
        }
        card.append(div);
      }
    } catch (err) { showError(err.message); return; }
  }
  show("rules");
}

async function showSaved() {
  let games;
  try { games = await api("/api/games"); } catch (err) { showError(err.message); return; }
  const ul = $("#saved-list");
  ul.replaceChildren();
  // The score and whose turn come from each game's state (the list has
  // neither): asked for the first ones shown.
  const DETAILED = 20;
  // The tutorial's game is the tutorial's, not a saved game.
  let tutorials = [];
  try { tutorials = JSON.parse(localStorage.getItem("donutbox.tutorials") || "[]"); } catch (err) { /* private mode */ }
  games = games.filter((g) => !tutorials.includes(g.id));
  games.forEach((g, i) => {
    const li = h("li", { className: "saved" });
    const when = g.updated ? new Date(g.updated).toLocaleString([], { dateStyle: "medium", timeStyle: "short" }) : "";
    const players = g.players || [];
    const opponent = `${players.join(" vs ")}${g.mode === "hotseat" ? " · hotseat" : ""}`;
    const b = h("button", { type: "button", className: "open" });
    b.append(h("span", { className: "who" }, opponent), h("span", { className: "when" }, when));
    const detail = h("span", { className: "detail" }, `${g.title} · ${g.moves} moves${g.finished ? " · finished" : ""}`);
    b.append(detail);
    b.addEventListener("click", () => load(g.id).catch((err) => showError(err.message)));
    const del = h("button", { type: "button", className: "delete", "aria-label": `Delete the game ${opponent}, ${when}` }, "Delete");
    del.addEventListener("click", async () => {
      if (!confirm(`Delete this game (${opponent}, ${when})? It cannot be undone.`)) return;
      try {
        await api(`/api/games/${encodeURIComponent(g.id)}`, undefined, undefined, "DELETE");
        if (localStorage.getItem("donutbox.game") === g.id) localStorage.removeItem("donutbox.game");
        li.remove();
        if (!ul.children.length) ul.append(h("li", {}, "No saved games yet."));
      } catch (err) { showError(err.message); }
    });
    li.append(b, del);
    ul.append(li);
    if (i < DETAILED) {
      api(`/api/games/${encodeURIComponent(g.id)}`).then((s) => {
        const score = s.players.map((name, p) => `${name} ${s.scores[p]}`).join(" – ");
        const turn = s.finished ? `finished, won by ${s.winners.map((p) => s.players[p]).join(" and ")}` : `${s.players[s.to_move]} to move`;
        detail.textContent = `${g.title} · ${g.moves} moves · ${score} · ${turn}`;
      }).catch(() => {});
    }
  });
  if (!games.length) ul.append(h("li", {}, "No saved games yet."));
  showRemembered();
  show("saved");
}

// The online games this browser has links for.
function showRemembered() {
  const ul = $("#online-list");
  ul.replaceChildren();
  for (const g of rememberedGames()) {
    const li = h("li");
    const players = (g.players || []).join(" vs ");
    li.append(h("span", {}, `${players || g.id}${g.moves ? `, ${g.moves} moves` : ""}${g.finished ? " (finished)" : ""} `));
    for (const link of g.links || []) {
      const name = link.seat >= 0 ? (g.players && g.players[link.seat]) || link.name || `seat ${link.seat + 1}` : "";
      const b = h("button", { type: "button" }, link.seat < 0 ? "Watch" : `Play as ${name}`);
      b.addEventListener("click", () => openOnline(g.id, link.token));
      li.append(b);
    }
    const x = h("button", { type: "button", title: "Forget this game's links in this browser" }, "Forget");
    x.addEventListener("click", () => { forget(g.id); showRemembered(); });
    li.append(x);
    ul.append(li);
  }
  // (an item of the list: a list holds items only)
  if (!ul.children.length) ul.append(h("li", {}, "No online games yet."));
}

async function exportRecord() {
  const s = store.state;
  try {
    const token = store.online ? store.online.token : undefined;
    const record = await api(`/api/games/${encodeURIComponent(s.id)}/record`, undefined, token);
    const blob = new Blob([JSON.stringify(record, null, 1)], { type: "application/json" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `donutbox-${s.id}.json`;
    a.click();
  } catch (err) { showError(err.message); }
}

// The same rules and opponents, seats turned by one (who started now plays
// second).  Local games only.
async function rematch() {
  const s = store.state;
  const n = s.players.length;
  const humans = s.seats.flatMap((kind, p) => (kind === "human" ? [p] : []));
  const body = { ...s.rules, players: n };
  if (s.mode === "hotseat" || humans.length !== 1) {
    body.opponent = "hotseat";
    body.names = s.players.slice(1).concat(s.players.slice(0, 1));
  } else {
    body.opponent = s.seats.find((kind) => kind !== "human");
    body.human_seat = (humans[0] + 1) % n;
    // Every name moves with its player (the human's own too), and the
    // thinking time chosen on the form stays (the state does not carry it).
    body.names = s.players.map((_, p) => s.players[(p + n - 1) % n]);
    const a = agent(body.opponent);
    const form = $("#new-game");
    const chosen = form.elements.opponent.value === body.opponent ? Number(form.elements.seconds.value) : NaN;
    if (a && a.timed) body.seconds = Number.isFinite(chosen) && chosen > 0 ? chosen : a.default_seconds;
    if (body.seconds === undefined || body.seconds === null) delete body.seconds;
  }
  try {
    const game = await api("/api/games", body);
    await load(game.id);
  } catch (err) { showError(err.message); }
}

// Show what the address names: an online game's link, or a local game.
function route() {
  const link = parseLink(location.hash);
  if (link) { openOnline(link.id, link.token); return; }
  const id = new URLSearchParams(location.hash.slice(1)).get("game");
  const linked = plyInLink(); // #game=ID&ply=N: a move of its review
  if (!id) return;
  if (store.online || store.gameId !== id) load(id).then(() => openLinkedMove(linked)).catch((err) => showError(err.message));
  else { show("play"); openLinkedMove(linked); }
}

// On a phone the menu is one button that opens the whole of it (no part
// of it hidden behind a sideways scroll); choosing an item closes it.
function setupMenu() {
  const toggle = $("#btn-menu");
  const nav = $("#menu");
  const openMenu = (open) => {
    toggle.setAttribute("aria-expanded", String(open));
    nav.classList.toggle("open", open);
  };
  toggle.addEventListener("click", () => openMenu(toggle.getAttribute("aria-expanded") !== "true"));
  nav.addEventListener("click", (e) => { if (e.target.closest("button")) openMenu(false); });
  nav.addEventListener("change", () => openMenu(false));
  addEventListener("keydown", (e) => { if (e.key === "Escape" && nav.classList.contains("open")) { openMenu(false); toggle.focus(); } });
}

// Play the replay's position out against the AI (the form's level if one
// is chosen there, else the catalogue's middle level): a new practice game.
async function playOut() {
  const r = store.replay, s = store.state;
  if (!r || !s) return;
  const picked = agent($("#new-game").elements.opponent.value);
  const middle = store.meta.agents.find((a) => a.level === 2) || store.meta.agents[0];
  const opponent = (picked || middle).name;
  try {
    const game = await api(`/api/games/${encodeURIComponent(s.id)}/play-out`, { ply: r.ply, opponent });
    await load(game.id);
  } catch (err) { showError(err.message); }
}

// -- wiring -----------------------------------------------------------------------------

function setup() {
  subscribe(render);
  applyPalette();
  setupNewGame();
  setupOnlineForm(api, onlineCreated);
  setupReplay();
  setupAnalysis();
  // The desktop review folds the open boxes under their heading: shown on asking.
  $("#open-boxes-toggle").addEventListener("click", (e) => {
    const shown = $("#open-boxes").classList.toggle("shown");
    e.currentTarget.setAttribute("aria-expanded", String(shown));
    e.currentTarget.firstChild.textContent = shown ? "hide " : "show ";
  });
  setReplayer(showReplay);
  setupTutorial(load);
  setupSound();
  $("#look-back").addEventListener("click", () => set({ look: null }));
  const board = setupBoard(redrawBoard);
  setupMenu();
  $("#btn-new").addEventListener("click", () => show("setup"));
  // The first screen's way to the lobby: the Community panel (its sign-in
  // first, for a newcomer).
  $("#btn-lobby").addEventListener("click", () => $("#btn-community").click());
  $("#btn-games").addEventListener("click", showSaved);
  $("#btn-rules").addEventListener("click", showRules);
  $("#btn-notify").addEventListener("click", async () => {
    await Notification.requestPermission();
    if (store.state) set({});
  });
  setInterval(drawClocks, 250);
  addEventListener("online", () => store.online && store.online.client.retryNow());
  document.addEventListener("visibilitychange", () => { if (!document.hidden && store.online) store.online.client.retryNow(); });
  addEventListener("hashchange", route);
  // A link to the address the page is at already (Replay or Open in My
  // games, for the game this page just played) makes no hashchange: it is
  // followed all the same.
  document.addEventListener("click", (e) => {
    const a = e.target instanceof Element ? e.target.closest("a[href]") : null;
    if (!a || e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || url.pathname !== location.pathname || !url.hash || url.hash !== location.hash) return;
    e.preventDefault();
    route();
  });
  $("#btn-rotate").addEventListener("click", turn);
  $("#btn-hint").addEventListener("click", askHint);
  $("#btn-reveal").addEventListener("click", () => {
    set({ revealed: { id: store.state.id, player: store.state.to_move }, selected: 0, rotation: 0 });
  });
  $("#btn-undo").addEventListener("click", undo);
  $("#btn-export").addEventListener("click", exportRecord);
  $("#btn-rematch").addEventListener("click", rematch);
  $("#rp-play-out").addEventListener("click", playOut);
  $("#btn-end-new").addEventListener("click", () => show("setup"));
  $("#import").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    try {
      const record = JSON.parse(await file.text());
      const game = await api("/api/games/import", record);
      await load(game.id);
    } catch (err) { showError(`import: ${err.message}`); }
    e.target.value = "";
  });
  const boardEl = $("#board");
  addEventListener("keydown", (e) => {
    const s = store.state;
    if (!s || ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName) || $("#play").hidden) return;
    if (e.key === "Escape" && store.look) { set({ look: null }); return; }
    // The review: N and P go to the next and previous marked move.
    if ((e.key === "n" || e.key === "p") && s.finished && !e.ctrlKey && !e.metaKey && !e.altKey && stepMark(e.key === "n" ? 1 : -1)) { e.preventDefault(); return; }
    // The replay viewer: the arrow keys step through the moves.
    if ((e.key === "ArrowLeft" || e.key === "ArrowRight") && document.activeElement !== boardEl && step(e.key === "ArrowLeft" ? -1 : 1)) {
      e.preventDefault();
      return;
    }
    const keys = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const playing = !s.finished && !store.replay && s.player >= 0 && !curtained();
    if ((e.key === "r" || e.key === "R") && playing) turn();
    else if ((e.key === "h" || e.key === "H") && !$("#btn-hint").hidden && !$("#btn-hint").disabled) askHint();
    else if (e.key === "+" || e.key === "=") board.zoomIn();
    else if (e.key === "-") board.zoomOut();
    else if (keys[e.key] && document.activeElement === boardEl) { board.pan(...keys[e.key]); e.preventDefault(); }
    else if (/^[1-4]$/.test(e.key) && playing && Number(e.key) <= s.tray.length) pick(Number(e.key) - 1);
  });
  const link = parseLink(location.hash);
  if (link) { openOnline(link.id, link.token); return; }
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("game");
  const last = fromHash || localStorage.getItem("donutbox.game");
  const linked = plyInLink(); // (load() writes the game's own address)
  if (last) { resumeTutorial(last); load(last).then(() => openLinkedMove(linked)).catch(() => show("setup")); }
  else show("setup");
}

// A link to a move (`#game=ID&ply=N`, replay.js) of the finished game shown
// opens the replay at that move.
function openLinkedMove(link) {
  const s = store.state;
  if (link && s && s.id === link.id && s.finished && link.ply <= s.history.length) showReplay(link.ply);
}

// For tests and the console: what the page shows (read it, do not change it).
window.donutbox = {
  get state() { return store.state; },
  get selected() { return store.selected; },
  get rotation() { return store.rotation; },
  get connected() { return store.online ? store.online.client.connected : null; },
};

async function start() {
  try {
    setQuietly({ meta: await api("/api/meta") }); // drawn by setup()
  } catch (err) {
    $("#loading").textContent = "The table could not be loaded: the server did not answer. Reload the page to try again.";
    showError(`the server did not answer: ${err.message}`);
    return;
  }
  setup();
}

start();
