// One pane in an xterm.js terminal: the WebSocket to the server, the order
// in which things reach the screen, the size, and what is remembered for a
// reload (see resume-store.js).
//
// The server's messages are objects with one key (docs/WEB.md): `start` and
// `event`, the lines `panehost events --json` prints, whose values are the
// protocol's own JSON (a StreamStart, an Event: docs/PROTOCOL.md), then
// `interrupted` and `error`.
//
// Everything that changes the screen goes through one queue, in the order
// the server sent it: output is handed to xterm at once (xterm keeps the
// order), while a reset (a snapshot) or a size change waits until xterm has
// drawn everything before it. The end offset of each output is noted only in
// the callback xterm calls once that output is drawn: the position saved for
// a reload never runs ahead of the screen.

import { Terminal } from '/vendor/xterm.mjs';
import { FitAddon } from '/vendor/addon-fit.mjs';
import { SerializeAddon } from '/vendor/addon-serialize.mjs';
import { socketProtocols } from '/access.js';
import { fromBase64, latin1, toBase64, utf8 } from '/bytes.js';
import { panes } from '/host-api.js';
import { SequenceTail } from '/sequence-tail.js';

/** Lines the terminal keeps above the screen. */
const SCROLLBACK = 5000;
/** Of those, lines saved with the screen for a reload. */
const SAVED_SCROLLBACK = 2000;
/** Reconnect backoff: first wait, longest wait. */
const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 5000;
/** Input typed while disconnected that is kept for the next connection. */
const MAX_PENDING_INPUT = 64 * 1024;
/** Largest input per message. */
const INPUT_CHUNK = 256 * 1024;
/** The largest pane the host accepts: columns, rows and cells. */
const PANE_MAX_COLS = 1000;
const PANE_MAX_ROWS = 1000;
const PANE_MAX_CELLS = 250000;

/** How long window size changes settle before the pane is resized. */
const FIT_DELAY_MS = 60;

function plural(n, one, many) {
  return n === 1 ? one : many;
}

/**
 * The variant of one of the protocol's enums (externally tagged): the string
 * of a unit variant, or the one key of an object, with what it holds.
 */
function variant(value) {
  if (typeof value === 'string') return [value, null];
  const [name] = Object.keys(value ?? {});
  return [name, name === undefined ? null : value[name]];
}

/** "N bytes were skipped". */
export function skippedNotice(skipped) {
  return `${skipped} ${plural(skipped, 'byte was', 'bytes were')} skipped`;
}

export class PaneView {
  /**
   * @param {object} options
   * @param {string} options.pane the pane id
   * @param {HTMLElement} options.container where the terminal goes
   * @param {import('/resume-store.js').ResumeStore} options.store
   * @param {(text: string) => void} options.onStatus connection state for people
   * @param {(text: string) => void} options.onNotice a notice to show
   * @param {(title: string) => void} options.onTitle the window title the process set
   * @param {(running: boolean) => void} options.onRunning whether the pane's process
   *   is known to run (its stream started and it has not exited): what the
   *   actions on the process (interrupt) apply to
   * @param {(wait: {kind: string, detail: string} | null) => void} options.onAttention
   *   what the pane's agent waits for from the user (`approval_requested` or
   *   `awaiting_input`, with what it said), from the stream's turn events;
   *   null once a turn starts or ends, or the process exits. A stream that
   *   starts after the agent asked does not bring the event: the pane's
   *   `activity` (`awaiting_approval`, `awaiting_input`) says it then,
   *   without what the agent said
   */
  constructor({ pane, container, store, onStatus, onNotice, onTitle, onRunning = () => {}, onAttention = () => {} }) {
    this.pane = pane;
    this.container = container;
    this.store = store;
    this.onStatus = onStatus;
    this.onNotice = onNotice;
    this.onTitle = onTitle;
    this.onRunning = onRunning;
    this.onAttention = onAttention;

    this.queue = [];
    this.waiting = false;
    // Position of what was queued (the next output's offset is `offset`).
    this.generation = null;
    this.offset = null;
    // Position of what is drawn.
    this.renderedGeneration = null;
    this.renderedOffset = null;
    // The unfinished escape sequence (or character) at the end of what is
    // drawn, saved with the screen (see sequence-tail.js).
    this.tail = new SequenceTail();
    // The pane's size as last heard (a snapshot, a `resized`, our own
    // resize), so that the pane is resized only when it differs.
    this.paneSize = null;

    this.socket = null;
    this.ended = false;
    // The process exited (an `exited` event, or the pane is gone).
    this.exited = false;
    this.disposed = false;
    // Events that said what the agent waits for (or that it waits for
    // nothing): a count, so that an answer about the pane's activity
    // asked before one of them came is not taken for newer.
    this.attentionEvents = 0;
    this.attempt = 0;
    this.retryTimer = null;
    this.fitTimer = null;
    this.pendingInput = [];
    this.pendingInputBytes = 0;
    this.listeners = [];
  }

  /** Opens the terminal, restores what a reload kept, and connects. */
  open() {
    const term = new Terminal({
      scrollback: SCROLLBACK,
      cursorBlink: true,
      fontFamily: '"DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", monospace',
      fontSize: 14,
    });
    this.term = term;
    this.fit = new FitAddon();
    this.serializer = new SerializeAddon();
    term.loadAddon(this.fit);
    term.loadAddon(this.serializer);
    term.open(this.container);
    this.fitToWindow(false);

    const plan = this.store.plan(this.pane);
    // How this view began, for tests and for people debugging a reload.
    this.openedWith = plan.screen
      ? { screen: true, generation: plan.generation, offset: plan.offset, lines: plan.screen.data.split('\n').length }
      : { screen: false };
    if (plan.screen) {
      const { screen } = plan;
      term.resize(screen.cols, screen.rows);
      this.generation = plan.generation;
      this.offset = plan.offset;
      // The saved contents, then the start of the sequence the old page was
      // in the middle of, so that the replay continues it.
      this.enqueue({ kind: 'write', data: screen.data, generation: plan.generation, end: plan.offset, reset: true });
      if (screen.pending) {
        this.enqueue({ kind: 'write', data: fromBase64(screen.pending), generation: plan.generation, end: plan.offset });
      }
      this.enqueue({ kind: 'fit' });
    }

    term.onData((data) => this.sendInput(utf8(data)));
    term.onBinary((data) => this.sendInput(latin1(data)));
    term.onTitleChange((title) => this.onTitle(title));

    this.listen(window, 'resize', () => this.scheduleFit());
    this.listen(window, 'pagehide', () => this.saveScreen());
    this.listen(document, 'visibilitychange', () => {
      if (document.visibilityState === 'hidden') this.saveScreen();
    });
    this.listen(window, 'online', () => this.reconnectNow());
    if (typeof ResizeObserver === 'function') {
      this.resizeObserver = new ResizeObserver(() => this.scheduleFit());
      this.resizeObserver.observe(this.container);
    }
    term.focus();
    this.connect();
  }

  /** Closes the socket and the terminal; the saved position stays. */
  dispose() {
    if (this.disposed) return;
    this.saveScreen();
    this.disposed = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.fitTimer);
    for (const [target, type, handler] of this.listeners) target.removeEventListener(type, handler);
    this.resizeObserver?.disconnect();
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000, 'closed by the page');
    this.term?.dispose();
  }

  listen(target, type, handler) {
    target.addEventListener(type, handler);
    this.listeners.push([target, type, handler]);
  }

  // --- the connection -------------------------------------------------

  /** Opens the WebSocket once everything queued is drawn. */
  async connect() {
    if (this.disposed || this.ended || this.socket) return;
    this.onStatus(this.attempt ? 'reconnecting…' : 'connecting…');
    await this.drained();
    if (this.disposed || this.ended || this.socket) return;
    // Someone may have resized the pane meanwhile; a replay would not say.
    this.paneSize = null;
    const params = new URLSearchParams({ pane: this.pane });
    if (this.renderedGeneration !== null && this.renderedOffset !== null) {
      params.set('generation', String(this.renderedGeneration));
      params.set('offset', String(this.renderedOffset));
    }
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}/ws?${params}`, socketProtocols());
    this.socket = socket;
    socket.onmessage = (event) => {
      if (this.socket !== socket) return;
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      this.onMessage(message);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.scheduleReconnect();
    };
  }

  scheduleReconnect() {
    if (this.disposed || this.ended) return;
    this.attempt += 1;
    const base = Math.min(BACKOFF_FIRST_MS * 2 ** (this.attempt - 1), BACKOFF_MAX_MS);
    const delay = Math.round(base * (0.75 + Math.random() * 0.5));
    this.onStatus(`disconnected; reconnecting in ${(delay / 1000).toFixed(1)} s`);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  reconnectNow() {
    if (this.socket || this.disposed || this.ended) return;
    clearTimeout(this.retryTimer);
    this.connect();
  }

  onMessage(message) {
    const [kind, body] = variant(message);
    switch (kind) {
      case 'start':
        this.onStart(body);
        break;
      case 'event':
        this.onEvent(body);
        break;
      case 'interrupted':
        this.onNotice(`Interrupt: ${body.outcome.replaceAll('_', ' ')}`);
        break;
      case 'error':
        this.onError(body);
        break;
      default:
        // Anything newer: nothing to do.
        break;
    }
  }

  /** A stream (re)starts: `{pane, generation, start}`, `start` a StreamStart. */
  onStart({ generation, start }) {
    this.attempt = 0;
    this.onStatus('live');
    const [kind, body] = variant(start);
    if (kind === 'replay') {
      this.generation = generation;
      this.offset = body.from;
    } else if (kind === 'snapshot') {
      this.enqueueScreen(body.snapshot, generation);
      if (body.skipped_from !== null && body.skipped_from !== undefined) {
        this.onNotice(skippedNotice(body.snapshot.offset - body.skipped_from));
      }
    } else if (kind === 'generation_changed') {
      this.enqueueScreen(body.snapshot, generation);
      this.onNotice("The pane's process was replaced; this is its new screen.");
      this.exited = false;
    }
    // An exited pane's stream brings its `exited` event next.
    if (!this.exited) this.onRunning(true);
    this.learnAttention();
    // The pane takes this page's size (after a snapshot, once it is drawn).
    this.enqueue({ kind: 'fit' });
    this.flushInput();
  }

  /**
   * What the agent waits for, from the pane's `activity` (the host's
   * `list`, through the gateway): for a stream that starts after the
   * agent asked, whose `approval_requested` or `awaiting_input` came
   * before it. An event that comes meanwhile is newer, and wins.
   */
  async learnAttention() {
    const before = this.attentionEvents;
    let summary;
    try {
      summary = (await panes()).find((pane) => pane.id === this.pane);
    } catch {
      return; // The stream's own events still say it.
    }
    if (this.disposed || this.exited || !summary || this.attentionEvents !== before) return;
    const kind = { awaiting_approval: 'approval_requested', awaiting_input: 'awaiting_input' }[summary.activity];
    if (kind) this.onAttention({ kind, detail: '' });
  }

  /** One of the protocol's Events. */
  onEvent(event) {
    const [kind, body] = variant(event);
    switch (kind) {
      case 'output': {
        const data = fromBase64(body.data);
        const end = body.offset + data.length;
        this.offset = end;
        this.enqueue({ kind: 'write', data, generation: this.generation, end });
        break;
      }
      case 'resync':
        this.enqueueScreen(body.snapshot, this.generation);
        this.onNotice(skippedNotice(body.snapshot.offset - body.skipped_from));
        break;
      case 'resized':
        this.paneSize = { ...body.size };
        this.enqueue({ kind: 'size', cols: body.size.cols, rows: body.size.rows });
        break;
      case 'awaiting_input':
      case 'approval_requested':
        this.attentionEvents += 1;
        this.onAttention({ kind, detail: body.detail ?? '' });
        break;
      case 'turn_started':
      case 'turn_completed':
        // A turn a restarted host opened again leaves its agent waiting
        // as it was (PROTOCOL.md, section 7).
        if (kind === 'turn_started' && body.source === 'restored') break;
        this.attentionEvents += 1;
        this.onAttention(null);
        break;
      case 'exited': {
        this.exited = true;
        this.onRunning(false);
        this.attentionEvents += 1;
        this.onAttention(null);
        const { status } = body;
        this.onNotice(
          status.signal ? `The process ended by ${status.signal}.` : `The process exited with code ${status.code}.`,
        );
        break;
      }
      case 'ended':
        this.ended = true;
        this.exited = true;
        this.onRunning(false);
        this.attentionEvents += 1;
        this.onAttention(null);
        if (body.reason === 'closed') {
          this.store.forget(this.pane);
          this.onStatus('the pane was closed');
        } else {
          this.onStatus(`ended (${body.reason})`);
        }
        break;
      default:
        // Anything newer: nothing to draw.
        break;
    }
  }

  /** `{error: {code, message, limitation}, fatal}`. */
  onError({ error, fatal }) {
    if (!fatal) {
      this.onNotice(`${error.code}: ${error.message}`);
      return;
    }
    if (error.code === 'UNKNOWN_PANE') {
      this.ended = true;
      this.exited = true;
      this.onRunning(false);
      this.store.forget(this.pane);
      this.onStatus('this pane no longer exists');
    } else if (error.code === 'OFFSET_OUT_OF_RANGE') {
      // The host does not know the saved position: start as a new viewer.
      this.store.forget(this.pane);
      this.renderedGeneration = this.renderedOffset = this.generation = this.offset = null;
      this.onNotice('The saved position was unknown to the host; showing the current screen.');
    } else {
      this.onNotice(`${error.code}: ${error.message}`);
    }
  }

  // --- input ------------------------------------------------------------

  sendInput(bytes) {
    if (this.ended || bytes.length === 0) return;
    if (!this.isOpen()) {
      if (this.pendingInputBytes + bytes.length <= MAX_PENDING_INPUT) {
        this.pendingInput.push(bytes);
        this.pendingInputBytes += bytes.length;
      }
      return;
    }
    for (let i = 0; i < bytes.length; i += INPUT_CHUNK) {
      this.socket.send(JSON.stringify({ input: toBase64(bytes.subarray(i, i + INPUT_CHUNK)) }));
    }
  }

  flushInput() {
    const pending = this.pendingInput;
    this.pendingInput = [];
    this.pendingInputBytes = 0;
    for (const bytes of pending) this.sendInput(bytes);
  }

  /** Presses the runtime's interrupt (the protocol's `interrupt`). */
  interrupt() {
    if (this.exited) {
      this.onNotice('The process has exited: there is nothing to interrupt.');
    } else if (this.isOpen()) {
      this.socket.send(JSON.stringify({ interrupt: true }));
      this.onNotice('Interrupting…');
    } else {
      this.onNotice('Not connected: nothing was sent.');
    }
  }

  isOpen() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  // --- size -------------------------------------------------------------

  scheduleFit() {
    clearTimeout(this.fitTimer);
    this.fitTimer = setTimeout(() => this.fitToWindow(true), FIT_DELAY_MS);
  }

  /** Fits the terminal to its box; with `tell`, resizes the pane to it too. */
  fitToWindow(tell) {
    if (this.disposed || !this.term) return;
    const proposed = this.fit.proposeDimensions();
    if (!proposed || !Number.isFinite(proposed.cols) || !Number.isFinite(proposed.rows)) return;
    // The bounds of a pane's size (docs/PROTOCOL.md, "Shared types").
    const cols = Math.min(PANE_MAX_COLS, Math.max(2, proposed.cols));
    const rows = Math.min(PANE_MAX_ROWS, Math.floor(PANE_MAX_CELLS / cols), Math.max(2, proposed.rows));
    if (cols !== this.term.cols || rows !== this.term.rows) this.term.resize(cols, rows);
    const known = this.paneSize && this.paneSize.cols === cols && this.paneSize.rows === rows;
    if (tell && !known && this.isOpen()) {
      this.socket.send(JSON.stringify({ resize: { cols, rows } }));
      this.paneSize = { cols, rows };
    }
  }

  // --- the screen queue ---------------------------------------------------

  /**
   * A ScreenSnapshot (of a start or a resync): reset, draw its `formatted`
   * bytes at its size, then fit.
   */
  enqueueScreen(snapshot, generation) {
    this.paneSize = { ...snapshot.size };
    this.generation = generation;
    this.offset = snapshot.offset;
    this.enqueue({
      kind: 'screen',
      data: fromBase64(snapshot.formatted),
      cols: snapshot.size.cols,
      rows: snapshot.size.rows,
      generation,
      end: snapshot.offset,
      reset: true,
    });
  }

  enqueue(op) {
    this.queue.push(op);
    this.pump();
  }

  pump() {
    while (!this.waiting && this.queue.length > 0 && !this.disposed) {
      const op = this.queue.shift();
      if (op.kind === 'write') {
        this.term.write(op.data, () => this.drawn(op));
        continue;
      }
      // Everything else waits until what came before is drawn.
      this.waiting = true;
      this.term.write('', () => {
        this.waiting = false;
        if (!this.disposed) this.runBarrier(op);
        this.pump();
      });
    }
  }

  runBarrier(op) {
    switch (op.kind) {
      case 'screen':
        this.term.reset();
        this.term.resize(op.cols, op.rows);
        this.term.write(op.data, () => this.drawn(op));
        break;
      case 'size':
        if (op.cols !== this.term.cols || op.rows !== this.term.rows) this.term.resize(op.cols, op.rows);
        break;
      case 'fit':
        this.fitToWindow(true);
        break;
      case 'drained':
        op.resolve();
        break;
      default:
        break;
    }
  }

  /** Resolves once everything queued so far is drawn. */
  drained() {
    return new Promise((resolve) => this.enqueue({ kind: 'drained', resolve }));
  }

  /** An output (or a snapshot, or the restored screen) is on the screen. */
  drawn(op) {
    if (this.disposed) return;
    if (op.reset) this.tail.reset();
    else this.tail.push(op.data);
    this.renderedGeneration = op.generation;
    this.renderedOffset = op.end;
    this.store.savePosition(this.pane, op.generation, op.end);
    window.dispatchEvent(
      new CustomEvent('panehost:rendered', {
        detail: { pane: this.pane, generation: op.generation, offset: op.end },
      }),
    );
  }

  /** Saves the screen with the position it shows, for a reload. */
  saveScreen() {
    if (this.disposed || !this.term || this.renderedGeneration === null || this.renderedOffset === null) return;
    const pending = this.tail.pending();
    // In the middle of a sequence too long to keep: an older saved screen
    // (if any) stays, and a reload resumes after it.
    if (pending === null) return;
    const data = this.serializer.serialize({ scrollback: SAVED_SCROLLBACK });
    this.store.saveScreen(this.pane, {
      generation: this.renderedGeneration,
      offset: this.renderedOffset,
      cols: this.term.cols,
      rows: this.term.rows,
      data,
      pending: toBase64(pending),
    });
  }

  // --- for tests ---------------------------------------------------------

  /** The visible rows as text, trailing blanks trimmed. */
  visibleRows() {
    const buffer = this.term.buffer.active;
    const rows = [];
    for (let y = 0; y < this.term.rows; y++) {
      rows.push(buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? '');
    }
    return rows;
  }

  /** Every line the terminal holds, scrollback first. */
  allLines() {
    const buffer = this.term.buffer.active;
    const lines = [];
    for (let y = 0; y < buffer.length; y++) {
      lines.push(buffer.getLine(y)?.translateToString(true) ?? '');
    }
    return lines;
  }
}
