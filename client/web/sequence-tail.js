// The bytes of an escape sequence or UTF-8 character that output has begun
// but not finished.
//
// Output may be split anywhere, even inside `ESC [ 3 1 m` or inside a
// character. A screen saved for a reload shows everything drawn so far, but
// not the state of the terminal's parser: if the last drawn output ended in
// the middle of a sequence, the saved screen must be followed by that
// sequence's first bytes, or the rest of it (replayed after the reload)
// would be drawn as text. This tracks those bytes with a small model of the
// terminal's parser states (ground, escape, CSI, the string sequences OSC,
// DCS, SOS, PM and APC, and UTF-8 characters).

const GROUND = 0;
const ESCAPE = 1;
const CSI = 2;
const STRING = 3; // OSC, DCS, SOS, PM, APC: until BEL (OSC) or ESC \
const STRING_ESCAPE = 4; // ESC seen inside a string
const UTF8 = 5;

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;

export class SequenceTail {
  /** Keeps at most `limit` bytes of an unfinished sequence. */
  constructor(limit = 64 * 1024) {
    this.limit = limit;
    this.buffer = new Uint8Array(64);
    this.reset();
  }

  /** Back to the ground state (after a reset or a drawn snapshot). */
  reset() {
    this.state = GROUND;
    this.need = 0;
    this.length = 0;
    this.overflow = false;
  }

  /** Notes drawn output. */
  push(data) {
    for (let i = 0; i < data.length; i++) this.feed(data[i]);
  }

  /**
   * The unfinished sequence's bytes: empty in the ground state, `null`
   * when it is longer than the limit (then it cannot be restored).
   */
  pending() {
    if (this.state === GROUND) return new Uint8Array(0);
    if (this.overflow) return null;
    return this.buffer.slice(0, this.length);
  }

  /** A sequence begins with `byte`. */
  begin(byte, state) {
    this.length = 0;
    this.overflow = false;
    this.state = state;
    this.append(byte);
  }

  append(byte) {
    if (this.overflow) return;
    if (this.length === this.limit) {
      this.overflow = true;
      return;
    }
    if (this.length === this.buffer.length) {
      const bigger = new Uint8Array(Math.min(this.buffer.length * 2, this.limit));
      bigger.set(this.buffer);
      this.buffer = bigger;
    }
    this.buffer[this.length++] = byte;
  }

  ground() {
    this.state = GROUND;
    this.length = 0;
    this.overflow = false;
  }

  feed(byte) {
    switch (this.state) {
      case GROUND:
        if (byte === ESC) this.begin(byte, ESCAPE);
        else if (byte >= 0xc2 && byte <= 0xdf) this.beginUtf8(byte, 1);
        else if (byte >= 0xe0 && byte <= 0xef) this.beginUtf8(byte, 2);
        else if (byte >= 0xf0 && byte <= 0xf4) this.beginUtf8(byte, 3);
        return;
      case UTF8:
        if ((byte & 0xc0) === 0x80) {
          this.append(byte);
          this.need -= 1;
          if (this.need === 0) this.ground();
          return;
        }
        // Not a continuation: the character is abandoned; the byte starts afresh.
        this.ground();
        this.feed(byte);
        return;
      case ESCAPE:
        if (byte === ESC) this.begin(byte, ESCAPE);
        else if (byte === CAN || byte === SUB) this.ground();
        else if (byte === 0x5b) this.step(byte, CSI); // [
        else if (byte === 0x5d || byte === 0x50 || byte === 0x58 || byte === 0x5e || byte === 0x5f) {
          this.step(byte, STRING); // ] P X ^ _
        } else if (byte >= 0x30 && byte <= 0x7e) this.ground(); // final
        else this.append(byte); // intermediates and controls: still in the escape
        return;
      case CSI:
        if (byte === ESC) this.begin(byte, ESCAPE);
        else if (byte === CAN || byte === SUB || (byte >= 0x40 && byte <= 0x7e)) this.ground();
        else this.append(byte);
        return;
      case STRING:
        if (byte === BEL || byte === CAN || byte === SUB) this.ground();
        else this.step(byte, byte === ESC ? STRING_ESCAPE : STRING);
        return;
      case STRING_ESCAPE:
        if (byte === 0x5c) {
          this.ground(); // ESC \ ends the string
        } else {
          // Any other byte ends the string; the ESC begins a new sequence.
          this.begin(ESC, ESCAPE);
          this.feed(byte);
        }
        return;
      default:
        this.ground();
    }
  }

  step(byte, state) {
    this.append(byte);
    this.state = state;
  }

  beginUtf8(byte, need) {
    this.begin(byte, UTF8);
    this.need = need;
  }
}
