/**
 * The one connection a client shares between its requests and its
 * streams: calls with their timeouts and aborts, the wait for a
 * connection while the client reconnects, and the reconnecting itself.
 *
 * @module
 * @internal
 */

import { Connection, type ConnectionOptions } from "./connection.js";
import { AbortError, ConnectionLostError, FrameError, isConnectionLost, RequestTimeoutError } from "./errors.js";
import type * as Raw from "./protocol.generated.js";
import type { Welcome } from "./types/handshake.js";
import type { Answer, AnswerKind } from "./wire.js";

/**
 * How the client reconnects after it lost its connection to the host.
 * Attempts are spaced by a backoff that starts at `initialBackoffMs` and
 * doubles up to `maxBackoffMs`; no attempt starts later than `maxTotalMs`
 * after the first.
 */
export interface ReconnectPolicy {
  /** The wait after the first failed attempt, in milliseconds. Default 50. */
  initialBackoffMs: number;
  /** The longest wait between two attempts, in milliseconds. Default 1000. */
  maxBackoffMs: number;
  /** How long to keep trying in total, in milliseconds. Default 10000. */
  maxTotalMs: number;
}

/** The default {@link ReconnectPolicy}: 50 ms doubling to 1 s, for 10 s in total. */
export const DEFAULT_RECONNECT_POLICY: Readonly<ReconnectPolicy> = Object.freeze({
  initialBackoffMs: 50,
  maxBackoffMs: 1000,
  maxTotalMs: 10_000,
});

/**
 * Where the client's connection stands:
 *
 * - `connected`: requests are written at once;
 * - `reconnecting`: the connection was lost and the client is connecting
 *   again; requests wait for the new connection (within their timeout);
 * - `down`: the reconnect policy gave up; waiting requests were rejected,
 *   and the next request (or a stream's next `next()`) tries again;
 * - `closed`: {@link Client.disconnect} was called, or the connection was
 *   lost with reconnecting turned off; every request rejects at once.
 */
export type ConnectionState = "connected" | "reconnecting" | "down" | "closed";

/** What a stream hears of the shared connection, besides its own subscription's sink. */
export interface ConnectionWatcher {
  /** A connection is open (after a reconnect); a stream that wants a subscription may subscribe. */
  connected(): void;
  /** The reconnect policy gave up (`final` false), or the client closed for good (`final` true). */
  unavailable(error: Error, final: boolean): void;
}

/** Options of one {@link SharedConnection.call} expecting an answer of kind `K`. */
export interface CallSettings<K extends AnswerKind = AnswerKind> {
  /** How long to wait for the answer (the wait for a connection included); `0` waits forever. */
  timeoutMs: number;
  /** Stops waiting when aborted. */
  signal?: AbortSignal | undefined;
  /**
   * Whether the request may be written again on a new connection when its
   * connection was lost before the answer: only for requests that change
   * nothing (`inspect`, `list`, `runtimes`, `history`).
   */
  retry: boolean;
  /** Runs synchronously with the answer, before any later frame is handled; `conn` is where it came from. */
  onAnswer?: ((content: Answer<K>, conn: Connection) => void) | undefined;
  /** Runs with an answer that comes after the call stopped waiting (timed out or aborted). */
  onLate?: ((content: Answer<K>, conn: Connection) => void) | undefined;
}

interface Call {
  request: Raw.Request;
  expect: AnswerKind;
  what: string;
  settings: CallSettings;
  resolve(content: Answer<AnswerKind>): void;
  reject(error: Error): void;
  /** Settled: answered, failed, timed out or aborted. */
  done: boolean;
  /** Where it was written, while its answer is awaited there. */
  conn: Connection | undefined;
  id: number | undefined;
  /** Written to a connection at least once (the host may have carried it out). */
  written: boolean;
  cleanup: Array<() => void>;
}

/** Every attempt to connect gets at least this long, even near the end of the policy's time. */
const MIN_ATTEMPT_MS = 1_000;

/**
 * The connection a client shares, and its replacement after a loss.
 * Calls made while there is no connection wait in order and are written,
 * in that order, once there is one.
 */
export class SharedConnection {
  private conn: Connection | undefined;
  private current: ConnectionState = "connected";
  private lastWelcome: Welcome;
  private waiting: Call[] = [];
  /** Calls of the connection being lost that go out again, in the order they were first written. */
  private requeued: Call[] = [];
  private reconnecting = false;
  private sleeping: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  private readonly watchers = new Set<ConnectionWatcher>();
  private readonly stateListeners = new Set<(state: ConnectionState, error: Error | undefined) => void>();

  /**
   * @param options - How to open a connection (socket path, client name,
   *   handshake timeout).
   * @param policy - How to reconnect; `false` never does: a lost
   *   connection closes the client for good.
   * @param first - The connection opened by `connect()`.
   * @param opener - How a new connection is opened: `Connection.open` by
   *   default; through the ssh forward with the `remote` option.
   */
  constructor(
    private readonly options: ConnectionOptions,
    readonly policy: ReconnectPolicy | false,
    first: Connection,
    private readonly opener: (options: ConnectionOptions) => Promise<Connection> = (options) => Connection.open(options),
  ) {
    this.lastWelcome = first.welcome;
    this.adopt(first);
  }

  /** The state of the connection. */
  get state(): ConnectionState {
    return this.current;
  }

  /** The open connection, if there is one now. */
  get open(): Connection | undefined {
    return this.conn !== undefined && !this.conn.isClosed ? this.conn : undefined;
  }

  /** The welcome of the newest connection. */
  get welcome(): Welcome {
    return this.lastWelcome;
  }

  /** Calls `listener` on every change of {@link SharedConnection.state}; returns a function that stops it. */
  onStateChange(listener: (state: ConnectionState, error: Error | undefined) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Lets a stream hear about connections; returns a function that stops it. */
  watch(watcher: ConnectionWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /**
   * Sends a request and resolves with the content of its answer, of kind
   * `expect`. Waits for a connection first when there is none (and starts
   * connecting when the client is `down`).
   */
  call<K extends AnswerKind>(request: Raw.Request, expect: K, settings: CallSettings<K>): Promise<Answer<K>> {
    // The connection hands on only an answer of the kind `expect` names.
    const typed = (content: Answer<AnswerKind>) => content as Answer<K>;
    const { onAnswer, onLate } = settings;
    return new Promise<Answer<K>>((resolve, reject) => {
      const name = Object.keys(request)[0] ?? "request";
      if (this.current === "closed") {
        reject(new ConnectionLostError(`the client is closed; \`${name}\` was not sent`, { requestSent: false }));
        return;
      }
      const signal = settings.signal;
      if (signal?.aborted) {
        reject(new AbortError(signal.reason));
        return;
      }
      const call: Call = {
        request,
        expect,
        what: `the answer to \`${name}\``,
        settings: {
          timeoutMs: settings.timeoutMs,
          signal: settings.signal,
          retry: settings.retry,
          onAnswer: onAnswer && ((content, conn) => onAnswer(typed(content), conn)),
          onLate: onLate && ((content, conn) => onLate(typed(content), conn)),
        },
        resolve: (content) => resolve(typed(content)),
        reject,
        done: false,
        conn: undefined,
        id: undefined,
        written: false,
        cleanup: [],
      };
      const timeoutMs = settings.timeoutMs;
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        const timer = setTimeout(() => this.stopWaiting(call, new RequestTimeoutError(call.what, timeoutMs)), timeoutMs);
        call.cleanup.push(() => clearTimeout(timer));
      }
      if (signal) {
        const onAbort = () => this.stopWaiting(call, new AbortError(signal.reason));
        signal.addEventListener("abort", onAbort, { once: true });
        call.cleanup.push(() => signal.removeEventListener("abort", onAbort));
      }
      const conn = this.open;
      if (conn) this.write(call, conn);
      else this.wait(call);
    });
  }

  /**
   * Sends a request on `conn` only (never on a later connection), and
   * resolves with its answer; resolves `undefined` when `conn` is or gets
   * closed first, or after `timeoutMs`. For `unsubscribe`: a subscription
   * lives on one connection and ends with it.
   */
  sendOn<K extends AnswerKind>(conn: Connection, request: Raw.Request, expect: K, timeoutMs: number): Promise<Answer<K> | undefined> {
    if (conn.isClosed) return Promise.resolve(undefined);
    return new Promise<Answer<K> | undefined>((resolve) => {
      let id: number | undefined;
      const timer = setTimeout(() => {
        if (id !== undefined) conn.drop(id);
        resolve(undefined);
      }, timeoutMs);
      const settle = (value: Answer<K> | undefined) => {
        clearTimeout(timer);
        resolve(value);
      };
      try {
        id = conn.send(request, {
          expect,
          answer: (content) => settle(content),
          error: () => settle(undefined),
          lost: () => settle(undefined),
        });
      } catch {
        settle(undefined);
      }
    });
  }

  /**
   * Starts connecting again when the client is `down` (a request or a
   * stream needs the host); otherwise does nothing.
   */
  ensure(): void {
    if (this.current === "down") this.reconnect();
  }

  /** Closes the connection for good: waiting calls and calls in flight reject. */
  close(): void {
    if (this.current === "closed") return;
    this.setState("closed", undefined);
    if (this.sleeping) {
      clearTimeout(this.sleeping.timer);
      this.sleeping.wake();
    }
    const conn = this.conn;
    this.conn = undefined;
    conn?.close();
    const lost = new ConnectionLostError("the client was disconnected");
    this.failWaiting(lost);
    for (const watcher of [...this.watchers]) watcher.unavailable(lost, true);
  }

  /** Writes `call` on `conn`. */
  private write(call: Call, conn: Connection): void {
    try {
      call.id = conn.send(call.request, {
        expect: call.expect,
        answer: (content) => this.answered(call, conn, content),
        error: (error) => this.settle(call, error),
        lost: (error) => this.lost(call, error),
      });
      call.conn = conn;
      call.written = true;
    } catch (error) {
      this.settle(call, error as Error);
    }
  }

  /** Keeps `call` until there is a connection. */
  private wait(call: Call): void {
    this.waiting.push(call);
    if (this.current === "down") this.reconnect();
  }

  private answered(call: Call, conn: Connection, content: Answer<AnswerKind>): void {
    if (call.done) {
      call.settings.onLate?.(content, conn);
      return;
    }
    try {
      call.settings.onAnswer?.(content, conn);
    } catch (error) {
      this.settle(call, error as Error);
      return;
    }
    this.settle(call, { answer: content });
  }

  /** The connection `call` was written on closed before its answer. */
  private lost(call: Call, error: Error): void {
    call.conn = undefined;
    call.id = undefined;
    if (call.done) return;
    if (call.settings.retry && this.current !== "closed" && this.policy !== false) {
      this.requeued.push(call);
      return;
    }
    if (error instanceof FrameError) {
      this.settle(call, error);
      return;
    }
    const name = Object.keys(call.request)[0] ?? "request";
    const what = this.current === "closed" ? "the client was disconnected" : "the connection to the host was lost";
    const detail = this.current !== "closed" && error.message ? ` (${error.message})` : "";
    this.settle(
      call,
      new ConnectionLostError(
        `${what} before the answer to \`${name}\`${detail}; the host may or may not have carried it out`,
        { cause: error, requestSent: true },
      ),
    );
  }

  /** A timeout or an abort: stop waiting. The host may still answer; then `onLate` hears of it. */
  private stopWaiting(call: Call, error: Error): void {
    if (call.done) return;
    const queued = this.waiting.indexOf(call);
    if (queued >= 0) this.waiting.splice(queued, 1);
    const requeued = this.requeued.indexOf(call);
    if (requeued >= 0) this.requeued.splice(requeued, 1);
    if (call.conn !== undefined && call.id !== undefined && call.settings.onLate === undefined) {
      call.conn.drop(call.id);
    }
    this.settle(call, error);
  }

  /** Rejects `call` with an error, or resolves it with an answer; once. */
  private settle(call: Call, outcome: Error | { answer: Answer<AnswerKind> }): void {
    if (call.done) return;
    call.done = true;
    for (const cleanup of call.cleanup.splice(0)) cleanup();
    if (outcome instanceof Error) call.reject(outcome);
    else call.resolve(outcome.answer);
  }

  /** Makes `conn` the connection: writes the waiting calls, tells the streams. */
  private adopt(conn: Connection): void {
    this.conn = conn;
    this.lastWelcome = conn.welcome;
    conn.onClose((error) => this.closed(conn, error));
    this.setState("connected", undefined);
    const waiting = this.waiting;
    this.waiting = [];
    for (const call of waiting) {
      if (call.done) continue;
      if (conn.isClosed) this.waiting.push(call);
      else this.write(call, conn);
    }
    for (const watcher of [...this.watchers]) watcher.connected();
  }

  /** `conn` closed: reconnect, or close for good. */
  private closed(conn: Connection, error: Error | undefined): void {
    if (conn !== this.conn) return;
    this.conn = undefined;
    // Requests that go out again come before those made since.
    this.waiting = [...this.requeued, ...this.waiting];
    this.requeued = [];
    if (this.current === "closed") return;
    const cause = error ?? new ConnectionLostError("the host closed the connection");
    if (this.policy === false) {
      this.setState("closed", cause);
      const lost = new ConnectionLostError(`the connection to the host was lost: ${cause.message}`, { cause });
      this.failWaiting(lost);
      for (const watcher of [...this.watchers]) watcher.unavailable(lost, true);
      return;
    }
    this.reconnect(cause);
  }

  /** Connects again per the policy, unless already at it. */
  private reconnect(cause?: Error): void {
    if (this.reconnecting || this.current === "closed" || this.policy === false) return;
    this.reconnecting = true;
    this.setState("reconnecting", cause);
    const policy = this.policy;
    void (async () => {
      const deadline = Date.now() + policy.maxTotalMs;
      let backoff = policy.initialBackoffMs;
      for (;;) {
        if (this.isClosed()) return;
        let error: Error;
        try {
          // An unresponsive host must not hold an attempt beyond the
          // policy's time (but every attempt gets a fair second).
          const limit = Math.max(MIN_ATTEMPT_MS, deadline - Date.now());
          const configured = this.options.requestTimeoutMs > 0 ? this.options.requestTimeoutMs : Infinity;
          const conn = await this.opener({ ...this.options, requestTimeoutMs: Math.min(configured, limit) });
          if (this.isClosed()) {
            conn.close();
            return;
          }
          this.reconnecting = false;
          this.adopt(conn);
          return;
        } catch (caught) {
          error = caught as Error;
        }
        if (this.isClosed()) return;
        if (isConnectionLost(error) && Date.now() + backoff < deadline) {
          await this.sleep(backoff);
          backoff = Math.min(backoff * 2, policy.maxBackoffMs);
          continue;
        }
        this.reconnecting = false;
        this.giveUp(error);
        return;
      }
    })();
  }

  /** The policy's time ran out (or the host refused): `down` until a call needs the host again. */
  private giveUp(error: Error): void {
    this.setState("down", error);
    const lost =
      error instanceof ConnectionLostError
        ? new ConnectionLostError(error.message, { cause: error.cause ?? error })
        : new ConnectionLostError(`cannot reach the host: ${error.message}`, { cause: error });
    this.failWaiting(lost);
    for (const watcher of [...this.watchers]) watcher.unavailable(error, false);
  }

  /** Rejects every call waiting for a connection. */
  private failWaiting(error: ConnectionLostError): void {
    const waiting = [...this.requeued, ...this.waiting];
    this.waiting = [];
    this.requeued = [];
    for (const call of waiting) {
      const name = Object.keys(call.request)[0] ?? "request";
      const message = `${error.message}; \`${name}\` ${call.written ? "was sent before the connection was lost, and is not sent again" : "was not sent"}`;
      this.settle(call, new ConnectionLostError(message, { cause: error.cause ?? error, requestSent: call.written }));
    }
  }

  /** A method rather than a comparison, so that it is re-read after every await. */
  private isClosed(): boolean {
    return this.current === "closed";
  }

  private setState(state: ConnectionState, error: Error | undefined): void {
    if (this.current === state) return;
    this.current = state;
    for (const listener of [...this.stateListeners]) {
      try {
        listener(state, error);
      } catch {
        // A listener's error is its own.
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        this.sleeping = undefined;
        resolve();
      };
      this.sleeping = { timer: setTimeout(wake, ms), wake };
    });
  }
}
