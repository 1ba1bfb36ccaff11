/**
 * {@link connect} and {@link Client}: typed operations on one connection.
 *
 * @module
 */

import * as os from "node:os";
import * as path from "node:path";
import { Connection } from "./connection.js";
import { MAX_CLIENT_FRAME } from "./frame.js";
import {
  DEFAULT_MAX_BUFFERED_EVENTS,
  DEFAULT_RECONNECT_POLICY,
  type EventsOptions,
  PaneStream,
  type ReconnectPolicy,
} from "./stream.js";
import type {
  AskOptions,
  CloseReport,
  HistoryOptions,
  InterruptOptions,
  InterruptReport,
  LoginOptions,
  NotifyReport,
  PaneDetail,
  PaneHistory,
  PaneSummary,
  ProbeOptions,
  Receipt,
  ResizeReport,
  RuntimeInfo,
  SendInput,
  SendReport,
  Size,
  StartParams,
  TurnReport,
  Welcome,
} from "./types.js";
import {
  interruptReport,
  paneDetail,
  paneHistory,
  paneSummary,
  receipt,
  runtimeInfo,
  toBase64,
  turnReport,
} from "./wire.js";

/** The version of this package, sent in the default client name. */
export const CLIENT_VERSION = "0.1.0";

/** The default request timeout: 60 seconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** How long the host waits for the end of a turn when `ask` names no timeout: 10 minutes. */
export const DEFAULT_ASK_TIMEOUT_MS = 600_000;

/** How long the host lets a `probe_runtime` run take before it ends it: 180 seconds. */
export const PROBE_RUN_LIMIT_MS = 180_000;

/**
 * Largest input one `send` request carries when {@link Client.send} splits
 * a large input, so that each request stays under the 1 MiB frame limit
 * (base64 adds a third).
 */
export const INPUT_CHUNK_BYTES = 512 * 1024 - 1024;

/** Options of {@link connect}. */
export interface ConnectOptions {
  /** The host's socket. Default: {@link defaultSocketPath}. */
  socketPath?: string;
  /** A free-form name for the host's log. Default `@panehost/client/<version>`. */
  clientName?: string;
  /**
   * How long to wait for the handshake and for each answer, in
   * milliseconds; `0` waits forever. Default 60000.
   */
  requestTimeoutMs?: number;
  /** The reconnect policy of every stream of this client, unless overridden. Default {@link DEFAULT_RECONNECT_POLICY}. */
  reconnect?: Partial<ReconnectPolicy>;
  /** Events each stream buffers before pausing its socket. Default 256. */
  maxBufferedEvents?: number;
}

/**
 * The host's socket path by the rules of PROTOCOL.md section 1, first match
 * wins: `PANEHOST_SOCKET` when set and not empty;
 * `$XDG_RUNTIME_DIR/panehost/host.sock` when `XDG_RUNTIME_DIR` is set and
 * not empty; otherwise `<tmp>/panehost-<uid>/host.sock`, where `<tmp>` is
 * the system temporary directory (`os.tmpdir()`, which honours `TMPDIR`).
 *
 * @param env - The environment to read; default `process.env`.
 */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env["PANEHOST_SOCKET"];
  if (explicit) return explicit;
  const runtimeDir = env["XDG_RUNTIME_DIR"];
  if (runtimeDir) return path.join(runtimeDir, "panehost", "host.sock");
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return path.join(os.tmpdir(), `panehost-${uid}`, "host.sock");
}

/**
 * Connects to the host and performs the handshake (in the JSON encoding).
 *
 * @example
 * ```ts
 * const client = await connect();
 * const pane = await client.start({ runtime: "shell" });
 * ```
 *
 * @throws {@link PanehostError} with `refused: true` and the host's `code`
 *   (such as `PROTOCOL_MISMATCH` or `PEER_REFUSED`) when the host refuses;
 *   {@link ConnectionLostError} when nothing listens at the socket;
 *   {@link RequestTimeoutError} when the host does not reply in time.
 */
export async function connect(options: ConnectOptions = {}): Promise<Client> {
  const resolved: ResolvedOptions = {
    socketPath: options.socketPath ?? defaultSocketPath(),
    clientName: options.clientName ?? `@panehost/client/${CLIENT_VERSION}`,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    reconnect: { ...DEFAULT_RECONNECT_POLICY, ...stripUndefined(options.reconnect ?? {}) },
    maxBufferedEvents: options.maxBufferedEvents ?? DEFAULT_MAX_BUFFERED_EVENTS,
  };
  const connection = await Connection.open(resolved);
  return new Client(connection, resolved);
}

/** The options of a {@link Client} with every default filled in. */
export interface ResolvedOptions {
  /** The socket path. */
  socketPath: string;
  /** The client name sent in the `Hello`. */
  clientName: string;
  /** The request timeout in milliseconds; `0` waits forever. */
  requestTimeoutMs: number;
  /** The reconnect policy of streams. */
  reconnect: ReconnectPolicy;
  /** Events each stream buffers before pausing its socket. */
  maxBufferedEvents: number;
}

/**
 * A connection to the host with one method per operation.
 *
 * Methods may be called concurrently: requests carry increasing ids and
 * answers are matched by id. Each resolves with the answer's body, typed;
 * an error answer rejects with a {@link PanehostError} carrying the host's
 * `code` (such as `UNKNOWN_PANE`), `message` and `limitation`. A request
 * that gets no answer within the request timeout rejects with a
 * {@link RequestTimeoutError}; one whose connection closes, with a
 * {@link ConnectionLostError}. The client does not reconnect by itself
 * (its streams do): after a loss, {@link connect} again.
 *
 * Create one with {@link connect}.
 */
export class Client {
  /** The socket path this client connected to (its streams use it too). */
  readonly socketPath: string;
  /** The host's welcome: its protocol version and `host` name. */
  readonly welcome: Welcome;
  private readonly connection: Connection;
  private readonly options: ResolvedOptions;
  private readonly streams = new Set<PaneStream>();
  /** Connections of the long requests (`ask`, `probeRuntime`) under way. */
  private readonly dedicated = new Set<Connection>();

  /** @internal Use {@link connect}. */
  constructor(connection: Connection, options: ResolvedOptions) {
    this.connection = connection;
    this.options = options;
    this.socketPath = options.socketPath;
    this.welcome = connection.welcome;
  }

  /** True once the connection closed (by {@link Client.disconnect}, or lost). */
  get isClosed(): boolean {
    return this.connection.isClosed;
  }

  /**
   * Calls `listener` once when the connection closes (at once if it is
   * closed already). `error` is the reason when one is known: a socket
   * error, a {@link FrameError}, or the host's connection-level
   * {@link PanehostError}; `undefined` after {@link Client.disconnect} or a
   * plain close by the host.
   */
  onClose(listener: (error: Error | undefined) => void): void {
    this.connection.onClose(listener);
  }

  /**
   * Starts a new pane running a runtime.
   *
   * With `permission_profile`, the runtime must enforce that profile for
   * this launch; with `require_ready`, the runtime must be ready as
   * {@link Client.runtimes} reports it.
   *
   * @example
   * ```ts
   * const pane = await client.start({ runtime: "codex", cwd: "/srv/work", permission_profile: "workspace_write", require_ready: true });
   * ```
   *
   * @returns The new pane.
   * @throws {@link PanehostError}: `UNKNOWN_RUNTIME`, `RUNTIME_NOT_AVAILABLE`,
   *   `RUNTIME_NOT_SUPPORTED`, `RUNTIME_NOT_READY` (a readiness gate stops
   *   it; the message names the gate), `BINARY_CHANGED`, `INVALID_ARGUMENT`
   *   (also a name that is no permission profile), `OPERATION_UNSUPPORTED`
   *   (with `limitation`, such as `PERMISSION_PROFILE_UNENFORCED`),
   *   `SPAWN_FAILED`, `INTERNAL`.
   */
  async start(params: StartParams): Promise<PaneSummary> {
    const body = {
      runtime: params.runtime,
      cwd: params.cwd ?? null,
      size: params.size ?? null,
      command: params.command ?? [],
      model: params.model ?? null,
      resume: params.resume ?? null,
      max_wall_ms: params.max_wall_ms ?? null,
      permission_profile: params.permission_profile ?? null,
      accept_weaker_boundary: params.accept_weaker_boundary ?? false,
      require_ready: params.require_ready ?? false,
      rerun_after_host_loss: params.rerun_after_host_loss ?? false,
    };
    return paneSummary(await this.connection.request({ start: body }, "started"));
  }

  /**
   * Writes input to a pane: the UTF-8 bytes of `text`, then `bytes`, then
   * `\r` when `enter`. Input too large for one frame is sent as several
   * `send` requests, queued back to back so that nothing else interleaves;
   * `bytes` of the report is then their total.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`, `PANE_EXITED`, `INTERNAL`.
   */
  async send(pane: string, input: SendInput): Promise<SendReport> {
    const text = input.text ?? "";
    const bytes = input.bytes ?? new Uint8Array(0);
    const enter = input.enter ?? false;
    const single = { send: { pane, text, bytes: toBase64(bytes), enter } };
    if (Buffer.byteLength(JSON.stringify(single), "utf8") + 64 <= MAX_CLIENT_FRAME) {
      const answer = await this.connection.request(single, "sent");
      return { pane: answer.pane, bytes: answer.bytes };
    }
    const all = Buffer.concat([Buffer.from(text, "utf8"), bytes]);
    const requests: Array<Promise<{ pane: string; bytes: number }>> = [];
    for (let at = 0; at < all.length; at += INPUT_CHUNK_BYTES) {
      const chunk = all.subarray(at, at + INPUT_CHUNK_BYTES);
      const last = at + INPUT_CHUNK_BYTES >= all.length;
      requests.push(
        this.connection.request({ send: { pane, text: "", bytes: toBase64(chunk), enter: last && enter } }, "sent"),
      );
    }
    const answers = await Promise.all(requests);
    return { pane, bytes: answers.reduce((sum, answer) => sum + answer.bytes, 0) };
  }

  /**
   * Interrupts what the pane's process is doing, the way its runtime
   * expects, and finds out whether it stopped: the runtime's keys (for a
   * shell and most CLIs, Ctrl-C), up to 2 seconds for a confirmation (the
   * process exits, the turn ends, or the output goes quiet), then, only
   * when a turn was known to be running and the pane's completion is
   * observed, `SIGINT`; with `terminate`, `SIGTERM` and `SIGKILL` after
   * that. Answered within about 2, 4 or 8 seconds. An exited pane is not an
   * error: the outcome is then `not_running`.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`, `INTERNAL`.
   */
  async interrupt(pane: string, options: InterruptOptions = {}): Promise<InterruptReport> {
    const body = { pane, terminate: options.terminate ?? false };
    return interruptReport(await this.connection.request({ interrupt: body }, "interrupted"));
  }

  /**
   * Submits `text` as a turn (as `send` with `enter` does) and waits until
   * the turn ends, as the pane's completion observes it. The answer is the
   * turn's report: how its end was observed, its offsets, the lines it
   * added to the screen, its usage.
   *
   * The request runs on a connection of its own, opened for it and closed
   * after, so that the client's other requests do not wait behind it. The
   * client waits for the answer for `timeout_ms` (default 10 minutes) plus
   * its request timeout.
   *
   * @example
   * ```ts
   * const turn = await client.ask(pane.id, "Summarise README.md", { timeout_ms: 300_000 });
   * console.log(turn.source, turn.added_text);
   * ```
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`; `OPERATION_UNSUPPORTED`
   *   with limitation `COMPLETION_UNOBSERVED` (use `send` and `events`);
   *   `PANE_EXITED`; `TURN_IN_PROGRESS` (a turn is open; nothing was
   *   written); `TURN_TIMEOUT` (no end within `timeout_ms`: the turn is
   *   left running, so interrupt it or wait for its `turn_completed`
   *   before asking again); `INTERNAL`.
   */
  async ask(pane: string, text: string, options: AskOptions = {}): Promise<TurnReport> {
    const timeoutMs = options.timeout_ms ?? null;
    const answer = await this.dedicatedRequest(
      { ask: { pane, text, timeout_ms: timeoutMs } },
      "answered",
      timeoutMs ?? DEFAULT_ASK_TIMEOUT_MS,
    );
    return turnReport(answer);
  }

  /**
   * Takes a completion receipt of a runtime: the host runs its one-shot
   * mode inside the read-only boundary, asking for exactly one JSON object
   * with a fresh value, and stores the receipt, passed or not, against the
   * executable. A passed receipt under 24 hours old makes the runtime's
   * `receipt` gate pass ({@link Client.runtimes} then reports
   * `receipt_valid`). Runs on a connection of its own, like
   * {@link Client.ask}; the host ends the run after 180 seconds.
   *
   * @returns The receipt; check `passed`.
   * @throws {@link PanehostError}: `UNKNOWN_RUNTIME`, `RUNTIME_NOT_AVAILABLE`,
   *   `RUNTIME_NOT_SUPPORTED`, `BINARY_CHANGED`; `OPERATION_UNSUPPORTED`
   *   with `RECEIPT_UNAVAILABLE` (no one-shot mode) or
   *   `PERMISSION_PROFILE_UNENFORCED` (no read-only boundary, and
   *   `accept_weaker_boundary` not set); `INVALID_ARGUMENT` (a runtime that
   *   is no agent, such as `shell`, or a model it does not take);
   *   `INTERNAL`.
   */
  async probeRuntime(runtime: string, options: ProbeOptions = {}): Promise<Receipt> {
    const body = {
      runtime,
      model: options.model ?? null,
      accept_weaker_boundary: options.accept_weaker_boundary ?? false,
    };
    return receipt(await this.dedicatedRequest({ probe_runtime: body }, "receipt", PROBE_RUN_LIMIT_MS));
  }

  /**
   * Describes a pane with its current screen. The screen may trail the
   * pane's end offset; `events(pane, {from: detail.screen.offset})` follows
   * on from it without a gap.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`.
   */
  async inspect(pane: string): Promise<PaneDetail> {
    return paneDetail(await this.connection.request({ inspect: { pane } }, "inspected"));
  }

  /**
   * A pane's last lines of output as text: what scrolled off its screen,
   * oldest first, then the screen. The host re-parses the output its ring
   * still holds (its live model keeps no scrollback); `truncated` says
   * when older lines may be missing.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`.
   */
  async history(pane: string, options: HistoryOptions = {}): Promise<PaneHistory> {
    const body = { pane, lines: options.lines ?? null };
    return paneHistory(await this.connection.request({ history: body }, "history"));
  }

  /** Lists every pane of the host, oldest first (the `panes` answer's list). */
  async list(): Promise<PaneSummary[]> {
    const answer = await this.connection.request({ list: {} }, "panes");
    return (answer.panes ?? []).map(paneSummary);
  }

  /**
   * Changes a pane's terminal size; every subscriber gets a `resized` event.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`, `INVALID_ARGUMENT` (a
   *   dimension is 0), `INTERNAL`.
   */
  async resize(pane: string, size: Size): Promise<ResizeReport> {
    const answer = await this.connection.request(
      { resize: { pane, size: { cols: size.cols, rows: size.rows } } },
      "resized",
    );
    return { pane: answer.pane, size: { cols: answer.size.cols, rows: answer.size.rows } };
  }

  /**
   * Ends a pane's process group (SIGHUP, then SIGTERM, then SIGKILL, each
   * after a bounded wait), reaps it and forgets the pane. Subscribers get
   * `exited` and `ended` (reason `closed`).
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`, `INTERNAL`.
   */
  async close(pane: string): Promise<CloseReport> {
    const answer = await this.connection.request({ close: { pane } }, "closed");
    return { pane: answer.pane, status: { code: answer.status.code, signal: answer.status.signal ?? null } };
  }

  /**
   * Describes the runtimes the host can start (the `runtimes` answer's
   * list): whether each is installed, its readiness (`ready`, `not_ready`
   * with the `readiness_gate` that stops it, or `reduced`), its sign-in,
   * its last receipt, how its turns' ends are observed and the permission
   * profiles it enforces.
   */
  async runtimes(): Promise<RuntimeInfo[]> {
    const answer = await this.connection.request({ runtimes: {} }, "runtimes");
    return (answer.runtimes ?? []).map(runtimeInfo);
  }

  /**
   * Opens a pane running the runtime's own interactive sign-in.
   *
   * @returns The new pane.
   * @throws {@link PanehostError}: as {@link Client.start}, plus
   *   `OPERATION_UNSUPPORTED` with limitation `LOGIN_NOT_IN_TERMINAL` and
   *   `LOGIN_NOT_REQUIRED`.
   */
  async login(runtime: string, options: LoginOptions = {}): Promise<PaneSummary> {
    const body = { runtime, cwd: options.cwd ?? null, size: options.size ?? null };
    return paneSummary(await this.connection.request({ login: body }, "started"));
  }

  /**
   * Reports a turn signal from inside a pane, as a CLI's hook or notify
   * program does through `panehost notify`: not for ordinary clients. The
   * host sets `PANEHOST_PANE` and `PANEHOST_NOTIFY_TOKEN` in every pane it
   * starts; a process in the pane passes them here. `event` is
   * `turn_started`, `turn_completed` (a JSON payload with `usage` or
   * `total_cost_usd` gives the turn's usage) or `notification` (becomes
   * `awaiting_input`, or `approval_requested` when it mentions permission
   * or approval); another name is accepted and does nothing.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`, `NOTIFY_REFUSED` (the
   *   token is not that pane's; nothing is recorded).
   */
  async notify(pane: string, report: NotifyReport): Promise<void> {
    const body = { pane, token: report.token, event: report.event, payload: report.payload ?? "" };
    await this.connection.request({ notify: body }, "notified");
  }

  /**
   * Follows a pane's events: an async iterator of `start` and `event`
   * items that reconnects by itself after a lost connection, exactly from
   * the last offset it yielded. The subscription is made at once, on a
   * connection of the stream's own; its errors (such as `UNKNOWN_PANE`)
   * surface from the first `next()` (and from `stream.ready`).
   *
   * @example
   * ```ts
   * for await (const item of client.events(pane.id, { from: 0 })) {
   *   if (item.kind === "event" && item.event.kind === "output") process.stdout.write(item.event.data);
   * }
   * ```
   */
  events(pane: string, options: EventsOptions = {}): PaneStream {
    let policy: ReconnectPolicy | false;
    if (options.reconnect === false) policy = false;
    else policy = { ...this.options.reconnect, ...stripUndefined(options.reconnect ?? {}) };
    const open = (timeoutMs?: number) => {
      if (timeoutMs === undefined) return Connection.open(this.options);
      const configured = this.options.requestTimeoutMs > 0 ? this.options.requestTimeoutMs : Infinity;
      return Connection.open({ ...this.options, requestTimeoutMs: Math.min(configured, timeoutMs) });
    };
    const stream = new PaneStream(pane, open, {
      from: options.from,
      generation: options.generation,
      maxBuffered: options.maxBuffered ?? this.options.maxBufferedEvents,
      policy,
    });
    this.streams.add(stream);
    stream.onDone(() => this.streams.delete(stream));
    return stream;
  }

  /**
   * Closes the connection and every stream opened through this client.
   * Requests still waiting reject with a {@link ConnectionLostError}. Panes
   * keep running in the host.
   */
  async disconnect(): Promise<void> {
    const streams = [...this.streams];
    this.streams.clear();
    for (const connection of this.dedicated) connection.close();
    this.dedicated.clear();
    await Promise.all(streams.map((stream) => stream.close()));
    this.connection.close();
  }

  /**
   * Sends one request on a connection opened for it, and closes that
   * connection after the answer. The answer is waited for `hostWaitMs` (how
   * long the host may take on purpose) plus the request timeout.
   */
  private async dedicatedRequest(request: object, expect: string, hostWaitMs: number): Promise<any> {
    if (this.connection.isClosed) return this.connection.request(request, expect);
    const configured = this.options.requestTimeoutMs;
    const timeoutMs = configured > 0 ? configured + hostWaitMs : 0;
    const connection = await Connection.open(this.options);
    this.dedicated.add(connection);
    try {
      return await connection.request(request, expect, { timeoutMs });
    } finally {
      this.dedicated.delete(connection);
      connection.close();
    }
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
