/**
 * What a client is configured with: the options of {@link connect}, their
 * defaults, and the host's socket path by the protocol's rules.
 *
 * @module
 */

import * as os from "node:os";
import * as path from "node:path";
import type { RemoteOptions } from "./remote_target.js";
import { DEFAULT_RECONNECT_POLICY, type ReconnectPolicy } from "./shared.js";
import { DEFAULT_MAX_BUFFERED_EVENTS } from "./stream.js";

/** The version of this package, sent in the default client name. */
export const CLIENT_VERSION = "0.1.0";

/** Streams a client may have open at once by default: the host's default number of subscriptions per connection. */
export const DEFAULT_MAX_SUBSCRIPTIONS = 1024;

/** The default request timeout: 60 seconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** Options of {@link connect}. */
export interface ConnectOptions {
  /** The host's socket. Default: {@link defaultSocketPath}. */
  socketPath?: string;
  /** A free-form name for the host's log. Default `@panehost/client/<version>`. */
  clientName?: string;
  /**
   * How long to wait for the handshake and, by default, for each answer,
   * in milliseconds; `0` waits forever. Default 60000. A call's own
   * `deadlineMs` overrides it for that call.
   */
  requestTimeoutMs?: number;
  /**
   * How the client reconnects when its connection to the host is lost;
   * fields left out take {@link DEFAULT_RECONNECT_POLICY} (50 ms doubling
   * to 1 s, for 10 s). `false` never reconnects: a lost connection closes
   * the client, as {@link Client.disconnect} does.
   */
  reconnect?: Partial<ReconnectPolicy> | false;
  /** Events each stream (and each watch) buffers before it lets go of its subscription. Default 256. */
  maxBufferedEvents?: number;
  /**
   * Streams and watches this client may have open at once (they share its
   * one connection, and the host allows a connection 1,024 subscriptions
   * by default). One more is refused with a {@link PanehostError} whose
   * code is `LIMIT_REACHED`. Default 1024; keep it at most the host's
   * `PANEHOST_MAX_SUBSCRIPTIONS`.
   */
  maxSubscriptions?: number;
  /**
   * The host of this user on another machine, reached through OpenSSH:
   * the client runs `ssh DEST panehost up` to learn the host's socket there
   * (starting the host when none answers), then
   * `ssh -L LOCAL:REMOTE DEST exec panehost up --hold` to forward it to a
   * socket in a new private directory inside the directory of
   * `socketPath` (by default this user's own socket directory), and
   * connects there. A connection that fails through the forward ends that
   * ssh and opens a new one; streams resume exactly where they were.
   * Every value is checked first ({@link RemoteTargetError}); ssh's own
   * failures reject with a {@link RemoteError}. See docs/TYPESCRIPT.md.
   */
  remote?: RemoteOptions;
}

/** The options of a {@link Client} with every default filled in. */
export interface ResolvedOptions {
  /** The socket path. */
  socketPath: string;
  /** The client name sent in the `Hello`. */
  clientName: string;
  /** The request timeout in milliseconds; `0` waits forever. */
  requestTimeoutMs: number;
  /** The reconnect policy; `false` never reconnects. */
  reconnect: ReconnectPolicy | false;
  /** Events each stream and watch buffers before it lets go of its subscription. */
  maxBufferedEvents: number;
  /** Streams and watches the client may have open at once. */
  maxSubscriptions: number;
}

/**
 * Every option of `options` given, or its default: the socket path by
 * {@link defaultSocketPath}, the reconnect policy's missing fields from
 * {@link DEFAULT_RECONNECT_POLICY}.
 */
export function resolveOptions(options: ConnectOptions): ResolvedOptions {
  return {
    socketPath: options.socketPath ?? defaultSocketPath(),
    clientName: options.clientName ?? `@panehost/client/${CLIENT_VERSION}`,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    reconnect:
      options.reconnect === false ? false : { ...DEFAULT_RECONNECT_POLICY, ...stripUndefined(options.reconnect ?? {}) },
    maxBufferedEvents: options.maxBufferedEvents ?? DEFAULT_MAX_BUFFERED_EVENTS,
    maxSubscriptions: options.maxSubscriptions ?? DEFAULT_MAX_SUBSCRIPTIONS,
  };
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

/** `value` without its fields that are `undefined`, so that they do not hide defaults when spread. */
function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
