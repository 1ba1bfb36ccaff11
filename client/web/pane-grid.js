// Several panes side by side, at `/?panes=ID,ID,...` (up to GRID_MAX):
// each in a cell of its own, with its own terminal, WebSocket and resume
// state (a PaneView each, as the single view has), its status, what its
// agent waits for, and Interrupt and Close while its process runs.

import { closePane } from '/host-api.js';
import { PaneView } from '/terminal-view.js';

/** The most panes shown side by side. */
export const GRID_MAX = 4;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** `a,b,a,,c` as `['a', 'b', 'c']`, at most GRID_MAX. */
export function gridPanes(text) {
  return [...new Set((text ?? '').split(',').filter(Boolean))].slice(0, GRID_MAX);
}

class PaneCell {
  constructor({ pane, store, parent }) {
    this.pane = pane;
    this.root = element('div', 'cell');
    this.root.dataset.pane = pane;
    const head = element('div', 'cell-head');
    const link = element('a', 'cell-name', pane);
    link.href = `/?pane=${encodeURIComponent(pane)}`;
    this.status = element('span', 'cell-status');
    this.attention = element('span', 'cell-attention');
    this.attention.hidden = true;
    const spacer = element('span', 'spacer');
    this.interrupt = element('button', 'cell-interrupt', 'Interrupt');
    this.interrupt.type = 'button';
    this.interrupt.hidden = true;
    this.close = element('button', 'cell-close', 'Close');
    this.close.type = 'button';
    this.close.hidden = true;
    head.append(link, this.status, this.attention, spacer, this.interrupt, this.close);
    this.notice = element('div', 'cell-notice');
    this.notice.hidden = true;
    this.notice.addEventListener('click', () => {
      this.notice.hidden = true;
    });
    const terminal = element('div', 'cell-terminal');
    this.root.append(head, this.notice, terminal);
    parent.append(this.root);

    this.view = new PaneView({
      pane,
      container: terminal,
      store,
      onStatus: (text) => {
        this.status.textContent = text;
      },
      onNotice: (text) => this.showNotice(text),
      onRunning: (running) => {
        this.interrupt.hidden = !running;
        this.close.hidden = !running;
      },
      onAttention: (wait) => {
        this.attention.hidden = !wait;
        this.attention.dataset.kind = wait?.kind ?? '';
        if (!wait) return;
        const what = wait.kind === 'approval_requested' ? 'approval requested' : 'awaiting input';
        this.attention.textContent = wait.detail ? `${what}: ${wait.detail}` : what;
      },
      onTitle: () => {},
    });
    this.interrupt.addEventListener('click', () => {
      this.view.interrupt();
      this.view.term?.focus();
    });
    this.close.addEventListener('click', async () => {
      this.close.disabled = true;
      try {
        await closePane(pane);
      } catch (error) {
        this.showNotice(`Close: ${error.message}`);
      } finally {
        this.close.disabled = false;
      }
    });
  }

  showNotice(text) {
    this.notice.textContent = text;
    this.notice.hidden = false;
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => {
      this.notice.hidden = true;
    }, 15000);
  }

  dispose() {
    clearTimeout(this.noticeTimer);
    this.view.dispose();
    this.root.remove();
  }
}

export class PaneGrid {
  constructor({ container, store }) {
    this.container = container;
    this.store = store;
    this.cells = [];
  }

  /** The views, in the grid's order. */
  get views() {
    return this.cells.map((cell) => cell.view);
  }

  /** Shows `panes` side by side: up to two in a row, then two rows. */
  show(panes) {
    this.dispose();
    const columns = panes.length <= 2 ? panes.length : 2;
    this.container.style.gridTemplateColumns = `repeat(${columns}, minmax(0, 1fr))`;
    this.container.style.gridTemplateRows = `repeat(${Math.ceil(panes.length / columns)}, minmax(0, 1fr))`;
    this.container.hidden = false;
    this.cells = panes.map((pane) => new PaneCell({ pane, store: this.store, parent: this.container }));
    for (const cell of this.cells) cell.view.open();
    this.cells[0]?.view.term?.focus();
  }

  dispose() {
    for (const cell of this.cells) cell.dispose();
    this.cells = [];
    this.container.hidden = true;
  }
}
