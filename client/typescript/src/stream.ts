/**
 * {@link PaneStream}: a pane's events as an async iterator that survives
 * lost connections and slow consumers.
 *
 * @module
 */

import type { Connection } from "./connection.js";
import { FollowCursor } from "./cursor.js";
import { AbortError, ConnectionLostError, type RequestTimeoutError } from "./errors.js";
import type { SharedConnection } from "./shared.js";
import type { PaneEvent, ResizedEvent, StreamStart, Subscription } from "./types.js";
import { paneEvent, subscription as parseSubscription } from "./wire.js";

/** Events a stream buffers, by default, before it lets go of its subscription (section "Backpressure" of the guide). */
export const DEFAULT_MAX_BUFFERED_EVENTS = 256;

/** Options of {@link Client.events}. */
export interface EventsOptions {
  /**
   * The first output offset wanted. When absent, the stream starts at the
   * pane's current screen (a `snapshot` start). `0` replays from the first
   * byte (if the host's ring still holds it).
   */
  from?: number | undefined;
  /**
   * The pane's generation that `from` belongs to, saved from an earlier
   * stream (`stream.generation`). With both, the stream opens with
   * `reconnect {pane, generation, offset: from}`, so a replaced process is
   * reported (a `generation_changed` start) instead of its output being
   * taken for the continuation of the old one. Ignored without `from`.
   */
  generation?: number | undefined;
  /**
   * Output events buffered for this stream, at most, before it lets go of
   * its subscription until its consumer catches up. Default 256, or the
   * client's `maxBufferedEvents`.
   */
  maxBuffered?: number | undefined;
  /**
   * Whether the stream subscribes again when the client's connection was
   * lost and has come back (default `true`). `false`: a lost connection
   * ends the stream with a {@link ConnectionLostError}. How often and how
   * long the client tries to connect again is the client's
   * `reconnect` policy.
   */
  reconnect?: boolean | undefined;
  /**
   * Closes the stream when aborted: the subscription is ended, a `next()`
   * waiting (and the first one after) rejects with an {@link AbortError},
   * later ones are `done`.
   */
  signal?: AbortSignal | undefined;
  /**
   * How long each subscribing request (`events`, `reconnect`) waits for
   * its answer, in milliseconds, a wait for the client's connection
   * included; `0` waits forever. On expiry `next()` rejects with a
   * {@link RequestTimeoutError}, and calling it again tries again.
   * Default: the client's `requestTimeoutMs`.
   */
  timeoutMs?: number | undefined;
}

/**
 * One item of a {@link PaneStream}.
 *
 * - `start`: the stream (re)started: at the beginning, after every
 *   reconnect of the client's connection, and whenever a resume after the
 *   consumer fell behind could not continue exactly (a `snapshot` or
 *   `generation_changed` start). `generation` is the pane's generation from
 *   then on. A `snapshot` or `generation_changed` start means: redraw the
 *   screen from `start.snapshot`; output follows from its offset.
 * - `event`: an event of the pane. Output events are contiguous and never
 *   repeat a byte already yielded.
 */
export type StreamItem =
  | { kind: "start"; start: StreamStart; generation: number }
  | { kind: "event"; event: PaneEvent };

type Entry =
  | { type: "start"; subscription: Subscription; visible: boolean }
  | { type: "event"; event: PaneEvent }
  | { type: "error"; error: Error; final: boolean };

/**
 * Where the stream's subscription stands:
 * - `wanting`: none; one is made as soon as there is a connection and the
 *   buffer has room (half of it free);
 * - `subscribing`: the request is out;
 * - `live`: events arrive;
 * - `letting_go`: the buffer was full: the subscription is being ended,
 *   and its events are dropped until its `ended`;
 * - `halted`: an error waits in the queue; after the consumer has had it,
 *   `wanting` again;
 * - `ended`: the pane's `ended` arrived; nothing more comes;
 * - `failed`: a final error waits in the queue (reconnecting off);
 * - `closed`: closed by the caller.
 */
type Phase = "wanting" | "subscribing" | "live" | "letting_go" | "halted" | "ended" | "failed" | "closed";

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
const UNSUBSCRIBE_TIMEOUT_MS = 5_000;

/** What a stream needs of its client. @internal */
export interface StreamHost {
  /** The client's shared connection. */
  shared: SharedConnection;
  /** The timeout of a subscribing request, in milliseconds; `0` waits forever. */
  requestTimeoutMs: number;
}

/**
 * A subscription to one pane's events, read with
 * `for await (const item of stream)`.
 *
 * Every stream of a client shares the client's one connection with its
 * requests.
 *
 * **Exact resume.** The stream remembers the pane's generation and the end
 * offset of the last output it received. When the client's connection was
 * lost and comes back, it subscribes again with
 * `reconnect {pane, generation, offset}`, yields the new `start`, and
 * continues. Output the host sends twice is dropped or trimmed, so the
 * caller never sees a byte twice and never misses one the host still
 * holds (a `replay` start). When the host no longer holds them, the start
 * is a `snapshot` with `skipped_from` set; when the process was replaced, a
 * `generation_changed` start.
 *
 * **Backpressure.** The shared connection is never paused for one stream.
 * When `maxBuffered` output events (default 256) wait in the stream, it
 * ends its subscription and drops what still arrives for it; once its
 * consumer has taken half of them, it subscribes again from exactly the
 * end of what it kept, which the host replays from its ring (or, when the
 * consumer fell out of the ring, a `snapshot` start stands for what is
 * gone, as a `resync` would). A resume that continues exactly yields no
 * new `start`.
 *
 * **Ending.** Iteration ends after the `ended` event has been yielded, or
 * after {@link PaneStream.close} (which `break` out of `for await` calls).
 * It throws when a subscription fails (for example `UNKNOWN_PANE`), or
 * when the client could not reconnect in its policy's time. Calling
 * `next()` again after such an error tries again.
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

  private readonly host: StreamHost;
  private readonly reconnect: boolean;
  private readonly maxBuffered: number;
  private readonly lowWater: number;
  /** Output events may not pass `maxBuffered`; other events may, up to this. */
  private readonly hardCap: number;
  /** What has been received: where a new subscription continues. */
  private readonly tail: FollowCursor;
  /** What has been yielded: the `generation` and `offset` the caller sees. */
  private headGeneration: number | undefined;
  private headOffset: number | undefined;
  private queue: Entry[] = [];
  private queuedEvents = 0;
  private phase: Phase = "wanting";
  private sub: { conn: Connection; id: number } | undefined;
  /** A start was received (so a later one may be an exact continuation). */
  private started = false;
  /** The connection was lost since the last start: the next start is yielded whatever it is. */
  private lostSinceStart = false;
  /** The end offset of the last output received on the subscription being let go, kept or dropped. */
  private receivedEnd: number | undefined;
  /** A `resized` dropped while letting go, to hand on where it belongs in the replayed output. */
  private deferredResize: { event: ResizedEvent; at: number } | undefined;
  private abortReason: { reason: unknown } | undefined;
  private wake: (() => void) | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private readyResolve!: (start: StreamStart) => void;
  private readyReject!: (error: Error) => void;
  private readySettled = false;
  private readonly doneHooks: Array<() => void> = [];
  private unwatch: (() => void) | undefined;
  private unlistenAbort: (() => void) | undefined;

  /**
   * Used by {@link Client.events}; not meant to be called directly.
   *
   * @param pane - The pane to follow.
   * @param host - The client's shared connection and request timeout.
   * @param options - `from`, `generation`, the resolved buffer size,
   *   whether to reconnect, the signal, and an error that refuses the
   *   stream at once (the client's limit of streams).
   * @internal
   */
  constructor(
    pane: string,
    host: StreamHost,
    options: {
      from?: number | undefined;
      generation?: number | undefined;
      maxBuffered: number;
      reconnect: boolean;
      signal?: AbortSignal | undefined;
      refuse?: Error | undefined;
    },
  ) {
    if (options.from !== undefined && (!Number.isSafeInteger(options.from) || options.from < 0)) {
      throw new RangeError(`from must be a non-negative safe integer, got ${options.from}`);
    }
    if (options.generation !== undefined && (!Number.isSafeInteger(options.generation) || options.generation < 0)) {
      throw new RangeError(`generation must be a non-negative safe integer, got ${options.generation}`);
    }
    this.pane = pane;
    this.host = host;
    this.reconnect = options.reconnect;
    this.maxBuffered = Math.max(1, Math.floor(options.maxBuffered));
    this.lowWater = Math.floor(this.maxBuffered / 2);
    this.hardCap = this.maxBuffered * 2;
    this.tail = new FollowCursor(options.from, options.generation);
    this.headOffset = options.from;
    this.headGeneration = options.from === undefined ? undefined : options.generation;
    this.ready = new Promise<StreamStart>((resolve, reject) => {
      this.readyResolve = resolve;
      this.readyReject = reject;
    });
    this.ready.catch(() => {}); // Optional to await: never an unhandled rejection.
    if (options.refuse !== undefined) {
      this.fail(options.refuse, true);
      return;
    }
    const signal = options.signal;
    if (signal?.aborted) {
      this.abortReason = { reason: signal.reason };
      this.shut();
      return;
    }
    if (signal) {
      const onAbort = () => {
        this.abortReason = { reason: signal.reason };
        void this.close();
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.unlistenAbort = () => signal.removeEventListener("abort", onAbort);
    }
    this.unwatch = host.shared.watch({
      connected: () => this.maybeSubscribe(false),
      unavailable: (error, final) => this.onUnavailable(error, final),
    });
    this.maybeSubscribe(true);
  }

  /** The pane's generation as of the last start yielded; `undefined` before it. */
  get generation(): number | undefined {
    return this.headGeneration;
  }

  /**
   * The end offset of the output yielded so far (or of the last snapshot
   * yielded); before the first start, the `from` asked for. A later
   * `events(pane, {from: stream.offset, generation: stream.generation})`
   * continues exactly here.
   */
  get offset(): number | undefined {
    return this.headOffset;
  }

  /** Events received and not yet yielded. */
  get buffered(): number {
    return this.queuedEvents;
  }

  /** True once the stream ended (`ended` received), failed for good, or was closed. */
  get isDone(): boolean {
    return this.phase === "ended" || this.phase === "failed" || this.phase === "closed";
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
   * Ends the stream: unsubscribes (when a subscription is live) and drops
   * what was buffered. Pending and later `next()` calls resolve `done`
   * (after an abort by the stream's signal: the first rejects with an
   * {@link AbortError}). Safe to call more than once. The client's
   * connection stays open.
   */
  async close(): Promise<void> {
    if (this.phase === "closed") return;
    const sub = this.phase === "live" ? this.sub : undefined;
    this.shut();
    if (sub !== undefined) {
      await this.host.shared.sendOn(sub.conn, { unsubscribe: { subscription: sub.id } }, "unsubscribed", UNSUBSCRIBE_TIMEOUT_MS);
    }
  }

  /** @internal Runs `hook` once when the stream is done (ended, failed for good, or closed). */
  onDone(hook: () => void): void {
    if (this.isDone) hook();
    else this.doneHooks.push(hook);
  }

  private async pull(): Promise<IteratorResult<StreamItem, undefined>> {
    for (;;) {
      if (this.phase === "closed") {
        if (this.abortReason !== undefined) {
          const { reason } = this.abortReason;
          this.abortReason = undefined;
          throw new AbortError(reason, "the stream was aborted");
        }
        return DONE;
      }
      const entry = this.queue.shift();
      if (entry !== undefined) {
        switch (entry.type) {
          case "start": {
            const { generation, start } = entry.subscription;
            this.headGeneration = generation;
            this.headOffset = start.kind === "replay" ? start.from : start.snapshot.offset;
            if (!entry.visible) continue;
            return { done: false, value: { kind: "start", start, generation } };
          }
          case "event": {
            this.queuedEvents -= 1;
            const event = entry.event;
            if (event.kind === "output") this.headOffset = event.offset + event.data.length;
            else if (event.kind === "resync") this.headOffset = event.snapshot.offset;
            this.maybeSubscribe(false);
            return { done: false, value: { kind: "event", event } };
          }
          case "error":
            if (!entry.final && this.phase === "halted") this.phase = "wanting";
            throw entry.error;
        }
      }
      switch (this.phase) {
        case "ended":
        case "failed":
          return DONE;
        case "wanting":
          this.maybeSubscribe(true);
          break;
        default:
          break;
      }
      if (this.queue.length > 0 || this.closedNow()) continue;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /**
   * Subscribes when the stream wants a subscription, the buffer has room
   * and there is a connection. With `demand` (a consumer waits), a client
   * that gave up reconnecting tries again.
   */
  private maybeSubscribe(demand: boolean): void {
    if (this.phase !== "wanting" || this.queuedEvents > this.lowWater) return;
    const shared = this.host.shared;
    if (shared.open === undefined) {
      if (demand) shared.ensure();
      return;
    }
    this.phase = "subscribing";
    const request = this.tail.resumeRequest(this.pane);
    shared
      .call(request, "subscribed", {
        timeoutMs: this.host.requestTimeoutMs,
        retry: false,
        onAnswer: (content, conn) => this.onSubscribed(conn, parseSubscription(content)),
        // Answered after the wait was given up: end that subscription.
        onLate: (content, conn) => void shared.sendOn(conn, { unsubscribe: { subscription: content.subscription } }, "unsubscribed", UNSUBSCRIBE_TIMEOUT_MS),
      })
      .catch((error: Error) => this.onSubscribeFailed(error));
  }

  /** The subscription is made: synchronously, before any of its events is handled. */
  private onSubscribed(conn: Connection, subscription: Subscription): void {
    if (this.phase !== "subscribing") {
      // Closed meanwhile: end it.
      void this.host.shared.sendOn(conn, { unsubscribe: { subscription: subscription.subscription } }, "unsubscribed", UNSUBSCRIBE_TIMEOUT_MS);
      return;
    }
    const id = subscription.subscription;
    conn.addSink<PaneEvent>(id, {
      parse: paneEvent,
      event: (event) => this.onEvent(conn, id, event),
      lost: (error) => this.onLost(conn, id, error),
    });
    this.sub = { conn, id };
    this.phase = "live";
    const { generation, start } = subscription;
    const exact =
      this.started && start.kind === "replay" && generation === this.tail.generation && start.from === this.tail.offset;
    const visible = !this.started || this.lostSinceStart || !exact;
    this.started = true;
    this.lostSinceStart = false;
    this.tail.onStart(generation, start);
    this.receivedEnd = this.tail.offset;
    this.push({ type: "start", subscription, visible });
    if (this.deferredResize !== undefined) {
      const startOffset = start.kind === "replay" ? start.from : start.snapshot.offset;
      if (start.kind === "generation_changed" || (start.kind === "snapshot" && startOffset >= this.deferredResize.at)) {
        // The new screen carries its size.
        this.deferredResize = undefined;
      } else if (startOffset >= this.deferredResize.at) {
        this.pushEvent(this.deferredResize.event);
        this.deferredResize = undefined;
      }
    }
    this.settleReady(undefined, start);
  }

  private onSubscribeFailed(error: Error): void {
    if (this.phase !== "subscribing") return;
    if (error instanceof ConnectionLostError && !error.requestSent && this.host.shared.state === "closed") {
      this.fail(error, true);
      return;
    }
    if (error instanceof ConnectionLostError && this.host.shared.state !== "down") {
      // The connection was lost before the answer: that subscription is
      // gone with it. Subscribe again on the next one.
      if (!this.reconnect) {
        this.fail(error, true);
        return;
      }
      this.lostSinceStart = true;
      this.phase = "wanting";
      this.maybeSubscribe(false);
      return;
    }
    if (error instanceof ConnectionLostError) {
      // The client gave up reconnecting; `onUnavailable` tells the consumer.
      this.phase = "wanting";
      return;
    }
    // An answer of the host (UNKNOWN_PANE, OFFSET_OUT_OF_RANGE,
    // LIMIT_REACHED, ...) or a timeout: the consumer hears of it; calling
    // next() again tries again.
    this.fail(error, false);
  }

  private onEvent(conn: Connection, id: number, event: PaneEvent): void {
    const sub = this.sub;
    if (sub === undefined || sub.conn !== conn || sub.id !== id) return;
    if (this.phase === "letting_go") {
      this.dropped(event);
      return;
    }
    if (this.phase !== "live") return;
    if (event.kind === "ended") {
      this.sub = undefined;
      const admitted = this.tail.admit(event);
      if (admitted !== undefined) this.pushEvent(admitted);
      this.phase = "ended";
      this.done();
      return;
    }
    const isOutput = event.kind === "output" || event.kind === "resync";
    if (this.queuedEvents >= this.hardCap || (isOutput && this.queuedEvents >= this.maxBuffered)) {
      this.letGo(conn, id, event);
      return;
    }
    if (event.kind === "resized") this.deferredResize = undefined; // A newer size.
    const admitted = this.tail.admit(event);
    if (admitted === undefined) return;
    if (admitted.kind === "output") {
      this.receivedEnd = admitted.offset + admitted.data.length;
      const deferred = this.deferredResize;
      if (deferred !== undefined && this.receivedEnd >= deferred.at) {
        // The resize dropped while letting go belongs here: after the
        // output before its offset, before the output after it.
        this.deferredResize = undefined;
        const split = deferred.at - admitted.offset;
        if (split > 0) this.pushEvent({ kind: "output", offset: admitted.offset, data: admitted.data.subarray(0, split) });
        this.pushEvent(deferred.event);
        if (split < admitted.data.length) {
          this.pushEvent({ kind: "output", offset: deferred.at, data: admitted.data.subarray(Math.max(0, split)) });
        }
        return;
      }
    } else if (admitted.kind === "resync") {
      this.receivedEnd = admitted.snapshot.offset;
      this.deferredResize = undefined; // The snapshot carries the size.
    }
    this.pushEvent(admitted);
  }

  /**
   * The buffer is full: end the subscription, drop `event` and what
   * follows until its `ended`, and subscribe again once the consumer has
   * caught up. What is dropped the host sends again from its ring, with
   * the turn events at or after the resume offset (those before it are
   * kept, see {@link PaneStream.dropped}).
   */
  private letGo(conn: Connection, id: number, event: PaneEvent): void {
    this.phase = "letting_go";
    this.dropped(event);
    void this.host.shared.sendOn(conn, { unsubscribe: { subscription: id } }, "unsubscribed", UNSUBSCRIBE_TIMEOUT_MS).then(() => {
      // Normally its `ended` came first; this covers an answer without it.
      if (this.phase === "letting_go" && this.sub?.conn === conn && this.sub.id === id) this.detached();
    });
  }

  /** An event of the subscription being let go. */
  private dropped(event: PaneEvent): void {
    switch (event.kind) {
      case "ended":
        // Unsubscribed, or ended on its own: a new subscription delivers
        // what remains (the rest of the output, `exited`, `ended`).
        this.detached();
        break;
      case "output":
        this.receivedEnd = event.offset + event.data.length;
        break;
      case "resync":
        this.receivedEnd = event.snapshot.offset;
        break;
      case "resized":
        // A new subscription would not announce a size it already has:
        // keep it, with the offset where it came.
        this.deferredResize = { event, at: this.receivedEnd ?? this.tail.offset ?? 0 };
        break;
      case "turn_started":
      case "turn_completed":
      case "awaiting_input":
      case "approval_requested": {
        // A new subscription sends again the turn events at or after the
        // offset it resumes at. One before it (a terminal notification is
        // placed where the host's screen model had read, which may trail
        // the output sent) would be lost: keep it, beyond the bound.
        const resumeAt = this.tail.offset;
        if (resumeAt !== undefined && event.offset < resumeAt) {
          const admitted = this.tail.admit(event);
          if (admitted !== undefined) this.pushEvent(admitted);
        }
        break;
      }
      default:
        // `exited`, and what this client does not know: sent again on the
        // new subscription.
        break;
    }
  }

  private detached(): void {
    this.sub = undefined;
    this.phase = "wanting";
    this.maybeSubscribe(false);
  }

  /** The connection closed while the subscription was live (or being let go). */
  private onLost(conn: Connection, id: number, error: Error): void {
    const sub = this.sub;
    if (sub === undefined || sub.conn !== conn || sub.id !== id) return;
    this.sub = undefined;
    if (!this.reconnect) {
      this.fail(error, true);
      return;
    }
    this.lostSinceStart = true;
    this.phase = "wanting";
    // The shared connection reconnects; `connected` subscribes again.
  }

  private onUnavailable(error: Error, final: boolean): void {
    if (this.phase !== "wanting" && this.phase !== "subscribing") return;
    this.fail(error, final || !this.reconnect);
  }

  /** Queues an error for the consumer: for good (`final`), or until it has had it. */
  private fail(error: Error, final: boolean): void {
    this.sub = undefined;
    this.phase = final ? "failed" : "halted";
    this.push({ type: "error", error, final });
    this.settleReady(error);
    if (final) this.done();
  }

  private push(entry: Entry): void {
    this.queue.push(entry);
    this.wakeUp();
  }

  private pushEvent(event: PaneEvent): void {
    this.queuedEvents += 1;
    this.push({ type: "event", event });
  }

  /** Closes without unsubscribing (the caller does, when it must). */
  private shut(): void {
    this.phase = "closed";
    this.sub = undefined;
    this.queue = [];
    this.queuedEvents = 0;
    this.settleReady(
      this.abortReason !== undefined
        ? new AbortError(this.abortReason.reason, "the stream was aborted")
        : new ConnectionLostError("the stream was closed"),
    );
    this.wakeUp();
    this.done();
  }

  /** The stream will subscribe no more: lets go of the client's watch and runs the done hooks. */
  private done(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    this.unlistenAbort?.();
    this.unlistenAbort = undefined;
    for (const hook of this.doneHooks.splice(0)) hook();
  }

  private settleReady(error: Error | undefined, start?: StreamStart): void {
    if (this.readySettled) return;
    this.readySettled = true;
    if (start !== undefined) this.readyResolve(start);
    else this.readyReject(error ?? new ConnectionLostError("the stream was closed"));
  }

  /** A method rather than a comparison, so that it is re-read after every call. */
  private closedNow(): boolean {
    return this.phase === "closed";
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
