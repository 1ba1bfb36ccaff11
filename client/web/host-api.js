// The gateway's JSON routes that change the host or describe it: the
// runtimes, starting a pane, closing one (docs/WEB.md, section 5). Each
// carries the token; a failure throws an Error whose message is the
// protocol's error body (`CODE: message`) and whose `status` is the HTTP
// status.

import { authorization } from '/access.js';

async function call(path, { method = 'GET', body } = {}) {
  const headers = { accept: 'application/json', ...authorization() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(answer.error ? `${answer.error.code}: ${answer.error.message}` : `HTTP ${response.status}`);
    error.status = response.status;
    error.code = answer.error?.code;
    throw error;
  }
  return answer;
}

/** The host's runtimes (RuntimeInfo each), as `panehost runtimes --json` lists them. */
export async function runtimes() {
  return (await call('/api/runtimes')).runtimes;
}

/** The host's panes (PaneSummary each), as `panehost ls --json` lists them. */
export async function panes() {
  return (await call('/api/panes')).panes;
}

/** Starts a pane: `{runtime, cwd?, labels?, permission_profile?}`; its PaneSummary. */
export function startPane(start) {
  return call('/api/panes', { method: 'POST', body: start });
}

/** Closes a pane: the host's `closed` answer, `{pane, status, sweep}`. */
export function closePane(pane) {
  return call(`/api/panes/${encodeURIComponent(pane)}/close`, { method: 'POST' });
}
