/**
 * {@link connect} and {@link Client}: typed operations on one shared
 * connection. The options of {@link connect} and their defaults are in
 * `options.ts`, and re-exported here.
 *
 * @module
 */

import * as path from "node:path";
import { Connection, type ConnectionOptions } from "./connection.js";
import { ConnectionLostError, HostRevisionError, PanehostError } from "./errors.js";
import { MAX_CLIENT_FRAME } from "./frame.js";
import {
  type ConnectOptions,
  DEFAULT_MAX_SUBSCRIPTIONS,
  defaultSocketPath,
  type ResolvedOptions,
  resolveOptions,
} from "./options.js";
import type * as Raw from "./protocol.generated.js";
import { type ConnectionState, SharedConnection } from "./shared.js";
import { RemoteLink } from "./remote.js";
import { resolveRemote } from "./remote_target.js";
import { type EventsOptions, PaneStream } from "./stream.js";
import { PaneWatch, type WatchOptions } from "./watch.js";
import type { CloseReport, InterruptReport, ResizeReport, SendReport, TurnReport, WaitMatch } from "./types/answers.js";
import type { Welcome } from "./types/handshake.js";
import type { PaneDetail, PaneHistory, PaneSummary, Size } from "./types/pane.js";
import type {
  AskOptions,
  CallOptions,
  HistoryOptions,
  InterruptOptions,
  ListOptions,
  LoginOptions,
  NotifyReport,
  ProbeOptions,
  SendInput,
  StartParams,
  WaitForOptions,
} from "./types/requests.js";
import type { Receipt, RuntimeInfo } from "./types/runtimes.js";
import {
  type Answer,
  type AnswerKind,
  interruptReport,
  paneSweep,
  paneDetail,
  paneHistory,
  paneSummary,
  receipt,
  runtimeInfo,
  toBase64,
  turnReport,
  waitMatch,
} from "./wire.js";

export { CLIENT_VERSION, DEFAULT_MAX_SUBSCRIPTIONS, DEFAULT_REQUEST_TIMEOUT_MS, defaultSocketPath } from "./options.js";
export type { ConnectOptions, ResolvedOptions } from "./options.js";

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

/** The protocol revision that added labels, `env`, the `list` filter and `wait_for` (PROTOCOL.md section 11). */
export const LABELS_REVISION = 3;

/** How long the host waits in `wait_for` when the request names no timeout: 30 seconds. */
export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;

/** What a client holds a subscription for: a pane's stream or a watch. */
interface Subscriber {
  /** Ends it and its subscription. */
  close(): Promise<void>;
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
  // Checked before anything runs.
  const target =
    options.remote === undefined
      ? undefined
      : resolveRemote(options.remote, path.dirname(options.socketPath ?? defaultSocketPath()));
  const resolved = resolveOptions(options);
  if (target === undefined) {
    const connection = await Connection.open(resolved);
    return new Client(new SharedConnection(resolved, resolved.reconnect, connection), resolved);
  }
  const link = new RemoteLink(target);
  const open = (opening: ConnectionOptions) => link.connect((socketPath) => Connection.open({ ...opening, socketPath }));
  let connection: Connection;
  try {
    connection = await open(resolved);
  } catch (error) {
    await link.close();
    throw error;
  }
  resolved.socketPath = link.localSocket ?? resolved.socketPath;
  return new Client(new SharedConnection(resolved, resolved.reconnect, connection, open), resolved, link);
}

/**
 * A client of the host, with one method per operation.
 *
 * **One connection.** The client talks to the host over one connection,
 * shared by every request and every stream ({@link Client.events}). The
 * host runs the requests of a connection concurrently, so a request that
 * waits (an `ask` until its turn ends, an `interrupt` while it confirms)
 * holds up no other; answers are matched by id. Methods may be called
 * concurrently.
 *
 * **Answers.** Each method resolves with the answer's body, typed; an
 * error answer rejects with a {@link PanehostError} carrying the host's
 * `code` (such as `UNKNOWN_PANE`), `message` and `limitation`.
 *
 * **Waiting.** Every method takes a last `options` argument with a
 * `signal` ({@link AbortError} when aborted) and a `deadlineMs`, the
 * client's deadline for the answer ({@link RequestTimeoutError} when it
 * expires; the client's `requestTimeoutMs` by default). The host's own
 * wait, where a request has one (`ask`, `waitFor`), is the wire field
 * `timeout_ms`; an options object with `timeoutMs` (the deadline's former
 * name) is refused with a `TypeError`, so that neither is taken for the
 * other.
 *
 * **A lost connection.** The client connects again by itself, with the
 * reconnect policy's backoff, and subscribes every open stream again from
 * exactly where it was. A request made meanwhile waits for the new
 * connection (within its timeout). A request that was in flight when the
 * connection was lost may or may not have been carried out: `inspect`,
 * `list`, `runtimes` and `history`, which change nothing, are sent again;
 * every other rejects with a {@link ConnectionLostError} whose
 * `requestSent` is `true`. When the policy gives up, waiting requests
 * reject with a {@link ConnectionLostError}, and the next request tries
 * again.
 *
 * Create one with {@link connect}.
 */
export class Client {
  /**
   * The socket path this client connects to; with the `remote` option, the
   * local end of the first ssh forward (a new forward has a new one: see
   * {@link Client.remote}).
   */
  readonly socketPath: string;
  /**
   * With the `remote` option, the ssh link: its destination, the running
   * forward's `sshPid` and `localSocket`, and what the other machine's
   * `panehost up` said (`remoteHost`). `undefined` for a local host.
   */
  readonly remote: RemoteLink | undefined;
  private readonly shared: SharedConnection;
  private readonly options: ResolvedOptions;
  private readonly streams = new Set<Subscriber>();
  private readonly closeListeners: Array<(error: Error | undefined) => void> = [];
  private closedWith: { error: Error | undefined } | undefined;

  /** @internal Use {@link connect}. */
  constructor(shared: SharedConnection, options: ResolvedOptions, remote?: RemoteLink) {
    this.shared = shared;
    this.options = options;
    this.socketPath = options.socketPath;
    this.remote = remote;
    shared.onStateChange((state, error) => {
      if (state !== "closed" || this.closedWith !== undefined) return;
      // Closed for good: the ssh forward ends with the client.
      void remote?.close();
      this.closedWith = { error };
      for (const listener of this.closeListeners.splice(0)) listener(error);
    });
  }

  /** The welcome of the host's newest connection: its protocol version, revision and `host` name. */
  get welcome(): Welcome {
    return this.shared.welcome;
  }

  /**
   * Where the connection stands: `connected`, `reconnecting` (requests
   * wait), `down` (the reconnect policy gave up; the next request tries
   * again) or `closed` (for good).
   */
  get state(): ConnectionState {
    return this.shared.state;
  }

  /** True once the client is closed for good: by {@link Client.disconnect}, or a loss with reconnecting off. */
  get isClosed(): boolean {
    return this.shared.state === "closed";
  }

  /** Streams and watches open now (each holds one of the connection's subscriptions, or will again). */
  get openStreams(): number {
    return this.streams.size;
  }

  /**
   * Calls `listener` once when the client is closed for good (at once if
   * it is already): `error` is `undefined` after {@link Client.disconnect},
   * and the reason of the loss when the connection was lost with
   * reconnecting off.
   */
  onClose(listener: (error: Error | undefined) => void): void {
    if (this.closedWith !== undefined) listener(this.closedWith.error);
    else this.closeListeners.push(listener);
  }

  /**
   * Calls `listener` on every change of {@link Client.state}, with the
   * error that caused it when there is one (a lost connection, the last
   * failed attempt). Returns a function that stops it.
   */
  onStateChange(listener: (state: ConnectionState, error: Error | undefined) => void): () => void {
    return this.shared.onStateChange(listener);
  }

  /**
   * Starts a new pane running a runtime.
   *
   * With `permission_profile`, the runtime must enforce that profile for
   * this launch; with `require_ready`, the runtime must be ready as
   * {@link Client.runtimes} reports it. Not sent again after a lost
   * connection.
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
   *   `SPAWN_FAILED`, `LIMIT_REACHED`, `INTERNAL`. {@link HostRevisionError}
   *   for `labels` or `env` on a host older than revision 3 (nothing sent).
   */
  async start(params: StartParams, options: CallOptions = {}): Promise<PaneSummary> {
    const labels = params.labels ?? {};
    const env = params.env ?? {};
    if (Object.keys(labels).length > 0) this.requireRevision("start with labels", LABELS_REVISION);
    if (Object.keys(env).length > 0) this.requireRevision("start with env", LABELS_REVISION);
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
      labels,
      env,
      allow_refused_version: params.allow_refused_version ?? false,
    };
    return paneSummary(await this.call({ start: body }, "started", options));
  }

  /**
   * Writes input to a pane: the UTF-8 bytes of `text`, then `bytes`, then
   * `\r` when `enter`. Input too large for one frame is sent as several
   * `send` requests, written back to back so that nothing else of this
   * client comes between them; `bytes` of the report is then their total.
   * Input to a pane is written in the order the host reads the requests.
   * Not sent again after a lost connection.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`, `PANE_EXITED`, `INTERNAL`.
   */
  async send(pane: string, input: SendInput, options: CallOptions = {}): Promise<SendReport> {
    const text = input.text ?? "";
    const bytes = input.bytes ?? new Uint8Array(0);
    const enter = input.enter ?? false;
    const single = { send: { pane, text, bytes: toBase64(bytes), enter } };
    if (Buffer.byteLength(JSON.stringify(single), "utf8") + 64 <= MAX_CLIENT_FRAME) {
      const answer = await this.call(single, "sent", options);
      return { pane: answer.pane, bytes: answer.bytes };
    }
    const all = Buffer.concat([Buffer.from(text, "utf8"), bytes]);
    // Called one after the other without a pause, the requests are written
    // (or wait for a connection, then are written) back to back.
    const requests: Array<Promise<{ pane: string; bytes: number }>> = [];
    for (let at = 0; at < all.length; at += INPUT_CHUNK_BYTES) {
      const chunk = all.subarray(at, at + INPUT_CHUNK_BYTES);
      const last = at + INPUT_CHUNK_BYTES >= all.length;
      requests.push(this.call({ send: { pane, text: "", bytes: toBase64(chunk), enter: last && enter } }, "sent", options));
    }
    const answers = await Promise.all(requests);
    return { pane, bytes: answers.reduce((sum, answer) => sum + answer.bytes, 0) };
  }

  /**
   * Interrupts what the pane's process is doing, the way its runtime
   * expects, and finds out whether it stopped (PROTOCOL.md, `interrupt`).
   *
   * Without `terminate`: the runtime's keys (for a shell and most CLIs,
   * Ctrl-C) at once. When no turn was known to be running, the answer
   * comes right after them, with outcome `unconfirmed`: no signal is sent,
   * as a second Ctrl-C at an idle prompt makes many CLIs exit. Otherwise up
   * to 3.5 seconds for a confirmation (the process exits, the turn ends, or
   * the output stays quiet for 1.5 seconds), then, when the pane's
   * completion is observed, `SIGINT` to the terminal's foreground process
   * group and as long again: answered within about 3.5 or 7 seconds.
   *
   * With `terminate`: the program in the foreground is ended, turn or no
   * turn: the keys, then `SIGINT`, `SIGTERM` and `SIGKILL` in turn, 2
   * seconds apart, until it has ended (outcome `process_ended`, or
   * `foreground_ended` when a shell's job ended and the shell runs on):
   * answered within about 8 seconds.
   *
   * An exited pane is not an error: the outcome is then `not_running`.
   * Not sent again after a lost connection.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`, `INTERNAL`.
   */
  async interrupt(pane: string, options: InterruptOptions = {}): Promise<InterruptReport> {
    const body = { pane, terminate: options.terminate ?? false };
    return interruptReport(await this.call({ interrupt: body }, "interrupted", options));
  }

  /**
   * Submits `text` as a turn (as `send` with `enter` does) and waits until
   * the turn ends, as the pane's completion observes it. The answer is the
   * turn's report: how its end was observed, its offsets, the lines it
   * added to the screen, its usage.
   *
   * Other requests and streams of this client go on while it waits. Two
   * `ask`s of one pane at once: the one the host reads first opens the
   * turn, the other is refused with `TURN_IN_PROGRESS`.
   *
   * The client waits for the answer `timeout_ms` (default 10 minutes)
   * plus its request timeout, unless `deadlineMs` says otherwise. A
   * timeout or an abort of the client's wait leaves the turn running in
   * the host. Not sent again after a lost connection (the prompt may have
   * been submitted).
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
    const turnMs = options.timeout_ms ?? null;
    const answer = await this.call({ ask: { pane, text, timeout_ms: turnMs } }, "answered", {
      signal: options.signal,
      deadlineMs: deadline(options, this.longWait(turnMs ?? DEFAULT_ASK_TIMEOUT_MS)),
    });
    return turnReport(answer);
  }

  /**
   * Waits until a pane's screen, or its output, matches `pattern`
   * (protocol revision 3): a prompt drawn, a build's last line, a question
   * the program asks. `pattern` is a regular expression in the syntax of
   * the Rust `regex` crate (no look-around, no back-references), 1 to 1,024
   * bytes. With `target` `screen` (the default) the host looks at the
   * screen at once and whenever its terminal model has parsed more output;
   * with `output` it searches the bytes from `from` (default: only output
   * that comes after the request). The host waits `timeout_ms` (default
   * 30 seconds); the client waits that plus its request timeout, unless
   * `deadlineMs` says otherwise. Other requests of the client go on
   * meanwhile. Not sent again after a lost connection.
   *
   * @example
   * ```ts
   * await client.send(pane.id, { text: "make", enter: true });
   * const found = await client.waitFor(pane.id, "\\$ $", { timeout_ms: 600_000 });
   * ```
   *
   * @returns Where it matched, and the matched text.
   * @throws {@link PanehostError}: `WAIT_TIMEOUT` (no match in time);
   *   `PANE_EXITED` (the process exited, and all it wrote was looked at,
   *   without a match); `UNKNOWN_PANE`; `INVALID_ARGUMENT` (a pattern that
   *   is empty, too long or not a regular expression, or a timeout over a
   *   day); `OFFSET_OUT_OF_RANGE` (`from` beyond the pane's end).
   *   {@link HostRevisionError} on a host older than revision 3 (nothing
   *   sent).
   */
  async waitFor(pane: string, pattern: string, options: WaitForOptions = {}): Promise<WaitMatch> {
    this.requireRevision("wait_for", LABELS_REVISION);
    const hostMs = options.timeout_ms ?? null;
    // A target this client does not know goes as given: a newer host may know it.
    const target = (options.target ?? "screen") as Raw.WaitTarget;
    const body: Raw.WaitForParams = { pane, pattern, target, from: options.from ?? null, timeout_ms: hostMs };
    const answer = await this.call({ wait_for: body }, "waited", {
      signal: options.signal,
      deadlineMs: deadline(options, this.longWait(hostMs ?? DEFAULT_WAIT_TIMEOUT_MS)),
    });
    return waitMatch(answer);
  }

  /**
   * Takes a completion receipt of a runtime: the host runs its one-shot
   * mode inside the read-only boundary, asking for exactly one JSON object
   * with a fresh value, and stores the receipt, passed or not, against the
   * executable. A passed receipt under 24 hours old makes the runtime's
   * `receipt` gate pass ({@link Client.runtimes} then reports
   * `receipt_valid`). The host ends the run after 180 seconds; the client
   * waits that plus its request timeout, unless `deadlineMs` says
   * otherwise. Not sent again after a lost connection.
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
    const answer = await this.call({ probe_runtime: body }, "receipt", {
      signal: options.signal,
      deadlineMs: deadline(options, this.longWait(PROBE_RUN_LIMIT_MS)),
    });
    return receipt(answer);
  }

  /**
   * Describes a pane with its current screen. The screen may trail the
   * pane's end offset; `events(pane, {from: detail.screen.offset})` follows
   * on from it without a gap. Sent again after a lost connection.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`.
   */
  async inspect(pane: string, options: CallOptions = {}): Promise<PaneDetail> {
    return paneDetail(await this.call({ inspect: { pane } }, "inspected", options, true));
  }

  /**
   * A pane's last lines of output as text: what scrolled off its screen,
   * oldest first, then the screen. The host re-parses the output its ring
   * still holds (its live model keeps no scrollback); `truncated` says
   * when older lines may be missing. Sent again after a lost connection.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`.
   */
  async history(pane: string, options: HistoryOptions = {}): Promise<PaneHistory> {
    const body = { pane, lines: options.lines ?? null };
    return paneHistory(await this.call({ history: body }, "history", options, true));
  }

  /**
   * Lists the panes of the host, oldest first (the `panes` answer's
   * list): every pane, or with `labels` only those that carry every one of
   * them with the same value. Sent again after a lost connection.
   *
   * @example
   * ```ts
   * const mine = await client.list({ labels: { owner: "build-bot" } });
   * ```
   *
   * @throws {@link HostRevisionError} for `labels` on a host older than
   *   revision 3 (which would list every pane); nothing is sent.
   */
  async list(options: ListOptions = {}): Promise<PaneSummary[]> {
    const labels = options.labels ?? {};
    const filtered = Object.keys(labels).length > 0;
    if (filtered) this.requireRevision("list by labels", LABELS_REVISION);
    const answer = await this.call({ list: filtered ? { labels } : {} }, "panes", options, true);
    return (answer.panes ?? []).map(paneSummary);
  }

  /**
   * Changes a pane's terminal size; every subscriber gets a `resized`
   * event. Not sent again after a lost connection.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`, `INVALID_ARGUMENT` (a
   *   size out of bounds: 2 to 1,000 columns and rows, at most 250,000
   *   cells), `INTERNAL`.
   */
  async resize(pane: string, size: Size, options: CallOptions = {}): Promise<ResizeReport> {
    const answer = await this.call({ resize: { pane, size: { cols: size.cols, rows: size.rows } } }, "resized", options);
    return { pane: answer.pane, size: { cols: answer.size.cols, rows: answer.size.rows } };
  }

  /**
   * Ends a pane's process group (SIGHUP, then SIGTERM, then SIGKILL, each
   * after a bounded wait) and every other process the pane started
   * (`sweep` says how many, and which survived), reaps it and forgets the
   * pane. Subscribers get
   * `exited` and `ended` (reason `closed`). Not sent again after a lost
   * connection.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`, `INTERNAL`.
   */
  async close(pane: string, options: CallOptions = {}): Promise<CloseReport> {
    const answer = await this.call({ close: { pane } }, "closed", options);
    return {
      pane: answer.pane,
      status: { code: answer.status.code, signal: answer.status.signal ?? null },
      sweep: paneSweep(answer.sweep),
    };
  }

  /**
   * Describes the runtimes the host can start (the `runtimes` answer's
   * list): whether each is installed, its readiness (`ready`, `not_ready`
   * with the `readiness_gate` that stops it, or `reduced`), its sign-in,
   * its last receipt, how its turns' ends are observed and the permission
   * profiles it enforces. Sent again after a lost connection.
   */
  async runtimes(options: CallOptions = {}): Promise<RuntimeInfo[]> {
    const answer = await this.call({ runtimes: {} }, "runtimes", options, true);
    return (answer.runtimes ?? []).map(runtimeInfo);
  }

  /**
   * Opens a pane running the runtime's own interactive sign-in. Not sent
   * again after a lost connection.
   *
   * @returns The new pane.
   * @throws {@link PanehostError}: as {@link Client.start}, plus
   *   `OPERATION_UNSUPPORTED` with limitation `LOGIN_NOT_IN_TERMINAL` and
   *   `LOGIN_NOT_REQUIRED`.
   */
  async login(runtime: string, options: LoginOptions = {}): Promise<PaneSummary> {
    const body = { runtime, cwd: options.cwd ?? null, size: options.size ?? null };
    return paneSummary(await this.call({ login: body }, "started", options));
  }

  /**
   * Reports a turn signal from inside a pane, as a CLI's hook or notify
   * program does through `panehost notify`: not for ordinary clients. The
   * host sets `PANEHOST_PANE` and `PANEHOST_NOTIFY_TOKEN` in every pane it
   * starts; a process in the pane passes them here. `event` is
   * `turn_started`, `turn_completed` (a JSON payload with `usage` or
   * `total_cost_usd` gives the turn's usage) or `notification` (becomes
   * `awaiting_input`, or `approval_requested` when it mentions permission
   * or approval); another name is accepted and does nothing. Not sent
   * again after a lost connection.
   *
   * @throws {@link PanehostError}: `UNKNOWN_PANE`, `NOTIFY_REFUSED` (the
   *   caller is not one of the pane's processes, or the token is not that
   *   pane's; nothing is recorded).
   */
  async notify(pane: string, report: NotifyReport, options: CallOptions = {}): Promise<void> {
    const body = { pane, token: report.token, event: report.event, payload: report.payload ?? "" };
    await this.call({ notify: body }, "notified", options);
  }

  /**
   * Follows a pane's events: an async iterator of `start` and `event`
   * items, on the client's shared connection. The subscription is made at
   * once (or as soon as the client is connected); its errors (such as
   * `UNKNOWN_PANE`, or `LIMIT_REACHED` beyond `maxSubscriptions` streams)
   * surface from the first `next()` and from `stream.ready`. After a lost
   * connection the stream subscribes again exactly from the last offset
   * it received; a slow consumer never holds up the connection (see
   * {@link PaneStream}). An aborted `signal` closes the stream.
   *
   * @example
   * ```ts
   * for await (const item of client.events(pane.id, { from: 0 })) {
   *   if (item.kind === "event" && item.event.kind === "output") process.stdout.write(item.event.data);
   * }
   * ```
   */
  events(pane: string, options: EventsOptions = {}): PaneStream {
    const refuse = this.refusal();
    const stream = new PaneStream(
      pane,
      { shared: this.shared, requestTimeoutMs: deadline(options, this.options.requestTimeoutMs) },
      {
        from: options.from,
        generation: options.generation,
        maxBuffered: options.maxBuffered ?? this.options.maxBufferedEvents,
        reconnect: options.reconnect ?? true,
        signal: options.signal,
        refuse,
      },
    );
    if (!stream.isDone) {
      this.streams.add(stream);
      stream.onDone(() => this.streams.delete(stream));
    }
    return stream;
  }

  /**
   * Watches every pane of the host (protocol revision 3): an async
   * iterator whose first item is a `start` with every pane now, followed
   * by `pane_started`, `pane_activity`, `pane_changed`, `pane_exited` and
   * `pane_ended` events as they happen (see {@link PaneWatch}), on the
   * client's shared connection. After a lost connection, or when its
   * consumer fell behind, the watch is made again and a new `start` lists
   * every pane. An aborted `signal` closes it; `break` out of `for await`
   * unsubscribes.
   *
   * Errors surface from the first `next()` and from `watch.ready`: a
   * {@link HostRevisionError} from a host older than revision 3, or
   * `LIMIT_REACHED` beyond `maxSubscriptions` streams and watches.
   *
   * @example
   * ```ts
   * const panes = new Map<string, PaneSummary>();
   * for await (const item of client.watch()) {
   *   if (item.kind === "start") {
   *     panes.clear();
   *     for (const pane of item.panes) panes.set(pane.id, pane);
   *   } else if (item.event.kind === "pane_activity") {
   *     const pane = panes.get(item.event.pane);
   *     if (pane) pane.activity = item.event.activity;
   *   }
   * }
   * ```
   */
  watch(options: WatchOptions = {}): PaneWatch {
    const watch = new PaneWatch(
      { shared: this.shared, requestTimeoutMs: deadline(options, this.options.requestTimeoutMs) },
      {
        maxBuffered: options.maxBuffered ?? this.options.maxBufferedEvents,
        reconnect: options.reconnect ?? true,
        signal: options.signal,
        refuse: this.refusal(),
      },
    );
    if (!watch.isDone) {
      this.streams.add(watch);
      watch.onDone(() => this.streams.delete(watch));
    }
    return watch;
  }

  /**
   * Closes the connection and every stream and watch opened through this
   * client, for good. Requests still waiting reject with a {@link ConnectionLostError}.
   * Panes keep running in the host.
   */
  async disconnect(): Promise<void> {
    const streams = [...this.streams];
    this.streams.clear();
    // Closing the connection ends its subscriptions; no need to wait for
    // each stream's unsubscribe.
    const closing = streams.map((stream) => stream.close());
    this.shared.close();
    await Promise.allSettled(closing);
    await this.remote?.close();
  }

  /** Why a new stream or watch is refused at once, if it is: the client is closed, or at its limit. */
  private refusal(): Error | undefined {
    if (this.shared.state === "closed") return new ConnectionLostError("the client is closed");
    if (this.streams.size >= this.options.maxSubscriptions) {
      return new PanehostError(
        "LIMIT_REACHED",
        `this client has ${this.streams.size} streams and watches open, its limit (maxSubscriptions, after the host's ` +
          `default of ${DEFAULT_MAX_SUBSCRIPTIONS} subscriptions per connection); close one first, or use another client`,
      );
    }
    return undefined;
  }

  /**
   * Throws a {@link HostRevisionError} unless the host (as of its newest
   * welcome) speaks at least `revision`.
   */
  private requireRevision(feature: string, revision: number): void {
    const hostRevision = this.shared.welcome.revision;
    if (hostRevision < revision) throw new HostRevisionError(feature, revision, hostRevision);
  }

  /** Sends one request on the shared connection. `retry`: may be sent again after a lost connection. */
  private call<K extends AnswerKind>(request: Raw.Request, expect: K, options: CallOptions, retry = false): Promise<Answer<K>> {
    return this.shared.call(request, expect, {
      timeoutMs: deadline(options, this.options.requestTimeoutMs),
      signal: options.signal,
      retry,
    });
  }

  /** The default wait for an answer the host may take `hostWaitMs` to give on purpose. */
  private longWait(hostWaitMs: number): number {
    const configured = this.options.requestTimeoutMs;
    return configured > 0 ? configured + hostWaitMs : 0;
  }
}

/**
 * The client's deadline for a call's answer: the options' `deadlineMs`, or
 * `fallback`. An options object that still names `timeoutMs` (this
 * option's former name, easily taken for the host's `timeout_ms`) is
 * refused rather than ignored.
 *
 * @throws TypeError naming both options.
 */
function deadline(options: { deadlineMs?: number | undefined }, fallback: number): number {
  if (Object.prototype.hasOwnProperty.call(options, "timeoutMs")) {
    throw new TypeError(
      "`timeoutMs` is not an option: the client's deadline for the answer is `deadlineMs`; " +
        "the host's own wait (ask, waitFor) is `timeout_ms`",
    );
  }
  return options.deadlineMs ?? fallback;
}
