/**
 * What the methods of {@link Client} take: the fields of the requests, and
 * every call's own options ({@link CallOptions}).
 *
 * @module
 */

import type { NotifyEvent, PermissionProfile } from "./vocabularies.js";
import type { Labels, Size } from "./pane.js";

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
   * The client's deadline: how long it waits for the answer, in
   * milliseconds, a wait for the client's connection to come back
   * included; `0` waits forever. On expiry the call rejects with a
   * {@link RequestTimeoutError} (the host may still carry the request
   * out). Default: the client's `requestTimeoutMs` (60 s), and for
   * {@link Client.ask}, {@link Client.waitFor} and
   * {@link Client.probeRuntime} that plus how long the host may take on
   * purpose. Not the host's wait: that is `timeout_ms`, where a request
   * has one. (Formerly `timeoutMs`, which is now refused with a
   * `TypeError`.)
   */
  deadlineMs?: number | undefined;
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
   * {@link PermissionProfile}). Default: the host's default,
   * `workspace_write`, on a runtime that enforces it
   * (`RuntimeInfo.default_permission_profile`, protocol revision 7), else
   * none: the CLI's own defaults. A
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
   * Start even when the installed version is one the runtime's adapter
   * refuses (`RuntimeInfo.version_refused`, protocol revision 7; the host
   * logs it); otherwise such a start is refused with
   * `OPERATION_UNSUPPORTED` and limitation `VERSION_REFUSED`. A host of an
   * older revision refuses no version and ignores it. Default `false`.
   */
  allow_refused_version?: boolean;
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
   * request timeout for the answer, unless `deadlineMs` says otherwise.
   */
  timeout_ms?: number | null;
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
 * The optional fields of an `ask` request, and the call's own options.
 * `timeout_ms` is the host's wait for the end of the turn; `deadlineMs`
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
  event: NotifyEvent;
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
