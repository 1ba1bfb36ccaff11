/**
 * The bookkeeping behind an exact resume, without IO.
 *
 * @module
 */

import type { PaneEvent, StreamStart, TurnEvent } from "./types/events.js";

/** The request that (re)opens a stream: `events` before any start, `reconnect` after. */
export type CursorRequest =
  | { events: { pane: string; from: number | null } }
  | { reconnect: { pane: string; generation: number; offset: number } };

/**
 * Where a follower stands in a pane's output: the generation it saw and the
 * end offset of the output it has handed to its caller.
 *
 * The rules:
 * - a stream start sets the generation, and the offset to where the
 *   stream's output begins (`from` of a replay, the snapshot's offset
 *   otherwise);
 * - an `output` event moves the offset to its end (`offset` +
 *   `data.length`); a `resync` moves it to its snapshot's offset;
 * - output that lies wholly before the offset is a duplicate and is
 *   dropped; output that begins before it is trimmed to start at it.
 *   Either only happens if a host replays more than asked; it keeps the
 *   "no duplicate" promise on this side too.
 * - turn events do not move the offset. A resume at offset O may bring
 *   again the turn events at exactly O (PROTOCOL.md section 8): after a
 *   `replay` start from the offset the cursor stood at, a turn event equal
 *   to one handed on at that offset (same name, offset and source) is
 *   dropped, once per earlier one.
 *
 * After a lost connection, {@link FollowCursor.resumeRequest} is the
 * request that continues exactly where the caller stopped.
 */
export class FollowCursor {
  private gen: number | undefined;
  private off: number | undefined;
  private done = false;
  /** Turn events handed on whose offset is the current offset, as keys. */
  private turnsHere: string[] = [];
  /** After a replay from the offset the cursor stood at: those the host may send again. */
  private repeats: string[] = [];
  /** The offset of {@link FollowCursor.repeats}: where the replay began. */
  private repeatAt = 0;

  /**
   * A cursor that has seen nothing yet. `from` is the offset to start at, if
   * any; with `generation` as well, the first request is already a
   * `reconnect` (to resume where an earlier process of the caller stopped).
   */
  constructor(from?: number, generation?: number) {
    this.off = from;
    this.gen = from === undefined ? undefined : generation;
  }

  /** The generation of the last stream start, once there was one. */
  get generation(): number | undefined {
    return this.gen;
  }

  /** The end offset of the output handed on so far (or the start offset asked for, before any stream began). */
  get offset(): number | undefined {
    return this.off;
  }

  /** True once an `ended` event passed. */
  get ended(): boolean {
    return this.done;
  }

  /**
   * The request that (re)opens the stream: `reconnect` with the generation
   * and offset once a stream has begun, otherwise `events` from the
   * starting offset.
   */
  resumeRequest(pane: string): CursorRequest {
    if (this.gen !== undefined && this.off !== undefined) {
      return { reconnect: { pane, generation: this.gen, offset: this.off } };
    }
    return { events: { pane, from: this.off ?? null } };
  }

  /** Notes a stream start handed on. */
  onStart(generation: number, start: StreamStart): void {
    const resumedHere = start.kind === "replay" && this.gen === generation && start.from === this.off;
    this.repeats = resumedHere ? [...this.turnsHere] : [];
    this.repeatAt = start.kind === "replay" ? start.from : 0;
    if (!resumedHere) this.turnsHere = [];
    this.gen = generation;
    this.off = start.kind === "replay" ? start.from : start.snapshot.offset;
  }

  /**
   * Notes an event about to be handed on, and returns what to hand on: the
   * event itself, a trimmed output event, or `undefined` for output that was
   * handed on already and for a turn event a resume repeats.
   */
  admit(event: PaneEvent): PaneEvent | undefined {
    switch (event.kind) {
      case "output": {
        const { offset, data } = event;
        const end = offset + data.length;
        const current = this.off;
        if (current !== undefined && end <= current && !(data.length === 0 && offset === current)) {
          return undefined;
        }
        this.moveTo(end);
        if (current !== undefined && offset < current) {
          return { kind: "output", offset: current, data: data.subarray(current - offset) };
        }
        return event;
      }
      case "resync":
        this.moveTo(event.snapshot.offset);
        this.repeats = [];
        return event;
      case "ended":
        this.done = true;
        return event;
      case "turn_started":
      case "turn_completed":
      case "awaiting_input":
      case "approval_requested":
        return this.admitTurn(event);
      default:
        return event;
    }
  }

  /** A turn event: dropped when it repeats one handed on before a resume at its offset. */
  private admitTurn(event: TurnEvent): TurnEvent | undefined {
    const key = `${event.kind} ${event.offset} ${event.source}`;
    const repeat = this.repeats.indexOf(key);
    if (repeat >= 0) {
      this.repeats.splice(repeat, 1);
      return undefined;
    }
    // Turn events come in the order observed: once a later one passed, no
    // repeat of the earlier offset can follow.
    if (event.offset > this.repeatAt) this.repeats = [];
    if (event.offset === this.off) this.turnsHere.push(key);
    return event;
  }

  /** Moves the offset; the turn events at the old one are no longer at it. */
  private moveTo(offset: number): void {
    if (offset !== this.off) this.turnsHere = [];
    this.off = offset;
  }
}
