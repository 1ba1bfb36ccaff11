/**
 * {@link PaneWatch}: every pane of the host arriving, changing activity,
 * exiting and leaving, as an async iterator that survives lost
 * connections and slow consumers.
 *
 * @module
 */

import type { Connection } from "./connection.js";
import { type AbortError, type ConnectionLostError, HostRevisionError, type RequestTimeoutError } from "./errors.js";
import { type StreamHost, SubscriptionIterator } from "./subscription.js";
import type { PaneSummary } from "./types/pane.js";
import type { WatchEvent, Watching } from "./types/watch.js";
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
   * Closes the watch when aborted: the subscription is ended, and a
   * `next()` waiting and every later one resolve `done`, so a `for await`
   * ends quietly (`ready`, when not yet settled, rejects with an
   * {@link AbortError}).
   */
  signal?: AbortSignal | undefined;
  /**
   * How long each `watch` request waits for its answer, in milliseconds, a
   * wait for the client's connection included; `0` waits forever. On
   * expiry `next()` rejects with a {@link RequestTimeoutError}, and calling
   * it again tries again. Default: the client's `requestTimeoutMs`.
   */
  deadlineMs?: number | undefined;
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

/** A start, queued until the consumer takes it. */
interface StartEntry {
  panes: PaneSummary[];
  cause: WatchStartCause;
}

/**
 * A watch of every pane of the host (protocol revision 3), read with
 * `for await (const item of watch)`: first a `start` with every pane,
 * then `pane_started`, `pane_activity`, `pane_changed`, `pane_exited`
 * and `pane_ended` events as they happen.
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
export class PaneWatch extends SubscriptionIterator<WatchItem, WatchEvent, StartEntry, PaneSummary[]> {
  /**
   * Settles when the first watch is made: with every pane then, or with
   * the error that prevented it. Awaiting it is optional; the same error
   * is also thrown by the first `next()`.
   */
  declare readonly ready: Promise<PaneSummary[]>;

  /** The cause the next `start` will carry. */
  private nextCause: WatchStartCause = "watching";

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
    super(host, options.maxBuffered, options.reconnect, "watch");
    this.begin(options);
  }

  /** A host older than revision 3 cannot watch. */
  protected override refusalOn(conn: Connection): Error | undefined {
    if (conn.welcome.revision < WATCH_REVISION) return new HostRevisionError("watch", WATCH_REVISION, conn.welcome.revision);
    return undefined;
  }

  /** Watches with `watch`. */
  protected override subscribe(): Promise<unknown> {
    return this.call({ watch: {} }, "watching", (content, answeredOn) => this.onWatching(answeredOn, parseWatching(content)));
  }

  /** The watch is made: synchronously, before any of its events is handled. */
  private onWatching(conn: Connection, answer: Watching): void {
    if (!this.attach(conn, answer.subscription, watchEvent)) return;
    this.pushStart({ panes: answer.panes, cause: this.nextCause });
    this.settleReady(undefined, answer.panes);
  }

  /** Every start is yielded, with its cause. */
  protected override startItem(entry: StartEntry): WatchItem {
    return { kind: "start", panes: entry.panes, cause: entry.cause };
  }

  /** Every event is yielded as it came. */
  protected override eventItem(event: WatchEvent): WatchItem {
    return { kind: "event", event };
  }

  /** Full: `maxBuffered` events wait. */
  protected override isFull(): boolean {
    return this.buffered >= this.maxBuffered;
  }

  /** Every event of the live watch is queued. */
  protected override received(event: WatchEvent): void {
    this.pushEvent(event);
  }

  /** The new list will stand for what is dropped. */
  protected override lettingGo(): void {
    this.nextCause = "fell_behind";
  }

  /** The next start says `reconnected`; the first one, lost before its answer, still says `watching`. */
  protected override reconnecting(subscribed: boolean): void {
    this.nextCause = subscribed || this.nextCause !== "watching" ? "reconnected" : "watching";
  }
}
