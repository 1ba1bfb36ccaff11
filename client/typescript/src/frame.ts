/**
 * Framing: every message is a 4-byte big-endian length, then exactly that
 * many payload bytes (PROTOCOL.md section 2).
 *
 * @module
 */

import { FrameError } from "./errors.js";

/** The largest payload the host sends in one frame: 16 MiB. */
export const MAX_HOST_FRAME = 16 * 1024 * 1024;
/** The largest payload a client may send after the handshake: 1 MiB. */
export const MAX_CLIENT_FRAME = 1024 * 1024;
/** The largest `Hello` payload: 4 KiB. */
export const MAX_HELLO_FRAME = 4 * 1024;

const HEADER = 4;

/**
 * Encodes one frame: the payload's length as a big-endian `u32`, then the
 * payload.
 *
 * @throws {@link FrameError} when the payload is longer than `limit`.
 */
export function encodeFrame(payload: Uint8Array, limit: number = MAX_CLIENT_FRAME): Buffer {
  if (payload.length > limit) {
    throw new FrameError(`a frame of ${payload.length} bytes exceeds the limit of ${limit} bytes`);
  }
  const frame = Buffer.allocUnsafe(HEADER + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  frame.set(payload, HEADER);
  return frame;
}

/**
 * Reassembles frames from a byte stream that may split them anywhere or
 * deliver several at once.
 *
 * Push the bytes of each read with {@link FrameDecoder.push}, then take
 * complete payloads with {@link FrameDecoder.next} until it returns
 * `undefined`. A length prefix beyond the limit makes `next` throw a
 * {@link FrameError} before anything of that length is read or allocated;
 * the stream is corrupt from then on and the decoder stays failed.
 *
 * Bytes are kept as the chunks they arrived in and copied once, when their
 * frame is complete, so a large frame arriving in many reads costs linear
 * time.
 */
export class FrameDecoder {
  private readonly limit: number;
  private chunks: Uint8Array[] = [];
  /** Bytes of `chunks[0]` already consumed. */
  private head = 0;
  private buffered = 0;
  private failure: FrameError | undefined;

  /** A decoder that accepts payloads of at most `limit` bytes (default 16 MiB). */
  constructor(limit: number = MAX_HOST_FRAME) {
    this.limit = limit;
  }

  /** Bytes received but not yet returned as part of a frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** Appends the bytes of one read. */
  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  /**
   * The next complete payload, or `undefined` when more bytes are needed.
   *
   * @throws {@link FrameError} when a length prefix exceeds the limit.
   */
  next(): Uint8Array | undefined {
    if (this.failure) throw this.failure;
    if (this.buffered < HEADER) return undefined;
    const header = this.peek(HEADER);
    const length = ((header[0]! << 24) | (header[1]! << 16) | (header[2]! << 8) | header[3]!) >>> 0;
    if (length > this.limit) {
      this.failure = new FrameError(`a frame of ${length} bytes exceeds the limit of ${this.limit} bytes`);
      this.chunks = [];
      this.head = 0;
      this.buffered = 0;
      throw this.failure;
    }
    if (this.buffered < HEADER + length) return undefined;
    this.take(HEADER);
    return this.take(length);
  }

  /** Copies the first `n` buffered bytes without consuming them. */
  private peek(n: number): Uint8Array {
    const first = this.chunks[0]!;
    if (first.length - this.head >= n) return first.subarray(this.head, this.head + n);
    const out = new Uint8Array(n);
    let filled = 0;
    let offset = this.head;
    for (const chunk of this.chunks) {
      const part = chunk.subarray(offset, Math.min(chunk.length, offset + (n - filled)));
      out.set(part, filled);
      filled += part.length;
      offset = 0;
      if (filled === n) break;
    }
    return out;
  }

  /** Consumes and returns the first `n` buffered bytes. */
  private take(n: number): Uint8Array {
    const first = this.chunks[0];
    if (n === 0) return new Uint8Array(0);
    let out: Uint8Array;
    if (first !== undefined && first.length - this.head >= n) {
      // One chunk holds it all: copy so the caller owns its bytes.
      out = first.slice(this.head, this.head + n);
      this.head += n;
      if (this.head === first.length) {
        this.chunks.shift();
        this.head = 0;
      }
    } else {
      out = new Uint8Array(n);
      let filled = 0;
      while (filled < n) {
        const chunk = this.chunks[0]!;
        const count = Math.min(chunk.length - this.head, n - filled);
        out.set(chunk.subarray(this.head, this.head + count), filled);
        filled += count;
        this.head += count;
        if (this.head === chunk.length) {
          this.chunks.shift();
          this.head = 0;
        }
      }
    }
    this.buffered -= n;
    return out;
  }
}
