// The pane list: GET /api/panes, refreshed while it is shown. Its answer is
// the host's `panes` answer in the protocol's JSON (docs/PROTOCOL.md): each
// pane a PaneSummary.

import { authorization, tokenProblem } from '/access.js';

const REFRESH_MS = 2000;

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
   * when its Close button is pressed (a promise; the list refreshes after it).
   */
  constructor({ view, onOpen, onClose }) {
    this.view = view;
    this.onOpen = onOpen;
    this.onClose = onClose;
    this.table = view.querySelector('#panes');
    this.body = this.table.querySelector('tbody');
    this.error = view.querySelector('#list-error');
    this.tokenHelp = document.getElementById('token-help');
    this.tokenReason = document.getElementById('token-help-reason');
    this.empty = view.querySelector('#list-empty');
    this.timer = null;
    this.panes = [];
  }

  show() {
    this.view.hidden = false;
    this.refresh();
  }

  hide() {
    this.view.hidden = true;
    this.tokenHelp.hidden = true;
    clearTimeout(this.timer);
    this.timer = null;
  }

  async refresh() {
    clearTimeout(this.timer);
    try {
      const response = await fetch('/api/panes', { headers: { accept: 'application/json', ...authorization() } });
      const body = await response.json().catch(() => ({}));
      this.showTokenHelp(response.status === 401);
      if (response.status === 401) {
        this.table.hidden = true;
        this.empty.hidden = true;
        this.error.hidden = true;
      } else if (!response.ok) {
        throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${response.status}`);
      } else {
        this.render(body.panes);
        this.error.hidden = true;
      }
    } catch (error) {
      this.error.textContent = `Cannot list the panes: ${error.message}`;
      this.error.hidden = false;
    }
    if (!this.view.hidden) this.timer = setTimeout(() => this.refresh(), REFRESH_MS);
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
      }
      this.refresh();
    });
    td.append(close);
    return td;
  }

  render(panes) {
    this.panes = panes;
    this.body.replaceChildren(
      ...panes.map((pane) => {
        const row = document.createElement('tr');
        row.dataset.pane = pane.id;
        // `awaiting_input` is highlighted: the agent waits for the user.
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
        );
        return row;
      }),
    );
    this.table.hidden = panes.length === 0;
    this.empty.hidden = panes.length !== 0;
  }
}
