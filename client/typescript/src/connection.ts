/**
 * One connection to the host: the socket, the framing, the handshake,
 * requests matched to answers by id, and events routed to subscriptions.
 * Timeouts, aborts and reconnecting are the business of the layer above
 * (`shared.ts`).
 *
 * @module
 * @internal
 */

import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { ConnectionLostError, FrameError, PanehostError, RequestTimeoutError, UntrustedHostError } from "./errors.js";
import { encodeFrame, FrameDecoder, MAX_CLIENT_FRAME, MAX_HELLO_FRAME, MAX_HOST_FRAME } from "./frame.js";
import type * as Raw from "./protocol.generated.js";
import type { Welcome } from "./types/handshake.js";
import { type Answer, type AnswerKind, tagged } from "./wire.js";

/**
 * Why the socket at `socketPath` is not one this user's host could have
 * made, or `null` when it is (or does not exist: then there is no host,
 * and connecting fails as usual). Its directory must be owned by the user,
 * have mode 0700 and not be a symbolic link, and the socket file must be
 * the user's. (Node.js gives no peer credentials, which the Rust client
 * checks too; in a directory only the user can write to, only the user, or
 * root, can have made the socket.)
 */
export function checkSocket(socketPath: string): string | null {
  const uid = typeof process.geteuid === "function" ? process.geteuid() : null;
  if (uid === null) return null;
  const dir = path.dirname(socketPath);
  let dirStat: fs.Stats;
  try {
    dirStat = fs.lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    return `${dir}: ${(error as Error).message}`;
  }
  const advice = "; another user may be listening there. Remove it if it is yours, or choose another socket";
  if (!dirStat.isDirectory()) return `${dir} is not a directory (a symbolic link is not followed)${advice}`;
  if (dirStat.uid !== uid) return `${dir} is owned by uid ${dirStat.uid}, not by this user (uid ${uid})${advice}`;
  if ((dirStat.mode & 0o077) !== 0) {
    return `${dir} has mode ${(dirStat.mode & 0o777).toString(8)}; it must be 0700${advice}`;
  }
  try {
    const socketStat = fs.lstatSync(socketPath);
    if (socketStat.uid !== uid) return `${socketPath} belongs to uid ${socketStat.uid}, not to this user (uid ${uid})`;
  } catch {
    // No socket: no host; connecting says so.
  }
  return null;
}

/** The protocol version this client speaks. */
export const PROTOCOL_VERSION = 1;
/** The revision of that version this client speaks (PROTOCOL.md, section 11). */
export const PROTOCOL_REVISION = 8;

/** What a connection needs to open. */
export interface ConnectionOptions {
  /** The socket path. */
  socketPath: string;
  /** A free-form name for the host's log. */
  clientName: string;
  /** How long to wait for the handshake reply, in milliseconds; `0` waits forever. */
  requestTimeoutMs: number;
  /** The largest frame accepted from the host. */
  maxFrameBytes?: number;
}

/**
 * Receives the events of one subscription: a pane's (`events`,
 * `reconnect`) or the host's (`watch`).
 */
export interface SubscriptionSink<E = unknown> {
  /**
   * Converts an event from its JSON.
   *
   * @throws {@link FrameError} when it is malformed (the connection is
   *   then closed: the stream is corrupt).
   */
  parse(raw: Raw.Event): E;
  /** An event of the subscription, in the order the host sent it. */
  event(event: E): void;
  /** The connection closed before the subscription ended. */
  lost(error: Error): void;
}

/** What becomes of a request's answer. Exactly one of the three is called, once. */
export interface PendingRequest<K extends AnswerKind = AnswerKind> {
  /** The answer kind expected, such as `started`. */
  expect: K;
  /**
   * The answer's content. Runs synchronously when the answer is handled,
   * before any later frame (a subscription registers its sink here, so
   * that no event of it is missed).
   */
  answer(content: Answer<K>): void;
  /** The host answered with an error, or with an answer of another kind. */
  error(error: Error): void;
  /** The connection closed before the answer. */
  lost(error: Error): void;
}

/**
 * A handshaken connection. Requests may be sent without waiting for earlier
 * answers; answers are matched by id. Events are handed to the sink of
 * their subscription. The socket is always read: nothing a caller does
 * pauses it, so that one slow reader never holds up the others.
 */
export class Connection {
  /** The host's welcome. */
  readonly welcome: Welcome;
  private readonly socket: net.Socket;
  private readonly decoder: FrameDecoder;
  private readonly pending = new Map<number, PendingRequest>();
  private readonly sinks = new Map<number, SubscriptionSink<unknown>>();
  private readonly closeListeners: Array<(error: Error | undefined) => void> = [];
  private nextId = 1;
  private pumping = false;
  private closedWith: Error | undefined;
  private closed = false;
  /** An error with no request id the host sent, kept as the cause of the close that follows. */
  private connectionError: PanehostError | undefined;
  private socketError: Error | undefined;

  private constructor(socket: net.Socket, decoder: FrameDecoder, welcome: Welcome) {
    this.socket = socket;
    this.decoder = decoder;
    this.welcome = welcome;
    socket.on("data", (chunk: Buffer) => {
      this.decoder.push(chunk);
      this.pump();
    });
    socket.on("error", (error) => {
      this.socketError ??= error;
    });
    socket.on("close", () => this.finish(undefined));
    // Frames that arrived together with the welcome.
    this.pump();
  }

  /**
   * Connects to the socket and performs the handshake in the JSON encoding.
   *
   * @throws {@link ConnectionLostError} when the socket cannot be connected
   *   to or closes before the reply; {@link PanehostError} (`refused`) when
   *   the host refuses; {@link RequestTimeoutError} when no reply arrives in
   *   time; {@link UntrustedHostError} when the socket is not one this
   *   user's host could have made.
   */
  static open(options: ConnectionOptions): Promise<Connection> {
    const decoder = new FrameDecoder(options.maxFrameBytes ?? MAX_HOST_FRAME);
    const untrusted = checkSocket(options.socketPath);
    if (untrusted !== null) return Promise.reject(new UntrustedHostError(options.socketPath, untrusted));
    return new Promise<Connection>((resolve, reject) => {
      let settled = false;
      let socketError: Error | undefined;
      const socket = net.createConnection({ path: options.socketPath });
      const limited = options.requestTimeoutMs > 0 && Number.isFinite(options.requestTimeoutMs);
      const timer = limited
        ? setTimeout(() => {
            fail(new RequestTimeoutError("the host's handshake reply", options.requestTimeoutMs));
          }, options.requestTimeoutMs)
        : undefined;
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        socket.off("data", onData);
        socket.off("error", onError);
        socket.off("close", onClose);
        socket.off("connect", onConnect);
      };
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        cleanup();
        socket.destroy();
        reject(error);
      };
      const onConnect = () => {
        const hello: Raw.Hello = { protocol: PROTOCOL_VERSION, revision: PROTOCOL_REVISION, encoding: "json", client: options.clientName };
        try {
          // A refused peer may find the socket closed while it writes; the
          // reply is still read, so write errors are left to `close`.
          socket.write(encodeFrame(Buffer.from(JSON.stringify(hello), "utf8"), MAX_HELLO_FRAME));
        } catch (error) {
          fail(error as Error);
        }
      };
      const onData = (chunk: Buffer) => {
        decoder.push(chunk);
        let payload: Uint8Array | undefined;
        try {
          payload = decoder.next();
        } catch (error) {
          fail(error as Error);
          return;
        }
        if (payload === undefined) return;
        let parsed: Raw.HandshakeReply;
        try {
          parsed = JSON.parse(Buffer.from(payload).toString("utf8"));
        } catch {
          fail(new FrameError("the host's handshake reply is not JSON"));
          return;
        }
        const reply = parsed !== null && typeof parsed === "object" ? parsed : undefined;
        if (reply !== undefined && "welcome" in reply && reply.welcome) {
          settled = true;
          cleanup();
          const body = reply.welcome;
          // A host from before revisions sends none: revision 1.
          const welcome: Welcome = { protocol: body.protocol, revision: body.revision ?? 1, host: body.host, encoding: body.encoding };
          resolve(new Connection(socket, decoder, welcome));
        } else if (reply !== undefined && "refused" in reply && reply.refused) {
          const refused = reply.refused;
          fail(
            new PanehostError(String(refused.code), String(refused.message), {
              refused: true,
              protocol: typeof refused.protocol === "number" ? refused.protocol : null,
            }),
          );
        } else {
          fail(new FrameError("the host's handshake reply is neither welcome nor refused"));
        }
      };
      const onError = (error: Error) => {
        socketError ??= error;
      };
      const onClose = () => {
        const where = socketError && (socketError as NodeJS.ErrnoException).code !== "EPIPE" ? `: ${socketError.message}` : "";
        fail(
          new ConnectionLostError(`cannot connect to the host at ${options.socketPath}${where}`, {
            cause: socketError,
          }),
        );
      };
      socket.on("connect", onConnect);
      socket.on("data", onData);
      socket.on("error", onError);
      socket.on("close", onClose);
    });
  }

  /** True once the connection closed. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Requests written and not answered yet. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Calls `listener` once when the connection closes, with the reason when
   * one is known (a socket or frame error, or the host's connection-level
   * error). Listeners run after every pending request and every sink has
   * been told.
   */
  onClose(listener: (error: Error | undefined) => void): void {
    if (this.closed) listener(this.closedWith);
    else this.closeListeners.push(listener);
  }

  /**
   * Writes a request and returns its id; `pending` learns what becomes of
   * it. The connection must be open.
   *
   * @throws {@link FrameError} when the request does not fit into a frame
   *   (nothing is written then).
   */
  send<K extends AnswerKind>(request: Raw.Request, pending: PendingRequest<K>): number {
    const id = this.nextId++;
    const message: Raw.RequestFrame = { id, request };
    const frame = encodeFrame(Buffer.from(JSON.stringify(message), "utf8"), MAX_CLIENT_FRAME);
    this.pending.set(id, {
      expect: pending.expect,
      // `dispatch` hands on only an answer of the kind `expect` names.
      answer: (content) => pending.answer(content as Answer<K>),
      error: (error) => pending.error(error),
      lost: (error) => pending.lost(error),
    });
    this.socket.write(frame);
    return id;
  }

  /** Forgets request `id`: its answer, when it comes, is dropped. */
  drop(id: number): void {
    this.pending.delete(id);
  }

  /** Routes the events of `subscription` to `sink`, until its `ended` event. */
  addSink<E>(subscription: number, sink: SubscriptionSink<E>): void {
    this.sinks.set(subscription, sink);
  }

  /** Closes the connection; pending requests and sinks are told it was lost. */
  close(): void {
    if (this.closed) return;
    this.socket.destroy();
    this.finish(undefined);
  }

  /** Handles every complete frame. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.closed) {
        let payload: Uint8Array | undefined;
        try {
          payload = this.decoder.next();
        } catch (error) {
          this.fail(error as Error);
          return;
        }
        if (payload === undefined) return;
        this.dispatch(payload);
      }
    } finally {
      this.pumping = false;
    }
  }

  private dispatch(payload: Uint8Array): void {
    let parsed: Raw.ServerMessage;
    try {
      parsed = JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("utf8"));
    } catch {
      this.fail(new FrameError("a frame from the host is not JSON"));
      return;
    }
    let message;
    try {
      message = tagged(parsed, "server message");
    } catch (error) {
      this.fail(error as Error);
      return;
    }
    switch (message.kind) {
      case "response": {
        const body = message.body;
        const entry = this.take(body.id);
        if (entry === undefined) break; // Dropped: timed out or aborted.
        let answer;
        try {
          answer = tagged(body.body, "response body");
        } catch (error) {
          entry.error(error as Error);
          break;
        }
        if (answer.kind !== entry.expect) {
          entry.error(new FrameError(`unexpected answer from the host: expected \`${entry.expect}\`, got \`${answer.kind}\``));
          break;
        }
        entry.answer(answer.body);
        break;
      }
      case "error": {
        const body = message.body;
        const error = new PanehostError(String(body.error?.code), String(body.error?.message), {
          limitation: body.error?.limitation ?? null,
          requestId: typeof body.id === "number" ? body.id : null,
        });
        if (typeof body.id === "number") {
          this.take(body.id)?.error(error);
        } else if (body.id === null || body.id === undefined) {
          // About the connection, not a request; the host may close next.
          this.connectionError = error;
        }
        break;
      }
      case "event": {
        const body = message.body;
        const sink = this.sinks.get(body.subscription);
        if (sink === undefined) break;
        let event: unknown;
        let name: string;
        try {
          name = tagged(body.event, "event").kind;
          event = sink.parse(body.event);
        } catch (error) {
          this.fail(error as Error);
          return;
        }
        if (name === "ended") this.sinks.delete(body.subscription);
        sink.event(event);
        break;
      }
      default:
        // A server message this client does not know (a newer host's): ignore it.
        break;
    }
  }

  private take(id: unknown): PendingRequest | undefined {
    if (typeof id !== "number") return undefined;
    const entry = this.pending.get(id);
    if (entry !== undefined) this.pending.delete(id);
    return entry;
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.socket.destroy();
    this.finish(error);
  }

  private lostError(): Error {
    if (this.closedWith instanceof FrameError) return this.closedWith;
    const cause = this.closedWith ?? this.connectionError ?? this.socketError;
    const detail = cause ? `: ${cause.message}` : "";
    return new ConnectionLostError(`the connection to the host closed${detail}`, { cause });
  }

  private finish(error: Error | undefined): void {
    if (this.closed) return;
    // Frames received before the close are still handed on: they are
    // valid and nothing else could deliver them.
    this.pump();
    if (this.closed) return; // A frame error closed it meanwhile.
    this.closed = true;
    this.closedWith = error ?? this.connectionError ?? this.socketError;
    const lost = this.lostError();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const entry of pending) entry.lost(lost);
    const sinks = [...this.sinks.values()];
    this.sinks.clear();
    for (const sink of sinks) sink.lost(lost);
    for (const listener of this.closeListeners.splice(0)) listener(this.closedWith);
  }
}
