// What the page remembers about each pane across reloads, in sessionStorage
// (per tab, kept across reloads, gone with the tab).
//
// Two records per pane:
//
// - `panehost.pane.<id>` = {generation, offset}: the generation of the
//   pane's stream and the end offset of the last output the terminal
//   RENDERED. Written after each write's callback, so it never runs ahead
//   of what is on the screen.
// - `panehost.screen.<id>` = {generation, offset, cols, rows, data,
//   pending}: the terminal's contents (scrollback included), serialized
//   when the page is hidden or unloaded, at the offset it had rendered at
//   that moment; `pending` (base64) holds the first bytes of an escape
//   sequence or character that the drawn output began but did not finish.
//
// On load the page restores the screen and asks the server for exactly the
// offset that screen was rendered up to: `reconnect` replays the bytes after
// it, so nothing is missing and nothing is shown twice. Without a screen
// that fits the position (the page died without `pagehide`, or storage was
// full), a restored offset would continue output on a blank terminal; the
// page then starts as a new viewer, from a snapshot of the current screen.

const PANE = 'panehost.pane.';
const SCREEN = 'panehost.screen.';

function read(storage, key) {
  try {
    const text = storage.getItem(key);
    return text === null ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

function isCount(value) {
  return Number.isSafeInteger(value) && value >= 0;
}

export class ResumeStore {
  /** `storage` is a Storage (window.sessionStorage by default). */
  constructor(storage = globalThis.sessionStorage) {
    this.storage = storage;
  }

  /** {generation, offset} of the last output rendered, or null. */
  position(pane) {
    const record = read(this.storage, PANE + pane);
    if (!record || !isCount(record.generation) || !isCount(record.offset)) return null;
    return { generation: record.generation, offset: record.offset };
  }

  /** Notes the end offset of output just rendered. */
  savePosition(pane, generation, offset) {
    try {
      this.storage.setItem(PANE + pane, JSON.stringify({ generation, offset }));
    } catch {
      // Storage full or refused: a reload then starts from a snapshot.
    }
  }

  /** The saved screen, or null. */
  screen(pane) {
    const record = read(this.storage, SCREEN + pane);
    if (!record || !isCount(record.generation) || !isCount(record.offset)) return null;
    if (!isCount(record.cols) || !isCount(record.rows) || typeof record.data !== 'string') return null;
    if (record.pending !== undefined && typeof record.pending !== 'string') return null;
    return record;
  }

  /**
   * Saves the terminal's contents together with the position they show.
   * When storage is full, other panes' screens make room; returns whether
   * it was saved.
   */
  saveScreen(pane, screen) {
    const text = JSON.stringify(screen);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        this.storage.setItem(SCREEN + pane, text);
        this.storage.setItem(PANE + pane, JSON.stringify({ generation: screen.generation, offset: screen.offset }));
        return true;
      } catch {
        this.dropScreens(pane);
      }
    }
    try {
      this.storage.removeItem(SCREEN + pane);
    } catch {
      // Nothing more to do.
    }
    return false;
  }

  /** Removes every saved screen but `keep`'s. */
  dropScreens(keep) {
    const keys = [];
    for (let i = 0; i < this.storage.length; i++) {
      const key = this.storage.key(i);
      if (key && key.startsWith(SCREEN) && key !== SCREEN + keep) keys.push(key);
    }
    for (const key of keys) this.storage.removeItem(key);
  }

  /** Forgets a pane (it was closed, or the host no longer knows it). */
  forget(pane) {
    this.storage.removeItem(PANE + pane);
    this.storage.removeItem(SCREEN + pane);
  }

  /**
   * How to open a pane after a load: `{screen, generation, offset}` to
   * restore `screen` and resume exactly after it, or `{screen: null}` to
   * start as a new viewer.
   */
  plan(pane) {
    const position = this.position(pane);
    const screen = this.screen(pane);
    if (position && screen && screen.generation === position.generation && screen.offset === position.offset) {
      return { screen, generation: position.generation, offset: position.offset };
    }
    if (screen) {
      // The position moved on after the screen was saved (a later write's
      // callback ran after `pagehide`): the bytes after the screen's offset
      // were never drawn on the restored screen, so resume from there.
      return { screen, generation: screen.generation, offset: screen.offset };
    }
    return { screen: null };
  }
}
