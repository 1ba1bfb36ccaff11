// The access token. `panehost web` prints the page's address with the token
// in its fragment (`/#token=...`), which the browser never sends to a
// server. The page moves it into this tab's sessionStorage, which only
// this origin (scheme, host and port) can read, and sends it with each
// request that needs it: as `Authorization: Bearer` on `/api/panes`, and
// as the WebSocket subprotocol `panehost.token.<token>` (a page cannot set
// headers on a WebSocket). A reload keeps it; no cookie is set, because a
// browser sends a host's cookies to every port of that host.

const KEY = 'panehost-token';

/** Moves a token in the address's fragment into sessionStorage; true when there was one. */
export function takeTokenFromAddress() {
  const match = /(?:^#|&)token=([0-9a-f]+)/.exec(location.hash);
  if (!match) return false;
  sessionStorage.setItem(KEY, match[1]);
  history.replaceState(history.state, '', `${location.pathname}${location.search}`);
  return true;
}

/** The token this tab holds, or null. */
export function token() {
  return sessionStorage.getItem(KEY);
}

/** Headers that carry the token. */
export function authorization() {
  const held = token();
  return held ? { authorization: `Bearer ${held}` } : {};
}

/** The WebSocket subprotocols to ask for: the one the server picks, and the token. */
export function socketProtocols() {
  const held = token();
  return held ? ['panehost', `panehost.token.${held}`] : ['panehost'];
}

/**
 * Why the gateway refused this tab (a 401), in words: it holds no token,
 * or one it does not accept. The page shows it above how to get the right one.
 */
export function tokenProblem() {
  return token()
    ? 'This page holds an access token that this panehost web does not accept: it came from another run of panehost web.'
    : 'This page needs the access token of the panehost web that serves it, and it was opened without one.';
}
