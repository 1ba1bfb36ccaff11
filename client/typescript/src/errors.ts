/**
 * The errors this client rejects with.
 *
 * - {@link PanehostError}: the host answered with a structured error
 *   (`UNKNOWN_PANE`, ...) or refused the handshake (`PROTOCOL_MISMATCH`, ...).
 *   Match on `code`.
 * - {@link ConnectionLostError}: the connection could not be made, or closed
 *   before the answer arrived. A new connection may succeed.
 * - {@link RequestTimeoutError}: no answer within the call's timeout.
 * - {@link AbortError}: the call's `AbortSignal` was aborted.
 * - {@link FrameError}: a frame broke the framing rules (a length prefix over
 *   the limit, a payload that is not a message); the connection is closed.
 * - {@link HostRevisionError}: the call needs a newer protocol revision than
 *   the host speaks; nothing was sent.
 * - {@link RemoteTargetError}: a value of the `remote` option was refused;
 *   nothing was run.
 * - {@link RemoteError}: ssh could not reach the host of the other machine
 *   (`reason` says why).
 *
 * @module
 */

import type { ErrorCode, LimitationCode } from "./types/vocabularies.js";

/**
 * An error the host reported: the answer to a request, a connection-level
 * error (`requestId` is `null`), or a refused handshake (`refused` is true,
 * and `protocol` names the host's version).
 *
 * `code` is one of the protocol's error codes ({@link ErrorCode}); the host
 * may add codes, so treat an unknown one as a generic failure and show
 * `message`.
 */
export class PanehostError extends Error {
  /** The stable error code, such as `UNKNOWN_PANE`. Match on this. */
  readonly code: ErrorCode;
  /** For `OPERATION_UNSUPPORTED`, the limitation code that explains it; otherwise `null`. */
  readonly limitation: LimitationCode | null;
  /** The id of the request answered, or `null` for a connection-level error or a refusal. */
  readonly requestId: number | null;
  /** True when the host refused the handshake. */
  readonly refused: boolean;
  /** For a refused handshake, the protocol version the host speaks. */
  readonly protocol: number | null;

  /** Builds an error from the host's fields. */
  constructor(
    code: ErrorCode,
    message: string,
    options: { limitation?: LimitationCode | null; requestId?: number | null; refused?: boolean; protocol?: number | null } = {},
  ) {
    super(message);
    this.name = "PanehostError";
    this.code = code;
    this.limitation = options.limitation ?? null;
    this.requestId = options.requestId ?? null;
    this.refused = options.refused ?? false;
    this.protocol = options.protocol ?? null;
  }
}

/**
 * The connection to the host could not be made or was lost before the
 * answer arrived. `cause` holds the underlying error when there was one
 * (a socket error, or a connection-level {@link PanehostError} such as
 * `FRAME_TOO_LARGE`). Trying again on a new connection may succeed.
 *
 * `requestSent` tells whether the request had been written to the host:
 * when it had, the host may have carried it out (a `send` may have been
 * typed, a `start` may have started a pane) and only its answer was lost;
 * when it had not, nothing of it reached the host.
 */
export class ConnectionLostError extends Error {
  /** True when the request had been written to the host, which may have carried it out. */
  readonly requestSent: boolean;

  /** Builds the error. */
  constructor(message: string, options?: { cause?: unknown; requestSent?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ConnectionLostError";
    this.requestSent = options?.requestSent ?? false;
  }
}

/**
 * The call's `AbortSignal` was aborted before the answer arrived (or
 * before the call began). The client stopped waiting; a request already
 * written to the host may still be carried out there (a `send` typed, an
 * `ask` submitted and its turn run to its end): the protocol has no way to
 * call a request back. `cause` is the signal's `reason`.
 *
 * Like the errors of Node.js's own APIs, its `name` is `"AbortError"` and
 * its `code` is `"ABORT_ERR"`.
 */
export class AbortError extends Error {
  /** `"ABORT_ERR"`, as Node.js's own abort errors carry. */
  readonly code = "ABORT_ERR";

  /** Builds the error; `reason` is the signal's reason. */
  constructor(reason?: unknown, message = "the operation was aborted") {
    super(message, reason === undefined ? undefined : { cause: reason });
    this.name = "AbortError";
  }
}

/**
 * The socket is not one this user's host could have made, so nothing was
 * sent to it: its directory is not private to the user (owned by them,
 * mode 0700, not a symbolic link), or the socket file belongs to another
 * user. Another local user may be listening there. Not a lost connection:
 * trying again will not help until the path is fixed.
 */
export class UntrustedHostError extends Error {
  /** The socket path. */
  readonly socketPath: string;

  /** Builds the error. */
  constructor(socketPath: string, reason: string) {
    super(`refusing to talk to the host at ${socketPath}: ${reason}`);
    this.name = "UntrustedHostError";
    this.socketPath = socketPath;
  }
}

/**
 * No answer arrived within the call's deadline (its `deadlineMs`, or the
 * client's `requestTimeoutMs`). The client stopped waiting; a request
 * already written to the host may still be carried out there.
 */
export class RequestTimeoutError extends Error {
  /** How long was waited, in milliseconds: the call's deadline. */
  readonly deadlineMs: number;

  /** Builds the error. */
  constructor(what: string, deadlineMs: number) {
    super(`timed out after ${deadlineMs} ms waiting for ${what}`);
    this.name = "RequestTimeoutError";
    this.deadlineMs = deadlineMs;
  }
}

/**
 * The call needs something a later protocol revision added (PROTOCOL.md
 * section 11), and the host speaks an older one: such a host would ignore
 * a request field it does not know (labels would be dropped, a `list`
 * filter would list every pane) or refuse a request it does not know. So
 * the client sends nothing and rejects with this. Upgrade the host, or
 * leave the newer option out.
 */
export class HostRevisionError extends Error {
  /** What needs the newer revision, such as `watch` or `start with labels`. */
  readonly feature: string;
  /** The revision it needs. */
  readonly needed: number;
  /** The revision the host speaks (its `welcome.revision`). */
  readonly hostRevision: number;

  /** Builds the error. */
  constructor(feature: string, needed: number, hostRevision: number) {
    super(`${feature} needs protocol revision ${needed}; the host speaks revision ${hostRevision}, so nothing was sent`);
    this.name = "HostRevisionError";
    this.feature = feature;
    this.needed = needed;
    this.hostRevision = hostRevision;
  }
}

/**
 * A frame broke the framing rules: a length prefix beyond the limit (the
 * stream is corrupt; nothing of that size is read or allocated), a payload
 * that is not a message, or a request too large to send.
 */
export class FrameError extends Error {
  /** Builds the error. */
  constructor(message: string) {
    super(message);
    this.name = "FrameError";
  }
}

/**
 * A value of the `remote` option of `connect` that cannot be used, and why. Nothing was
 * run: every value is checked before it reaches ssh's command line.
 */
export class RemoteTargetError extends Error {
  /** The option that was refused, such as `destination`. */
  readonly field: string;

  /** Builds the error. */
  constructor(field: string, message: string) {
    super(message);
    this.name = "RemoteTargetError";
    this.field = field;
  }
}

/**
 * Why a {@link RemoteError} happened:
 *
 * - `ssh_missing`: the ssh program cannot be run here;
 * - `host_key`: ssh refused the machine's host key (unknown or changed);
 * - `permission_denied`: ssh could not sign in (only keys and agents work: no prompt is shown);
 * - `ssh_failed`: ssh failed otherwise (exit status 255: no route, refused, the link dropped);
 * - `remote_program_missing`: the remote program was not found there (exit status 127);
 * - `remote_program_not_executable`: it cannot be run there (exit status 126);
 * - `remote_outdated`: the panehost there has no `up` command (it is older than this client);
 * - `remote_failed`: `panehost up` there failed with another exit status, or named no usable socket;
 * - `timeout`: no answer within `readyTimeoutMs`;
 * - `local_dir`: the local end of the forward cannot be made (its directory is not private, or too long a path);
 * - `forward_refused`: the other side's sshd would not connect the forwarded socket.
 */
export type RemoteErrorReason =
  | "ssh_missing"
  | "host_key"
  | "permission_denied"
  | "ssh_failed"
  | "remote_program_missing"
  | "remote_program_not_executable"
  | "remote_outdated"
  | "remote_failed"
  | "timeout"
  | "local_dir"
  | "forward_refused";

/**
 * ssh could not reach the host of the other machine: see `reason`. When
 * `transient` is true (the link dropped, no answer in time) a new attempt
 * may succeed, and the client's reconnecting tries again within its
 * policy; otherwise something must be fixed first, as the message says.
 */
export class RemoteError extends Error {
  /** The ssh destination. */
  readonly destination: string;
  /** What went wrong. */
  readonly reason: RemoteErrorReason;
  /** True when trying again may help. */
  readonly transient: boolean;
  /** ssh's exit status, when it ended with one. */
  readonly exitCode: number | null;

  /** Builds the error. */
  constructor(destination: string, reason: RemoteErrorReason, message: string, options: { transient?: boolean; exitCode?: number | null } = {}) {
    super(`${destination}: ${message}`);
    this.name = "RemoteError";
    this.destination = destination;
    this.reason = reason;
    this.transient = options.transient ?? false;
    this.exitCode = options.exitCode ?? null;
  }
}

/**
 * True when `error` means the connection was lost or could not be made, so
 * that a new connection may succeed: {@link ConnectionLostError} and
 * {@link RequestTimeoutError}, and a {@link RemoteError} whose `transient`
 * is true (the ssh link dropped or did not answer in time). Answers of the
 * host ({@link PanehostError}) are not.
 */
export function isConnectionLost(error: unknown): boolean {
  return (
    error instanceof ConnectionLostError ||
    error instanceof RequestTimeoutError ||
    (error instanceof RemoteError && error.transient)
  );
}
