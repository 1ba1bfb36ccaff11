/**
 * What the host answers to `wait_for`, `send`, `interrupt`, `resize`,
 * `close` and `ask` (a turn's report, with its usage).
 *
 * @module
 */

import type { InterruptAction, InterruptOutcome, SweepMethod, TurnSource, UsageKind } from "./vocabularies.js";
import type { ExitStatus, Size } from "./pane.js";
import type { WaitTarget } from "./requests.js";

/** The answer to `wait_for`: where the pattern was found. */
export interface WaitMatch {
  /** The pane. */
  pane: string;
  /** What was matched. */
  target: WaitTarget;
  /**
   * For `screen`: the output offset the matching screen reflects (every
   * byte before it, none after). For `output`: the offset just after the
   * match's last byte; {@link Client.events} from there shows what came
   * next.
   */
  offset: number;
  /** The text that matched, at most 4,096 bytes (cut at a character boundary; invalid UTF-8 replaced). */
  matched: string;
}

/** The answer to `send`. */
export interface SendReport {
  /** The pane. */
  pane: string;
  /** How many bytes were written to the terminal. */
  bytes: number;
}

/** One step an interrupt took. */
export interface InterruptStep {
  /**
   * What was done: `keys` (the interrupt keys were written), `sigint`,
   * `sigterm`, `sigkill` (the signal was sent to the foreground process
   * group), or `observed` (what confirmed the stop, or that nothing did).
   * More actions may appear.
   */
  action: InterruptAction;
  /**
   * For people, not for matching: the keys written, escaped (`\x03`), the
   * process group signalled, or what was observed.
   */
  detail: string;
  /** Milliseconds since the interrupt began. */
  at_ms: number;
}

/** The answer to `interrupt`. */
export interface InterruptReport {
  /** The pane. */
  pane: string;
  /**
   * What was confirmed: `turn_cancelled` (the keys did it: the turn ended
   * or the output went quiet), `process_interrupted` (`SIGINT` did it and
   * the process still runs), `process_ended` (the process exited, after
   * the keys or a signal), `foreground_ended` (with `terminate`: the
   * program in the foreground, a job of the pane's shell, ended; the
   * pane's process runs on), `unconfirmed` (nothing observed confirms the
   * stop and the host did not, or could no longer, escalate: no turn was
   * known to be running, the runtime's completion is `unobserved`, or with
   * `terminate` the program survived `SIGKILL`) or `not_running` (the
   * process had already exited; nothing was done).
   * Treat an unknown value as "something was done, see `steps`".
   */
  outcome: InterruptOutcome;
  /** Each step taken, in order, ending with an `observed` step; empty when nothing was done. */
  steps: InterruptStep[];
  /**
   * With `terminate` (protocol revision 6): what of the processes the
   * program started was ended, and what survived; `null` without
   * `terminate`, for a pane that was not running, or from an older host.
   */
  sweep: PaneSweep | null;
}

/**
 * What ending the processes a pane started found and did (protocol
 * revision 6): SIGTERM, a bounded grace, then SIGKILL, until none was left
 * or the host gave up.
 */
export interface PaneSweep {
  /**
   * How the pane's processes were told from others: `cgroup` (the pane's
   * own control group) or `process_tree` (its session, its descendants,
   * and the orphans its keeper adopted that carry the pane's token). More
   * may appear.
   */
  method: SweepMethod;
  /** How many processes were ended (the pane's own process not counted). */
  ended: number;
  /** The pids still running when the host gave up (at most 64); empty when none survived. */
  survivors: number[];
}

/** The answer to `resize`. */
export interface ResizeReport {
  /** The pane. */
  pane: string;
  /** The new size. */
  size: Size;
}

/** The answer to `close`. */
export interface CloseReport {
  /** The pane, now forgotten. */
  pane: string;
  /** How its process ended. */
  status: ExitStatus;
  /** What of the pane's other processes was ended (protocol revision 6); `null` from an older host. */
  sweep: PaneSweep | null;
}

/**
 * Tokens and cost of one turn, as the CLI reported them. `unavailable` is
 * not zero: its numbers are all `null`, and must not be added up as 0. A
 * `measured` usage may still leave some numbers `null`.
 */
export interface Usage {
  /** `measured` (the CLI reported it), `estimated` or `unavailable` (the CLI did not say); more may appear. */
  kind: UsageKind;
  /** Input tokens, when known. */
  input_tokens: number | null;
  /** Output tokens, when known. */
  output_tokens: number | null;
  /** Cost in millionths of a US dollar, when known. */
  cost_micro_usd: number | null;
}

/** One completed turn: the answer to `ask`. */
export interface TurnReport {
  /**
   * How the end of the turn was observed: `hook`, `notify_program`,
   * `terminal_notification`, `shell_integration` or `heuristic` (a guess,
   * labelled as one); the same vocabulary as turn events' `source`.
   */
  source: TurnSource;
  /** The output offset when the prompt was submitted; its echo comes after it. */
  started_offset: number;
  /** The output offset at which the end of the turn was observed (its `turn_completed` event's offset). */
  completed_offset: number;
  /** Milliseconds from submitting the prompt to observing the end. */
  duration_ms: number;
  /**
   * The lines on the screen after the turn that were not on it before, in
   * screen order, joined by `\n`. Only the visible screen is compared: for
   * a longer answer, read the output from `started_offset` to
   * `completed_offset` with {@link Client.events}.
   */
  added_text: string;
  /** Tokens and cost of the turn, or `unavailable`. */
  usage: Usage;
  /**
   * The exit status of the command the turn ran (bash's `$?`: 128 + n
   * after signal n), when the turn ended by shell integration marks
   * (revision 3); otherwise `null`.
   */
  exit_code: number | null;
}
