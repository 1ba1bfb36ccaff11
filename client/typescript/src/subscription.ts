/**
 * {@link SubscriptionIterator}: what a pane's stream ({@link PaneStream})
 * and a watch ({@link PaneWatch}) share. Both hold one subscription on the
 * client's shared connection and hand its events on as an async iterator:
 * they queue what is received, wake a waiting `next()`, let go of the
 * subscription when their consumer falls behind and make it again once it
 * caught up, make it again after a lost connection, and unsubscribe when
 * closed or aborted.
 *
 * @module
 */

import type { Connection } from "./connection.js";
import { AbortError, ConnectionLostError } from "./errors.js";
import type * as Raw from "./protocol.generated.js";
import type { SharedConnection } from "./shared.js";
import type { Answer } from "./wire.js";

/** What a stream or a watch needs of its client. @internal */
export interface StreamHost {
  /** The client's shared connection. */
  shared: SharedConnection;
  /** The timeout of a subscribing request, in milliseconds; `0` waits forever. */
  requestTimeoutMs: number;
}

/** The options every subscription takes from its client. @internal */
export interface SubscriptionOptions {
  /** Events buffered, at most, before the subscription is let go of. */
  maxBuffered: number;
  /** Whether to subscribe again after a lost connection. */
  reconnect: boolean;
  /** Closes the subscription when aborted. */
  signal?: AbortSignal | undefined;
  /** An error that refuses the subscription at once (the client's limit of streams). */
  refuse?: Error | undefined;
}

/** What the consumer is handed, in order: a start, an event, or an error. */
type Entry<E, S> =
  | { type: "start"; start: S }
  | { type: "event"; event: E }
  | { type: "error"; error: Error; final: boolean };

/**
 * Where the subscription stands:
 * - `wanting`: none; one is made as soon as there is a connection and the
 *   buffer has room (half of it free);
 * - `subscribing`: the request is out;
 * - `live`: events arrive;
 * - `letting_go`: the buffer was full: the subscription is being ended,
 *   and its events are dropped until its `ended`;
 * - `halted`: an error waits in the queue; after the consumer has had it,
 *   `wanting` again;
 * - `ended`: the host's `ended` arrived; nothing more comes;
 * - `failed`: a final error waits in the queue (reconnecting off);
 * - `closed`: closed by the caller.
 */
type Phase = "wanting" | "subscribing" | "live" | "letting_go" | "halted" | "ended" | "failed" | "closed";

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
const UNSUBSCRIBE_TIMEOUT_MS = 5_000;

/**
 * One subscription on the client's shared connection, read as an async
 * iterator of `Item`s: the lifecycle a {@link PaneStream} and a
 * {@link PaneWatch} share. A subclass says what it subscribes with, what a
 * start and an event become for its consumer, when its buffer is full and
 * what it keeps of what it drops.
 *
 * @typeParam Item - What the iterator yields.
 * @typeParam E - An event of the subscription.
 * @typeParam S - What a start queues until the consumer has it.
 * @typeParam R - What `ready` resolves with.
 * @internal
 */
export abstract class SubscriptionIterator<Item, E extends { kind: string }, S, R> implements AsyncIterableIterator<Item> {
  /**
   * Settles when the first subscription is made, or with the error that
   * prevented it. Awaiting it is optional; the same error is also thrown
   * by the first `next()`.
   */
  readonly ready: Promise<R>;

  /** The client's shared connection and request timeout. */
  private readonly host: StreamHost;
  /** Output events (for a stream) or events (for a watch) buffered, at most, before letting go. */
  protected readonly maxBuffered: number;
  private readonly reconnect: boolean;
  /** The buffer has room again when it holds no more than this. */
  private readonly lowWater: number;
  /** `stream` or `watch`, for messages. */
  private readonly noun: "stream" | "watch";
  private queue: Array<Entry<E, S>> = [];
  private queuedEvents = 0;
  private phase: Phase = "wanting";
  private sub: { conn: Connection; id: number } | undefined;
  private abortReason: { reason: unknown } | undefined;
  private wake: (() => void) | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private readyResolve!: (value: R) => void;
  private readyReject!: (error: Error) => void;
  private readySettled = false;
  private readonly doneHooks: Array<() => void> = [];
  private unwatch: (() => void) | undefined;
  private unlistenAbort: (() => void) | undefined;

  /**
   * Sets the subscription up without starting it: the subclass calls
   * {@link SubscriptionIterator.begin} once its own fields are set.
   *
   * @param host - The client's shared connection and request timeout.
   * @param maxBuffered - The resolved buffer size.
   * @param reconnect - Whether to subscribe again after a lost connection.
   * @param noun - `stream` or `watch`, for messages.
   */
  protected constructor(host: StreamHost, maxBuffered: number, reconnect: boolean, noun: "stream" | "watch") {
    this.host = host;
    this.reconnect = reconnect;
    this.noun = noun;
    this.maxBuffered = Math.max(1, Math.floor(maxBuffered));
    this.lowWater = Math.floor(this.maxBuffered / 2);
    this.ready = new Promise<R>((resolve, reject) => {
      this.readyResolve = resolve;
      this.readyReject = reject;
    });
    this.ready.catch(() => {}); // Optional to await: never an unhandled rejection.
  }

  /** Events received and not yet yielded. */
  get buffered(): number {
    return this.queuedEvents;
  }

  /** True once it ended (`ended` received), failed for good, or was closed. */
  get isDone(): boolean {
    return this.phase === "ended" || this.phase === "failed" || this.phase === "closed";
  }

  /** Returns itself: a stream or a watch is its own iterator. */
  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * The next item: a `start` first and whenever the subscription was made
   * anew in a way the consumer must hear of, then events. `done` after
   * `ended` has been yielded or after `close()`. Calls may overlap; they
   * are answered in order.
   */
  next(): Promise<IteratorResult<Item, undefined>> {
    const run = this.chain.then(() => this.pull());
    this.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Closes it (as `close()`); called by `break` in `for await`. */
  async return(): Promise<IteratorResult<Item, undefined>> {
    await this.close();
    return DONE;
  }

  /**
   * Ends it: unsubscribes (when a subscription is live) and drops what was
   * buffered. Pending and later `next()` calls resolve `done`, after an
   * abort by its signal too.
   * Safe to call more than once. The client's connection stays open.
   */
  async close(): Promise<void> {
    if (this.phase === "closed") return;
    const sub = this.phase === "live" ? this.sub : undefined;
    this.shut();
    if (sub !== undefined) await this.unsubscribe(sub.conn, sub.id);
  }

  /** @internal Runs `hook` once when it is done (ended, failed for good, or closed). */
  onDone(hook: () => void): void {
    if (this.isDone) hook();
    else this.doneHooks.push(hook);
  }

  /**
   * Starts: refuses at once (`refuse`), closes at once (an aborted
   * signal), or listens to the signal and the client's connection and
   * subscribes. Called at the end of the subclass's constructor.
   */
  protected begin(options: SubscriptionOptions): void {
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
    this.unwatch = this.host.shared.watch({
      connected: () => this.maybeSubscribe(false),
      unavailable: (error, final) => this.onUnavailable(error, final),
    });
    this.maybeSubscribe(true);
  }

  /**
   * Sends the subscribing request, for the subclass's
   * {@link SubscriptionIterator.subscribe}. `answered` runs with the
   * answer, synchronously, before any event of the subscription is
   * handled; it calls {@link SubscriptionIterator.attach}.
   */
  protected call<K extends "subscribed" | "watching">(
    request: Raw.Request,
    expect: K,
    answered: (content: Answer<K>, conn: Connection) => void,
  ): Promise<Answer<K>> {
    return this.host.shared.call(request, expect, {
      timeoutMs: this.host.requestTimeoutMs,
      retry: false,
      onAnswer: answered,
      // Answered after the wait was given up: end that subscription.
      onLate: (content, conn) => void this.unsubscribe(conn, content.subscription),
    });
  }

  /**
   * The subscription `id` is made on `conn`: routes its events here and
   * returns `true`; or, when it was closed meanwhile, ends it and returns
   * `false`.
   */
  protected attach(conn: Connection, id: number, parse: (raw: Raw.Event) => E): boolean {
    if (this.phase !== "subscribing") {
      // Closed meanwhile: end it.
      void this.unsubscribe(conn, id);
      return false;
    }
    conn.addSink<E>(id, {
      parse,
      event: (event) => this.onEvent(conn, id, event),
      lost: (error) => this.onLost(conn, id, error),
    });
    this.sub = { conn, id };
    this.phase = "live";
    return true;
  }

  /** Queues a start for the consumer. */
  protected pushStart(start: S): void {
    this.push({ type: "start", start });
  }

  /** Queues an event for the consumer. */
  protected pushEvent(event: E): void {
    this.queuedEvents += 1;
    this.push({ type: "event", event });
  }

  /** Settles `ready`: with `value`, or else with `error`; only the first call counts. */
  protected settleReady(error: Error | undefined, value?: R): void {
    if (this.readySettled) return;
    this.readySettled = true;
    if (value !== undefined) this.readyResolve(value);
    else this.readyReject(error ?? new ConnectionLostError(`the ${this.noun} was closed`));
  }

  /** Sends the subscribing request (with {@link SubscriptionIterator.call}), once there is a connection and room. */
  protected abstract subscribe(): Promise<unknown>;

  /** Why no subscription can be made on `conn` at all (for good), if so. */
  protected refusalOn(_conn: Connection): Error | undefined {
    return undefined;
  }

  /** What a queued start yields, as the consumer takes it; `undefined` yields nothing. */
  protected abstract startItem(start: S): Item | undefined;

  /** What a queued event yields, as the consumer takes it. */
  protected abstract eventItem(event: E): Item;

  /** An event of the live subscription, `ended` included: queue what the consumer is to have of it. */
  protected abstract received(event: E): void;

  /** Whether the buffer is too full for `event`: then the subscription is let go of. */
  protected abstract isFull(event: E): boolean;

  /** The subscription is being let go of (the buffer is full). */
  protected lettingGo(): void {}

  /**
   * An event of the subscription being let go of, other than its `ended`:
   * first the one that filled the buffer, then what still arrives.
   */
  protected dropped(_event: E): void {}

  /**
   * The connection was lost, and the subscription will be made again on
   * the next one. `subscribed`: a subscription was made (live or being let
   * go of); otherwise only its request was out.
   */
  protected abstract reconnecting(subscribed: boolean): void;

  private async pull(): Promise<IteratorResult<Item, undefined>> {
    for (;;) {
      // Closed, by `close()`, `break` or the signal: done, quietly (an
      // abort by the signal is how a consumer says it is done reading).
      if (this.phase === "closed") return DONE;
      const entry = this.queue.shift();
      if (entry !== undefined) {
        switch (entry.type) {
          case "start": {
            const item = this.startItem(entry.start);
            if (item === undefined) continue;
            return { done: false, value: item };
          }
          case "event": {
            this.queuedEvents -= 1;
            const item = this.eventItem(entry.event);
            this.maybeSubscribe(false);
            return { done: false, value: item };
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
   * Subscribes when a subscription is wanted, the buffer has room and
   * there is a connection. With `demand` (a consumer waits), a client that
   * gave up reconnecting tries again.
   */
  private maybeSubscribe(demand: boolean): void {
    if (this.phase !== "wanting" || this.queuedEvents > this.lowWater) return;
    const shared = this.host.shared;
    const conn = shared.open;
    if (conn === undefined) {
      if (demand) shared.ensure();
      return;
    }
    const refusal = this.refusalOn(conn);
    if (refusal !== undefined) {
      this.fail(refusal, true);
      return;
    }
    this.phase = "subscribing";
    this.subscribe().catch((error: Error) => this.onSubscribeFailed(error));
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
      this.reconnecting(false);
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
    // LIMIT_REACHED, MALFORMED_REQUEST from a host that does not know
    // `watch`, ...) or a timeout: the consumer hears of it; calling next()
    // again tries again.
    this.fail(error, false);
  }

  private onEvent(conn: Connection, id: number, event: E): void {
    const sub = this.sub;
    if (sub === undefined || sub.conn !== conn || sub.id !== id) return;
    if (this.phase === "letting_go") {
      // Unsubscribed, or ended on its own: subscribe again once there is
      // room (a new subscription delivers what remains).
      if (event.kind === "ended") this.detached();
      else this.dropped(event);
      return;
    }
    if (this.phase !== "live") return;
    if (event.kind === "ended") {
      this.sub = undefined;
      this.received(event);
      this.phase = "ended";
      this.done();
      return;
    }
    if (this.isFull(event)) {
      this.letGo(conn, id, event);
      return;
    }
    this.received(event);
  }

  /**
   * The buffer is full: end the subscription, drop `event` and what
   * follows until its `ended`, and subscribe again once the consumer has
   * caught up.
   */
  private letGo(conn: Connection, id: number, event: E): void {
    this.phase = "letting_go";
    this.lettingGo();
    this.dropped(event);
    void this.unsubscribe(conn, id).then(() => {
      // Normally its `ended` came first; this covers an answer without it.
      if (this.phase === "letting_go" && this.sub?.conn === conn && this.sub.id === id) this.detached();
    });
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
    this.reconnecting(true);
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

  /** Ends subscription `id` on `conn`; resolves when answered, or when `conn` closed or the wait ran out. */
  private unsubscribe(conn: Connection, id: number): Promise<unknown> {
    return this.host.shared.sendOn(conn, { unsubscribe: { subscription: id } }, "unsubscribed", UNSUBSCRIBE_TIMEOUT_MS);
  }

  private push(entry: Entry<E, S>): void {
    this.queue.push(entry);
    this.wakeUp();
  }

  /** Closes without unsubscribing (the caller does, when it must). */
  private shut(): void {
    this.phase = "closed";
    this.sub = undefined;
    this.queue = [];
    this.queuedEvents = 0;
    this.settleReady(
      this.abortReason !== undefined
        ? new AbortError(this.abortReason.reason, `the ${this.noun} was aborted`)
        : new ConnectionLostError(`the ${this.noun} was closed`),
    );
    this.wakeUp();
    this.done();
  }

  /** It will subscribe no more: lets go of the client's watch and runs the done hooks. */
  private done(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    this.unlistenAbort?.();
    this.unlistenAbort = undefined;
    for (const hook of this.doneHooks.splice(0)) hook();
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
