/**
 * The protocol's messages as TypeScript types.
 *
 * Structs keep the protocol's field names (`snake_case`, as in PROTOCOL.md),
 * so the field tables there apply word for word. Two things differ from the
 * JSON on the wire, both for convenience in TypeScript:
 *
 * - Enums the host sends (pane state, stream start, events) are
 *   discriminated unions with a `kind` field instead of externally tagged
 *   objects: `{"exited":{...}}` becomes `{kind: "exited", ...}`.
 * - `bytes` fields (output data, formatted screens) are decoded from base64
 *   into `Uint8Array`.
 *
 * Every `u64` of the protocol (offsets, generations, ids, timestamps) is a
 * JavaScript `number`, exact up to `Number.MAX_SAFE_INTEGER` (2^53 - 1).
 * Offsets reach that only after 8 PiB of output from one pane.
 *
 * @module
 */

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
   * (the CLI asked its user for something) or `unknown` (nothing observed
   * yet, or the process exited). The turn events move it. For a pane whose
   * `completion` is `unobserved` it says nothing about the end of a turn.
   * Treat an unknown value as `unknown`.
   */
  activity: string;
  /**
   * How the pane came to this host: `started` (by `start` or `login`), or
   * after a host restart `keeper` (the same process, taken back from its
   * keeper), `native_reference` or `provider_selection` (a new process
   * that resumed the session; the generation grew), or `fresh` (a new
   * process starting over). `""` from a host that does not say.
   */
  restored_by: string;
  /**
   * How the end of a turn is observed for this pane, fixed when it starts:
   * `hook`, `notify_program`, `terminal_notification`,
   * `shell_integration` (revision 3: the prompt marks of an interactive
   * bash the host set up, with each command's exit status),
   * `screen_heuristic` or `unobserved` (then {@link Client.ask} is refused
   * with `COMPLETION_UNOBSERVED`). Treat another value as unknown.
   */
  completion: string;
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

/**
 * What every method of {@link Client} takes last: a way to stop waiting,
 * and how long to wait.
 */
export interface CallOptions {
  /**
   * Stops waiting for the answer when aborted: the call rejects with an
   * {@link AbortError} (whose `cause` is the signal's `reason`). A request
   * already written to the host may still be carried out there (the
   * protocol cannot call a request back); one still waiting for the
   * client's connection is never sent. A signal aborted before the call
   * rejects at once and sends nothing.
   */
  signal?: AbortSignal | undefined;
  /**
   * How long to wait for the answer, in milliseconds, a wait for the
   * client's connection to come back included; `0` waits forever. On
   * expiry the call rejects with a {@link RequestTimeoutError} (the host
   * may still carry the request out). Default: the client's
   * `requestTimeoutMs` (60 s), and for {@link Client.ask} and
   * {@link Client.probeRuntime} that plus how long the host may take on
   * purpose.
   */
  timeoutMs?: number | undefined;
}

/** Options of {@link Client.history}. */
export interface HistoryOptions extends CallOptions {
  /** Lines from above the screen, at most; the host's default (1,000) when absent. */
  lines?: number;
}

/**
 * Resume an earlier session of a runtime: `"latest"` (whatever the runtime
 * considers its latest session) or `{reference}` (exactly that session).
 */
export type ResumeRequest = "latest" | { reference: string };

/** The fields of a `start` request. */
export interface StartParams {
  /** The runtime id, such as `shell` (see {@link Client.runtimes}). */
  runtime: string;
  /** The working directory; the user's home directory when absent. */
  cwd?: string | null;
  /** The terminal size; 80x24 when absent. */
  size?: Size | null;
  /** For `shell` only: a program and its arguments to run instead of the interactive shell. */
  command?: string[];
  /** The model, for runtimes that take one. */
  model?: string | null;
  /** Resume an earlier session instead of starting fresh. */
  resume?: ResumeRequest | null;
  /**
   * A wall-time limit in milliseconds, counted from the start: once the
   * pane has run that long the host ends it as `close` does, but keeps it
   * listed (exited) until it is closed. Default: none.
   */
  max_wall_ms?: number | null;
  /**
   * The permission profile the runtime must enforce for this launch:
   * `read_only`, `workspace_write` or `full_access` (see
   * {@link PermissionProfile}). Default: none, the CLI's own defaults. A
   * runtime that does not enforce it (not in
   * `RuntimeInfo.permission_profiles`) refuses the start with
   * `OPERATION_UNSUPPORTED` and limitation `PERMISSION_PROFILE_UNENFORCED`,
   * unless `accept_weaker_boundary` is set.
   */
  permission_profile?: PermissionProfile | null;
  /**
   * Start even when the runtime cannot enforce `permission_profile`, as if
   * none had been asked for (the host logs it). Default `false`.
   */
  accept_weaker_boundary?: boolean;
  /**
   * Refuse with `RUNTIME_NOT_READY` unless {@link Client.runtimes} would
   * report the runtime `ready` (or `reduced`, when neither `resume` nor
   * `permission_profile` is asked for). Default `false`.
   */
  require_ready?: boolean;
  /**
   * For `shell` with a `command` (revision 2): run the command again when a
   * host restart finds the pane's keeper gone (after a reboot, say).
   * Without it such a pane ends instead: a one-shot command is not run a
   * second time unasked. Default `false`.
   */
  rerun_after_host_loss?: boolean;
  /**
   * Labels for the pane (revision 3; see {@link Labels}): returned in its
   * {@link PaneSummary} and matched by {@link Client.list}. Default: none.
   */
  labels?: Labels;
  /**
   * Environment variables for the pane's process, over those the host sets
   * (revision 3). Only for `shell` (and runtimes of the host's
   * configuration file); an agent runtime refuses them with
   * `INVALID_ARGUMENT`, since its environment is built from what its
   * adapter declares. At most 64 variables and 64 KiB of names and values;
   * a name is a letter or `_`, then letters, digits and `_` (at most 128
   * bytes), and not one of the host's own `PANEHOST_` names; a value holds
   * no NUL byte. Default: none.
   */
  env?: Record<string, string>;
}

/**
 * What {@link Client.waitFor} matches its pattern against: `screen`, the
 * visible screen as text (rows joined by `\n`, as
 * {@link ScreenSnapshot.text}); or `output`, the bytes the program wrote,
 * escape sequences included.
 */
export type WaitTarget = "screen" | "output" | (string & {});

/** The optional fields of a `wait_for` request (revision 3), and the call's own options. */
export interface WaitForOptions extends CallOptions {
  /** What the pattern is matched against. Default `screen`. */
  target?: WaitTarget;
  /**
   * For `output`: the offset to search from. Default: the pane's end
   * offset when the host handles the request, so only output that comes
   * after counts. Ignored for `screen`.
   */
  from?: number | null;
  /**
   * How long the host waits, in milliseconds: default 30,000, at most
   * 86,400,000 (a day); `0` looks once. The client waits that plus its
   * request timeout for the answer, unless `timeoutMs` says otherwise.
   */
  timeout_ms?: number | null;
}

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

/** Options of {@link Client.list}. */
export interface ListOptions extends CallOptions {
  /**
   * Only the panes that carry every one of these labels with the same
   * value (revision 3). Default: every pane.
   */
  labels?: Labels;
}

/**
 * A permission profile (PROTOCOL.md, `start`): `read_only` (read, but no
 * writes or mutating commands), `workspace_write` (write and run commands
 * inside the working directory, asking before anything outside it) or
 * `full_access` (no sandbox, no approvals). Any other string is answered
 * `INVALID_ARGUMENT` by the host.
 */
export type PermissionProfile = "read_only" | "workspace_write" | "full_access" | (string & {});

/**
 * The optional fields of an `ask` request, and the call's own options.
 * `timeout_ms` is the host's wait for the end of the turn; `timeoutMs`
 * (from {@link CallOptions}) is the client's wait for the answer, by
 * default `timeout_ms` (or its default) plus the client's request timeout.
 */
export interface AskOptions extends CallOptions {
  /**
   * How long the host waits for the end of the turn, in milliseconds.
   * Default (host side): 600000, ten minutes.
   */
  timeout_ms?: number | null;
}

/** The optional fields of an `interrupt` request, and the call's own options. */
export interface InterruptOptions extends CallOptions {
  /**
   * End the program in the terminal's foreground, turn or no turn: after
   * the keys, `SIGINT`, `SIGTERM` and `SIGKILL` to its process group in
   * turn, 2 seconds apart, until it has ended (outcome `process_ended`,
   * or `foreground_ended` when a shell's job ended and the shell runs on).
   * Answered within about 8 seconds. Default `false`.
   */
  terminate?: boolean;
}

/** What a `notify` request reports (see {@link Client.notify}). */
export interface NotifyReport {
  /** The pane's notify token, from `PANEHOST_NOTIFY_TOKEN` inside the pane. */
  token: string;
  /** `turn_started`, `turn_completed` or `notification`. */
  event: string;
  /** What the hook received (usually JSON), passed on as text. Default `""`. */
  payload?: string;
}

/** The optional fields of a `probe_runtime` request, and the call's own options. */
export interface ProbeOptions extends CallOptions {
  /** The model to ask, for runtimes that take one. */
  model?: string | null;
  /**
   * Run even when the runtime cannot hold the read-only boundary (the
   * receipt's `read_only_enforced` is then `false`); otherwise such a probe
   * is refused with `PERMISSION_PROFILE_UNENFORCED`. Default `false`.
   */
  accept_weaker_boundary?: boolean;
}

/** The optional fields of a `login` request, and the call's own options. */
export interface LoginOptions extends CallOptions {
  /** The working directory; the host's home directory when absent. */
  cwd?: string | null;
  /** The terminal size; 80x24 when absent. */
  size?: Size | null;
}

/**
 * Input for {@link Client.send}. Without `enter`, the bytes written to the
 * terminal are exactly the UTF-8 bytes of `text`, then `bytes`. With
 * `enter` the input submits (PROTOCOL.md, `send`): `text` goes as a
 * bracketed paste when the program enabled it, then Enter (`\r`) as a
 * write of its own, and a turn starts (`turn_started` with source `input`).
 */
export interface SendInput {
  /** UTF-8 text to type. */
  text?: string;
  /** Raw bytes, for keys and control sequences. */
  bytes?: Uint8Array;
  /** Submit: write the input, press Enter (`\r`) and start a turn. */
  enter?: boolean;
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
  action: string;
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
  outcome: string;
  /** Each step taken, in order, ending with an `observed` step; empty when nothing was done. */
  steps: InterruptStep[];
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
}

/** A runtime the host can start, as `runtimes` describes it. */
export interface RuntimeInfo {
  /** The runtime id used in `start`, such as `shell`. */
  id: string;
  /** A name for people. */
  display_name: string;
  /** Whether the host's policy allows starting it. */
  supported: boolean;
  /** Whether it is installed and its executable identified. */
  available: boolean;
  /** The executable's canonical path, when found. */
  path: string | null;
  /** The first line the version probe printed, when it worked. */
  version: string | null;
  /** Why it is not available, for people. */
  unavailable_reason: string | null;
  /** Native-resume modes: `REFERENCE`, `PROVIDER_SELECTION`, `INTERACTIVE_PICKER`. */
  resume_modes: string[];
  /** Declared limitation codes (see {@link LimitationCode}). */
  limitations: string[];
  /** SHA-256 of the executable (lowercase hex), when identified. */
  sha256: string | null;
  /** The oldest version the adapter's flags are known to hold for. */
  version_floor: string | null;
  /** `at_or_above`, `below` or `indeterminate`; `null` until detected. */
  floor_status: string | null;
  /**
   * `ready`, `not_ready` or `reduced` (its version could not be read: it
   * starts, with resume and permission profiles withheld from a start that
   * requires readiness).
   */
  readiness: string;
  /** The first gate that stops (or reduces) it: `supported`, `installed`, `version`, `sign_in`, `receipt`. */
  readiness_gate: string | null;
  /** Why that gate stops or reduces it. */
  readiness_reason: string | null;
  /** `signed_in`, `signed_out`, `unobservable` or `not_required`. */
  sign_in: string;
  /** What the sign-in reading rests on; never a secret. */
  sign_in_detail: string | null;
  /** The last completion receipt taken (see {@link Client.probeRuntime}), passed or not; `null` when none was. */
  receipt: Receipt | null;
  /** Whether the last completion receipt counts now (passed, same executable, under 24 hours old). */
  receipt_valid: boolean;
  /** How the end of a turn is observed, such as `hook` or `unobserved`. */
  completion: string;
  /** How a user signs in: `in_terminal`, `outside_terminal` or `not_required`. */
  login: string;
  /** Where the adapter's flags come from, such as `captured_help`. */
  evidence: string;
  /**
   * The permission profiles it enforces (`read_only`, `workspace_write`,
   * `full_access`); empty when it enforces none. A start asking for
   * another is refused unless it accepts a weaker boundary.
   */
  permission_profiles: string[];
}

/**
 * A completion receipt (the answer to `probe_runtime`): the runtime's
 * one-shot mode was asked, inside the read-only boundary, for exactly one
 * JSON object carrying a fresh value, and this is what came back. It is
 * tied to the executable: a changed one voids it.
 */
export interface Receipt {
  /** The runtime id. */
  runtime: string;
  /** Whether the answer was exactly the object asked for (and the program exited 0). */
  passed: boolean;
  /** What was seen, for people: the mismatch, the exit status with standard error, or the timeout. */
  detail: string;
  /** The executable that answered. */
  path: string;
  /** Its version, as its version probe printed it; `null` when unknown. */
  version: string | null;
  /** Its SHA-256 (lowercase hex). */
  sha256: string;
  /** When the receipt was taken, in milliseconds since the Unix epoch. */
  taken_at_ms: number;
  /** How long the one-shot run took, in milliseconds. */
  elapsed_ms: number;
  /** Whether the read-only boundary held the run (`false` when a weaker one was accepted). */
  read_only_enforced: boolean;
}

/**
 * Tokens and cost of one turn, as the CLI reported them. `unavailable` is
 * not zero: its numbers are all `null`, and must not be added up as 0. A
 * `measured` usage may still leave some numbers `null`.
 */
export interface Usage {
  /** `measured` (the CLI reported it), `estimated` or `unavailable` (the CLI did not say); more may appear. */
  kind: string;
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
  source: string;
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
  reason: string;
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
  source: string;
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
  source: string;
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
  source: string;
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
  source: string;
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
  /** Its activity now: `busy`, `idle`, `awaiting_input` or `unknown` (treat another value as `unknown`). */
  activity: string;
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

/** The host's reply to a successful handshake. */
export interface Welcome {
  /** The host's protocol version. */
  protocol: number;
  /**
   * The host's revision of that version (PROTOCOL.md, section 11); 1 from
   * a host that predates revisions. A JSON client is served whatever its
   * own revision; check this before relying on something a later revision
   * added.
   */
  revision: number;
  /** The host's name and version, for people and logs, such as `panehost 0.1.0`. */
  host: string;
  /** The encoding in force; always `json` for this client. */
  encoding: string;
}

/**
 * Error codes of the protocol (section 10). The host may add codes without
 * a protocol version change, so `PanehostError.code` is a plain `string`;
 * this union lists the ones known to this client.
 */
export type ErrorCode =
  | "PROTOCOL_MISMATCH"
  | "HANDSHAKE_REQUIRED"
  | "MALFORMED_REQUEST"
  | "FRAME_TOO_LARGE"
  | "PEER_REFUSED"
  | "UNKNOWN_PANE"
  | "UNKNOWN_RUNTIME"
  | "RUNTIME_NOT_AVAILABLE"
  | "RUNTIME_NOT_SUPPORTED"
  | "BINARY_CHANGED"
  | "RUNTIME_NOT_READY"
  | "INVALID_ARGUMENT"
  | "PANE_EXITED"
  | "OFFSET_OUT_OF_RANGE"
  | "UNKNOWN_SUBSCRIPTION"
  | "OPERATION_UNSUPPORTED"
  | "LOGIN_NOT_REQUIRED"
  | "TURN_TIMEOUT"
  | "TURN_IN_PROGRESS"
  | "NOTIFY_REFUSED"
  | "SPAWN_FAILED"
  | "WAIT_TIMEOUT"
  | "LIMIT_REACHED"
  | "INTERNAL";

/**
 * Limitation codes (section 10), carried by `RuntimeInfo.limitations` and
 * by `OPERATION_UNSUPPORTED` errors. New ones may appear; treat an unknown
 * one as "the runtime cannot do this".
 */
export type LimitationCode =
  | "START_REQUIRES_RESOLVED_MODEL"
  | "NATIVE_RESUME_UNSUPPORTED"
  | "PROVIDER_SELECTION_ONLY"
  | "PROVIDER_SELECTION_INTERACTIVE_PICKER"
  | "PROVIDER_SELECTION_UNSUPPORTED"
  | "REFERENCE_PENDING_LIVE_PROOF"
  | "REFERENCE_STEERED_BY_WRAPPER"
  | "HOST_LOSS_RESTARTS_FRESH"
  | "COMPLETION_UNOBSERVED"
  | "LOGIN_NOT_IN_TERMINAL"
  | "RECEIPT_UNAVAILABLE"
  | "PERMISSION_PROFILE_UNENFORCED"
  | "INTERRUPT_KEEPS_REQUEST";
