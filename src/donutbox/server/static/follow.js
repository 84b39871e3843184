// The lobby moves with you (docs/community.md, "The lobby follows you"):
// every page of a signed-in player holds a lobby socket, whose pushes carry
// the player's own part: their games in progress and the rematches offered
// after their games.  A game that appears there (a table of theirs filled,
// quick match paired them, a rematch was accepted by all) takes the page to
// it without a click, with a sound (if Sound is on) and a notice; a
// rematch offered by another player is a notice too.  Never the red error
// area: nothing went wrong.

import { showNotice } from "./dom.js";
import { gameFound } from "./sound.js";

let known = null; // the ids of the games in progress the page has seen
let offers = null; // "game/accepted names" of rematch offers seen

// The first lobby state after loading the page knows every game in
// progress: of those, only one made after the page was loaded is new (a
// reload never jumps to a game, and a table that filled while the socket
// was opening still takes the page along).
const loaded = performance.timeOrigin;

// `before`, `after`: lobby states (`before` null: the first).
export function followLobby(before, after) {
  const games = after.games || [];
  const ids = new Set(games.map((g) => g.game));
  const fresh = games.filter((g) => (known === null ? Date.parse(g.date) > loaded : !known.has(g.game)));
  known = ids;
  if (fresh.length) {
    const g = fresh[0];
    const against = g.opponents.length ? ` against ${g.opponents.join(", ")}` : "";
    showNotice(`Your game${against} has started (${g.rules_label}${g.rated ? ", rated" : ""}).`);
    gameFound();
    const hash = new URL(g.link, location.origin).hash;
    if (location.hash !== hash) location.hash = hash;
  }
  const seen = new Set((after.rematches || []).map((r) => `${r.game}/${r.accepted.join(",")}/${r.declined || ""}`));
  if (offers !== null) {
    for (const r of after.rematches || []) {
      const key = `${r.game}/${r.accepted.join(",")}/${r.declined || ""}`;
      if (offers.has(key) || r.new_game) continue;
      if (r.declined && r.declined !== after.me) showNotice(`${r.declined} declined the rematch.`);
      else if (!r.declined && r.waiting.includes(after.me)) {
        showNotice(`${r.accepted.join(" and ")} offer${r.accepted.length === 1 ? "s" : ""} a rematch (the game's end screen, or Community).`);
        gameFound();
      }
    }
  }
  offers = seen;
  return before;
}

// Forget what was seen (signed out).
export function forgetLobby() {
  known = null;
  offers = null;
}
