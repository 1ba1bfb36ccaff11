// What a reload resumes from, without a browser.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ResumeStore } from '../resume-store.js';
import { fromBase64, latin1, toBase64, utf8 } from '../bytes.js';

/** A Storage in memory that refuses to hold more than `quota` characters. */
class MemoryStorage {
  constructor(quota = Infinity) {
    this.items = new Map();
    this.quota = quota;
  }
  get length() {
    return this.items.size;
  }
  key(i) {
    return [...this.items.keys()][i] ?? null;
  }
  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }
  setItem(key, value) {
    const used = [...this.items].reduce((sum, [k, v]) => sum + (k === key ? 0 : k.length + v.length), 0);
    if (used + key.length + value.length > this.quota) {
      const error = new Error('quota exceeded');
      error.name = 'QuotaExceededError';
      throw error;
    }
    this.items.set(key, String(value));
  }
  removeItem(key) {
    this.items.delete(key);
  }
}

const screen = (offset, extra = {}) => ({ generation: 1, offset, cols: 80, rows: 24, data: 'x'.repeat(10), ...extra });

describe('ResumeStore', () => {
  test('a new pane starts as a new viewer', () => {
    assert.deepEqual(new ResumeStore(new MemoryStorage()).plan('p1'), { screen: null });
  });

  test('a saved screen resumes exactly at the offset it shows', () => {
    const store = new ResumeStore(new MemoryStorage());
    store.savePosition('p1', 1, 100);
    store.saveScreen('p1', screen(250));
    const plan = store.plan('p1');
    assert.equal(plan.offset, 250);
    assert.equal(plan.generation, 1);
    assert.equal(plan.screen.data, 'x'.repeat(10));
    assert.deepEqual(store.position('p1'), { generation: 1, offset: 250 });
  });

  test('a position that moved on after the screen was saved resumes at the screen', () => {
    const store = new ResumeStore(new MemoryStorage());
    store.saveScreen('p1', screen(250));
    store.savePosition('p1', 1, 400);
    const plan = store.plan('p1');
    assert.equal(plan.offset, 250, 'the bytes after 250 were never drawn on the saved screen');
  });

  test('a position without a screen starts as a new viewer', () => {
    const store = new ResumeStore(new MemoryStorage());
    store.savePosition('p1', 1, 400);
    assert.deepEqual(store.plan('p1'), { screen: null });
  });

  test('garbage is ignored', () => {
    const storage = new MemoryStorage();
    storage.setItem('panehost.pane.p1', '{not json');
    storage.setItem('panehost.screen.p1', JSON.stringify({ generation: -1, offset: 5 }));
    const store = new ResumeStore(storage);
    assert.equal(store.position('p1'), null);
    assert.equal(store.screen('p1'), null);
    assert.deepEqual(store.plan('p1'), { screen: null });
  });

  test("a full storage drops other panes' screens first", () => {
    const storage = new MemoryStorage(400);
    const store = new ResumeStore(storage);
    assert.ok(store.saveScreen('p1', screen(1, { data: 'a'.repeat(200) })));
    assert.ok(store.saveScreen('p2', screen(2, { data: 'b'.repeat(200) })));
    assert.equal(store.screen('p1'), null, "p1's screen made room");
    assert.equal(store.screen('p2').offset, 2);
    assert.equal(store.saveScreen('p3', screen(3, { data: 'c'.repeat(1000) })), false, 'too big for any room');
    assert.equal(store.screen('p3'), null);
  });

  test('forget removes both records', () => {
    const store = new ResumeStore(new MemoryStorage());
    store.saveScreen('p1', screen(5));
    store.forget('p1');
    assert.equal(store.position('p1'), null);
    assert.equal(store.screen('p1'), null);
  });
});

describe('bytes', () => {
  test('base64 round trips any bytes', () => {
    const bytes = new Uint8Array(70000).map((_, i) => (i * 7) & 0xff);
    assert.deepEqual(fromBase64(toBase64(bytes)), bytes);
    assert.equal(toBase64(utf8('hi\r\n')), 'aGkNCg==');
    assert.equal(toBase64(utf8('é')), 'w6k=');
    assert.deepEqual([...latin1('\x1b[M\xff')], [0x1b, 0x5b, 0x4d, 0xff]);
  });
});
