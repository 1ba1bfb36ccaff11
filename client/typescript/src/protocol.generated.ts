/**
 * The raw JSON messages of the protocol, as the host writes and reads
 * them: one type per `$defs` entry of docs/protocol.schema.json,
 * "panehost protocol 1, revision 6: the JSON encoding".
 * `wire.ts` turns them into the types of `types.ts`.
 *
 * Generated from the schema by `npm run generate:protocol`
 * (scripts/protocol-types.mjs); do not edit.
 *
 * @module
 * @internal
 */

/**
 * Bytes as standard base64 (RFC 4648, with `=` padding).
 */
export type ByteBuf = string;

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
 * A structured failure of one request (or of the connection, when no
 * request id applies).
 */
export interface ErrorBody {
  /**
   * A stable code from [`ErrorCode`].
   */
  code: string;
  /**
   * The limitation code that explains an `OPERATION_UNSUPPORTED`, if any.
   */
  limitation?: string | null;
  /**
   * A sentence for people; not for matching.
   */
  message: string;
}

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
         * `exited`, `closed` or `unsubscribed`.
         */
        reason: string;
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
        source: string;
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
        source: string;
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
         * Where the signal came from.
         */
        source: string;
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
         * Where the signal came from.
         */
        source: string;
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
        activity: string;
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
    };

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
        code: string;
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
 * What an interrupt did.
 */
export interface InterruptReport {
  /**
   * `turn_cancelled` (the keys ended the turn), `process_interrupted`
   * (SIGINT ended it), `process_ended` (the process exited),
   * `unconfirmed` (nothing observed confirms the stop; for runtimes whose
   * completion is unobserved this is the best there is), or
   * `not_running` (it had already exited).
   */
  outcome: string;
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
   * What was done: `keys`, `sigint`, `sigterm`, `sigkill`, or `observed`
   * (what confirmed the stop).
   */
  action: string;
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
   * What its agent is doing: `idle`, `busy`, `awaiting_input` or
   * `unknown` (see [`crate::turn::activity`]).
   */
  activity?: string;
  /**
   * How the end of a turn is observed for this pane: `hook`,
   * `notify_program`, `terminal_notification`, `screen_heuristic` or
   * `unobserved`.
   */
  completion?: string;
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
  restored_by?: string;
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
  method: string;
  /**
   * The pids still running when the host gave up (at most
   * [`MAX_SWEEP_SURVIVORS`] listed); empty when nothing survived.
   */
  survivors: number[];
}

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
        event: string;
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
   * How the end of a turn is observed: `hook`, `notify_program`,
   * `terminal_notification`, `screen_heuristic` or `unobserved`.
   */
  completion?: string;
  /**
   * A name for people.
   */
  display_name: string;
  /**
   * Where the adapter's flags come from: `captured_help`,
   * `documentation`, `this_repository` or `operator`.
   */
  evidence?: string;
  /**
   * `at_or_above`, `below` or `indeterminate`; absent until detected.
   */
  floor_status?: string | null;
  /**
   * The runtime id used in `start`, such as `shell` or `claude`.
   */
  id: string;
  /**
   * Declared limitation codes (see [`crate::limitation`]).
   */
  limitations: string[];
  /**
   * How a user signs in: `in_terminal`, `outside_terminal` or
   * `not_required`.
   */
  login?: string;
  /**
   * The resolved executable, when found.
   */
  path?: string | null;
  /**
   * The permission profiles the runtime enforces (`read_only`,
   * `workspace_write`, `full_access`); a start asking for another is
   * refused unless it accepts a weaker boundary.
   */
  permission_profiles?: string[];
  /**
   * `ready`, `not_ready` or `reduced` (its version could not be read:
   * it can be started, with the capabilities that need a known version
   * withheld).
   */
  readiness?: string;
  /**
   * The first gate that stops it (`supported`, `installed`, `version`,
   * `sign_in`, `receipt`), or for `reduced` the gate that reduces it.
   */
  readiness_gate?: string | null;
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
  resume_modes: string[];
  /**
   * SHA-256 of the executable, when identified.
   */
  sha256?: string | null;
  /**
   * `signed_in`, `signed_out`, `unobservable` (the CLI leaves no trace
   * that can be read without asking its provider) or `not_required`.
   */
  sign_in?: string;
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
   * `workspace_write` or `full_access`. When absent, the CLI runs with
   * its own defaults and the user's own configuration.
   */
  permission_profile?: string | null;
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
  reason: string;
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
  source: string;
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
  kind: string;
  /**
   * Output tokens, when known.
   */
  output_tokens?: number | null;
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
