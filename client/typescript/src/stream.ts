/**
 * {@link PaneStream}: a pane's events as an async iterator that survives
 * lost connections and slow consumers.
 *
 * @module
 */

import type { Connection } from "./connection.js";
import { FollowCursor } from "./cursor.js";
import type { AbortError, ConnectionLostError, RequestTimeoutError } from "./errors.js";
import { type StreamHost, SubscriptionIterator } from "./subscription.js";
import type { PaneEvent, ResizedEvent, StreamStart, Subscription } from "./types/events.js";
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
   * Closes the stream when aborted: the subscription is ended, and a
   * `next()` waiting and every later one resolve `done`, so a `for await`
   * over the stream ends quietly, as after `break` (`ready`, when not yet
   * settled, rejects with an {@link AbortError}). Check `signal.aborted`
   * to tell an abort from the stream's end.
   */
  signal?: AbortSignal | undefined;
  /**
   * How long each subscribing request (`events`, `reconnect`) waits for
   * its answer, in milliseconds, a wait for the client's connection
   * included; `0` waits forever. On expiry `next()` rejects with a
   * {@link RequestTimeoutError}, and calling it again tries again.
   * Default: the client's `requestTimeoutMs`.
   */
  deadlineMs?: number | undefined;
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

/** A start, queued until the consumer takes it: shown to it or not (a resume that continues exactly). */
interface StartEntry {
  subscription: Subscription;
  visible: boolean;
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
export class PaneStream extends SubscriptionIterator<StreamItem, PaneEvent, StartEntry, StreamStart> {
  /** The pane followed. */
  readonly pane: string;
  /**
   * Settles when the first subscription is made: with its start, or with
   * the error that prevented it. Awaiting it is optional; the same error is
   * also thrown by the first `next()`.
   */
  declare readonly ready: Promise<StreamStart>;

  /** Output events may not pass `maxBuffered`; other events may, up to this. */
  private readonly hardCap: number;
  /** What has been received: where a new subscription continues. */
  private readonly tail: FollowCursor;
  /** What has been yielded: the `generation` and `offset` the caller sees. */
  private headGeneration: number | undefined;
  private headOffset: number | undefined;
  /** A start was received (so a later one may be an exact continuation). */
  private started = false;
  /** The connection was lost since the last start: the next start is yielded whatever it is. */
  private lostSinceStart = false;
  /** The end offset of the last output received on the subscription being let go, kept or dropped. */
  private receivedEnd: number | undefined;
  /** A `resized` dropped while letting go, to hand on where it belongs in the replayed output. */
  private deferredResize: { event: ResizedEvent; at: number } | undefined;

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
    super(host, options.maxBuffered, options.reconnect, "stream");
    this.pane = pane;
    this.hardCap = this.maxBuffered * 2;
    this.tail = new FollowCursor(options.from, options.generation);
    this.headOffset = options.from;
    this.headGeneration = options.from === undefined ? undefined : options.generation;
    this.begin(options);
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

  /** Subscribes with `events`, or with `reconnect` where the stream has got to. */
  protected override subscribe(): Promise<unknown> {
    const request = this.tail.resumeRequest(this.pane);
    return this.call(request, "subscribed", (content, conn) => this.onSubscribed(conn, parseSubscription(content)));
  }

  /** The subscription is made: synchronously, before any of its events is handled. */
  private onSubscribed(conn: Connection, subscription: Subscription): void {
    if (!this.attach(conn, subscription.subscription, paneEvent)) return;
    const { generation, start } = subscription;
    const exact =
      this.started && start.kind === "replay" && generation === this.tail.generation && start.from === this.tail.offset;
    const visible = !this.started || this.lostSinceStart || !exact;
    this.started = true;
    this.lostSinceStart = false;
    this.tail.onStart(generation, start);
    this.receivedEnd = this.tail.offset;
    this.pushStart({ subscription, visible });
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

  /** Moves what the caller sees to the start; an exact continuation yields nothing. */
  protected override startItem(entry: StartEntry): StreamItem | undefined {
    const { generation, start } = entry.subscription;
    this.headGeneration = generation;
    this.headOffset = start.kind === "replay" ? start.from : start.snapshot.offset;
    if (!entry.visible) return undefined;
    return { kind: "start", start, generation };
  }

  /** Moves what the caller sees past the event. */
  protected override eventItem(event: PaneEvent): StreamItem {
    if (event.kind === "output") this.headOffset = event.offset + event.data.length;
    else if (event.kind === "resync") this.headOffset = event.snapshot.offset;
    return { kind: "event", event };
  }

  /** Full: `maxBuffered` events wait, for output; twice that, for any event. */
  protected override isFull(event: PaneEvent): boolean {
    const isOutput = event.kind === "output" || event.kind === "resync";
    return this.buffered >= this.hardCap || (isOutput && this.buffered >= this.maxBuffered);
  }

  /**
   * An event of the live subscription, its `ended` included: what the
   * stream has not had yet of it (output the host sends twice is dropped
   * or trimmed), with a resize dropped while letting go put back where it
   * belongs.
   */
  protected override received(event: PaneEvent): void {
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
   * An event of the subscription being let go, dropped: the new
   * subscription, from exactly the end of what was kept, brings it again
   * from the host's ring, with the turn events at or after the resume
   * offset. What it would not bring again is kept here.
   */
  protected override dropped(event: PaneEvent): void {
    switch (event.kind) {
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

  /** The next start is yielded whatever it is. */
  protected override reconnecting(): void {
    this.lostSinceStart = true;
  }
}
