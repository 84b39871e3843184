// The community screens (docs/community.md): sign in or up, the lobby (open
// tables, quick match, who is online, invitations and rematches live on the
// lobby socket), the leaderboard, and profiles (profile.js).  Hooks into
// the page: a nav button (#btn-community), a panel (#community) and this
// module; an online game opens through its usual link
// (#/online/<id>/<token>), which app.js already follows, and a game of
// yours that starts is opened in every page of yours (follow.js).  The
// signed-in player and the requests (CSRF): account.js.

import { $, h, button, showError, showNotice } from "./dom.js";
import { ownerToken } from "./api.js";
import { me, call, refreshAccount } from "./account.js";
import { ruleFields, ruleValues } from "./forms.js";
import { store, subscribe, setQuietly } from "./store.js";
import { followLobby, forgetLobby } from "./follow.js";
import { rematchControls, rematchesPushed } from "./rematch.js";
import { counted, profileView, reportForm, section, shownRating } from "./profile.js";
import { botCard, myBots, playBot } from "./bots.js";
import { clockLabel, formatClock } from "./online.js";

let socket = null;
let lobby = null;
let tab = "lobby";
let waiting = []; // GET /api/account/waiting: the games waiting for my move
let mail = null; // GET /api/account/email: {enabled, address, confirmed, reminders}

// The account (account.js), and its email settings.
async function refreshAccountAndMail() {
  await refreshAccount();
  mail = null;
  if (me.user) { try { mail = await call("/api/account/email"); } catch (err) { mail = null; } }
}

// Email reminders (docs/community.md, "Email"): offered only by a server
// started with --smtp.  One address, confirmed by a link; three kinds of
// reminder; every email has its own one-click unsubscribe link.
// Whether the email settings are open and the address being typed, kept
// across the lobby's redraws (a push must not close them or drop a draft).
const emailDraft = { open: false, address: null };

function emailSettings() {
  const box = h("details", { id: "email-settings", className: "community-email" });
  box.open = emailDraft.open;
  box.addEventListener("toggle", () => { emailDraft.open = box.open; });
  box.append(h("summary", {}, "Email reminders"));
  const address = h("input", { type: "email", maxlength: "254", autocomplete: "email", "aria-label": "email address", value: emailDraft.address ?? (mail.address || "") });
  address.addEventListener("input", () => { emailDraft.address = address.value; });
  const state = mail.address ? (mail.confirmed ? "confirmed" : "waiting for you to open the link we sent") : "none yet";
  box.append(h("p", { id: "email-state" }, `Address: ${state}.`));
  const save = (path, body, said) => async () => {
    try { mail = await call(path, body()); emailDraft.address = null; showNotice(said); render(); } catch (err) { showError(err.message); }
  };
  const row = h("div", { className: "row" });
  box.append(row);
  row.append(address, document.createTextNode(" "), button("Send confirmation link", save("/api/account/email", () => ({ address: address.value }), "Sent: open the link in the email to confirm the address."), { id: "btn-email" }));
  if (mail.address && mail.confirmed) {
    const kinds = [["turn", "Your move in a turn-based game"], ["invite", "An invitation to a table"], ["over", "A turn-based game is over"]];
    const boxes = {};
    for (const [key, label] of kinds) {
      const c = h("input", { type: "checkbox", name: `remind-${key}` });
      c.checked = Boolean(mail.reminders && mail.reminders[key]);
      boxes[key] = c;
      const l = h("label", { className: "field" });
      l.append(c, document.createTextNode(` ${label}`));
      box.append(l);
    }
    box.append(button("Save reminders", save("/api/account/email/reminders", () => ({ turn: boxes.turn.checked, invite: boxes.invite.checked, over: boxes.over.checked }), "Reminders saved."), { id: "btn-reminders" }));
  }
  if (mail.address) box.append(document.createTextNode(" "), button("Remove the address", save("/api/account/email/remove", () => ({}), "Address removed."), { id: "btn-email-remove" }));
  return box;
}

// /#/play/<game>: the link in emails (never a seat's secret link): opened
// through the signed-in player's own seat link.
async function openFromEmail() {
  const m = /^#\/play\/([A-Za-z0-9_-]{1,64})$/.exec(location.hash);
  if (!m) return;
  if (!me.user) {
    open();
    showNotice("Sign in to open the game from your email.");
    return;
  }
  try {
    const seat = await call(`/api/account/seat/${encodeURIComponent(m[1])}`);
    location.replace(seat.link);
  } catch (err) { showError(err.message); }
}

const panel = () => $("#community");

function open() {
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== "community";
  render();
}

function tabs() {
  const bar = h("div", { className: "community-tabs" });
  for (const [id, label] of [["lobby", "Lobby"], ["leaderboard", "Leaderboard"], ["profile", "My games"]]) {
    // "My games" is always the signed-in player's own (a profile opened from
    // the leaderboard is not "mine").
    const b = button(label, () => { tab = id; if (id === "profile") profileName = null; render(); }, { "aria-pressed": String(tab === id), "data-tab": id });
    bar.append(b);
  }
  return bar;
}

function signInForm() {
  const form = h("form", { id: "sign-in" });
  const name = h("input", { name: "name", autocomplete: "username", maxlength: "20", required: "", pattern: "[A-Za-z0-9_\\-]{3,20}" });
  const pass = h("input", { name: "password", type: "password", autocomplete: "current-password", minlength: "8", maxlength: "128", required: "" });
  const l1 = h("label", { className: "field" }, "User name ");
  l1.append(name);
  const l2 = h("label", { className: "field" }, "Password ");
  l2.append(pass);
  const help = h("span", { className: "help" }, "3 to 20 letters, digits, _ or -; a password of 8 to 128 characters. Guests can still play by link and against the AI.");
  const go = (path) => async () => {
    try {
      await call(path, { name: name.value, password: pass.value });
      await refreshAccountAndMail();
      const guest = ownerToken();
      if (guest) await call("/api/account/claim", {}, guest).catch(() => {});
      connect();
      render();
      refreshWaiting();
      openFromEmail();
    } catch (err) { showError(err.message); }
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); go("/api/account/signin")(); });
  form.append(l1, l2, help, h("div", { className: "row" }));
  form.lastChild.append(button("Sign in", go("/api/account/signin"), { id: "btn-sign-in" }), document.createTextNode(" "), button("Sign up", go("/api/account/signup"), { id: "btn-sign-up" }));
  return section("Sign in or sign up", form);
}

const passwordDraft = { open: false, old: "", neu: "" };

function accountBar() {
  const bar = h("p", { className: "community-me" });
  bar.append(document.createTextNode("Signed in as "), h("strong", { id: "me-name" }, me.user.name), document.createTextNode(" "));
  bar.append(button("Sign out", async () => {
    try { await call("/api/account/signout", {}); } catch (err) { showError(err.message); }
    if (socket) socket.close();
    socket = null; lobby = null;
    Object.assign(passwordDraft, { open: false, old: "", neu: "" });
    Object.assign(emailDraft, { open: false, address: null });
    forgetLobby();
    await refreshAccountAndMail();
    refreshWaiting();
    render();
  }, { id: "btn-sign-out" }));
  const pw = h("details", {});
  // Open, and what was typed, kept across the lobby's redraws.
  pw.open = passwordDraft.open;
  pw.addEventListener("toggle", () => { passwordDraft.open = pw.open; });
  pw.append(h("summary", {}, "Change password"));
  const old = h("input", { type: "password", autocomplete: "current-password", maxlength: "128", "aria-label": "current password", value: passwordDraft.old });
  const neu = h("input", { type: "password", autocomplete: "new-password", minlength: "8", maxlength: "128", "aria-label": "new password", value: passwordDraft.neu });
  old.addEventListener("input", () => { passwordDraft.old = old.value; });
  neu.addEventListener("input", () => { passwordDraft.neu = neu.value; });
  pw.append(old, neu, button("Change", async () => {
    try {
      await call("/api/account/password", { old_password: old.value, new_password: neu.value });
      Object.assign(passwordDraft, { open: false, old: "", neu: "" });
      showNotice("Password changed; your other sessions are signed out.");
    } catch (err) { showError(err.message); }
  }));
  bar.append(pw);
  return bar;
}

// The new-table form's choices, kept across the lobby's redraws (a push
// redraws the lobby; a choice made just before must not be lost).
const tableChoice = { players: "2", rated: true, takebacks: false, clock: "5+3" };

// Rated play paused after repeated no-shows (server/ratings/no_shows.py):
// the lobby says so before the player tries, and offers casual play only,
// until the time the server gave (then it draws itself again).
let pauseTimer = null;
function ratedPause() {
  const p = lobby && lobby.rated_pause;
  if (!p || p.until * 1000 <= Date.now()) return null;
  if (!pauseTimer) pauseTimer = setTimeout(() => { pauseTimer = null; render(); }, p.until * 1000 - Date.now() + 500);
  return p;
}
const atTime = (seconds) => new Date(seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

function pauseNotice(p) {
  const box = h("div", { id: "rated-pause", className: "pause-notice", role: "status" });
  box.append(h("strong", {}, `Rated play is paused until ${atTime(p.until)}.`), document.createTextNode(" "),
    h("span", {}, p.reason.replace(/^rated: /, "").replace(/^./, (c) => c.toUpperCase()) + ". Casual tables stay open."));
  return box;
}

function tableForm() {
  const form = h("form", { id: "new-table" });
  const paused = ratedPause();
  const rules = h("div", { className: "rule-fields" });
  ruleFields(rules, "table");
  const players = h("select", { name: "players", "aria-label": "players" });
  for (const n of [2, 3, 4]) players.append(h("option", { value: String(n) }, `${n} players`));
  players.value = tableChoice.players;
  const rated = h("input", { type: "checkbox", name: "rated" });
  rated.checked = tableChoice.rated && !paused;
  rated.disabled = !!paused;
  const takebacks = h("input", { type: "checkbox", name: "takebacks" });
  takebacks.checked = tableChoice.takebacks;
  const keep = () => Object.assign(tableChoice, { players: players.value, rated: rated.checked, takebacks: takebacks.checked, clock: clock.value });
  const keepRated = () => { if (!paused) keep(); else Object.assign(tableChoice, { players: players.value, clock: clock.value }); };
  rated.addEventListener("change", () => { if (rated.checked) takebacks.checked = false; keep(); });
  takebacks.addEventListener("change", () => { if (takebacks.checked) rated.checked = false; keepRated(); });
  players.addEventListener("change", () => keepRated());
  // Time controls as lichess offers them (minutes each + seconds a move);
  // a rated game always has one (the server gives 5 + 3 to one without),
  // and quick match pairs players of the same one.
  const clock = h("select", { name: "clock" });
  clock.append(h("option", { value: "" }, "no clock (casual tables)"));
  for (const [m, i] of [[1, 0], [3, 2], [5, 3], [10, 5], [15, 10], [30, 20]]) clock.append(h("option", { value: `${m}+${i}` }, `${m} min + ${i} s a move`));
  // Turn-based (docs/online.md): days per move, a reminder when it is your turn.
  for (const d of [1, 2, 3, 7]) clock.append(h("option", { value: `${d}d` }, `turn-based: ${d} day${d === 1 ? "" : "s"} a move`));
  clock.value = tableChoice.clock;
  clock.addEventListener("change", () => keepRated());
  const chosen = () => {
    if (clock.value.endsWith("d")) return { days: Number(clock.value.slice(0, -1)) };
    const [m, i] = clock.value ? clock.value.split("+").map(Number) : [0, 0];
    return m > 0 ? { minutes: m, increment: i } : null;
  };
  const lr = h("label", { className: "field" }); lr.append(rated, document.createTextNode(paused ? ` Rated (paused until ${atTime(paused.until)})` : " Rated (no takebacks)"));
  const lt = h("label", { className: "field" }); lt.append(takebacks, document.createTextNode(" Takebacks (unrated)"));
  const lm = h("label", { className: "field" }, "Time control "); lm.append(clock);
  form.append(rules, players, lr, lt, lm);
  const body = () => {
    const b = { ...ruleValues(form), players: Number(players.value) };
    return b;
  };
  const row = h("div", { className: "row" });
  row.append(
    button("Open a table", async () => {
      const b = { ...body(), rated: rated.checked, takebacks: takebacks.checked };
      const c = chosen();
      if (c) b.clock = c;
      try { await call("/api/lobby/tables", b); } catch (err) { showError(err.message); }
      poll();
    }, { id: "btn-open-table" }),
    document.createTextNode(" "),
    button("Quick match", async () => {
      const c = chosen();
      try { const r = await call("/api/lobby/queue", c ? { ...body(), clock: c } : body()); if (r.game) showNotice("Matched: your game is starting…"); } catch (err) { showError(err.message); }
      poll();
    }, paused ? { id: "btn-quick-match", disabled: "", title: "Quick match is rated: paused" } : { id: "btn-quick-match" }),
  );
  form.append(row);
  return section("A new table", form);
}

// The games waiting for my move, nearest deadline first: a list of links
// (drawn in the lobby and on the first screen).
function waitingItems(id) {
  const ul = h("ul", { id, className: "waiting-games" });
  for (const g of waiting) {
    const li = h("li", {});
    const left = g.deadline_at ? ` (${formatClock(Math.max(0, g.deadline_at * 1000 - Date.now()))} left)` : "";
    li.append(h("a", { href: g.link, className: "open-game" }, `${g.rules_label}: vs ${g.opponents.join(", ")}`), document.createTextNode(left));
    ul.append(li);
  }
  return ul;
}

function drawWaitingHome() {
  const box = $("#waiting-home");
  if (!box) return;
  box.hidden = !me.user || !waiting.length;
  box.replaceChildren();
  if (!box.hidden) box.append(h("h2", {}, "Waiting for your move"), waitingItems("waiting-home-list"));
}

async function refreshWaiting() {
  if (!me.user) { waiting = []; drawWaitingHome(); return; }
  try { waiting = (await call("/api/account/waiting")).games; } catch (err) { waiting = []; }
  drawWaitingHome();
  if (tab === "lobby") render();
}

function lobbyView() {
  const parts = [];
  if (!lobby) return [h("p", {}, "Loading the lobby…")];
  const paused = ratedPause();
  if (paused) parts.push(pauseNotice(paused));
  if (waiting.length) parts.push(section("Waiting for your move", waitingItems("waiting-lobby")));
  if (lobby.games.length) {
    const ul = h("ul", { id: "my-games" });
    for (const g of lobby.games) {
      const li = h("li", {});
      const a = h("a", { href: g.link, className: "open-game" }, `${g.rules_label}: vs ${g.opponents.join(", ")}`);
      li.append(a, document.createTextNode(g.rated ? " (rated)" : " (unrated)"));
      ul.append(li);
    }
    parts.push(section("Your games in progress", ul));
  }
  const offered = (lobby.rematches || []).filter((r) => !r.new_game && !r.declined);
  if (offered.length) {
    const ul = h("ul", { id: "rematches" });
    for (const r of offered) {
      const li = h("li", { "data-game": r.game }, `Rematch with ${r.players.filter((n) => n !== lobby.me).join(", ")}: `);
      li.append(...rematchControls(r, lobby.me, poll));
      ul.append(li);
    }
    parts.push(section("Rematches offered", ul));
  }
  if (lobby.invites.length) {
    const ul = h("ul", { id: "invites" });
    for (const i of lobby.invites) {
      const li = h("li", {}, `${i.from} invites you: ${i.rules_label} `);
      li.append(button("Join", () => join(i.table), { className: "join-invite" }));
      ul.append(li);
    }
    parts.push(section("Invitations", ul));
  }
  if (lobby.queued) {
    const p = h("p", { id: "queued" }, `Waiting for a quick match (${lobby.queued.players} players)… `);
    p.append(button("Stop waiting", async () => { try { await call("/api/lobby/queue/leave", {}); } catch (err) { showError(err.message); } poll(); }));
    parts.push(p);
  }
  const list = h("ul", { id: "tables" });
  for (const t of lobby.tables) {
    const li = h("li", { className: "lobby-table", "data-host": t.host });
    const clock = t.clock ? `, ${clockLabel(t.clock)}` : "";
    li.append(h("span", {}, `${t.rules_label}, ${t.players} players${clock}, ${t.rated ? "rated" : "unrated"}; waiting: ${t.waiting.join(", ")} `));
    if (lobby.table === t.id) {
      li.append(button("Leave", async () => { try { await call(`/api/lobby/tables/${encodeURIComponent(t.id)}/leave`, {}); } catch (err) { showError(err.message); } poll(); }, { className: "leave" }));
      const who = h("select", { "aria-label": "invite a player", className: "invite-who" });
      for (const n of lobby.online.filter((n) => n !== lobby.me && !t.waiting.includes(n))) who.append(h("option", { value: n }, n));
      if (who.options.length) {
        li.append(document.createTextNode(" "), who, button("Invite", async () => {
          try { await call("/api/lobby/invite", { to: who.value, table: t.id }); showNotice(`Invited ${who.value}.`); } catch (err) { showError(err.message); }
        }, { className: "invite" }));
      }
    } else {
      li.append(button("Join", () => join(t.id), { className: "join" }));
    }
    list.append(li);
  }
  if (!lobby.tables.length) list.append(h("li", {}, "No open table: open one."));
  parts.push(section("Open tables", list));
  parts.push(tableForm());
  parts.push(playBot(showProfile));
  const online = h("p", { id: "online-players" }, lobby.online.join(", ") || "nobody");
  parts.push(section("In the lobby now", online));
  return parts;
}

async function join(id) {
  try {
    await call(`/api/lobby/tables/${encodeURIComponent(id)}/join`, {});
  } catch (err) { showError(err.message); }
  poll();
}

async function leaderboardView(into) {
  try {
    const data = await call("/api/leaderboard");
    into.replaceChildren();
    if (!data.boards.length) into.append(h("p", {}, "No rated game yet."));
    into.append(h("p", { className: "provisional-note" }, PROVISIONAL_NOTE));
    for (const b of data.boards) {
      if (!b.players.length) {
        into.append(section(b.label, h("p", { className: "empty-board", "data-rules": b.rules }, "No settled rating yet.")));
        continue;
      }
      const table = h("table", { className: "leaderboard", "data-rules": b.rules });
      const head = h("tr", {});
      for (const c of ["#", "Player", "Rating", "Games"]) head.append(h("th", { scope: "col" }, c));
      table.append(head);
      for (const e of b.players) {
        const tr = h("tr", {});
        const who = h("td", {});
        who.append(button(e.name, () => showProfile(e.name), { className: "linkish" }));
        tr.append(h("td", {}, String(e.rank)), who, h("td", {}, shownRating(e)), h("td", {}, String(e.games)));
        table.append(tr);
      }
      into.append(section(b.label, table));
    }
  } catch (err) { showError(err.message); }
}

// Ratings are shown on a 1500 scale; a provisional one with a "?" (as
// lichess does) and never on the leaderboard (docs/community.md).
const PROVISIONAL_NOTE = "A rating marked ? is provisional: it is listed here after enough rated games against at least 5 different players.";

let profileName = null;

function showProfile(name) { profileName = name; tab = "profile"; render(); }

function render() {
  const p = panel();
  if (!p || p.hidden) return;
  p.replaceChildren(h("h2", {}, "Community"));
  if (!me.user) { p.append(signInForm()); return; }
  p.append(accountBar());
  if (mail && mail.enabled) p.append(emailSettings());
  p.append(tabs());
  const body = h("div", { id: "community-body" });
  p.append(body);
  if (tab === "lobby") body.append(...lobbyView());
  else if (tab === "leaderboard") leaderboardView(body);
  else profileView(body, profileName || me.user.name, showProfile, (about, p) => {
    if (p.me) myBots(about, call, render);
    else botCard(p.name, about, call);
  });
}

async function poll() {
  if (!me.user) return;
  try { lobby = await call("/api/lobby"); rematchesPushed(lobby.rematches); } catch (err) { showError(err.message); }
  if (tab === "lobby") render();
  refreshWaiting();
}

function connect() {
  if (!me.user || socket) return;
  const proto = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${proto}://${location.host}/api/lobby/ws`);
  socket.addEventListener("message", (e) => {
    let msg;
    try { msg = JSON.parse(e.data); } catch (err) { return; }
    if (msg.type !== "lobby") return;
    const before = lobby ? lobby.invites.length : 0;
    const games = lobby ? lobby.games.map((g) => g.game).join() : "";
    followLobby(lobby, msg.lobby);
    lobby = msg.lobby;
    rematchesPushed(lobby.rematches);
    if (lobby.games.map((g) => g.game).join() !== games) refreshWaiting();
    if (lobby.invites.length > before) showNotice(`${lobby.invites[lobby.invites.length - 1].from} invites you to a table (Community).`);
    if (tab === "lobby") render();
  });
  // 4401: the session is gone (signed out elsewhere, expired): show the
  // sign-in form. 4429: too many sockets (other tabs): try again later.
  socket.addEventListener("close", (e) => {
    socket = null;
    if (!me.user) return;
    if (e.code === 4401) {
      refreshAccountAndMail().then(() => { render(); if (me.user) setTimeout(connect, 30000); }, (err) => showError(err.message));
      return;
    }
    setTimeout(connect, e.code === 4429 ? 30000 : 3000);
  });
}

async function start() {
  const nav = $("#btn-community");
  if (!nav) return;
  for (const b of document.querySelectorAll("header nav button")) {
    // Buttons that open another panel (not toggles such as Sound).
    if (b !== nav && !b.hasAttribute("aria-pressed")) b.addEventListener("click", () => { panel().hidden = true; });
  }
  nav.addEventListener("click", async () => {
    // Read by the rule fields the lobby draws below (the page draws no meta).
    if (!store.meta) { try { setQuietly({ meta: await call("/api/meta") }); } catch (err) { /* shown by app.js */ } }
    open();
    poll();
  });
  addEventListener("hashchange", () => {
    if (location.hash.startsWith("#/online/")) panel().hidden = true;
    openFromEmail();
  });
  // The first screen lists the games waiting for my move whenever it shows.
  const again = $("#btn-new");
  if (again) again.addEventListener("click", () => refreshWaiting());
  try { await refreshAccountAndMail(); } catch (err) { return; }
  connect();
  refreshWaiting();
  openFromEmail();
}

// After a rated lobby game, the end screen offers a Report of the
// opponents too: added once app.js has drawn the end screen for this
// change (it redraws it on every change, whichever listener runs first).
subscribe(() => setTimeout(() => {
  const s = store.state;
  const body = $("#summary-body");
  if (!me.user || !body || !s || !s.finished || s.mode !== "online" || !s.rated || s.player < 0) return;
  // (an aborted game is never settled: nothing to wait for)
  const rating = s.ended_by === "aborted" ? "Your rating: unchanged (an aborted game is not rated)." : ratingAfter(s.id);
  if (!body.querySelector(".rating-after")) body.append(h("p", { className: "rating-after" }, rating));
  if (body.querySelector(".report")) return;
  body.append(reportForm(s.players.filter((_, p) => p !== s.player), s.id));
}, 0));

// The end screen's "Your rating: 1500 → 1578": the player's history row of
// that game, once the server has settled it (its lobby ticker does within
// seconds), asked for a few times; the text kept per game, since the end
// screen is drawn again on every change.
const ratingTexts = new Map();
function ratingAfter(gameId) {
  if (ratingTexts.has(gameId)) return ratingTexts.get(gameId);
  ratingTexts.set(gameId, "Your rating: being settled…");
  (async () => {
    for (let i = 0; i < 10; i++) {
      try {
        const p = await call(`/api/players/${encodeURIComponent(me.user.name)}`);
        const row = (p.history || []).find((g) => g.game === gameId);
        if (row && row.rating) {
          ratingTexts.set(gameId, `Your rating: ${row.rating.before} → ${row.rating.after}${counted(row.rating.weight)}`);
          const shown = $("#summary-body .rating-after");
          if (shown && store.state && store.state.id === gameId) shown.textContent = ratingTexts.get(gameId);
          return;
        }
      } catch (err) { /* asked again */ }
      await new Promise((done) => setTimeout(done, 1500));
    }
  })();
  return ratingTexts.get(gameId);
}

start();
