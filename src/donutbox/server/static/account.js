// The signed-in player (or nobody) and the community's requests: the
// session itself is an HttpOnly cookie this script never sees; every POST
// carries the CSRF token as X-CSRF-Token (docs/community.md).  Shared by
// the community screens, the profile, the lobby's follower and the end of
// an online game.

import { api } from "./api.js";

export const me = { user: null, csrf: "" };

// A community request: the session cookie goes by itself, every POST
// carries the CSRF token, and no owner token goes unless `bearer` is given
// (claiming this browser's games).
export async function call(path, body, bearer = null) {
  const csrf = body === undefined ? {} : { "X-CSRF-Token": me.csrf };
  const data = await api(path, body, bearer, undefined, csrf);
  if (data && typeof data.csrf === "string") me.csrf = data.csrf;
  return data;
}

export async function refreshAccount() {
  const a = await call("/api/account");
  me.user = a.user;
  me.csrf = a.csrf;
}
