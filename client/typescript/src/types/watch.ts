/**
 * A watch of every pane (`watch`, revision 3): its answer and its events.
 *
 * @module
 */

import type { Activity } from "./vocabularies.js";
import type { EndedEvent, OtherEvent } from "./events.js";
import type { ExitStatus, PaneSummary, Size } from "./pane.js";

/** On a watch: a pane came to the host (a `start` or a `login`). */
export interface PaneStartedEvent {
  /** The event's name. */
  kind: "pane_started";
  /** The pane, as {@link Client.list} describes it. */
  pane: PaneSummary;
}

/** On a watch: a pane's `activity` changed. */
export interface PaneActivityEvent {
  /** The event's name. */
  kind: "pane_activity";
  /** The pane's id. */
  pane: string;
  /** Its activity now: `busy`, `idle`, `awaiting_input`, `awaiting_approval` or `unknown` (treat another value as `unknown`). */
  activity: Activity;
}

/**
 * On a watch (revision 8): a pane's terminal size or window title
 * changed. Sent only for a change; it states the latest size and title,
 * both at once, whichever of them changed.
 */
export interface PaneChangedEvent {
  /** The event's name. */
  kind: "pane_changed";
  /** The pane's id. */
  pane: string;
  /** Its terminal's size now. */
  size: Size;
  /** Its window title now (as {@link Client.list} shows it), or `""` when the program set none; at most 4096 bytes. */
  title: string;
}

/** On a watch: a pane's process exited. The pane stays, with its output and screen, until it is closed. */
export interface PaneExitedEvent {
  /** The event's name. */
  kind: "pane_exited";
  /** The pane's id. */
  pane: string;
  /** How the process ended. */
  status: ExitStatus;
}

/**
 * On a watch: a pane left the host. `reason` is `closed`, or
 * `ended when the host restarted: ...` for a pane a restarted host could
 * not bring back; for people, as `UNKNOWN_PANE` would later say it.
 */
export interface PaneEndedEvent {
  /** The event's name. */
  kind: "pane_ended";
  /** The pane's id. */
  pane: string;
  /** Why it left. */
  reason: string;
}

/**
 * On a watch: the watcher fell behind in the host and `missed` events
 * were dropped for it; `panes` is every pane now, and replaces what was
 * missed. Events follow on from this list.
 */
export interface PaneListEvent {
  /** The event's name. */
  kind: "pane_list";
  /** Every pane, as {@link Client.list} describes them. */
  panes: PaneSummary[];
  /** How many events were dropped. */
  missed: number;
}

/**
 * An event of a watch (revision 3): what happens to the host's panes.
 * Each states a pane's new state, and may repeat what a list showed.
 * `ended` is always the last.
 */
export type WatchEvent =
  | PaneStartedEvent
  | PaneActivityEvent
  | PaneChangedEvent
  | PaneExitedEvent
  | PaneEndedEvent
  | PaneListEvent
  | EndedEvent
  | OtherEvent;

/** The answer to `watch`: the subscription, and every pane now. */
export interface Watching {
  /** The subscription id; every event of the watch carries it. */
  subscription: number;
  /** Every pane now, oldest first; the events follow on from this list. */
  panes: PaneSummary[];
}
