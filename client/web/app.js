// The page: the pane list at `/`, one pane's terminal at `/?pane=ID`.
//
// For tests (and the curious), `window.panehost` holds the open view and its
// xterm.js Terminal: `panehost.term`, `panehost.view.visibleRows()`, and
// `panehost.view.renderedOffset`; every drawn output also fires a
// `panehost:rendered` event on window with {pane, generation, offset}.

import { takeTokenFromAddress, token, tokenProblem } from '/access.js';
import { closePane } from '/host-api.js';
import { gridPanes, GRID_MAX, PaneGrid } from '/pane-grid.js';
import { PaneList } from '/pane-list.js';
import { StartForm } from '/start-form.js';
import { PaneView } from '/terminal-view.js';
import { ResumeStore } from '/resume-store.js';

// First: the token leaves the address bar (and the history) for storage
// only this origin can read.
takeTokenFromAddress();

const store = new ResumeStore();
const elements = {
  paneName: document.getElementById('pane-name'),
  status: document.getElementById('status'),
  interrupt: document.getElementById('interrupt'),
  close: document.getElementById('close'),
  attention: document.getElementById('attention'),
  termView: document.getElementById('term-view'),
  terminal: document.getElementById('terminal'),
  notice: document.getElementById('notice'),
  tokenHelp: document.getElementById('token-help'),
  tokenReason: document.getElementById('token-help-reason'),
};

const panehost = { store, view: null, term: null, list: null, grid: null };
window.panehost = panehost;

const list = new PaneList({
  view: document.getElementById('list-view'),
  onOpen: (pane) => {
    history.pushState(null, '', `/?pane=${encodeURIComponent(pane)}`);
    route();
  },
  onClose: closePane,
  onPick: (panes) => {
    const openGrid = document.getElementById('open-grid');
    openGrid.disabled = panes.length < 2 || panes.length > GRID_MAX;
    document.getElementById('grid-count').textContent =
      panes.length > GRID_MAX ? `at most ${GRID_MAX} side by side` : panes.length ? `${panes.length} ticked` : '';
  },
});
document.getElementById('open-grid').addEventListener('click', () => {
  const panes = [...list.picked].slice(0, GRID_MAX);
  history.pushState(null, '', `/?panes=${panes.map(encodeURIComponent).join(',')}`);
  route();
});

const grid = new PaneGrid({ container: document.getElementById('grid-view'), store });
panehost.grid = grid;
panehost.list = list;

const startForm = new StartForm({
  form: document.getElementById('start-form'),
  // The new pane comes to the list with the host's `pane_started`.
  onStarted: () => {},
});
panehost.startForm = startForm;

let noticeTimer = null;

function showNotice(text) {
  elements.notice.textContent = text;
  elements.notice.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => {
    elements.notice.hidden = true;
  }, 15000);
}

/** What the agent waits for, highlighted in the header; null: nothing. */
function showAttention(wait) {
  elements.attention.hidden = !wait;
  elements.attention.dataset.kind = wait?.kind ?? '';
  if (!wait) return;
  const what = wait.kind === 'approval_requested' ? 'approval requested' : 'awaiting input';
  elements.attention.textContent = wait.detail ? `${what}: ${wait.detail}` : what;
}

function closeView() {
  grid.dispose();
  panehost.view?.dispose();
  panehost.view = null;
  panehost.term = null;
  elements.terminal.replaceChildren();
  elements.notice.hidden = true;
  elements.tokenHelp.hidden = true;
  elements.interrupt.hidden = true;
  elements.close.hidden = true;
  showAttention(null);
  elements.paneName.textContent = '';
  elements.status.textContent = '';
}

function showPane(pane) {
  if (panehost.view?.pane === pane) return;
  closeView();
  list.hide();
  if (!token()) {
    // Without a token the socket would only be refused, again and again.
    elements.paneName.textContent = pane;
    elements.status.textContent = 'no access token';
    elements.tokenReason.textContent = tokenProblem();
    elements.tokenHelp.hidden = false;
    return;
  }
  elements.termView.hidden = false;
  elements.paneName.textContent = pane;
  document.title = `${pane} · panehost`;
  const view = new PaneView({
    pane,
    container: elements.terminal,
    store,
    onStatus: (text) => {
      elements.status.textContent = text;
    },
    onNotice: showNotice,
    // Interrupt and Close are offered only while the process runs: never on an exited pane.
    onRunning: (running) => {
      elements.interrupt.hidden = !running;
      elements.close.hidden = !running;
    },
    onAttention: showAttention,
    onTitle: (title) => {
      document.title = title ? `${title} · ${pane}` : `${pane} · panehost`;
    },
  });
  panehost.view = view;
  view.open();
  panehost.term = view.term;
}

function showGrid(panes) {
  closeView();
  list.hide();
  elements.termView.hidden = true;
  document.title = `${panes.join(', ')} · panehost`;
  if (!token()) {
    elements.status.textContent = 'no access token';
    elements.tokenReason.textContent = tokenProblem();
    elements.tokenHelp.hidden = false;
    return;
  }
  elements.paneName.textContent = panes.join(' · ');
  grid.show(panes);
}

function showList() {
  closeView();
  elements.termView.hidden = true;
  document.title = 'panehost';
  list.show();
  if (token()) startForm.load();
}

function route() {
  const query = new URLSearchParams(location.search);
  const panes = gridPanes(query.get('panes'));
  const pane = query.get('pane');
  if (panes.length) showGrid(panes);
  else if (pane) showPane(pane);
  else showList();
}

elements.notice.addEventListener('click', () => {
  elements.notice.hidden = true;
});
elements.interrupt.addEventListener('click', () => {
  panehost.view?.interrupt();
  panehost.term?.focus();
});
elements.close.addEventListener('click', async () => {
  const pane = panehost.view?.pane;
  if (!pane) return;
  elements.close.disabled = true;
  try {
    await closePane(pane);
    showNotice(`Closed ${pane}`);
  } catch (error) {
    showNotice(`Close: ${error.message}`);
  } finally {
    elements.close.disabled = false;
  }
});
window.addEventListener('popstate', route);
// The right address pasted into this tab differs only in its fragment: the
// browser does not reload the page, so take the token and show the view again.
window.addEventListener('hashchange', () => {
  if (!takeTokenFromAddress()) return;
  closeView();
  route();
});
route();
