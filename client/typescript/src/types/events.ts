/**
 * A pane's subscription (`events`, `reconnect`): how it starts, and its
 * events.
 *
 * @module
 */

import type { EndReason, TurnSource } from "./vocabularies.js";
import type { Usage } from "./answers.js";
import type { ExitStatus, ScreenSnapshot, Size } from "./pane.js";

/**
 * How a stream begins.
 *
 * - `replay`: output follows from exactly `from`; nothing skipped, nothing repeated.
 * - `snapshot`: the stream begins with this screen and output follows from
 *   `snapshot.offset`. `skipped_from` is the offset asked for when the host
 *   no longer held it (the bytes from there to `snapshot.offset` are not
 *   delivered), `null` when no offset was asked for.
 * - `generation_changed`: only after a reconnect; the process behind the
 *   pane was replaced since generation `previous`; output follows from
 *   `snapshot.offset`.
 */
export type StreamStart =
  | { kind: "replay"; from: number }
  | { kind: "snapshot"; snapshot: ScreenSnapshot; skipped_from: number | null }
  | { kind: "generation_changed"; previous: number; snapshot: ScreenSnapshot };

/**
 * Output bytes of a pane. `offset` is the absolute offset of `data[0]`;
 * the event covers `[offset, offset + data.length)`. `data` may split a
 * UTF-8 character or an escape sequence anywhere.
 */
export interface OutputEvent {
  /** The event's name. */
  kind: "output";
  /** The absolute offset of the first byte of `data`. */
  offset: number;
  /** The bytes, decoded from base64. */
  data: Uint8Array;
}

/**
 * The subscriber fell out of the pane's ring: the bytes from `skipped_from`
 * to `snapshot.offset` are not delivered; redraw from the snapshot.
 */
export interface ResyncEvent {
  /** The event's name. */
  kind: "resync";
  /** Where the subscriber had got to. */
  skipped_from: number;
  /** The screen that stands for the skipped bytes; output continues at its offset. */
  snapshot: ScreenSnapshot;
}

/** The pane's terminal was resized (by any client). */
export interface ResizedEvent {
  /** The event's name. */
  kind: "resized";
  /** The new size. */
  size: Size;
}

/** The pane's process exited; every output byte was delivered before this. */
export interface ExitedEvent {
  /** The event's name. */
  kind: "exited";
  /** How it ended. */
  status: ExitStatus;
  /** The pane's final end offset. */
  offset: number;
}

/**
 * The subscription is over: always its last event. `reason` is `exited`,
 * `closed` or `unsubscribed` (for a watch, `closed` when the host's feed
 * closed, as when it shuts down); treat an unknown reason as "ended".
 */
export interface EndedEvent {
  /** The event's name. */
  kind: "ended";
  /** Why it ended. */
  reason: EndReason;
}

/**
 * A turn began: input was submitted (`send` with `enter`, `ask`: source
 * `input`) or the CLI's hook said so (source `hook`). At most one turn is
 * open at a time.
 */
export interface TurnStartedEvent {
  /** The event's name. */
  kind: "turn_started";
  /** The pane's output offset when the host observed it; the output before it has been delivered. */
  offset: number;
  /** Where the signal came from: `input`, `hook`, or another source (see {@link TurnCompletedEvent}). */
  source: TurnSource;
}

/**
 * A turn ended. It may come without a `turn_started` before it (a CLI that
 * reports no start, a prompt typed in an attached terminal).
 */
export interface TurnCompletedEvent {
  /** The event's name. */
  kind: "turn_completed";
  /** The pane's output offset when the host observed the end; the output before it has been delivered. */
  offset: number;
  /**
   * Where the signal came from: `hook`, `notify_program`,
   * `terminal_notification` (`OSC 9`, `OSC 777 ; notify` or a bell in the
   * output), `shell_integration` (revision 3: a bash's prompt marks),
   * `heuristic` (the output stayed quiet, or an interrupt was confirmed by
   * quiet) or `input`. An open vocabulary: more may appear.
   */
  source: TurnSource;
  /** Tokens and cost of the turn, or `unavailable`. */
  usage: Usage;
  /**
   * The exit status of the command the turn ran, when the turn ended by
   * shell integration marks (revision 3); otherwise `null`.
   */
  exit_code: number | null;
}

/** The CLI waits for its user's input (reported by its hooks or notify program). */
export interface AwaitingInputEvent {
  /** The event's name. */
  kind: "awaiting_input";
  /** The pane's output offset when the host observed it. */
  offset: number;
  /** Where the signal came from, such as `hook`. */
  source: TurnSource;
  /** What the CLI said, or `""`. */
  detail: string;
}

/** The CLI asks its user to approve an action (running a command, editing a file). */
export interface ApprovalRequestedEvent {
  /** The event's name. */
  kind: "approval_requested";
  /** The pane's output offset when the host observed it. */
  offset: number;
  /** Where the signal came from, such as `hook`. */
  source: TurnSource;
  /** What the CLI said, or `""`. */
  detail: string;
}

/** The four turn events: what the host observed of an agent's work cycle. */
export type TurnEvent = TurnStartedEvent | TurnCompletedEvent | AwaitingInputEvent | ApprovalRequestedEvent;

/**
 * An event this client does not know (a newer host's), passed on as it
 * arrived: `name` is its JSON key and `body` its JSON value, unconverted.
 * It does not move the stream's offset. Ignore what you do not need.
 */
export interface OtherEvent {
  /** The event's name. */
  kind: "other";
  /** The event's name on the wire. */
  name: string;
  /** The event's fields as JSON. */
  body: unknown;
}

/** An event of a pane's subscription. */
export type PaneEvent =
  | OutputEvent
  | ResyncEvent
  | ResizedEvent
  | ExitedEvent
  | EndedEvent
  | TurnStartedEvent
  | TurnCompletedEvent
  | AwaitingInputEvent
  | ApprovalRequestedEvent
  | OtherEvent;

/** The same as {@link PaneEvent}, under the protocol's name. */
export type Event = PaneEvent;

/** The answer to `events` and `reconnect`. */
export interface Subscription {
  /** The subscription id, chosen by the host; every event of it carries it. */
  subscription: number;
  /** The pane. */
  pane: string;
  /** The pane's current generation; remember it for `reconnect`. */
  generation: number;
  /** How the stream begins. */
  start: StreamStart;
}
