// Bots in the Community screens (docs/bots.md): a bot's card on its
// profile, with a challenge (time control, rated) that opens the game once
// the bot accepts; "Play a bot" in the lobby (a bot's name opens its
// profile); and, on one's own profile, one's bots and their API tokens
// (made, shown once, revoked).  community.js calls these with its own
// `call` (the session cookie and the CSRF token go with every request).

import { h, button, showError } from "./dom.js";

const CLOCKS = [[1, 0], [3, 2], [5, 3], [10, 5], [15, 10], [30, 20]];
const enc = encodeURIComponent;

// The lobby's "Play a bot": a name, opened as a profile (whose card has
// the challenge).
export function playBot(showProfile) {
  const form = h("form", { id: "play-bot" });
  const name = h("input", { name: "bot", maxlength: "20", "aria-label": "bot name", placeholder: "a bot's name", pattern: "[A-Za-z0-9_\\-]{3,20}", required: "" });
  form.addEventListener("submit", (e) => { e.preventDefault(); if (name.value) showProfile(name.value); });
  form.append(name, document.createTextNode(" "), button("Open", () => { if (name.value) showProfile(name.value); }, { id: "btn-open-bot" }));
  const s = h("section", { className: "community-part" });
  s.append(h("h3", {}, "Play a bot"), h("p", { className: "help" }, "Bots are programs their owners connect with a token; they play in a rating pool of their own."), form);
  return s;
}

// On a profile: if the player is a bot, its card and a challenge form,
// after `anchor` (the profile's first part).
export async function botCard(name, anchor, call) {
  let bot;
  try { bot = await call(`/api/bots/${enc(name)}`); } catch (err) { return; } // a person
  const s = h("section", { className: "community-part", id: "bot-card" });
  s.append(h("h3", {}, `${bot.name} is a bot`), h("p", {}, `Run by ${bot.owner}; ${bot.online ? "connected now" : "not connected now"}. Its games are rated in the bots' own pool.`));
  const clock = h("select", { name: "clock", "aria-label": "time control" });
  for (const [m, i] of CLOCKS) clock.append(h("option", { value: `${m}+${i}` }, `${m} min + ${i} s a move`));
  clock.value = "5+3";
  const rated = h("input", { type: "checkbox", name: "rated" });
  rated.checked = true;
  const lr = h("label", { className: "field" }); lr.append(rated, document.createTextNode(" Rated"));
  const status = h("p", { id: "challenge-status", role: "status" });
  const go = button("Challenge", async () => {
    const [minutes, increment] = clock.value.split("+").map(Number);
    try {
      const c = await call(`/api/bots/${enc(bot.name)}/challenge`, { clock: { minutes, increment }, rated: rated.checked });
      status.textContent = `Waiting for ${bot.name} to answer…`;
      go.disabled = true;
      await follow(c.id, status, call);
    } catch (err) { showError(err.message); }
    go.disabled = false;
  }, { id: "btn-challenge-bot" });
  const row = h("div", { className: "row" });
  row.append(clock, document.createTextNode(" "), lr, document.createTextNode(" "), go);
  s.append(row, status);
  anchor.after(s);
}

// A challenge's answer, asked for once a second (a bot answers within
// seconds, and the server lets a challenge expire after a minute): once
// accepted, the game opens through the seat's link of the lobby's games.
async function follow(id, status, call) {
  for (let i = 0; i < 90; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const c = await call(`/api/bots/challenges/${enc(id)}`);
    if (c.status === "accepted" && c.game) {
      const lobby = await call("/api/lobby");
      const g = lobby.games.find((x) => x.game === c.game);
      status.textContent = "Accepted: the game opens.";
      if (g) location.hash = g.link.slice(g.link.indexOf("#") + 1);
      return;
    }
    if (c.status !== "created") {
      status.textContent = `The challenge was ${c.status}${c.reason ? ` (${c.reason})` : ""}.`;
      return;
    }
  }
}

// On one's own profile, after `anchor`: one's bots and their tokens.
export async function myBots(anchor, call, refresh) {
  let bots;
  try { bots = await call("/api/account/bots"); } catch (err) { return; }
  const s = h("section", { className: "community-part", id: "my-bots" });
  s.append(h("h3", {}, "Your bots"));
  const shown = h("p", { id: "new-token", role: "status" });
  for (const b of bots) {
    const li = h("div", { className: "bot", "data-bot": b.name });
    li.append(h("strong", {}, b.name), document.createTextNode(" "));
    li.append(button("New token", async () => {
      try {
        const t = await call(`/api/account/bots/${enc(b.name)}/tokens`, {});
        shown.replaceChildren(document.createTextNode(`Token for ${b.name} (shown once; copy it now): `), h("code", {}, t.token));
      } catch (err) { showError(err.message); }
    }, { className: "new-token" }));
    const ul = h("ul", {});
    for (const t of b.tokens) {
      const when = t.revoked ? `revoked ${t.revoked.slice(0, 10)}` : `last used ${t.last_used ? t.last_used.slice(0, 16).replace("T", " ") : "never"}`;
      const item = h("li", {}, `token ${t.id}, made ${t.created.slice(0, 10)}, ${when} `);
      if (!t.revoked) item.append(button("Revoke", async () => { try { await call(`/api/account/bots/${enc(b.name)}/tokens/${t.id}/revoke`, {}); refresh(); } catch (err) { showError(err.message); } }, { className: "revoke" }));
      ul.append(item);
    }
    li.append(ul);
    s.append(li);
  }
  const name = h("input", { maxlength: "20", "aria-label": "new bot name", placeholder: "new bot's name" });
  const row = h("div", { className: "row" });
  row.append(name, document.createTextNode(" "), button("Make a bot", async () => {
    try { await call("/api/account/bots", { name: name.value }); refresh(); } catch (err) { showError(err.message); }
  }, { id: "btn-new-bot" }));
  s.append(row, shown);
  anchor.after(s);
}
