// Rematch after a lobby game (docs/community.md, "Rematch"): on the end
// screen of an online game of the lobby, *Rematch* offers a new game with
// the same players, rules and clock, the seats turned by one; every other
// player sees the offer (pushed on their lobby socket: here, and in the
// lobby's "Rematches offered") with *Accept* and *Decline*; once all have
// accepted, the lobby takes every page of theirs to the new game
// (follow.js).  A game aborted because a player never arrived offers
// *Find a new opponent* instead: quick match with the same rules, number
// of players and clock (lichess's "New opponent"), the lobby taking the
// page to the game once paired.

import { $, h, button, showError, showNotice } from "./dom.js";
import { me, call } from "./account.js";
import { store, subscribe } from "./store.js";

// game id -> the offer as the server last said it ({game, players,
// accepted, waiting, declined, new_game, offered}), or null: not a lobby game.
const offers = new Map();
const asked = new Set();

async function send(game, path) {
  try {
    const r = await call(`/api/rematch/${encodeURIComponent(game)}${path}`, {});
    offers.set(game, r);
    drawEnd();
    return r;
  } catch (err) { showError(err.message); return null; }
}

// The controls of one offer for the player `mine`: what they may do now.
// `after()` runs after an answer (the lobby redraws).
export function rematchControls(r, mine, after = () => {}) {
  const act = (path) => async () => { await send(r.game, path); after(); };
  const others = r.players.filter((n) => n !== mine);
  if (r.new_game) return [h("span", {}, "Rematch accepted: the new game is starting…")];
  if (r.declined) return [h("span", {}, `${r.declined === mine ? "You" : r.declined} declined the rematch.`)];
  if (!r.offered || !r.accepted.length) {
    return [button("Rematch", act(""), { className: "rematch-offer", title: `A new game with ${others.join(", ")}: the same rules and clock, the seats turned by one; everyone must accept.` })];
  }
  if (r.waiting.includes(mine)) {
    return [h("span", {}, `${r.accepted.join(" and ")} offer${r.accepted.length === 1 ? "s" : ""} a rematch (same rules and clock, seats turned). `),
      button("Accept", act(""), { className: "rematch-accept" }),
      button("Decline", act("/decline"), { className: "rematch-decline" })];
  }
  return [h("span", { className: "rematch-waiting" }, `Rematch offered: waiting for ${r.waiting.join(" and ")} to accept…`)];
}

// The lobby socket's `rematches` (community.js): the offers of games this
// player sat in.
export function rematchesPushed(list) {
  for (const r of list || []) offers.set(r.game, { ...r, offered: true });
  drawEnd();
}

// The time control an aborted game was made with, as quick match takes it:
// the clock never ran, so each human seat's time left is its whole time.
export function clockOf(c) {
  if (!c) return null;
  if (c.days) return { days: c.days };
  const ms = Math.max(...c.remaining_ms.filter((x) => x !== null));
  return { minutes: ms / 60000, increment: c.increment_ms / 1000 };
}

function newOpponent(s) {
  return button("Find a new opponent", async () => {
    const body = { ...s.rules, players: s.players.length };
    const clock = clockOf(s.clock);
    if (clock) body.clock = clock;
    try {
      const r = await call("/api/lobby/queue", body);
      showNotice(r.game ? "Matched: your game is starting…" : "Waiting for a quick match: your game opens here once you are paired (Community shows the queue).");
    } catch (err) { showError(err.message); }
  }, { id: "btn-new-opponent", title: "Quick match (rated) with the same rules, players and clock" });
}

function endable(s) {
  return Boolean(me.user) && s && s.finished && s.mode === "online" && store.online && s.player >= 0;
}

// On the end screen of a lobby game of yours: the offer and its controls.
function drawEnd() {
  const s = store.state;
  const body = $("#summary-body");
  if (!body || !endable(s)) return;
  if (!offers.has(s.id) && !asked.has(s.id)) {
    asked.add(s.id);
    call(`/api/rematch/${encodeURIComponent(s.id)}`).then(
      (r) => { offers.set(s.id, r); drawEnd(); },
      () => { offers.set(s.id, null); }, // not a lobby game (404): no rematch here
    );
    return;
  }
  const r = offers.get(s.id);
  if (!r) return;
  let box = body.querySelector("#online-end");
  if (!box) {
    box = h("div", { id: "online-end", "aria-live": "polite" });
    body.prepend(box);
  }
  const p = h("p", { className: "rematch" });
  // Nobody to play again with when someone never came: a new opponent.
  p.append(...(s.ended_by === "aborted" ? [newOpponent(s)] : rematchControls(r, me.user.name)));
  box.replaceChildren(p);
}

// log.js draws the end screen again on every change: add ours after it.
subscribe(() => setTimeout(drawEnd, 0));
