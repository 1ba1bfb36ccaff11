// The frame decoder and encoder, without a host.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { encodeFrame, FrameDecoder, FrameError, MAX_CLIENT_FRAME, MAX_HOST_FRAME } from "../src/index.js";

function frame(text: string): Buffer {
  return encodeFrame(Buffer.from(text, "utf8"));
}

function drain(decoder: FrameDecoder): string[] {
  const out: string[] = [];
  for (let payload = decoder.next(); payload !== undefined; payload = decoder.next()) {
    out.push(Buffer.from(payload).toString("utf8"));
  }
  return out;
}

describe("frames", () => {
  test("the hex dump of PROTOCOL.md section 2", () => {
    const bytes = frame('{"id":1,"request":{"list":{}}}');
    assert.equal(bytes.length, 34);
    assert.equal(bytes.subarray(0, 4).toString("hex"), "0000001e");
    const decoder = new FrameDecoder();
    decoder.push(bytes);
    assert.deepEqual(drain(decoder), ['{"id":1,"request":{"list":{}}}']);
  });

  test("a frame split across reads at every point is reassembled", () => {
    const messages = ['{"a":1}', "", "x".repeat(300), '{"event":"é✓"}'];
    const stream = Buffer.concat(messages.map(frame));
    for (let split = 0; split <= stream.length; split++) {
      const decoder = new FrameDecoder();
      decoder.push(stream.subarray(0, split));
      const got = drain(decoder);
      decoder.push(stream.subarray(split));
      got.push(...drain(decoder));
      assert.deepEqual(got, messages, `split at ${split}`);
      assert.equal(decoder.pendingBytes, 0);
    }
  });

  test("a frame fed one byte at a time, and several frames in one read", () => {
    const messages = ["one", "two", "three"];
    const stream = Buffer.concat(messages.map(frame));
    const decoder = new FrameDecoder();
    const got: string[] = [];
    for (const byte of stream) {
      decoder.push(Uint8Array.of(byte));
      got.push(...drain(decoder));
    }
    assert.deepEqual(got, messages);

    const together = new FrameDecoder();
    together.push(stream);
    assert.deepEqual(drain(together), messages);
  });

  test("the length prefix is not trusted: a prefix over the limit is an error, before any payload", () => {
    const decoder = new FrameDecoder();
    const header = Buffer.alloc(4);
    header.writeUInt32BE(MAX_HOST_FRAME + 1, 0);
    decoder.push(header); // No payload at all: the prefix alone is enough to fail.
    assert.throws(() => decoder.next(), FrameError);
    // The stream is corrupt from then on.
    decoder.push(frame("later"));
    assert.throws(() => decoder.next(), FrameError);

    const huge = new FrameDecoder();
    huge.push(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    assert.throws(() => huge.next(), /4294967295 bytes exceeds the limit of 16777216/);
  });

  test("a prefix at the limit waits for its payload", () => {
    const decoder = new FrameDecoder(10);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(10, 0);
    decoder.push(header);
    assert.equal(decoder.next(), undefined);
    decoder.push(Buffer.from("0123456789"));
    assert.equal(Buffer.from(decoder.next()!).toString(), "0123456789");
  });

  test("a split header and a large payload spread over many chunks", () => {
    const payload = Buffer.alloc(3 * 1024 * 1024, 7);
    const bytes = encodeFrame(payload, MAX_HOST_FRAME);
    const decoder = new FrameDecoder();
    decoder.push(bytes.subarray(0, 2));
    assert.equal(decoder.next(), undefined);
    for (let at = 2; at < bytes.length; at += 65_536) {
      decoder.push(bytes.subarray(at, Math.min(bytes.length, at + 65_536)));
      if (at + 65_536 < bytes.length) assert.equal(decoder.next(), undefined);
    }
    const got = decoder.next();
    assert.ok(got && Buffer.from(got).equals(payload));
  });

  test("the encoder refuses a payload over the client limit", () => {
    assert.throws(() => encodeFrame(new Uint8Array(MAX_CLIENT_FRAME + 1)), FrameError);
    assert.equal(encodeFrame(new Uint8Array(MAX_CLIENT_FRAME)).length, MAX_CLIENT_FRAME + 4);
  });
});
