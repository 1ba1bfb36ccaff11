// The pane list, live: GET /api/watch relays the host's `watch` (one JSON
// object per line): first `{"panes": [...]}` (each pane a PaneSummary, as
// docs/PROTOCOL.md describes it), then `{"event": {...}}` for each
// `pane_started`, `pane_activity`, `pane_changed` (a new size or title),
// `pane_exited`, `pane_ended` and `pane_list`, and `{"panes": [...]}` again whenever the gateway watched
// afresh (after a host restart). A lost stream is reopened with a backoff.

import { authorization, tokenProblem } from '/access.js';

/** The first wait before reopening a lost stream, doubled up to RETRY_MAX_MS. */
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Yields each line of a response body. */
async function* lines(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    pending += value;
    let end;
    while ((end = pending.indexOf('\n')) >= 0) {
      yield pending.slice(0, end);
      pending = pending.slice(end + 1);
    }
  }
}

function cell(text) {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

/** A PaneState: `"running"`, or `{"exited": {"code", "signal"}}`. */
function stateText(pane) {
  const { state } = pane;
  if (typeof state === 'string') return state;
  const status = state?.exited;
  if (!status) return Object.keys(state ?? {})[0] ?? '';
  return status.signal ? `exited (${status.signal})` : `exited (${status.code})`;
}

/** The pane's labels (`{name: value}`), each `name=value`, in name order. */
function labelsCell(pane) {
  const td = document.createElement('td');
  td.className = 'labels';
  const labels = Object.entries(pane.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  td.append(
    ...labels.map(([name, value]) => {
      const label = document.createElement('span');
      label.className = 'label';
      label.textContent = `${name}=${value}`;
      return label;
    }),
  );
  return td;
}

export class PaneList {
  /**
   * `onOpen(paneId)` is called when a pane is chosen; `onClose(paneId)`
   * when its Close button is pressed (a promise); `onPick(paneIds)` when
   * the panes ticked to open side by side change.
   */
  constructor({ view, onOpen, onClose, onPick = () => {} }) {
    this.view = view;
    this.onOpen = onOpen;
    this.onClose = onClose;
    this.onPick = onPick;
    // Panes ticked to be opened side by side.
    this.picked = new Set();
    this.table = view.querySelector('#panes');
    this.body = this.table.querySelector('tbody');
    this.error = view.querySelector('#list-error');
    this.tokenHelp = document.getElementById('token-help');
    this.tokenReason = document.getElementById('token-help-reason');
    this.empty = view.querySelector('#list-empty');
    this.abort = null;
    this.byId = new Map();
  }

  show() {
    this.view.hidden = false;
    this.follow();
  }

  hide() {
    this.view.hidden = true;
    this.tokenHelp.hidden = true;
    this.abort?.abort();
    this.abort = null;
  }

  /** Follows the host's panes until hidden; reopens a lost stream. */
  async follow() {
    this.abort?.abort();
    const abort = new AbortController();
    this.abort = abort;
    let delay = RETRY_MIN_MS;
    while (!abort.signal.aborted) {
      try {
        const response = await fetch('/api/watch', {
          headers: { accept: 'application/x-ndjson', ...authorization() },
          signal: abort.signal,
        });
        this.showTokenHelp(response.status === 401);
        if (response.status === 401) {
          // Only another token helps (the page takes it on hashchange).
          this.table.hidden = true;
          this.empty.hidden = true;
          this.error.hidden = true;
          return;
        }
        if (!response.ok) {
          const body = await response.json().catch(() => ({}));
          throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${response.status}`);
        }
        for await (const line of lines(response.body)) {
          if (!line.trim()) continue; // the gateway's heartbeat
          if (this.apply(JSON.parse(line))) delay = RETRY_MIN_MS;
        }
        throw new Error('the gateway closed the stream');
      } catch (error) {
        if (abort.signal.aborted) return;
        this.error.textContent = `Cannot follow the panes: ${error.message}; trying again`;
        this.error.hidden = false;
      }
      await sleep(delay * (0.75 + Math.random() / 2), abort.signal);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  }

  /** Applies one line of the stream; true when it brought the whole list. */
  apply(message) {
    if (message.error) {
      this.error.textContent = `Cannot follow the panes: ${message.error.code}: ${message.error.message}; trying again`;
      this.error.hidden = false;
      return false;
    }
    if (message.panes) {
      // A new watch: nothing of what an earlier host said is kept.
      this.byId = new Map(message.panes.map((pane) => [pane.id, pane]));
      this.error.hidden = true;
      this.render();
      return true;
    }
    const [kind, body] = Object.entries(message.event ?? {})[0] ?? [];
    const known = body?.pane !== undefined && this.byId.get(typeof body.pane === 'string' ? body.pane : body.pane.id);
    switch (kind) {
      case 'pane_started':
        this.byId.set(body.pane.id, body.pane);
        break;
      case 'pane_activity':
        if (known) this.byId.set(known.id, { ...known, activity: body.activity });
        break;
      case 'pane_changed':
        if (known) this.byId.set(known.id, { ...known, size: body.size, title: body.title });
        break;
      case 'pane_exited':
        if (known) this.byId.set(known.id, { ...known, state: { exited: body.status } });
        break;
      case 'pane_ended':
        this.byId.delete(body.pane);
        if (this.picked.delete(body.pane)) this.onPick([...this.picked]);
        break;
      case 'pane_list':
        this.byId = new Map(body.panes.map((pane) => [pane.id, pane]));
        break;
      default:
        return false; // Anything newer: ignored.
    }
    this.render();
    return kind === 'pane_list';
  }

  /**
   * A 401: the tab holds no token, or one of an earlier `panehost web`.
   * Says how to get the right one instead of only the status.
   */
  showTokenHelp(shown) {
    this.tokenHelp.hidden = !shown;
    // Nothing can be started without the token.
    this.view.querySelector('#start-form').hidden = shown;
    if (!shown) return;
    this.tokenReason.textContent = tokenProblem();
  }

  /** Close, on a running pane only: never on an exited one. */
  actionsCell(pane) {
    const td = document.createElement('td');
    td.className = 'actions';
    if (pane.state !== 'running') return td;
    const close = document.createElement('button');
    close.type = 'button';
    close.className = 'close';
    close.textContent = 'Close';
    close.title = `End ${pane.id}'s process and forget the pane`;
    close.addEventListener('click', async () => {
      close.disabled = true;
      try {
        await this.onClose(pane.id);
        this.error.hidden = true;
      } catch (error) {
        this.error.textContent = `Cannot close ${pane.id}: ${error.message}`;
        this.error.hidden = false;
        close.disabled = false;
      }
      // The row goes when the host says the pane ended (`pane_ended`).
    });
    td.append(close);
    return td;
  }

  /** The panes, in the order the host listed them, then as they came. */
  get panes() {
    return [...this.byId.values()];
  }

  render() {
    const { panes } = this;
    this.body.replaceChildren(
      ...panes.map((pane) => {
        const row = document.createElement('tr');
        row.dataset.pane = pane.id;
        // `awaiting_approval` and `awaiting_input` are highlighted, each
        // its own way (style.css): the agent waits for the user.
        row.dataset.activity = pane.activity ?? '';
        const name = document.createElement('td');
        const link = document.createElement('a');
        link.href = `/?pane=${encodeURIComponent(pane.id)}`;
        link.textContent = pane.id;
        link.addEventListener('click', (event) => {
          if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
          event.preventDefault();
          this.onOpen(pane.id);
        });
        name.append(link);
        const pick = document.createElement('input');
        pick.type = 'checkbox';
        pick.className = 'pick';
        pick.value = pane.id;
        pick.title = 'Open side by side';
        pick.checked = this.picked.has(pane.id);
        pick.addEventListener('change', () => {
          if (pick.checked) this.picked.add(pane.id);
          else this.picked.delete(pane.id);
          this.onPick([...this.picked]);
        });
        const pickCell = document.createElement('td');
        pickCell.append(pick);
        row.append(
          name,
          cell(pane.runtime),
          cell(stateText(pane)),
          cell(pane.activity ?? ''),
          labelsCell(pane),
          cell(`${pane.size.cols}×${pane.size.rows}`),
          cell(pane.title),
          cell(pane.cwd),
          this.actionsCell(pane),
          pickCell,
        );
        return row;
      }),
    );
    this.table.hidden = panes.length === 0;
    this.empty.hidden = panes.length !== 0;
  }
}
