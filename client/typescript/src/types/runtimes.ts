/**
 * The runtimes a host can start (`runtimes`), and their completion
 * receipts (`probe_runtime`).
 *
 * @module
 */

import type { CompletionSource, Evidence, FloorStatus, LimitationCode, LoginForm, PermissionProfile, Readiness, ReadinessGate, ResumeMode, SignIn } from "./vocabularies.js";

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
  resume_modes: ResumeMode[];
  /** Declared limitation codes (see {@link LimitationCode}). */
  limitations: LimitationCode[];
  /** SHA-256 of the executable (lowercase hex), when identified. */
  sha256: string | null;
  /** The oldest version the adapter's flags are known to hold for. */
  version_floor: string | null;
  /** `at_or_above`, `below` or `indeterminate`; `null` until detected. */
  floor_status: FloorStatus | null;
  /**
   * `ready`, `not_ready` or `reduced` (its version could not be read: it
   * starts, with resume and permission profiles withheld from a start that
   * requires readiness).
   */
  readiness: Readiness;
  /** The first gate that stops (or reduces) it: `supported`, `installed`, `version`, `sign_in`, `receipt`. */
  readiness_gate: ReadinessGate | null;
  /** Why that gate stops or reduces it. */
  readiness_reason: string | null;
  /** `signed_in`, `signed_out`, `unobservable` or `not_required`. */
  sign_in: SignIn;
  /** What the sign-in reading rests on; never a secret. */
  sign_in_detail: string | null;
  /** The last completion receipt taken (see {@link Client.probeRuntime}), passed or not; `null` when none was. */
  receipt: Receipt | null;
  /** Whether the last completion receipt counts now (passed, same executable, under 24 hours old). */
  receipt_valid: boolean;
  /** How the end of a turn is observed, such as `hook` or `unobserved`. */
  completion: CompletionSource;
  /** How a user signs in: `in_terminal`, `outside_terminal` or `not_required`. */
  login: LoginForm;
  /** Where the adapter's flags come from, such as `captured_help`. */
  evidence: Evidence;
  /**
   * The permission profiles it enforces (`read_only`, `workspace_write`,
   * `full_access`); empty when it enforces none. A start asking for
   * another is refused unless it accepts a weaker boundary.
   */
  permission_profiles: PermissionProfile[];
  /**
   * What a start naming no profile gets (protocol revision 7): the host's
   * default, `workspace_write`, when the runtime enforces it; `null` when
   * it does not (the CLI's own defaults), and from an older host.
   */
  default_permission_profile: PermissionProfile | null;
  /**
   * Set when the installed version is one the runtime's adapter refuses
   * (revision 7): readiness is `not_ready` at the `version` gate, and a
   * start is refused with `OPERATION_UNSUPPORTED` and limitation
   * `VERSION_REFUSED` unless it sets `allow_refused_version`.
   */
  version_refused: VersionRefusal | null;
  /** The installed package it runs from, such as `pypi kimi-cli 1.50.0` (revision 7). */
  package: string | null;
  /**
   * What a receipt is bound to (revision 7): SHA-256 over the executable,
   * its version and its installed package's files.
   */
  fingerprint: string | null;
}

/** A range of versions an adapter refuses, and why (protocol revision 7). */
export interface VersionRefusal {
  /** The first version refused. */
  from: string;
  /** The first version no longer refused; `null`: every later one is. */
  before: string | null;
  /** Why, for people. */
  reason: string;
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
  /**
   * The runtime's fingerprint when it was taken (revision 7): a different
   * one, or none, voids the receipt. `null` from an older host.
   */
  fingerprint: string | null;
  /** When the receipt was taken, in milliseconds since the Unix epoch. */
  taken_at_ms: number;
  /** How long the one-shot run took, in milliseconds. */
  elapsed_ms: number;
  /** Whether the read-only boundary held the run (`false` when a weaker one was accepted). */
  read_only_enforced: boolean;
}
