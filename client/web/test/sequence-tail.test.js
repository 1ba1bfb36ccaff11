// The unfinished escape sequence or character at the end of drawn output.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SequenceTail } from '../sequence-tail.js';

const bytes = (text) => Uint8Array.from(Buffer.from(text, 'latin1'));
const text = (data) => (data === null ? null : Buffer.from(data).toString('latin1'));

function tailAfter(...pieces) {
  const tail = new SequenceTail(32);
  for (const piece of pieces) tail.push(typeof piece === 'string' ? bytes(piece) : piece);
  return text(tail.pending());
}

test('nothing is pending after complete output', () => {
  assert.equal(tailAfter('plain text\r\n'), '');
  assert.equal(tailAfter('\x1b[31mred\x1b[0m'), '');
  assert.equal(tailAfter('\x1b]0;title\x07'), '');
  assert.equal(tailAfter('\x1b]0;title\x1b\\'), '');
  assert.equal(tailAfter('\x1bPq#0\x1b\\'), '');
  assert.equal(tailAfter('\x1b7\x1b8\x1b(B\x1b=\x1b>'), '');
  assert.equal(tailAfter(Uint8Array.from(Buffer.from('é€😀', 'utf8'))), '');
});

test('an unfinished sequence is pending, across pieces', () => {
  assert.equal(tailAfter('abc\x1b'), '\x1b');
  assert.equal(tailAfter('abc\x1b[3'), '\x1b[3');
  assert.equal(tailAfter('abc\x1b[', '38;5', ';2'), '\x1b[38;5;2');
  assert.equal(tailAfter('x\x1b]0;ti', 'tle'), '\x1b]0;title');
  assert.equal(tailAfter('x\x1b]0;title\x1b'), '\x1b]0;title\x1b');
  assert.equal(tailAfter('x\x1b(', ''), '\x1b(');
  assert.equal(tailAfter('\x1b[31mred\x1b[0'), '\x1b[0');
});

test('an unfinished character is pending', () => {
  const euro = Buffer.from('€', 'utf8');
  assert.equal(tailAfter(Uint8Array.from(euro.subarray(0, 2))), text(euro.subarray(0, 2)));
  assert.equal(tailAfter(Uint8Array.from(euro.subarray(0, 1)), Uint8Array.from(euro.subarray(1, 3))), '');
  // A lead byte followed by no continuation is abandoned.
  assert.equal(tailAfter(Uint8Array.from([0xe2, 0x41])), '');
});

test('an escape inside a sequence starts it anew', () => {
  assert.equal(tailAfter('\x1b[12\x1b[3'), '\x1b[3');
  assert.equal(tailAfter('\x1b]0;t\x1b[1'), '\x1b[1');
  assert.equal(tailAfter('\x1b[1\x18abc'), '');
});

test('a sequence longer than the limit cannot be restored', () => {
  assert.equal(tailAfter(`\x1b]52;c;${'A'.repeat(100)}`), null);
  assert.equal(tailAfter(`\x1b]52;c;${'A'.repeat(100)}\x07ok`), '');
});
