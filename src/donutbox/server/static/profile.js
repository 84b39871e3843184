// A player's profile (docs/community.md, "Profiles and history"): ratings
// on the 1500 scale ("1578?" while provisional), games won, drawn and lost,
// a rating history graph per rule set (inline SVG, with a table of the
// same numbers for screen readers and keyboards), the head-to-head record
// against another player, and the games with their links (one's own).

import { el, h, button, showError, showNotice } from "./dom.js";
import { me, call } from "./account.js";

export function section(title, ...children) {
  const s = h("section", { className: "community-part" });
  s.append(h("h3", {}, title), ...children);
  return s;
}

// Ratings are shown on a 1500 scale; a provisional one with a "?" (as
// lichess does) and never on the leaderboard (docs/community.md).
export function shownRating(r) {
  return `${r.rating}${r.provisional ? "?" : ""}`;
}

export function counted(weight) {
  if (weight >= 1) return "";
  return weight > 0 ? ` (counted ${Math.round(weight * 100)}%)` : " (not counted)";
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

// A report to the server's moderators (docs/community.md, "Moderation"):
// of a player (their profile), or of an opponent in one of your games.
export function reportForm(names, game) {
  const box = h("details", { className: "report" });
  box.append(h("summary", {}, "Report"));
  const who = h("select", { "aria-label": "player to report" });
  for (const n of names) who.append(h("option", { value: n }, n));
  const reason = h("input", { maxlength: "500", required: "", "aria-label": "what happened", placeholder: "What happened?" });
  const send = button("Send report", async () => {
    try {
      await call(`/api/players/${encodeURIComponent(who.value)}/report`, game ? { reason: reason.value, game } : { reason: reason.value });
      box.open = false;
      showNotice("Reported: thank you; the moderators will look at it.");
    } catch (err) { showError(err.message); }
  }, { className: "send-report" });
  if (names.length > 1) box.append(who);
  box.append(reason, send);
  if (names.length === 1) who.value = names[0];
  return box;
}

function ordinal(n) {
  return n === 1 ? "1st" : n === 2 ? "2nd" : n === 3 ? "3rd" : `${n}th`;
}

async function download(id) {
  try {
    const record = await call(`/api/community/games/${encodeURIComponent(id)}/record`);
    const url = URL.createObjectURL(new Blob([JSON.stringify(record, null, 2)], { type: "application/json" }));
    const a = h("a", { href: url, download: `donutbox-${id}.json` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } catch (err) { showError(err.message); }
}

// The rated games of one rule set, oldest first, each {date, opponents,
// before, after} (voided games left out: they count for nothing).
function ratedGames(history, rules) {
  return history.filter((g) => g.rules === rules && g.rating && !g.voided).reverse().map((g) => ({
    date: g.date.slice(0, 10), opponents: g.opponents, before: g.rating.before, after: g.rating.after,
  }));
}

// The rating after each rated game of one rule set: a line from the rating
// before the first game, a dot per game (its tooltip the numbers), the
// lowest and highest ratings on the axis; below it, the same as a table.
export function ratingGraph(label, games) {
  const box = h("figure", { className: "rating-graph", "data-rules": label });
  const values = [games[0].before, ...games.map((g) => g.after)];
  const lo = Math.min(...values), hi = Math.max(...values);
  const span = Math.max(hi - lo, 20);
  // Drawn about 1:1 on a phone (no text under 12 px there), at most 24rem wide.
  const W = 300, H = 120, left = 44, right = 8, top = 10, bottom = 10;
  const x = (i) => left + (values.length === 1 ? 0 : (i * (W - left - right)) / (values.length - 1));
  const y = (v) => top + ((hi + (span - (hi - lo)) / 2 - v) * (H - top - bottom)) / span;
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${label}: rating ${values[0]} before the first rated game, ${values[values.length - 1]} after ${plural(games.length, "game", "games")}` });
  svg.append(el("line", { class: "axis", x1: left, y1: H - bottom, x2: W - right, y2: H - bottom }));
  svg.append(el("line", { class: "axis", x1: left, y1: top, x2: left, y2: H - bottom }));
  for (const v of new Set([lo, hi])) svg.append(el("text", { x: left - 4, y: y(v) + 4, "text-anchor": "end" }, String(v)));
  svg.append(el("polyline", { class: "line", points: values.map((v, i) => `${x(i)},${y(v)}`).join(" ") }));
  games.forEach((g, i) => {
    const dot = el("circle", { class: "dot", cx: x(i + 1), cy: y(g.after), r: 4 });
    dot.append(el("title", {}, `${g.date} vs ${g.opponents.join(", ")}: ${g.before} → ${g.after}`));
    svg.append(dot);
  });
  box.append(h("figcaption", {}, `${label}: rating history`), svg);
  const details = h("details");
  details.append(h("summary", {}, "The same as a table"));
  const table = h("table", { className: "rating-table" });
  const head = h("tr");
  for (const c of ["Game", "Date", "Opponents", "Before", "After"]) head.append(h("th", { scope: "col" }, c));
  table.append(head);
  games.forEach((g, i) => {
    const tr = h("tr");
    for (const v of [String(i + 1), g.date, g.opponents.join(", "), String(g.before), String(g.after)]) tr.append(h("td", {}, v));
    table.append(tr);
  });
  details.append(table);
  box.append(details);
  return box;
}

function resultsLine(r, id) {
  return h("p", { className: "results", id }, `${plural(r.games, "game", "games")}: ${plural(r.wins, "win", "wins")}, ${plural(r.draws, "draw", "draws")}, ${plural(r.losses, "loss", "losses")}`);
}

// Head to head: `name`'s games against another player (by default the
// signed-in player, on someone else's profile).
function headToHead(name) {
  const box = h("div", { id: "head-to-head" });
  const form = h("form", { className: "row" });
  const other = h("input", { name: "other", maxlength: "20", required: "", "aria-label": "opponent's user name", placeholder: "a player's name" });
  if (me.user && me.user.name !== name) other.value = me.user.name;
  const out = h("div", { id: "h2h-result", "aria-live": "polite" });
  const show = async () => {
    if (!other.value) return;
    try {
      const r = await call(`/api/players/${encodeURIComponent(name)}/vs/${encodeURIComponent(other.value)}`);
      out.replaceChildren(h("p", { className: "results" }, `${r.name} against ${r.other}: ${plural(r.games, "game", "games")}: ${plural(r.wins, "win", "wins")}, ${plural(r.draws, "draw", "draws")}, ${plural(r.losses, "loss", "losses")}`));
      if (r.list.length) {
        const ul = h("ul", { className: "h2h-games" });
        for (const g of r.list) ul.append(h("li", {}, `${(g.date || "").slice(0, 10)} ${g.rules_label}${g.rated ? " (rated)" : ""}: ${r.name} ${ordinal(g.places[0])}, ${r.other} ${ordinal(g.places[1])}: ${g.result}`));
        out.append(ul);
      }
    } catch (err) { showError(err.message); }
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); show(); });
  const label = h("label", { className: "field" }, `${name} against `);
  label.append(other);
  form.append(label, button("Compare", show, { id: "btn-h2h" }));
  box.append(form, out);
  if (other.value) show();
  return box;
}

// `name`'s profile into `into`; `open(name)` shows another player's.
// ``decorate(about, profile)``: adds to the profile's first section (the
// Bot API's card of a bot, or the player's own bots).
export async function profileView(into, name, open, decorate = null) {
  if (!name) return;
  try {
    const p = await call(`/api/players/${encodeURIComponent(name)}`);
    into.replaceChildren();
    const ratings = h("ul", { id: "ratings" });
    for (const [key, r] of Object.entries(p.ratings)) {
      const li = h("li", { className: r.provisional ? "provisional" : "", title: `mu ${r.model.mu.toFixed(2)}, sigma ${r.model.sigma.toFixed(2)}` },
        `${r.label || key}: ${shownRating(r)} ±${r.deviation} (${plural(r.games, "game", "games")}, ${plural(r.opponents, "opponent", "opponents")}${r.provisional ? "; provisional" : ""})`);
      ratings.append(li);
    }
    if (!ratings.children.length) ratings.append(h("li", {}, "No rated game yet."));
    const title = `${p.name}${p.online ? " (online)" : ""}${p.banned ? " (banned)" : ""}: ratings`;
    const about = section(title, ratings);
    if (p.results) about.append(resultsLine(p.results, "results"));
    if (!p.me && me.user) about.append(reportForm([p.name], null));
    into.append(about);
    if (decorate) decorate(about, p);
    const graphs = [];
    for (const [key, r] of Object.entries(p.ratings)) {
      const games = ratedGames(p.history, key);
      if (games.length) graphs.push(ratingGraph(r.label || key, games));
    }
    if (graphs.length) into.append(section("Rating history", ...graphs));
    into.append(section("Head to head", headToHead(p.name)));
    const table = h("table", { id: "history" });
    const head = h("tr", {});
    for (const c of ["Date", "Rules", "Opponents", "Result", "Rating", ""]) head.append(h("th", { scope: "col" }, c));
    table.append(head);
    for (const g of p.history) {
      const tr = h("tr", { "data-game": g.game });
      const result = g.finished ? `${ordinal(g.place)} (${g.score})` : "in progress";
      const change = g.voided ? "void" : g.rating ? `${g.rating.before} → ${g.rating.after}${counted(g.rating.weight)}` : (g.rated ? "" : "unrated");
      const links = h("td", {});
      if (g.link) {
        links.append(h("a", { href: g.link, className: g.finished ? "replay-link" : "open-game" }, g.finished ? "Replay" : "Open"));
        if (g.finished) {
          links.append(document.createTextNode(" "), button("Record", () => download(g.game), { className: "record" }));
          if (g.opponents.length) links.append(reportForm(g.opponents, g.game));
        }
      }
      const who = h("td", {});
      g.opponents.forEach((n, i) => {
        if (i) who.append(document.createTextNode(", "));
        who.append(button(n, () => open(n), { className: "linkish" }));
      });
      tr.append(h("td", {}, g.date.slice(0, 10)), h("td", {}, g.rules_label), who, h("td", {}, result), h("td", { className: "rating-change" }, change), links);
      table.append(tr);
    }
    into.append(section("Games", table));
  } catch (err) { showError(err.message); }
}
