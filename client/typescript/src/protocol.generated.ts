/**
 * The raw JSON messages of the protocol, as the host writes and reads
 * them: one type per `$defs` entry of docs/protocol.schema.json,
 * "panehost protocol 1, revision 8: the JSON encoding".
 * `wire.ts` turns them into the types of `types.ts`.
 *
 * Generated from the schema by `npm run generate:protocol`
 * (scripts/protocol-types.mjs); do not edit.
 *
 * @module
 * @internal
 */

/**
 * What a pane's agent is doing, as far as the host can tell. A client treats a value it does not know as `unknown`.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type Activity =
  | "idle"
  | "busy"
  | "awaiting_input"
  | "awaiting_approval"
  | "unknown"
  | (string & {});

/** The known values of {@link Activity}, in the order the host declares them. */
export const ActivityValues = ["idle", "busy", "awaiting_input", "awaiting_approval", "unknown"] as const;

/**
 * Bytes as standard base64 (RFC 4648, with `=` padding).
 */
export type ByteBuf = string;

/**
 * How the end of a turn is observed for a pane or a runtime. A client treats a value it does not know as a signal it cannot rely on.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type CompletionSource =
  | "hook"
  | "notify_program"
  | "terminal_notification"
  | "screen_heuristic"
  | "unobserved"
  | "shell_integration"
  | (string & {});

/** The known values of {@link CompletionSource}, in the order the host declares them. */
export const CompletionSourceValues = ["hook", "notify_program", "terminal_notification", "screen_heuristic", "unobserved", "shell_integration"] as const;

/**
 * Cursor position, zero-based.
 */
export interface Cursor {
  /**
   * Column, from the left.
   */
  col: number;
  /**
   * Row, from the top.
   */
  row: number;
  /**
   * Whether the process left the cursor visible.
   */
  visible: boolean;
}

/**
 * How frames after the handshake are encoded.
 */
export type Encoding = "bincode" | "json";

/**
 * Why a subscription ended.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type EndReason =
  | "exited"
  | "closed"
  | "unsubscribed"
  | (string & {});

/** The known values of {@link EndReason}, in the order the host declares them. */
export const EndReasonValues = ["exited", "closed", "unsubscribed"] as const;

/**
 * A structured failure of one request (or of the connection, when no
 * request id applies).
 */
export interface ErrorBody {
  /**
   * A stable code from [`ErrorCode`].
   */
  code: ErrorCode;
  /**
   * The limitation code that explains an `OPERATION_UNSUPPORTED`, if any.
   */
  limitation?: LimitationCode | null;
  /**
   * A sentence for people; not for matching.
   */
  message: string;
}

/**
 * An error code (PROTOCOL.md section 10). A client treats a code it does not know as a generic failure and shows the message.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
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
  | "WAIT_TIMEOUT"
  | "NOTIFY_REFUSED"
  | "SPAWN_FAILED"
  | "LIMIT_REACHED"
  | "NO_TERMINAL"
  | "ANSWER_TOO_LARGE"
  | "BUSY"
  | "INTERNAL"
  | (string & {});

/** The known values of {@link ErrorCode}, in the order the host declares them. */
export const ErrorCodeValues = ["PROTOCOL_MISMATCH", "HANDSHAKE_REQUIRED", "MALFORMED_REQUEST", "FRAME_TOO_LARGE", "PEER_REFUSED", "UNKNOWN_PANE", "UNKNOWN_RUNTIME", "RUNTIME_NOT_AVAILABLE", "RUNTIME_NOT_SUPPORTED", "BINARY_CHANGED", "RUNTIME_NOT_READY", "INVALID_ARGUMENT", "PANE_EXITED", "OFFSET_OUT_OF_RANGE", "UNKNOWN_SUBSCRIPTION", "OPERATION_UNSUPPORTED", "LOGIN_NOT_REQUIRED", "TURN_TIMEOUT", "TURN_IN_PROGRESS", "WAIT_TIMEOUT", "NOTIFY_REFUSED", "SPAWN_FAILED", "LIMIT_REACHED", "NO_TERMINAL", "ANSWER_TOO_LARGE", "BUSY", "INTERNAL"] as const;

/**
 * Something that happened on a subscribed pane.
 */
export type Event =
  | {
      output: {
        /**
         * The bytes (base64 in JSON).
         */
        data: ByteBuf;
        /**
         * Offset of the first byte.
         */
        offset: number;
      };
    }
  | {
      resync: {
        /**
         * The offset the subscriber had reached.
         */
        skipped_from: number;
        /**
         * The screen at the offset where output resumes.
         */
        snapshot: ScreenSnapshot;
      };
    }
  | {
      resized: {
        /**
         * The new size.
         */
        size: Size;
      };
    }
  | {
      exited: {
        /**
         * The final end offset.
         */
        offset: number;
        /**
         * How it ended.
         */
        status: ExitStatus;
      };
    }
  | {
      ended: {
        /**
         * `exited`, `closed` or `unsubscribed` ([`end_reason`]).
         */
        reason: EndReason;
      };
    }
  | {
      turn_started: {
        /**
         * The output offset when it was observed.
         */
        offset: number;
        /**
         * Where the signal came from (see [`crate::turn::source`]).
         */
        source: TurnSource;
      };
    }
  | {
      turn_completed: {
        /**
         * The exit status of the command the turn ran (its `$?`), when
         * the shell's integration marks reported it (revision 3).
         */
        exit_code?: number | null;
        /**
         * The output offset when it was observed.
         */
        offset: number;
        /**
         * Where the signal came from (see [`crate::turn::source`]).
         */
        source: TurnSource;
        /**
         * Usage of the turn, or `unavailable`.
         */
        usage: Usage;
      };
    }
  | {
      awaiting_input: {
        /**
         * What the CLI said, when it said something.
         */
        detail: string;
        /**
         * The output offset when it was observed.
         */
        offset: number;
        /**
         * Where the signal came from (see [`crate::turn::source`]).
         */
        source: TurnSource;
      };
    }
  | {
      approval_requested: {
        /**
         * What the CLI said, when it said something.
         */
        detail: string;
        /**
         * The output offset when it was observed.
         */
        offset: number;
        /**
         * Where the signal came from (see [`crate::turn::source`]).
         */
        source: TurnSource;
      };
    }
  | {
      pane_started: {
        /**
         * The pane, as `list` describes it.
         */
        pane: PaneSummary;
      };
    }
  | {
      pane_activity: {
        /**
         * Its activity now.
         */
        activity: Activity;
        /**
         * The pane.
         */
        pane: PaneId;
      };
    }
  | {
      pane_exited: {
        /**
         * The pane.
         */
        pane: PaneId;
        /**
         * How the process ended.
         */
        status: ExitStatus;
      };
    }
  | {
      pane_ended: {
        /**
         * The pane.
         */
        pane: PaneId;
        /**
         * Why, as `UNKNOWN_PANE` would later say it.
         */
        reason: string;
      };
    }
  | {
      pane_list: {
        /**
         * How many events were dropped.
         */
        missed: number;
        /**
         * Every pane, as `list` describes them.
         */
        panes: PaneSummary[];
      };
    }
  | {
      pane_changed: {
        /**
         * The pane.
         */
        pane: PaneId;
        /**
         * Its terminal's size now.
         */
        size: Size;
        /**
         * Its window title now (as `list` shows it; empty when the
         * program set none).
         */
        title: string;
      };
    };

/**
 * Where a runtime adapter's flags come from.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type Evidence =
  | "captured_help"
  | "documentation"
  | "this_repository"
  | "operator"
  | (string & {});

/** The known values of {@link Evidence}, in the order the host declares them. */
export const EvidenceValues = ["captured_help", "documentation", "this_repository", "operator"] as const;

/**
 * How a pane's process ended.
 */
export interface ExitStatus {
  /**
   * The exit code; by convention 128 + n for death by signal n.
   */
  code: number;
  /**
   * The name of the signal that ended the process, if one did.
   */
  signal?: string | null;
}

/**
 * How a runtime's version stands against the oldest version its adapter's flags are known to hold for.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type FloorStatus =
  | "at_or_above"
  | "below"
  | "indeterminate"
  | (string & {});

/** The known values of {@link FloorStatus}, in the order the host declares them. */
export const FloorStatusValues = ["at_or_above", "below", "indeterminate"] as const;

/**
 * The host's answer to a [`Hello`].
 */
export type HandshakeReply =
  | {
      welcome: Welcome;
    }
  | {
      refused: {
        /**
         * A stable error code, such as `PROTOCOL_MISMATCH`.
         */
        code: ErrorCode;
        /**
         * A sentence for people.
         */
        message: string;
        /**
         * The protocol version the host speaks.
         */
        protocol: number;
      };
    };

/**
 * The client's first frame.
 */
export interface Hello {
  /**
   * A free-form name of the client, for the host's log.
   */
  client?: string;
  /**
   * The encoding of every later frame, in both directions.
   */
  encoding: Encoding;
  /**
   * The protocol version the client speaks.
   */
  protocol: number;
  /**
   * The revision of that version the client speaks; 1 when absent (a
   * client from before revisions).
   */
  revision?: number;
}

/**
 * Terminal input modes that change what a client should send.
 */
export interface InputModes {
  /**
   * Application cursor-key mode.
   */
  application_cursor: boolean;
  /**
   * Application keypad mode.
   */
  application_keypad: boolean;
  /**
   * Pasted text should be wrapped in `ESC [200~` and `ESC [201~`.
   */
  bracketed_paste: boolean;
  /**
   * The process asked for mouse reports.
   */
  mouse: boolean;
}

/**
 * One step of an interrupt.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type InterruptAction =
  | "keys"
  | "sigint"
  | "sigterm"
  | "sigkill"
  | "sweep"
  | "observed"
  | (string & {});

/** The known values of {@link InterruptAction}, in the order the host declares them. */
export const InterruptActionValues = ["keys", "sigint", "sigterm", "sigkill", "sweep", "observed"] as const;

/**
 * What an interrupt achieved. A client treats a value it does not know as `unconfirmed`.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type InterruptOutcome =
  | "turn_cancelled"
  | "process_interrupted"
  | "process_ended"
  | "foreground_ended"
  | "unconfirmed"
  | "not_running"
  | (string & {});

/** The known values of {@link InterruptOutcome}, in the order the host declares them. */
export const InterruptOutcomeValues = ["turn_cancelled", "process_interrupted", "process_ended", "foreground_ended", "unconfirmed", "not_running"] as const;

/**
 * What an interrupt did.
 */
export interface InterruptReport {
  /**
   * `turn_cancelled` (the keys ended the turn), `process_interrupted`
   * (SIGINT ended it), `process_ended` (the process exited),
   * `foreground_ended` (with `terminate`: a job of the pane's shell
   * ended, the shell runs on),
   * `unconfirmed` (nothing observed confirms the stop; for runtimes whose
   * completion is unobserved this is the best there is), or
   * `not_running` (it had already exited).
   */
  outcome: InterruptOutcome;
  /**
   * The pane.
   */
  pane: PaneId;
  /**
   * Each step taken, in order.
   */
  steps: InterruptStep[];
  /**
   * With `terminate` (revision 6): what of the program's other
   * processes was ended (those that left its process group, its
   * session or its process tree, and the pane's processes that had
   * left the pane's tree); `None` without `terminate`, or from a host
   * of an older revision.
   */
  sweep?: PaneSweep | null;
}

/**
 * One step of an interrupt.
 */
export interface InterruptStep {
  /**
   * What was done: `keys`, `sigint`, `sigterm`, `sigkill`, `sweep`, or
   * `observed` (what confirmed the stop) ([`interrupt_action`]).
   */
  action: InterruptAction;
  /**
   * Milliseconds since the interrupt began.
   */
  at_ms: number;
  /**
   * Details, such as the keys written, escaped.
   */
  detail: string;
}

/**
 * A limitation code: what a runtime declares it cannot do (PROTOCOL.md section 10). A client treats a code it does not know as a limitation it cannot explain.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
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
  | "PERMISSION_PROFILE_UNENFORCED"
  | "RECEIPT_UNAVAILABLE"
  | "INTERRUPT_KEEPS_REQUEST"
  | "VERSION_REFUSED"
  | (string & {});

/** The known values of {@link LimitationCode}, in the order the host declares them. */
export const LimitationCodeValues = ["START_REQUIRES_RESOLVED_MODEL", "NATIVE_RESUME_UNSUPPORTED", "PROVIDER_SELECTION_ONLY", "PROVIDER_SELECTION_INTERACTIVE_PICKER", "PROVIDER_SELECTION_UNSUPPORTED", "REFERENCE_PENDING_LIVE_PROOF", "REFERENCE_STEERED_BY_WRAPPER", "HOST_LOSS_RESTARTS_FRESH", "COMPLETION_UNOBSERVED", "LOGIN_NOT_IN_TERMINAL", "PERMISSION_PROFILE_UNENFORCED", "RECEIPT_UNAVAILABLE", "INTERRUPT_KEEPS_REQUEST", "VERSION_REFUSED"] as const;

/**
 * How a user signs in to a runtime's provider.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type LoginForm =
  | "in_terminal"
  | "outside_terminal"
  | "not_required"
  | (string & {});

/** The known values of {@link LoginForm}, in the order the host declares them. */
export const LoginFormValues = ["in_terminal", "outside_terminal", "not_required"] as const;

/**
 * A turn signal a pane's hook reports through `notify`. The host ignores an event it does not know.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type NotifyEvent =
  | "turn_started"
  | "turn_completed"
  | "notification"
  | (string & {});

/** The known values of {@link NotifyEvent}, in the order the host declares them. */
export const NotifyEventValues = ["turn_started", "turn_completed", "notification"] as const;

/**
 * A pane with its screen, as `inspect` returns it.
 */
export interface PaneDetail {
  /**
   * The pane.
   */
  pane: PaneSummary;
  /**
   * The screen at `screen.offset`, which may trail `pane.offset` by the
   * bytes the terminal model has not parsed yet.
   */
  screen: ScreenSnapshot;
}

/**
 * A pane's last lines of output, re-parsed from the bytes its ring holds.
 */
export interface PaneHistory {
  /**
   * Offset of the first byte re-parsed: the oldest the ring still held.
   */
  from: number;
  /**
   * The pane.
   */
  pane: PaneId;
  /**
   * The lines, oldest first, joined by `\n`, trailing blanks trimmed: the
   * lines that scrolled off the top, then the screen as it stood at
   * `to` (the alternate screen, when one is active). A line the terminal
   * wrapped comes back as one line.
   */
  text: string;
  /**
   * Offset one past the last byte re-parsed.
   */
  to: number;
  /**
   * True when the answer may lack older lines: the ring no longer held
   * the pane's first output (`from` > 0), or more lines were there than
   * were asked for.
   */
  truncated: boolean;
}

/**
 * An opaque pane id, unique within one host's state directory.
 */
export type PaneId = string;

/**
 * Whether a pane's process still runs.
 */
export type PaneState =
  | "running"
  | {
      exited: ExitStatus;
    };

/**
 * One pane, as `list` and `start` describe it.
 */
export interface PaneSummary {
  /**
   * What its agent is doing: `idle`, `busy`, `awaiting_input`,
   * `awaiting_approval` or `unknown` (see [`crate::turn::activity`]).
   */
  activity?: Activity;
  /**
   * How the end of a turn is observed for this pane: `hook`,
   * `notify_program`, `terminal_notification`, `screen_heuristic`,
   * `unobserved` or `shell_integration` ([`crate::turn::completion`]).
   */
  completion?: CompletionSource;
  /**
   * When the pane was created, in milliseconds since the Unix epoch.
   */
  created_at_ms: number;
  /**
   * The working directory the process started in.
   */
  cwd: string;
  /**
   * Grows whenever the process behind the pane is replaced.
   */
  generation: number;
  /**
   * The pane's id.
   */
  id: PaneId;
  /**
   * The labels the client started it with (revision 3).
   */
  labels?: {
    [k: string]: string | undefined;
  };
  /**
   * The end offset: the total number of output bytes the pane has produced.
   */
  offset: number;
  /**
   * The process id of the pane's child (its process group leader).
   */
  pid: number;
  /**
   * How the pane came to this host: `started` (by a `start` or `login`),
   * or, after a host restart, `keeper` (the same process, taken back
   * from its keeper), `native_reference` or `provider_selection` (a new
   * process that resumed the session; the generation grew), or `fresh`
   * (a new process, starting over, where the runtime declares
   * `HOST_LOSS_RESTARTS_FRESH`).
   */
  restored_by?: RestoredBy;
  /**
   * The runtime it was started with, such as `shell`.
   */
  runtime: string;
  /**
   * The terminal size.
   */
  size: Size;
  /**
   * Running or exited.
   */
  state: PaneState;
  /**
   * The window title the process set, or empty.
   */
  title: string;
}

/**
 * What ending the processes a pane started found and did: every one of
 * them was sent SIGTERM, then, after a bounded grace, SIGKILL, until none
 * was left or the host gave up.
 */
export interface PaneSweep {
  /**
   * How many processes were ended (the pane's program itself, and a
   * program's process group the interrupt signalled, not counted).
   */
  ended: number;
  /**
   * How the pane's processes were told from others: `cgroup` (the
   * pane's own control group; nothing can leave it) or `process_tree`
   * (its session, its descendants, and the orphans its keeper adopted
   * that carry the pane's token).
   */
  method: SweepMethod;
  /**
   * The pids still running when the host gave up (at most
   * [`MAX_SWEEP_SURVIVORS`] listed); empty when nothing survived.
   */
  survivors: number[];
}

/**
 * A permission profile a runtime enforces. The host refuses a start naming a profile it does not know.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type PermissionProfile =
  | "read_only"
  | "workspace_write"
  | "full_access"
  | (string & {});

/** The known values of {@link PermissionProfile}, in the order the host declares them. */
export const PermissionProfileValues = ["read_only", "workspace_write", "full_access"] as const;

/**
 * Whether a runtime is ready for work. A client treats a value it does not know as `not_ready`.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type Readiness =
  | "ready"
  | "not_ready"
  | "reduced"
  | (string & {});

/** The known values of {@link Readiness}, in the order the host declares them. */
export const ReadinessValues = ["ready", "not_ready", "reduced"] as const;

/**
 * The readiness gate that stops or reduces a runtime.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type ReadinessGate =
  | "supported"
  | "installed"
  | "version"
  | "sign_in"
  | "receipt"
  | (string & {});

/** The known values of {@link ReadinessGate}, in the order the host declares them. */
export const ReadinessGateValues = ["supported", "installed", "version", "sign_in", "receipt"] as const;

/**
 * A completion receipt: the runtime's one-shot mode was asked for one JSON
 * object carrying a fresh random value, inside the read-only boundary, and
 * this is what came back.
 */
export interface Receipt {
  /**
   * What was seen: the mismatch, the exit status, or a timeout.
   */
  detail: string;
  /**
   * How long the one-shot run took.
   */
  elapsed_ms: number;
  /**
   * The fingerprint of what ran (revision 7; see
   * [`RuntimeInfo::fingerprint`]); a different one voids the receipt,
   * and so does its absence (a receipt stored by an older host).
   */
  fingerprint?: string | null;
  /**
   * Whether the answer was exactly the object asked for.
   */
  passed: boolean;
  /**
   * The executable that answered.
   */
  path: string;
  /**
   * Whether the read-only boundary was enforced (false only when the
   * runtime cannot enforce it and the probe accepted a weaker one).
   */
  read_only_enforced: boolean;
  /**
   * The runtime id.
   */
  runtime: string;
  /**
   * Its SHA-256; a different executable voids the receipt.
   */
  sha256: string;
  /**
   * When it was taken, in milliseconds since the Unix epoch.
   */
  taken_at_ms: number;
  /**
   * Its version, as its version probe printed it.
   */
  version?: string | null;
}

/**
 * Why the host stopped using the client's terminal.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type ReleaseReason =
  | "detached"
  | "exited"
  | "closed"
  | "client_ended"
  | "terminal_lost"
  | (string & {});

/** The known values of {@link ReleaseReason}, in the order the host declares them. */
export const ReleaseReasonValues = ["detached", "exited", "closed", "client_ended", "terminal_lost"] as const;

/**
 * Every operation a client can ask for.
 */
export type Request =
  | {
      start: StartParams;
    }
  | {
      send: SendParams;
    }
  | {
      interrupt: {
        /**
         * The pane.
         */
        pane: PaneId;
        /**
         * Escalate to SIGTERM and SIGKILL when SIGINT is not confirmed.
         */
        terminate?: boolean;
      };
    }
  | {
      inspect: {
        /**
         * The pane.
         */
        pane: PaneId;
      };
    }
  | {
      events: {
        /**
         * Resume after this many bytes of output (an absolute offset).
         * When absent, the stream starts at the current screen.
         */
        from?: number | null;
        /**
         * The pane.
         */
        pane: PaneId;
      };
    }
  | {
      reconnect: {
        /**
         * The generation the client last saw.
         */
        generation: number;
        /**
         * The offset up to which the client processed output.
         */
        offset: number;
        /**
         * The pane.
         */
        pane: PaneId;
      };
    }
  | {
      unsubscribe: {
        /**
         * The subscription id from `subscribed`.
         */
        subscription: number;
      };
    }
  | {
      resize: {
        /**
         * The pane.
         */
        pane: PaneId;
        /**
         * The new size; both dimensions at least 1.
         */
        size: Size;
      };
    }
  | {
      list: {
        /**
         * Only the panes carrying every one of these labels with the same
         * value (revision 3); every pane when empty.
         */
        labels?: {
          [k: string]: string | undefined;
        };
      };
    }
  | {
      close: {
        /**
         * The pane.
         */
        pane: PaneId;
      };
    }
  | {
      runtimes: {};
    }
  | {
      login: {
        /**
         * The working directory; the host's home directory when absent.
         */
        cwd?: string | null;
        /**
         * The runtime id.
         */
        runtime: string;
        /**
         * The terminal size; 80x24 when absent.
         */
        size?: Size | null;
      };
    }
  | {
      ask: {
        /**
         * The pane.
         */
        pane: PaneId;
        /**
         * The prompt; submitted as `send` with `enter` does.
         */
        text: string;
        /**
         * How long to wait for the end of the turn (default 10 minutes).
         */
        timeout_ms?: number | null;
      };
    }
  | {
      notify: {
        /**
         * `turn_started`, `turn_completed`, `notification` (the host reads
         * the payload to tell awaiting input from an approval request).
         */
        event: NotifyEvent;
        /**
         * The pane, from `PANEHOST_PANE`.
         */
        pane: PaneId;
        /**
         * What the hook received (usually JSON), passed on as text.
         */
        payload?: string;
        /**
         * The pane's notify token, from `PANEHOST_NOTIFY_TOKEN`.
         */
        token: string;
      };
    }
  | {
      probe_runtime: {
        /**
         * Run without the read-only boundary when the runtime cannot
         * enforce it, rather than refuse.
         */
        accept_weaker_boundary?: boolean;
        /**
         * The model to ask, when the runtime takes one.
         */
        model?: string | null;
        /**
         * The runtime id.
         */
        runtime: string;
      };
    }
  | {
      history: {
        /**
         * How many lines from above the screen, at most; 1,000 when
         * absent. Wide panes may get fewer (the re-parse is bounded in
         * memory).
         */
        lines?: number | null;
        /**
         * The pane.
         */
        pane: PaneId;
      };
    }
  | {
      watch: {};
    }
  | {
      wait_for: WaitForParams;
    }
  | {
      attach_terminal: {
        /**
         * The byte that detaches (Ctrl-\ is 28): the keys before it in
         * the same read reach the pane, it and the rest do not.
         */
        detach_key: number;
        /**
         * The pane.
         */
        pane: PaneId;
      };
    };

/**
 * A request and the id the client chose for it. The host echoes the id in
 * the response or error that answers it.
 */
export interface RequestFrame {
  /**
   * Chosen by the client; unique among its requests in flight.
   */
  id: number;
  /**
   * What is asked.
   */
  request: Request;
}

/**
 * Successful answers, one per operation.
 */
export type Response =
  | {
      started: PaneSummary;
    }
  | {
      sent: {
        /**
         * How many bytes were written to the terminal.
         */
        bytes: number;
        /**
         * The pane.
         */
        pane: PaneId;
      };
    }
  | {
      interrupted: InterruptReport;
    }
  | {
      inspected: PaneDetail;
    }
  | {
      subscribed: Subscription;
    }
  | {
      unsubscribed: {
        /**
         * The subscription that ended.
         */
        subscription: number;
      };
    }
  | {
      resized: {
        /**
         * The pane.
         */
        pane: PaneId;
        /**
         * Its new size.
         */
        size: Size;
      };
    }
  | {
      panes: {
        /**
         * Every pane, oldest first.
         */
        panes: PaneSummary[];
      };
    }
  | {
      closed: {
        /**
         * The pane, now forgotten.
         */
        pane: PaneId;
        /**
         * How its process ended.
         */
        status: ExitStatus;
        /**
         * What of the pane's other processes was ended (revision 6):
         * everything its program started, wherever it went; `None` from
         * a host of an older revision.
         */
        sweep?: PaneSweep | null;
      };
    }
  | {
      runtimes: {
        /**
         * Every runtime the host knows.
         */
        runtimes: RuntimeInfo[];
      };
    }
  | {
      answered: TurnReport;
    }
  | {
      notified: {};
    }
  | {
      receipt: Receipt;
    }
  | {
      history: PaneHistory;
    }
  | {
      watching: {
        /**
         * Every pane, as `list` describes them.
         */
        panes: PaneSummary[];
        /**
         * The subscription id the events carry.
         */
        subscription: number;
      };
    }
  | {
      waited: WaitMatch;
    }
  | {
      terminal_released: TerminalRelease;
    };

/**
 * How a pane came to this host: by a start, or how a host restart brought it back.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type RestoredBy =
  | "started"
  | "keeper"
  | "native_reference"
  | "provider_selection"
  | "fresh"
  | (string & {});

/** The known values of {@link RestoredBy}, in the order the host declares them. */
export const RestoredByValues = ["started", "keeper", "native_reference", "provider_selection", "fresh"] as const;

/**
 * A way a runtime resumes an earlier session natively.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type ResumeMode =
  | "REFERENCE"
  | "PROVIDER_SELECTION"
  | "INTERACTIVE_PICKER"
  | (string & {});

/** The known values of {@link ResumeMode}, in the order the host declares them. */
export const ResumeModeValues = ["REFERENCE", "PROVIDER_SELECTION", "INTERACTIVE_PICKER"] as const;

/**
 * Which earlier session a start should resume.
 */
export type ResumeRequest =
  | {
      reference: string;
    }
  | "latest";

/**
 * What the host knows about one runtime it can start.
 */
export interface RuntimeInfo {
  /**
   * Whether it is installed and its executable identified.
   */
  available: boolean;
  /**
   * How the end of a turn is observed for a pane started now: `hook`,
   * `notify_program`, `terminal_notification`, `screen_heuristic`,
   * `unobserved` or `shell_integration` ([`crate::turn::completion`]);
   * what its panes report.
   */
  completion?: CompletionSource;
  /**
   * The permission profile a start that names none gets on this runtime
   * (revision 7): the host's default, `workspace_write`, when the
   * runtime enforces it; absent when it does not, and such a start runs
   * with the CLI's own defaults.
   */
  default_permission_profile?: string | null;
  /**
   * A name for people.
   */
  display_name: string;
  /**
   * Where the adapter's flags come from: `captured_help`,
   * `documentation`, `this_repository` or `operator`.
   */
  evidence?: Evidence;
  /**
   * The fingerprint a completion receipt is bound to (revision 7):
   * SHA-256 over the executable's SHA-256, its version as probed, and
   * its installed package's files (a PyPI distribution's `RECORD`, an
   * npm package's `package.json`). An upgrade in place changes it even
   * when the launcher on `PATH` stays byte-identical.
   */
  fingerprint?: string | null;
  /**
   * `at_or_above`, `below` or `indeterminate`; absent until detected.
   */
  floor_status?: FloorStatus | null;
  /**
   * The runtime id used in `start`, such as `shell` or `claude`.
   */
  id: string;
  /**
   * Declared limitation codes (see [`crate::limitation`]).
   */
  limitations: LimitationCode[];
  /**
   * How a user signs in: `in_terminal`, `outside_terminal` or
   * `not_required`.
   */
  login?: LoginForm;
  /**
   * What the executable runs from, when it was found (revision 7): the
   * installed package under the launcher, such as `pypi kimi-cli 1.50.0`
   * or `npm @qwen-code/qwen-code 0.24.4`.
   */
  package?: string | null;
  /**
   * The resolved executable, when found.
   */
  path?: string | null;
  /**
   * The permission profiles the runtime enforces (`read_only`,
   * `workspace_write`, `full_access`); a start asking for another is
   * refused unless it accepts a weaker boundary.
   */
  permission_profiles?: PermissionProfile[];
  /**
   * `ready`, `not_ready` or `reduced` (its version could not be read:
   * it can be started, with the capabilities that need a known version
   * withheld).
   */
  readiness?: Readiness;
  /**
   * The first gate that stops it (`supported`, `installed`, `version`,
   * `sign_in`, `receipt`), or for `reduced` the gate that reduces it.
   */
  readiness_gate?: ReadinessGate | null;
  /**
   * Why that gate stops or reduces it.
   */
  readiness_reason?: string | null;
  /**
   * The last completion receipt taken for this runtime, if any; it
   * counts only while `receipt_valid`.
   */
  receipt?: Receipt | null;
  /**
   * Whether that receipt counts now: it passed, was taken from the
   * executable now installed, and is under 24 hours old.
   */
  receipt_valid?: boolean;
  /**
   * Native-resume modes, such as `REFERENCE` or `PROVIDER_SELECTION`.
   */
  resume_modes: ResumeMode[];
  /**
   * SHA-256 of the executable, when identified.
   */
  sha256?: string | null;
  /**
   * `signed_in`, `signed_out`, `unobservable` (the CLI leaves no trace
   * that can be read without asking its provider) or `not_required`.
   */
  sign_in?: SignIn;
  /**
   * What the sign-in reading rests on (a credentials file, a variable
   * being set; never a secret).
   */
  sign_in_detail?: string | null;
  /**
   * Whether policy allows starting it.
   */
  supported: boolean;
  /**
   * Why it cannot be started now, when it cannot.
   */
  unavailable_reason?: string | null;
  /**
   * The version the executable reported, when probed.
   */
  version?: string | null;
  /**
   * The oldest version the adapter's flags are known to hold for.
   */
  version_floor?: string | null;
  /**
   * Set when the installed version is one the runtime's adapter refuses
   * (revision 7): readiness is then `not_ready` at the `version` gate,
   * and a start is refused with `OPERATION_UNSUPPORTED` naming
   * `VERSION_REFUSED` unless it sets `allow_refused_version`.
   */
  version_refused?: VersionRefusal | null;
}

/**
 * The screen as the host's terminal model saw it after the output bytes
 * up to `offset` (exclusive). Output that follows the snapshot starts at
 * `offset`, so snapshot plus stream is exact.
 */
export interface ScreenSnapshot {
  /**
   * Whether the alternate screen is active.
   */
  alternate_screen: boolean;
  /**
   * Where the cursor is.
   */
  cursor: Cursor;
  /**
   * Bytes that redraw this screen on a blank terminal of the same size:
   * contents with colours and attributes, input modes, cursor position.
   */
  formatted: ByteBuf;
  /**
   * Input modes the process enabled.
   */
  modes: InputModes;
  /**
   * The output offset this snapshot describes.
   */
  offset: number;
  /**
   * The screen size.
   */
  size: Size;
  /**
   * The visible screen as plain text, rows joined by `\n`, trailing
   * blanks trimmed.
   */
  text: string;
  /**
   * The window title the process set, or empty.
   */
  title: string;
  /**
   * Revision 5. Whether the snapshot was cut to fit its bounds
   * ([`MAX_SNAPSHOT_FORMATTED_LEN`], [`MAX_SNAPSHOT_TEXT_LEN`],
   * [`MAX_SNAPSHOT_TITLE_LEN`]): then `formatted` may draw the screen
   * without colours or attributes, or only its first rows, and `text`
   * and `title` may be cut. Only a screen drawn to be large (a big pane
   * with many colours and combining marks in every cell) comes to this.
   */
  trimmed?: boolean;
}

/**
 * Parameters of `send`. Without `enter`, the bytes written are `text`
 * then `bytes`. With `enter` the input submits: `text` goes as a bracketed
 * paste when the program enabled bracketed paste, then `bytes`, then a
 * carriage return as its own write, and a turn starts.
 */
export interface SendParams {
  /**
   * Raw bytes to write (base64 in JSON), for keys and control sequences.
   */
  bytes?: ByteBuf;
  /**
   * Press Enter (a carriage return) after the input.
   */
  enter?: boolean;
  /**
   * The pane.
   */
  pane: PaneId;
  /**
   * UTF-8 text to type.
   */
  text?: string;
}

/**
 * Every frame the host sends after the handshake.
 */
export type ServerMessage =
  | {
      response: {
        /**
         * The answer.
         */
        body: Response;
        /**
         * The request's id.
         */
        id: number;
      };
    }
  | {
      error: {
        /**
         * What went wrong.
         */
        error: ErrorBody;
        /**
         * The request's id, when the failure answers one.
         */
        id?: number | null;
      };
    }
  | {
      event: {
        /**
         * What happened.
         */
        event: Event;
        /**
         * The subscription id from `subscribed`.
         */
        subscription: number;
      };
    };

/**
 * What the host can read of a runtime's sign-in.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type SignIn =
  | "signed_in"
  | "signed_out"
  | "unobservable"
  | "not_required"
  | (string & {});

/** The known values of {@link SignIn}, in the order the host declares them. */
export const SignInValues = ["signed_in", "signed_out", "unobservable", "not_required"] as const;

/**
 * A terminal size in character cells, within [`Size::MIN`] and
 * [`Size::MAX_COLS`] x [`Size::MAX_ROWS`], and at most [`Size::MAX_CELLS`]
 * cells in all.
 *
 * Every size a client sends becomes memory: the terminal model allocates
 * a grid of `cols x rows` cells (about 32 bytes each) for its main and its
 * alternate screen, and a screen snapshot must fit in one frame. The
 * bounds keep the largest pane's model at about 16 MiB. The smallest size
 * is 2x2 because the terminal model cannot place a wide character in one
 * column or scroll a one-row screen.
 */
export interface Size {
  /**
   * Columns.
   */
  cols: number;
  /**
   * Rows.
   */
  rows: number;
}

/**
 * Parameters of `start`.
 */
export interface StartParams {
  /**
   * Start even when the runtime cannot enforce `permission_profile`
   * (the host logs it); otherwise such a start is refused with
   * `OPERATION_UNSUPPORTED` naming `PERMISSION_PROFILE_UNENFORCED`.
   */
  accept_weaker_boundary?: boolean;
  /**
   * Start even when the installed version is one the runtime's adapter
   * refuses (revision 7; `runtimes` shows it in `version_refused`, with
   * the reason); otherwise such a start is refused with
   * `OPERATION_UNSUPPORTED` naming `VERSION_REFUSED`. The host logs it.
   */
  allow_refused_version?: boolean;
  /**
   * For `shell` only: a command (program and arguments) to run instead
   * of the interactive shell. Other runtimes refuse it: the host builds
   * their argv itself.
   */
  command?: string[];
  /**
   * The working directory; the host's home directory when absent.
   */
  cwd?: string | null;
  /**
   * Environment variables for the pane's process (revision 3), over
   * what the host sets: for `shell` and runtimes from the configuration
   * file only; agent runtimes refuse them (their environment is built
   * from scratch). Bounded as [`crate::client_env`] says.
   */
  env?: {
    [k: string]: string | undefined;
  };
  /**
   * Client labels (revision 3): names and values the client chooses
   * (an owner, a task id), returned wherever the pane is described and
   * matched by `list`. Bounded as [`crate::labels`] says.
   */
  labels?: {
    [k: string]: string | undefined;
  };
  /**
   * Close the pane (as `close` does) once it has run this long, in
   * milliseconds.
   */
  max_wall_ms?: number | null;
  /**
   * The model, for runtimes that take one.
   */
  model?: string | null;
  /**
   * The permission profile the runtime must enforce: `read_only`,
   * `workspace_write` or `full_access`. When absent, the host's default
   * applies (revision 7): `workspace_write` on a runtime that enforces
   * it (`RuntimeInfo.default_permission_profile`); on one that does not,
   * the CLI runs with its own defaults and the user's configuration.
   */
  permission_profile?: PermissionProfile | null;
  /**
   * Refuse the start with `RUNTIME_NOT_READY` unless the runtime is
   * ready (or reduced) as `runtimes` reports it: supported, installed,
   * its version not below the floor, signed in where that can be seen,
   * and a completion receipt for this executable under 24 hours old.
   */
  require_ready?: boolean;
  /**
   * For `shell` with a `command` (revision 2): run the command again
   * when a host restart finds its keeper gone (after a reboot, say).
   * Without it such a pane is not restored, and ends with a reason: a
   * one-shot command is not run twice unasked. Other runtimes resume
   * their session natively and ignore it.
   */
  rerun_after_host_loss?: boolean;
  /**
   * Resume an earlier session of the runtime instead of starting fresh.
   */
  resume?: ResumeRequest | null;
  /**
   * The runtime id, such as `shell`.
   */
  runtime: string;
  /**
   * The terminal size; 80x24 when absent.
   */
  size?: Size | null;
}

/**
 * How a subscription's stream begins.
 */
export type StreamStart =
  | {
      replay: {
        /**
         * The offset of the first byte that will follow.
         */
        from: number;
      };
    }
  | {
      snapshot: {
        /**
         * When the client asked to resume from an offset the host no
         * longer holds, that offset: the raw bytes from it up to
         * `snapshot.offset` will not be delivered (the snapshot stands for
         * them). Absent when the client asked for no offset.
         */
        skipped_from?: number | null;
        /**
         * The screen at the point the stream begins.
         */
        snapshot: ScreenSnapshot;
      };
    }
  | {
      generation_changed: {
        /**
         * The generation the client named.
         */
        previous: number;
        /**
         * The new generation's screen; output follows from its offset.
         */
        snapshot: ScreenSnapshot;
      };
    };

/**
 * A new subscription and where its stream begins.
 */
export interface Subscription {
  /**
   * The pane's current generation.
   */
  generation: number;
  /**
   * The pane.
   */
  pane: PaneId;
  /**
   * How the stream begins.
   */
  start: StreamStart;
  /**
   * Tags every event of this subscription.
   */
  subscription: number;
}

/**
 * How the processes a pane started were told from others.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type SweepMethod =
  | "cgroup"
  | "process_tree"
  | (string & {});

/** The known values of {@link SweepMethod}, in the order the host declares them. */
export const SweepMethodValues = ["cgroup", "process_tree"] as const;

/**
 * Answers `attach_terminal`: the host no longer reads or writes the
 * terminal.
 */
export interface TerminalRelease {
  /**
   * The process's exit status, when it exited.
   */
  exit?: ExitStatus | null;
  /**
   * The pane.
   */
  pane: PaneId;
  /**
   * Why: one of `detached`, `exited`, `closed`, `client_ended`,
   * `terminal_lost` ([`release_reason`]).
   */
  reason: ReleaseReason;
}

/**
 * What `ask` answers: one completed turn.
 */
export interface TurnReport {
  /**
   * What the turn put on the screen, as lines: for a turn a shell's
   * prompt marks ended, the command line and every line the command
   * printed (its last lines, within bounds); otherwise the lines on the
   * screen after the turn that were not on it before, in screen order.
   */
  added_text: string;
  /**
   * The output offset when the end was observed.
   */
  completed_offset: number;
  /**
   * Milliseconds from submitting the input to observing the end.
   */
  duration_ms: number;
  /**
   * The exit status of the command the turn ran (its `$?`), when the
   * shell's integration marks reported it (revision 3).
   */
  exit_code?: number | null;
  /**
   * How the end of the turn was observed (see [`source`]).
   */
  source: TurnSource;
  /**
   * The output offset when the input was submitted.
   */
  started_offset: number;
  /**
   * Usage, or `unavailable`.
   */
  usage: Usage;
}

/**
 * Where a turn signal came from. A client treats a value it does not know as a signal of unknown reliability.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type TurnSource =
  | "hook"
  | "notify_program"
  | "terminal_notification"
  | "heuristic"
  | "input"
  | "restored"
  | "shell_integration"
  | (string & {});

/** The known values of {@link TurnSource}, in the order the host declares them. */
export const TurnSourceValues = ["hook", "notify_program", "terminal_notification", "heuristic", "input", "restored", "shell_integration"] as const;

/**
 * Token and cost usage of one turn.
 */
export interface Usage {
  /**
   * Cost in millionths of a US dollar, when known.
   */
  cost_micro_usd?: number | null;
  /**
   * Input tokens, when known.
   */
  input_tokens?: number | null;
  /**
   * `measured` (the CLI reported it), `estimated`, or `unavailable` (the
   * CLI did not say; that is not the same as zero).
   */
  kind: UsageKind;
  /**
   * Output tokens, when known.
   */
  output_tokens?: number | null;
}

/**
 * How a turn's usage is known. A client treats a value it does not know as `unavailable`.
 *
 * An open vocabulary: the values this revision's host sends, and any
 * other string a newer host may add.
 */
export type UsageKind =
  | "measured"
  | "estimated"
  | "unavailable"
  | (string & {});

/** The known values of {@link UsageKind}, in the order the host declares them. */
export const UsageKindValues = ["measured", "estimated", "unavailable"] as const;

/**
 * A range of versions an adapter refuses, and why (revision 7).
 */
export interface VersionRefusal {
  /**
   * The first version no longer refused; absent when every later
   * version is refused too.
   */
  before?: string | null;
  /**
   * The first version refused, as dotted numbers.
   */
  from: string;
  /**
   * Why, for people.
   */
  reason: string;
}

/**
 * Parameters of `wait_for`.
 */
export interface WaitForParams {
  /**
   * For `output`: the offset the output is read from. Default: the
   * pane's end when the request is handled, so only new output counts.
   * Ignored for `screen`.
   */
  from?: number | null;
  /**
   * The pane.
   */
  pane: PaneId;
  /**
   * The regular expression to wait for.
   */
  pattern: string;
  /**
   * What is matched: the screen (the default) or the output.
   */
  target?: WaitTarget;
  /**
   * How long to wait, in milliseconds (default
   * [`DEFAULT_WAIT_TIMEOUT_MS`], at most [`MAX_WAIT_TIMEOUT_MS`]).
   */
  timeout_ms?: number | null;
}

/**
 * Answer of `wait_for`: where the pattern was found.
 */
export interface WaitMatch {
  /**
   * The text that matched (invalid UTF-8 replaced), at most
   * [`MAX_MATCHED_LEN`] bytes.
   */
  matched: string;
  /**
   * For `screen`: the output offset the matching screen reflects (every
   * byte before it, none after). For `output`: the offset just after
   * the match's last byte; a subscription from there sees what came
   * next.
   */
  offset: number;
  /**
   * The pane.
   */
  pane: PaneId;
  /**
   * What was matched.
   */
  target: WaitTarget;
}

/**
 * What `wait_for` matches the pattern against.
 */
export type WaitTarget = "screen" | "output";

/**
 * Details of an accepted connection.
 */
export interface Welcome {
  /**
   * The encoding now in force.
   */
  encoding: Encoding;
  /**
   * The host's name and version, for example `panehost 0.1.0`.
   */
  host: string;
  /**
   * The protocol version the host speaks (equal to the client's).
   */
  protocol: number;
  /**
   * The revision the host speaks: with bincode, equal to the client's;
   * with JSON, possibly newer or older than the client's (1 when absent:
   * a host from before revisions).
   */
  revision?: number;
}

/** Each request with the `Response` variant that answers it when it succeeds (the schema's `x-answer`). */
export const RequestAnswers = {
  start: "started",
  send: "sent",
  interrupt: "interrupted",
  inspect: "inspected",
  events: "subscribed",
  reconnect: "subscribed",
  unsubscribe: "unsubscribed",
  resize: "resized",
  list: "panes",
  close: "closed",
  runtimes: "runtimes",
  login: "started",
  ask: "answered",
  notify: "notified",
  probe_runtime: "receipt",
  history: "history",
  watch: "watching",
  wait_for: "waited",
  attach_terminal: "terminal_released",
} as const;

/** Each event with the subscriptions it travels on, `pane` (`events`, `reconnect`) and `watch` (the schema's `x-streams`). */
export const EventStreams = {
  output: ["pane"],
  resync: ["pane"],
  resized: ["pane"],
  exited: ["pane"],
  ended: ["pane", "watch"],
  turn_started: ["pane"],
  turn_completed: ["pane"],
  awaiting_input: ["pane"],
  approval_requested: ["pane"],
  pane_started: ["watch"],
  pane_activity: ["watch"],
  pane_exited: ["watch"],
  pane_ended: ["watch"],
  pane_list: ["watch"],
  pane_changed: ["watch"],
} as const;
