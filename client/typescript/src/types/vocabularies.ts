/**
 * The open vocabularies of the protocol: string fields whose values come
 * from a known list that a newer host may extend (PROTOCOL.md section 4,
 * "JSON outside the socket"). Each is a literal union of the values this
 * client's revision knows, with an open fallback, `(string & {})`: the
 * literals complete and narrow, and a value a newer host adds still
 * type-checks. Treat a value you do not know as each type's documentation
 * says.
 *
 * Generated from docs/protocol.schema.json (its `x-open-vocabulary`
 * definitions), through `protocol.generated.ts`.
 *
 * @module
 */

export type {
  Activity,
  CompletionSource,
  EndReason,
  ErrorCode,
  Evidence,
  FloorStatus,
  InterruptAction,
  InterruptOutcome,
  LimitationCode,
  LoginForm,
  NotifyEvent,
  PermissionProfile,
  Readiness,
  ReadinessGate,
  ReleaseReason,
  RestoredBy,
  ResumeMode,
  SignIn,
  SweepMethod,
  TurnSource,
  UsageKind,
} from "../protocol.generated.js";
