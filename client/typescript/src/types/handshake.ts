/**
 * The host's welcome, and the codes of its errors and limitations
 * (section 10).
 *
 * @module
 */

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
