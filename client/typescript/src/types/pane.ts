/**
 * A pane as the host describes it: its summary, its state and size, its
 * labels, and its screen (`inspect`) and history (`history`).
 *
 * @module
 */

import type { Activity, CompletionSource, RestoredBy } from "./vocabularies.js";

/** A terminal size in character cells: 2 to 1000 columns and rows, at most 250,000 cells. */
export interface Size {
  /** Columns. */
  cols: number;
  /** Rows. */
  rows: number;
}

/** How a process ended. */
export interface ExitStatus {
  /** The exit code; by convention 128 + n for death by signal n. */
  code: number;
  /** The name of the signal that ended the process (such as `"SIGHUP"`), or `null`. */
  signal: string | null;
}

/**
 * A pane's process state: running, or exited with a status. An exited pane
 * keeps its output and screen until it is closed.
 */
export type PaneState = { kind: "running" } | { kind: "exited"; status: ExitStatus };

/** One pane, as `start`, `login` and `list` describe it. */
export interface PaneSummary {
  /** The pane id: opaque, unique within the host. Do not parse it. */
  id: string;
  /** The runtime it was started with, such as `shell`. */
  runtime: string;
  /** Grows whenever the process behind the pane is replaced. */
  generation: number;
  /** Running, or exited with a status. */
  state: PaneState;
  /** The process id of the pane's child, which leads its process group. */
  pid: number;
  /** The terminal size. */
  size: Size;
  /** The end offset: the total number of output bytes the pane has produced. */
  offset: number;
  /** The working directory the process started in. */
  cwd: string;
  /** The window title the process set, or `""`. */
  title: string;
  /** When the pane was created, in milliseconds since the Unix epoch. */
  created_at_ms: number;
  /**
   * What the pane's agent is doing, as far as the host can tell: `idle`
   * (the last turn was seen to end), `busy` (in a turn), `awaiting_input`
   * (the CLI asked its user for something other than an approval),
   * `awaiting_approval` (the CLI asked its user to approve an action) or
   * `unknown` (nothing observed yet, or the process exited). The turn events move it. For a pane whose
   * `completion` is `unobserved` it says nothing about the end of a turn.
   * Treat an unknown value as `unknown`.
   */
  activity: Activity;
  /**
   * How the pane came to this host: `started` (by `start` or `login`), or
   * after a host restart `keeper` (the same process, taken back from its
   * keeper), `native_reference` or `provider_selection` (a new process
   * that resumed the session; the generation grew), or `fresh` (a new
   * process starting over). `""` from a host that does not say.
   */
  restored_by: RestoredBy;
  /**
   * How the end of a turn is observed for this pane, fixed when it starts:
   * `hook`, `notify_program`, `terminal_notification`,
   * `shell_integration` (revision 3: the prompt marks of an interactive
   * bash the host set up, with each command's exit status),
   * `screen_heuristic` or `unobserved` (then {@link Client.ask} is refused
   * with `COMPLETION_UNOBSERVED`). Treat another value as unknown.
   */
  completion: CompletionSource;
  /**
   * The labels the pane was started with (revision 3; `{}` from an older
   * host, or when it has none).
   */
  labels: Labels;
}

/**
 * Labels: names and values a client attaches to a pane when it starts it
 * (an owner, a task id), returned wherever the pane is described and
 * matched by {@link Client.list}. The host stores them and never reads
 * them. At most 32; a name is 1 to 64 bytes of ASCII letters, digits,
 * `.`, `_`, `-` and `/`; a value at most 256 bytes without control
 * characters. Other labels are refused with `INVALID_ARGUMENT`.
 */
export type Labels = Record<string, string>;

/** Where the cursor is. */
export interface Cursor {
  /** Zero-based row from the top. */
  row: number;
  /** Zero-based column from the left. */
  col: number;
  /** Whether the cursor is shown. */
  visible: boolean;
}

/** Terminal modes that change what a client should send. */
export interface InputModes {
  /** Pasted text should be wrapped in `ESC [200~` and `ESC [201~`. */
  bracketed_paste: boolean;
  /** The process asked for mouse reports. */
  mouse: boolean;
  /** Application keypad mode. */
  application_keypad: boolean;
  /** Application cursor-key mode (arrows send `ESC O A` rather than `ESC [ A`). */
  application_cursor: boolean;
}

/**
 * The screen as the host's terminal model saw it after the output bytes
 * before `offset`. Output that follows a snapshot starts at exactly
 * `offset`.
 */
export interface ScreenSnapshot {
  /** The output offset this snapshot describes: every byte before it, none after. */
  offset: number;
  /** The screen size. */
  size: Size;
  /** The visible screen as plain text: rows joined by `\n`, trailing blanks trimmed. */
  text: string;
  /**
   * Bytes that redraw this screen on a blank terminal of the same size:
   * contents with colours and attributes, input modes, cursor position.
   */
  formatted: Uint8Array;
  /** Where the cursor is. */
  cursor: Cursor;
  /** The window title the process set, or `""`. */
  title: string;
  /** Whether the alternate screen is active (full-screen programs). */
  alternate_screen: boolean;
  /** Input modes the process enabled. */
  modes: InputModes;
  /**
   * Whether the snapshot was cut to its bounds (revision 5): `formatted`
   * may then draw the screen without colours, or only its first rows, and
   * `text` and `title` may be cut. `false` from a host before revision 5.
   */
  trimmed: boolean;
}

/** A pane with its current screen: the answer to `inspect`. */
export interface PaneDetail {
  /** The pane. */
  pane: PaneSummary;
  /**
   * Its screen. `screen.offset` may be less than `pane.offset` (the model
   * trails the reader); follow from `screen.offset` to continue without a gap.
   */
  screen: ScreenSnapshot;
}

/**
 * A pane's last lines of output as text: the answer to `history`. The host
 * re-parses the output its ring still holds; its live model keeps no
 * scrollback.
 */
export interface PaneHistory {
  /** The pane. */
  pane: string;
  /** Offset of the first byte re-parsed: the oldest the ring held. */
  from: number;
  /** Offset one past the last byte re-parsed. */
  to: number;
  /**
   * The lines that scrolled off the top, oldest first, then the screen at
   * `to`; joined by `\n`, trailing blanks trimmed, wrapped rows joined.
   */
  text: string;
  /**
   * True when older lines may be missing: the ring no longer held the
   * pane's first output, or more lines scrolled off than were asked for.
   */
  truncated: boolean;
}
