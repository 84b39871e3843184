// Talking to the server over HTTP.  Local games belong to this browser: one
// owner token, kept in localStorage, goes as the bearer on every /api/games
// request (and as ?token= on the game's socket); the server mints one with
// this browser's first game, and the page keeps it.

import { store } from "./store.js";

const OWNER = "donutbox.owner";

export function ownerToken() {
  try { return localStorage.getItem(OWNER); } catch (err) { return null; }
}

function keepOwner(data) {
  if (data && typeof data.owner_token === "string" && !ownerToken()) {
    try { localStorage.setItem(OWNER, data.owner_token); } catch (err) { /* private mode */ }
  }
}

// The bearer of a /api/games/<id>/... request: the seat's token when <id>
// is an online game this page showed (its analysis: a request still
// polling after the page moved on to another game goes with it too), else
// this browser's owner token.
const seatTokens = new Map(); // online game id (as in a path) -> its seat's token
function gameToken(path) {
  const online = store.online;
  if (online && online.token) {
    seatTokens.delete(encodeURIComponent(online.id)); // newest last; at most 20 kept
    seatTokens.set(encodeURIComponent(online.id), online.token);
    if (seatTokens.size > 20) seatTokens.delete(seatTokens.keys().next().value);
  }
  const id = path.split("/")[3];
  return seatTokens.get(id) || ownerToken();
}

// GET `path` (no body) or POST `body` as JSON.  `token`: the bearer to send
// (default: the owner token for /api/games...; an online game's link token
// is passed explicitly; null for none).  `extra`: more headers (the
// community's CSRF token).  Throws an Error with the server's one-line
// reason.  The page's one path to `fetch`.
export async function api(path, body, token, method, extra = {}) {
  const headers = { ...extra };
  const bearer = token !== undefined ? token : (path.startsWith("/api/games") ? gameToken(path) : null);
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const opts = body === undefined
    ? { headers, ...(method ? { method } : {}) }
    : { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  const data = r.status === 204 ? {} : await r.json().catch(() => ({}));
  if (!r.ok) {
    const detail = Array.isArray(data.detail) ? data.detail.map((d) => d.msg).join("; ") : data.detail;
    throw new Error(detail || `HTTP ${r.status}`);
  }
  keepOwner(data);
  return data;
}

// The WebSocket URL of a local game (browsers cannot set headers on one).
export function gameSocketUrl(id) {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const token = ownerToken();
  const query = token ? `?token=${encodeURIComponent(token)}` : "";
  return `${proto}://${location.host}/api/games/${encodeURIComponent(id)}/ws${query}`;
}
