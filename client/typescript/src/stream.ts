/**
 * {@link PaneStream}: a pane's events as an async iterator that survives
 * lost connections.
 *
 * @module
 */

import type { Connection, SubscriptionSink } from "./connection.js";
import { FollowCursor } from "./cursor.js";
import { ConnectionLostError, isConnectionLost } from "./errors.js";
import type { PaneEvent, StreamStart, Subscription } from "./types.js";

/**
 * How a stream retries after a lost connection. Attempts are spaced by a
 * backoff that starts at `initialBackoffMs` and doubles up to
 * `maxBackoffMs`; no attempt starts later than `maxTotalMs` after the first.
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

/** Events a stream buffers before it stops reading its connection, by default. */
export const DEFAULT_MAX_BUFFERED_EVENTS = 256;

/** Options of {@link Client.events}. */
export interface EventsOptions {
  /**
   * The first output offset wanted. When absent, the stream starts at the
   * pane's current screen (a `snapshot` start). `0` replays from the first
   * byte (if the host's ring still holds it).
   */
  from?: number;
  /**
   * The pane's generation that `from` belongs to, saved from an earlier
   * stream (`stream.generation`). With both, the stream opens with
   * `reconnect {pane, generation, offset: from}`, so a replaced process is
   * reported (a `generation_changed` start) instead of its output being
   * taken for the continuation of the old one. Ignored without `from`.
   */
  generation?: number;
  /**
   * Events buffered for this stream, at most, before its connection stops
   * reading (the host then waits). Default 256, or the client's
   * `maxBufferedEvents`.
   */
  maxBuffered?: number;
  /**
   * How to retry after a lost connection; fields left out take the
   * client's policy (by default {@link DEFAULT_RECONNECT_POLICY}). `false`
   * turns reconnecting off: a lost connection then ends the stream with a
   * {@link ConnectionLostError}.
   */
  reconnect?: Partial<ReconnectPolicy> | false;
}

/**
 * One item of a {@link PaneStream}.
 *
 * - `start`: the stream (re)started, at the beginning and after every
 *   reconnect. `generation` is the pane's generation from then on. A
 *   `snapshot` or `generation_changed` start means: redraw the screen from
 *   `start.snapshot`; output follows from its offset.
 * - `event`: an event of the pane. Output events are contiguous and never
 *   repeat a byte already yielded.
 */
export type StreamItem =
  | { kind: "start"; start: StreamStart; generation: number }
  | { kind: "event"; event: PaneEvent };

type Entry =
  | { type: "start"; subscription: Subscription }
  | { type: "event"; event: PaneEvent }
  | { type: "lost"; error: Error }
  | { type: "failed"; error: Error };

type Phase = "opening" | "live" | "lost" | "ended" | "finished" | "closed";

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
const UNSUBSCRIBE_TIMEOUT_MS = 5_000;
const MIN_ATTEMPT_MS = 1_000;

/**
 * A subscription to one pane's events that reconnects by itself, read with
 * `for await (const item of stream)`.
 *
 * The stream has a connection of its own (opened with the client's socket
 * path and name), so that a slow consumer holds up only this stream, never
 * the client's requests or other streams.
 *
 * **Exact resume.** The stream remembers the pane's generation and the end
 * offset of the last output it *yielded to its caller* (or the offset its
 * last snapshot stands for). When the connection drops before an `ended`
 * event, it first yields what it had already received, then connects again
 * (backoff 50 ms doubling to 1 s, for at most 10 s by default) and sends
 * `reconnect {pane, generation, offset}`; it yields the new `start` and
 * continues. Output the host sends twice is dropped or trimmed, so the
 * caller never sees a byte twice and never misses one the host still holds
 * (a `replay` start). When the host no longer holds them, the start is a
 * `snapshot` with `skipped_from` set; when the process was replaced, a
 * `generation_changed` start.
 *
 * **Backpressure.** At most `maxBuffered` events (default 256) wait in the
 * stream; then it pauses its socket until the consumer catches up. The host
 * never waits for a subscriber that falls out of the pane's ring: such a
 * subscriber gets a `resync` event instead of the bytes it missed.
 *
 * **Ending.** Iteration ends after the `ended` event has been yielded, or
 * after {@link PaneStream.close} (which `break` out of `for await` calls).
 * It throws when the first subscription fails (for example `UNKNOWN_PANE`),
 * or when a reconnect fails for good (the policy's time ran out, or the
 * host refused the resume). Calling `next()` again after such an error
 * tries again.
 */
export class PaneStream implements AsyncIterableIterator<StreamItem> {
  /** The pane followed. */
  readonly pane: string;
  /**
   * Settles when the first subscription is made: with its start, or with
   * the error that prevented it. Awaiting it is optional; the same error is
   * also thrown by the first `next()`.
   */
  readonly ready: Promise<StreamStart>;

  private readonly opener: (timeoutMs?: number) => Promise<Connection>;
  private readonly policy: ReconnectPolicy | false;
  private readonly maxBuffered: number;
  private readonly lowWater: number;
  private readonly cursor: FollowCursor;
  private queue: Entry[] = [];
  private queuedEvents = 0;
  private held = false;
  private conn: Connection | undefined;
  private subscriptionId: number | undefined;
  private phase: Phase = "opening";
  private wake: (() => void) | undefined;
  private sleeping: { timer: NodeJS.Timeout; done: () => void } | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private readyResolve!: (start: StreamStart) => void;
  private readyReject!: (error: Error) => void;
  private readySettled = false;
  private readonly closeHooks: Array<() => void> = [];

  /**
   * Used by {@link Client.events}; not meant to be called directly.
   *
   * @param pane - The pane to follow.
   * @param opener - Opens a new handshaken connection; `timeoutMs`, when
   *   given, bounds its handshake and requests.
   * @param options - `from`, and the resolved buffer size and policy.
   * @internal
   */
  constructor(
    pane: string,
    opener: (timeoutMs?: number) => Promise<Connection>,
    options: {
      from?: number | undefined;
      generation?: number | undefined;
      maxBuffered: number;
      policy: ReconnectPolicy | false;
    },
  ) {
    if (options.from !== undefined && (!Number.isSafeInteger(options.from) || options.from < 0)) {
      throw new RangeError(`from must be a non-negative safe integer, got ${options.from}`);
    }
    this.pane = pane;
    this.opener = opener;
    this.policy = options.policy;
    this.maxBuffered = Math.max(1, Math.floor(options.maxBuffered));
    this.lowWater = Math.floor(this.maxBuffered / 2);
    if (options.generation !== undefined && (!Number.isSafeInteger(options.generation) || options.generation < 0)) {
      throw new RangeError(`generation must be a non-negative safe integer, got ${options.generation}`);
    }
    this.cursor = new FollowCursor(options.from, options.generation);
    this.ready = new Promise<StreamStart>((resolve, reject) => {
      this.readyResolve = resolve;
      this.readyReject = reject;
    });
    this.ready.catch(() => {}); // Optional to await: never an unhandled rejection.
    void this.openFirst();
  }

  /** The pane's generation as of the last start yielded; `undefined` before it. */
  get generation(): number | undefined {
    return this.cursor.generation;
  }

  /**
   * The end offset of the output yielded so far (or of the last snapshot
   * yielded); before the first start, the `from` asked for. A later
   * `events(pane, {from: stream.offset})` continues exactly here.
   */
  get offset(): number | undefined {
    return this.cursor.offset;
  }

  /** Events received and not yet yielded. */
  get buffered(): number {
    return this.queuedEvents;
  }

  /** True once the stream ended (`ended` yielded) or was closed. */
  get isDone(): boolean {
    return this.phase === "ended" || this.phase === "finished" || this.closedNow();
  }

  /** Returns the stream itself: it is its own iterator. */
  [Symbol.asyncIterator](): PaneStream {
    return this;
  }

  /**
   * The next item: a `start` first and after every reconnect, then events.
   * `done` after `ended` has been yielded or after {@link PaneStream.close}.
   * Calls may overlap; they are answered in order.
   */
  next(): Promise<IteratorResult<StreamItem, undefined>> {
    const run = this.chain.then(() => this.pull());
    this.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Closes the stream (as {@link PaneStream.close}); called by `break` in `for await`. */
  async return(): Promise<IteratorResult<StreamItem, undefined>> {
    await this.close();
    return DONE;
  }

  /**
   * Ends the stream: unsubscribes (when the subscription is live), closes
   * its connection and drops what was buffered. Pending and later `next()`
   * calls resolve `done`. Safe to call more than once.
   */
  async close(): Promise<void> {
    if (this.closedNow()) return;
    const wasLive = this.phase === "live";
    this.phase = "closed";
    const conn = this.conn;
    const subscription = this.subscriptionId;
    this.conn = undefined;
    this.queue = [];
    this.queuedEvents = 0;
    if (this.sleeping) {
      clearTimeout(this.sleeping.timer);
      this.sleeping.done();
      this.sleeping = undefined;
    }
    this.wakeUp();
    this.settleReady(new ConnectionLostError("the stream was closed"));
    if (conn) {
      if (this.held) {
        this.held = false;
        conn.release();
      }
      if (wasLive && subscription !== undefined && !conn.isClosed) {
        try {
          await conn.request({ unsubscribe: { subscription } }, "unsubscribed", { timeoutMs: UNSUBSCRIBE_TIMEOUT_MS });
        } catch {
          // The connection closes below either way, which ends the subscription.
        }
      }
      conn.close();
    }
    for (const hook of this.closeHooks.splice(0)) hook();
  }

  /** @internal Runs `hook` once when the stream is done (closed or ended). */
  onDone(hook: () => void): void {
    if (this.isDone) hook();
    else this.closeHooks.push(hook);
  }

  private async pull(): Promise<IteratorResult<StreamItem, undefined>> {
    for (;;) {
      if (this.closedNow()) return DONE;
      const entry = this.queue.shift();
      if (entry !== undefined) {
        switch (entry.type) {
          case "start": {
            const { generation, start } = entry.subscription;
            this.cursor.onStart(generation, start);
            return { done: false, value: { kind: "start", start, generation } };
          }
          case "event": {
            this.queuedEvents -= 1;
            this.maybeRelease();
            const event = this.cursor.admit(entry.event);
            if (event === undefined) continue;
            if (event.kind === "ended") this.finish("ended");
            return { done: false, value: { kind: "event", event } };
          }
          case "lost":
            this.conn = undefined;
            this.subscriptionId = undefined;
            this.held = false;
            if (this.policy === false) {
              this.finish("finished");
              throw entry.error;
            }
            this.phase = "lost";
            continue;
          case "failed":
            if (this.policy === false) this.finish("finished");
            throw entry.error;
        }
      }
      switch (this.phase) {
        case "ended":
        case "finished":
          return DONE;
        case "lost":
          await this.resume();
          continue;
        default:
          await new Promise<void>((resolve) => {
            this.wake = resolve;
          });
      }
    }
  }

  /** The first subscription; not retried, as a wrong socket path should fail fast. */
  private async openFirst(): Promise<void> {
    try {
      await this.attach();
    } catch (error) {
      if (this.closedNow()) return;
      this.phase = "lost";
      this.queue.push({ type: "failed", error: error as Error });
      this.settleReady(error as Error);
      this.wakeUp();
    }
  }

  /** Reconnects from the cursor, retrying lost connections per the policy. */
  private async resume(): Promise<void> {
    const policy = this.policy || DEFAULT_RECONNECT_POLICY;
    const deadline = Date.now() + policy.maxTotalMs;
    let backoff = policy.initialBackoffMs;
    for (;;) {
      try {
        // An unresponsive host must not hold an attempt beyond the policy's
        // time (but give every attempt a fair second).
        await this.attach(Math.max(MIN_ATTEMPT_MS, deadline - Date.now()));
        return;
      } catch (error) {
        if (this.closedNow()) return;
        if (isConnectionLost(error) && Date.now() + backoff < deadline) {
          await this.sleep(backoff);
          if (this.closedNow()) return;
          backoff = Math.min(backoff * 2, policy.maxBackoffMs);
          continue;
        }
        throw error;
      }
    }
  }

  /** Opens a connection and subscribes with the cursor's resume request. */
  private async attach(timeoutMs?: number): Promise<void> {
    const request = this.cursor.resumeRequest(this.pane);
    const conn = await this.opener(timeoutMs);
    if (this.closedNow()) {
      conn.close();
      return;
    }
    const sink: SubscriptionSink = {
      event: (event) => this.onEvent(conn, event),
      lost: (error) => this.onLost(conn, error),
    };
    try {
      await conn.subscribe(request, sink, (subscription) => {
        if (this.closedNow()) return;
        // Synchronously, before any event of the subscription is handled.
        this.conn = conn;
        this.subscriptionId = subscription.subscription;
        this.phase = "live";
        this.queue.push({ type: "start", subscription });
        this.settleReady(undefined, subscription.start);
        this.wakeUp();
      });
    } catch (error) {
      conn.close();
      throw error;
    }
    if (this.closedNow()) conn.close();
  }

  private onEvent(conn: Connection, event: PaneEvent): void {
    if (conn !== this.conn || this.closedNow()) return;
    this.queue.push({ type: "event", event });
    this.queuedEvents += 1;
    if (this.queuedEvents >= this.maxBuffered && !this.held) {
      this.held = true;
      conn.hold();
    }
    this.wakeUp();
  }

  private onLost(conn: Connection, error: Error): void {
    if (conn !== this.conn || this.closedNow()) return;
    this.queue.push({ type: "lost", error });
    this.wakeUp();
  }

  private maybeRelease(): void {
    if (this.held && this.queuedEvents <= this.lowWater) {
      this.held = false;
      this.conn?.release();
    }
  }

  private finish(phase: "ended" | "finished"): void {
    this.phase = phase;
    const conn = this.conn;
    this.conn = undefined;
    this.subscriptionId = undefined;
    this.held = false;
    this.queue = [];
    this.queuedEvents = 0;
    conn?.close();
    for (const hook of this.closeHooks.splice(0)) hook();
  }

  private settleReady(error: Error | undefined, start?: StreamStart): void {
    if (this.readySettled) return;
    this.readySettled = true;
    if (start !== undefined) this.readyResolve(start);
    else this.readyReject(error ?? new ConnectionLostError("the stream was closed"));
  }

  /** A method rather than a comparison, so that it is re-read after every await. */
  private closedNow(): boolean {
    return this.phase === "closed";
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.sleeping = undefined;
        resolve();
      };
      this.sleeping = { timer: setTimeout(done, ms), done };
    });
  }
}
