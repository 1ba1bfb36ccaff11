/**
 * {@link PaneWatch}: every pane of the host arriving, changing activity,
 * exiting and leaving, as an async iterator that survives lost
 * connections and slow consumers.
 *
 * @module
 */

import type { Connection } from "./connection.js";
import { AbortError, ConnectionLostError, HostRevisionError, type RequestTimeoutError } from "./errors.js";
import type { StreamHost } from "./stream.js";
import type { PaneSummary, WatchEvent, Watching } from "./types.js";
import { watchEvent, watching as parseWatching } from "./wire.js";

/** The protocol revision that added `watch` (PROTOCOL.md section 11). */
export const WATCH_REVISION = 3;

/** Options of {@link Client.watch}. */
export interface WatchOptions {
  /**
   * Events buffered for this watch, at most, before it lets go of its
   * subscription until its consumer catches up (then it watches again,
   * and a new `start` with every pane stands for what it let go of).
   * Default 256, or the client's `maxBufferedEvents`.
   */
  maxBuffered?: number | undefined;
  /**
   * Whether the watch is made again when the client's connection was lost
   * and has come back (default `true`); the new `start` lists every pane
   * then. `false`: a lost connection ends the watch with a
   * {@link ConnectionLostError}.
   */
  reconnect?: boolean | undefined;
  /**
   * Closes the watch when aborted: the subscription is ended, a `next()`
   * waiting (and the first one after) rejects with an {@link AbortError},
   * later ones are `done`.
   */
  signal?: AbortSignal | undefined;
  /**
   * How long each `watch` request waits for its answer, in milliseconds, a
   * wait for the client's connection included; `0` waits forever. On
   * expiry `next()` rejects with a {@link RequestTimeoutError}, and calling
   * it again tries again. Default: the client's `requestTimeoutMs`.
   */
  timeoutMs?: number | undefined;
}

/**
 * Why a watch's `start` came:
 * - `watching`: the first one;
 * - `reconnected`: the client's connection was lost and came back; events
 *   of the time between are not delivered;
 * - `fell_behind`: the consumer fell more than `maxBuffered` events
 *   behind; the events the watch let go of are not delivered.
 *
 * In each case `panes` stands for what was not delivered.
 */
export type WatchStartCause = "watching" | "reconnected" | "fell_behind";

/**
 * One item of a {@link PaneWatch}.
 *
 * - `start`: every pane of the host now, oldest first: at the beginning,
 *   and again whenever the watch had to be made anew (`cause`). Replace
 *   what you know of the host's panes with it; events follow on from it.
 * - `event`: a {@link WatchEvent}. A `pane_list` event (the host dropped
 *   events for this watcher) is to be taken as a `start`: it replaces what
 *   was missed.
 */
export type WatchItem =
  | { kind: "start"; panes: PaneSummary[]; cause: WatchStartCause }
  | { kind: "event"; event: WatchEvent };

type Entry =
  | { type: "start"; panes: PaneSummary[]; cause: WatchStartCause }
  | { type: "event"; event: WatchEvent }
  | { type: "error"; error: Error; final: boolean };

/**
 * Where the watch's subscription stands (as for a pane's stream):
 * `wanting` (none; one is made once there is a connection and the buffer
 * has room), `subscribing`, `live`, `letting_go` (the buffer was full: it
 * is being ended and its events are dropped until its `ended`), `halted`
 * (an error waits in the queue), `ended` (the host's `ended` arrived),
 * `failed` (a final error waits in the queue), `closed`.
 */
type Phase = "wanting" | "subscribing" | "live" | "letting_go" | "halted" | "ended" | "failed" | "closed";

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
const UNSUBSCRIBE_TIMEOUT_MS = 5_000;

/**
 * A watch of every pane of the host (protocol revision 3), read with
 * `for await (const item of watch)`: first a `start` with every pane,
 * then `pane_started`, `pane_activity`, `pane_exited` and `pane_ended`
 * events as they happen.
 *
 * It shares the client's one connection with its requests and streams,
 * and holds one of the connection's subscriptions.
 *
 * **A lost connection.** The watch is made again on the client's next
 * connection, and a `start` (`cause` `reconnected`) lists every pane then.
 *
 * **Backpressure.** When `maxBuffered` events (default 256) wait in the
 * watch, it ends its subscription and drops what still arrives for it;
 * once its consumer has taken half of them, it watches again, and a
 * `start` (`cause` `fell_behind`) lists every pane then. The host itself
 * keeps a bounded backlog of events for a watcher that reads slowly, and
 * beyond it sends a `pane_list` event in place of what it dropped.
 *
 * **Ending.** Iteration ends after an `ended` event has been yielded (the
 * host ended the watch, as when it shuts down), or after
 * {@link PaneWatch.close} (which `break` out of `for await` calls). It
 * throws when the watch cannot be made: a {@link HostRevisionError} from a
 * host older than revision 3, or an answer of the host such as
 * `LIMIT_REACHED` (calling `next()` again tries again), or when the client
 * could not reconnect in its policy's time.
 */
export class PaneWatch implements AsyncIterableIterator<WatchItem> {
  /**
   * Settles when the first watch is made: with every pane then, or with
   * the error that prevented it. Awaiting it is optional; the same error
   * is also thrown by the first `next()`.
   */
  readonly ready: Promise<PaneSummary[]>;

  private readonly host: StreamHost;
  private readonly reconnect: boolean;
  private readonly maxBuffered: number;
  private readonly lowWater: number;
  private queue: Entry[] = [];
  private queuedEvents = 0;
  private phase: Phase = "wanting";
  private sub: { conn: Connection; id: number } | undefined;
  /** The cause the next `start` will carry. */
  private nextCause: WatchStartCause = "watching";
  private abortReason: { reason: unknown } | undefined;
  private wake: (() => void) | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private readyResolve!: (panes: PaneSummary[]) => void;
  private readyReject!: (error: Error) => void;
  private readySettled = false;
  private readonly doneHooks: Array<() => void> = [];
  private unwatch: (() => void) | undefined;
  private unlistenAbort: (() => void) | undefined;

  /**
   * Used by {@link Client.watch}; not meant to be called directly.
   *
   * @param host - The client's shared connection and request timeout.
   * @param options - The resolved buffer size, whether to watch again
   *   after a lost connection, the signal, and an error that refuses the
   *   watch at once (the client's limit of streams).
   * @internal
   */
  constructor(
    host: StreamHost,
    options: { maxBuffered: number; reconnect: boolean; signal?: AbortSignal | undefined; refuse?: Error | undefined },
  ) {
    this.host = host;
    this.reconnect = options.reconnect;
    this.maxBuffered = Math.max(1, Math.floor(options.maxBuffered));
    this.lowWater = Math.floor(this.maxBuffered / 2);
    this.ready = new Promise<PaneSummary[]>((resolve, reject) => {
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

  /** Events received and not yet yielded. */
  get buffered(): number {
    return this.queuedEvents;
  }

  /** True once the watch ended (`ended` received), failed for good, or was closed. */
  get isDone(): boolean {
    return this.phase === "ended" || this.phase === "failed" || this.phase === "closed";
  }

  /** Returns the watch itself: it is its own iterator. */
  [Symbol.asyncIterator](): PaneWatch {
    return this;
  }

  /**
   * The next item: a `start` first and whenever the watch was made anew,
   * then events. `done` after `ended` has been yielded or after
   * {@link PaneWatch.close}. Calls may overlap; they are answered in order.
   */
  next(): Promise<IteratorResult<WatchItem, undefined>> {
    const run = this.chain.then(() => this.pull());
    this.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Closes the watch (as {@link PaneWatch.close}); called by `break` in `for await`. */
  async return(): Promise<IteratorResult<WatchItem, undefined>> {
    await this.close();
    return DONE;
  }

  /**
   * Ends the watch: unsubscribes (when a subscription is live) and drops
   * what was buffered. Pending and later `next()` calls resolve `done`
   * (after an abort by the watch's signal: the first rejects with an
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

  /** @internal Runs `hook` once when the watch is done (ended, failed for good, or closed). */
  onDone(hook: () => void): void {
    if (this.isDone) hook();
    else this.doneHooks.push(hook);
  }

  private async pull(): Promise<IteratorResult<WatchItem, undefined>> {
    for (;;) {
      if (this.phase === "closed") {
        if (this.abortReason !== undefined) {
          const { reason } = this.abortReason;
          this.abortReason = undefined;
          throw new AbortError(reason, "the watch was aborted");
        }
        return DONE;
      }
      const entry = this.queue.shift();
      if (entry !== undefined) {
        switch (entry.type) {
          case "start":
            return { done: false, value: { kind: "start", panes: entry.panes, cause: entry.cause } };
          case "event":
            this.queuedEvents -= 1;
            this.maybeSubscribe(false);
            return { done: false, value: { kind: "event", event: entry.event } };
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
   * Watches when the watch wants a subscription, the buffer has room and
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
    if (conn.welcome.revision < WATCH_REVISION) {
      this.fail(new HostRevisionError("watch", WATCH_REVISION, conn.welcome.revision), true);
      return;
    }
    this.phase = "subscribing";
    shared
      .call({ watch: {} }, "watching", {
        timeoutMs: this.host.requestTimeoutMs,
        retry: false,
        onAnswer: (content, answeredOn) => this.onWatching(answeredOn, parseWatching(content)),
        // Answered after the wait was given up: end that subscription.
        onLate: (content, answeredOn) =>
          void shared.sendOn(answeredOn, { unsubscribe: { subscription: content.subscription } }, "unsubscribed", UNSUBSCRIBE_TIMEOUT_MS),
      })
      .catch((error: Error) => this.onSubscribeFailed(error));
  }

  /** The watch is made: synchronously, before any of its events is handled. */
  private onWatching(conn: Connection, answer: Watching): void {
    if (this.phase !== "subscribing") {
      // Closed meanwhile: end it.
      void this.host.shared.sendOn(conn, { unsubscribe: { subscription: answer.subscription } }, "unsubscribed", UNSUBSCRIBE_TIMEOUT_MS);
      return;
    }
    const id = answer.subscription;
    conn.addSink<WatchEvent>(id, {
      parse: watchEvent,
      event: (event) => this.onEvent(conn, id, event),
      lost: (error) => this.onLost(conn, id, error),
    });
    this.sub = { conn, id };
    this.phase = "live";
    this.push({ type: "start", panes: answer.panes, cause: this.nextCause });
    this.settleReady(undefined, answer.panes);
  }

  private onSubscribeFailed(error: Error): void {
    if (this.phase !== "subscribing") return;
    if (error instanceof ConnectionLostError && !error.requestSent && this.host.shared.state === "closed") {
      this.fail(error, true);
      return;
    }
    if (error instanceof ConnectionLostError && this.host.shared.state !== "down") {
      // The connection was lost before the answer: watch again on the next one.
      if (!this.reconnect) {
        this.fail(error, true);
        return;
      }
      this.nextCause = this.nextCause === "watching" ? "watching" : "reconnected";
      this.phase = "wanting";
      this.maybeSubscribe(false);
      return;
    }
    if (error instanceof ConnectionLostError) {
      // The client gave up reconnecting; `onUnavailable` tells the consumer.
      this.phase = "wanting";
      return;
    }
    // An answer of the host (LIMIT_REACHED, MALFORMED_REQUEST from a host
    // that does not know `watch`, ...) or a timeout: the consumer hears of
    // it; calling next() again tries again.
    this.fail(error, false);
  }

  private onEvent(conn: Connection, id: number, event: WatchEvent): void {
    const sub = this.sub;
    if (sub === undefined || sub.conn !== conn || sub.id !== id) return;
    if (this.phase === "letting_go") {
      // Unsubscribed (or ended on its own): watch again once there is room.
      if (event.kind === "ended") this.detached();
      return;
    }
    if (this.phase !== "live") return;
    if (event.kind === "ended") {
      this.sub = undefined;
      this.pushEvent(event);
      this.phase = "ended";
      this.done();
      return;
    }
    if (this.queuedEvents >= this.maxBuffered) {
      this.letGo(conn, id);
      return;
    }
    this.pushEvent(event);
  }

  /**
   * The buffer is full: end the subscription, drop what still arrives for
   * it, and watch again once the consumer has caught up; the new list
   * stands for what was dropped.
   */
  private letGo(conn: Connection, id: number): void {
    this.phase = "letting_go";
    this.nextCause = "fell_behind";
    void this.host.shared.sendOn(conn, { unsubscribe: { subscription: id } }, "unsubscribed", UNSUBSCRIBE_TIMEOUT_MS).then(() => {
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
    this.nextCause = "reconnected";
    this.phase = "wanting";
    // The shared connection reconnects; `connected` watches again.
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

  private pushEvent(event: WatchEvent): void {
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
        ? new AbortError(this.abortReason.reason, "the watch was aborted")
        : new ConnectionLostError("the watch was closed"),
    );
    this.wakeUp();
    this.done();
  }

  /** The watch will subscribe no more: lets go of the client's watch and runs the done hooks. */
  private done(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    this.unlistenAbort?.();
    this.unlistenAbort = undefined;
    for (const hook of this.doneHooks.splice(0)) hook();
  }

  private settleReady(error: Error | undefined, panes?: PaneSummary[]): void {
    if (this.readySettled) return;
    this.readySettled = true;
    if (panes !== undefined) this.readyResolve(panes);
    else this.readyReject(error ?? new ConnectionLostError("the watch was closed"));
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
