/**
 * Conversions between the JSON encoding and the types of `types.ts`:
 * externally tagged enums become `kind` unions and base64 strings become
 * bytes.
 *
 * The JSON is typed by `protocol.generated.ts`, generated from the
 * protocol's JSON Schema, so that a field renamed or retyped in the host's
 * wire types fails the build here. What the types do not say, the code
 * still tolerates, as PROTOCOL.md section 11 asks of clients: fields it
 * does not know are ignored, and an enum variant it does not know (a newer
 * host's) reaches the `default` branch of its `switch`.
 *
 * @module
 * @internal
 */

import { FrameError } from "./errors.js";
import type * as Raw from "./protocol.generated.js";
import type { InterruptReport, PaneSweep, TurnReport, Usage, WaitMatch } from "./types/answers.js";
import type { PaneEvent, StreamStart, Subscription } from "./types/events.js";
import type {
  ExitStatus,
  PaneDetail,
  PaneHistory,
  PaneState,
  PaneSummary,
  ScreenSnapshot,
  Size,
} from "./types/pane.js";
import type { Receipt, RuntimeInfo } from "./types/runtimes.js";
import type { WatchEvent, Watching } from "./types/watch.js";

/**
 * The names of the variants of an externally tagged enum `T`: the strings
 * of its unit variants and the single keys of its other variants.
 */
export type VariantName<T> = T extends string ? T : T extends object ? keyof T & string : never;

/**
 * The content of variant `K` of the enum `T` (of each, for a union of
 * names); `{}` for a unit variant.
 */
export type VariantBody<T, K extends VariantName<T>> = K extends unknown ? BodyOf<T, K> : never;

type BodyOf<T, K extends string> = T extends string
  ? T extends K
    ? Record<string, never>
    : never
  : T extends { [key in K]: infer B }
    ? B
    : never;

/** One variant of the enum `T`: its name and its content, a union discriminated by `kind`. */
export type Variant<T> = { [K in VariantName<T>]: { kind: K; body: VariantBody<T, K> } }[VariantName<T>];

/** The name of an answer to a request, such as `started`. */
export type AnswerKind = VariantName<Raw.Response>;

/** The content of the answer named `K`, such as a `PaneSummary` for `started`. */
export type Answer<K extends AnswerKind> = VariantBody<Raw.Response, K>;

/**
 * A variant none of the enum's names match: one a newer host added. A
 * `switch` over {@link Variant.kind} reaches its `default` branch with it,
 * where the types say `never`; this names it again.
 */
export interface UnknownVariant {
  /** The variant's name on the wire. */
  kind: string;
  /** Its content, unconverted. */
  body: unknown;
}

/** The variant a `switch` did not know, as what it is at run time. */
export function unknownVariant(variant: never): UnknownVariant {
  return variant;
}

/** Decodes a standard base64 string into fresh bytes. */
export function fromBase64(text: string): Uint8Array {
  const buffer = Buffer.from(text, "base64");
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength).slice();
}

/** Encodes bytes as standard base64 with padding. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/**
 * The variant of an externally tagged enum value: a unit variant's string,
 * or an object's single key, and its content.
 *
 * @throws {@link FrameError} when the value is neither.
 */
export function tagged<T>(value: T, what: string): Variant<T> {
  if (typeof value === "string") return { kind: value, body: {} } as Variant<T>;
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1) {
      const kind = keys[0]!;
      return { kind, body: (value as Record<string, unknown>)[kind] } as Variant<T>;
    }
  }
  throw new FrameError(`malformed ${what}: ${JSON.stringify(value)?.slice(0, 200)}`);
}

function size(raw: Raw.Size): Size {
  return { cols: raw.cols, rows: raw.rows };
}

function exitStatus(raw: Raw.ExitStatus): ExitStatus {
  return { code: raw.code, signal: raw.signal ?? null };
}

function paneState(raw: Raw.PaneState): PaneState {
  const state = tagged(raw, "pane state");
  switch (state.kind) {
    case "exited":
      return { kind: "exited", status: exitStatus(state.body) };
    case "running":
      return { kind: "running" };
    default:
      // A state this client does not know: the pane is there, so running.
      return { kind: "running" };
  }
}

/** A `PaneSummary` from its JSON. */
export function paneSummary(raw: Raw.PaneSummary): PaneSummary {
  return {
    id: raw.id,
    runtime: raw.runtime,
    generation: raw.generation,
    state: paneState(raw.state),
    pid: raw.pid,
    size: size(raw.size),
    offset: raw.offset,
    cwd: raw.cwd,
    title: raw.title,
    created_at_ms: raw.created_at_ms,
    activity: raw.activity ?? "unknown",
    restored_by: raw.restored_by ?? "",
    completion: raw.completion ?? "",
    labels: stringMap(raw.labels),
  };
}

/** A map of strings from its JSON; `{}` when absent. */
function stringMap(raw: { [name: string]: string | undefined } | undefined): Record<string, string> {
  const map: Record<string, string> = {};
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return map;
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value === "string") map[name] = value;
  }
  return map;
}

/** A `ScreenSnapshot` from its JSON. */
export function screenSnapshot(raw: Raw.ScreenSnapshot): ScreenSnapshot {
  return {
    offset: raw.offset,
    size: size(raw.size),
    text: raw.text,
    formatted: fromBase64(raw.formatted ?? ""),
    cursor: { row: raw.cursor.row, col: raw.cursor.col, visible: raw.cursor.visible },
    title: raw.title,
    alternate_screen: raw.alternate_screen,
    modes: {
      bracketed_paste: raw.modes.bracketed_paste,
      mouse: raw.modes.mouse,
      application_keypad: raw.modes.application_keypad,
      application_cursor: raw.modes.application_cursor,
    },
    trimmed: raw.trimmed ?? false,
  };
}

/** A `PaneDetail` from its JSON. */
export function paneDetail(raw: Raw.PaneDetail): PaneDetail {
  return { pane: paneSummary(raw.pane), screen: screenSnapshot(raw.screen) };
}

/** A `PaneHistory` from its JSON. */
export function paneHistory(raw: Raw.PaneHistory): PaneHistory {
  return { pane: raw.pane, from: raw.from, to: raw.to, text: raw.text, truncated: raw.truncated };
}

/** A `RuntimeInfo` from its JSON (absent optional fields become `null`). */
export function runtimeInfo(raw: Raw.RuntimeInfo): RuntimeInfo {
  return {
    id: raw.id,
    display_name: raw.display_name,
    supported: raw.supported,
    available: raw.available,
    path: raw.path ?? null,
    version: raw.version ?? null,
    unavailable_reason: raw.unavailable_reason ?? null,
    resume_modes: raw.resume_modes ?? [],
    limitations: raw.limitations ?? [],
    sha256: raw.sha256 ?? null,
    version_floor: raw.version_floor ?? null,
    floor_status: raw.floor_status ?? null,
    readiness: raw.readiness ?? "",
    readiness_gate: raw.readiness_gate ?? null,
    readiness_reason: raw.readiness_reason ?? null,
    sign_in: raw.sign_in ?? "",
    sign_in_detail: raw.sign_in_detail ?? null,
    receipt: raw.receipt == null ? null : receipt(raw.receipt),
    receipt_valid: raw.receipt_valid ?? false,
    completion: raw.completion ?? "",
    login: raw.login ?? "",
    evidence: raw.evidence ?? "",
    permission_profiles: raw.permission_profiles ?? [],
    default_permission_profile: raw.default_permission_profile ?? null,
    version_refused:
      raw.version_refused == null
        ? null
        : { from: raw.version_refused.from, before: raw.version_refused.before ?? null, reason: raw.version_refused.reason },
    package: raw.package ?? null,
    fingerprint: raw.fingerprint ?? null,
  };
}

/** An `InterruptReport` (the `interrupted` answer) from its JSON. */
export function interruptReport(raw: Raw.InterruptReport): InterruptReport {
  return {
    pane: raw.pane,
    outcome: raw.outcome,
    steps: (raw.steps ?? []).map((step) => ({ action: step.action, detail: step.detail, at_ms: step.at_ms })),
    sweep: paneSweep(raw.sweep),
  };
}

/** A `PaneSweep` (in the `interrupted` and `closed` answers) from its JSON; `null` when the host sent none. */
export function paneSweep(raw: Raw.PaneSweep | null | undefined): PaneSweep | null {
  if (raw === null || raw === undefined) return null;
  return { method: raw.method, ended: raw.ended, survivors: [...(raw.survivors ?? [])] };
}

/** A `Receipt` (the `receipt` answer, or `RuntimeInfo.receipt`) from its JSON. */
export function receipt(raw: Raw.Receipt): Receipt {
  return {
    runtime: raw.runtime,
    passed: raw.passed,
    detail: raw.detail,
    path: raw.path,
    version: raw.version ?? null,
    sha256: raw.sha256,
    fingerprint: raw.fingerprint ?? null,
    taken_at_ms: raw.taken_at_ms,
    elapsed_ms: raw.elapsed_ms,
    read_only_enforced: raw.read_only_enforced,
  };
}

/** A `Usage` from its JSON (absent numbers become `null`; an absent usage is `unavailable`). */
export function usage(raw: Raw.Usage | undefined): Usage {
  return {
    kind: raw?.kind ?? "unavailable",
    input_tokens: raw?.input_tokens ?? null,
    output_tokens: raw?.output_tokens ?? null,
    cost_micro_usd: raw?.cost_micro_usd ?? null,
  };
}

/** A `TurnReport` (the `answered` answer) from its JSON. */
export function turnReport(raw: Raw.TurnReport): TurnReport {
  return {
    source: raw.source,
    started_offset: raw.started_offset,
    completed_offset: raw.completed_offset,
    duration_ms: raw.duration_ms,
    added_text: raw.added_text,
    usage: usage(raw.usage),
    exit_code: raw.exit_code ?? null,
  };
}

/** A `StreamStart` from its JSON. */
export function streamStart(raw: Raw.StreamStart): StreamStart {
  const start = tagged(raw, "stream start");
  switch (start.kind) {
    case "replay":
      return { kind: "replay", from: start.body.from };
    case "snapshot":
      return { kind: "snapshot", snapshot: screenSnapshot(start.body.snapshot), skipped_from: start.body.skipped_from ?? null };
    case "generation_changed":
      return { kind: "generation_changed", previous: start.body.previous, snapshot: screenSnapshot(start.body.snapshot) };
    default:
      // Where the output would begin is unknown: the stream cannot go on.
      throw new FrameError(`unknown stream start \`${unknownVariant(start).kind}\``);
  }
}

/** A `Subscription` (the `subscribed` answer) from its JSON. */
export function subscription(raw: Raw.Subscription): Subscription {
  return {
    subscription: raw.subscription,
    pane: raw.pane,
    generation: raw.generation,
    start: streamStart(raw.start),
  };
}

/** An event from its JSON; one this client does not know becomes an `other` event. */
export function paneEvent(raw: Raw.Event): PaneEvent {
  const event = tagged(raw, "event");
  switch (event.kind) {
    case "output":
      return { kind: "output", offset: event.body.offset, data: fromBase64(event.body.data) };
    case "resync":
      return { kind: "resync", skipped_from: event.body.skipped_from, snapshot: screenSnapshot(event.body.snapshot) };
    case "resized":
      return { kind: "resized", size: size(event.body.size) };
    case "exited":
      return { kind: "exited", status: exitStatus(event.body.status), offset: event.body.offset };
    case "ended":
      return { kind: "ended", reason: event.body.reason };
    case "turn_started":
      return { kind: "turn_started", offset: event.body.offset, source: event.body.source };
    case "turn_completed":
      return {
        kind: "turn_completed",
        offset: event.body.offset,
        source: event.body.source,
        usage: usage(event.body.usage),
        exit_code: event.body.exit_code ?? null,
      };
    case "awaiting_input":
    case "approval_requested":
      return { kind: event.kind, offset: event.body.offset, source: event.body.source, detail: event.body.detail ?? "" };
    case "pane_started":
    case "pane_activity":
    case "pane_changed":
    case "pane_exited":
    case "pane_ended":
    case "pane_list":
      // Events of a watch, not of a pane's subscription.
      return { kind: "other", name: event.kind, body: event.body };
    default: {
      const other = unknownVariant(event);
      return { kind: "other", name: other.kind, body: other.body };
    }
  }
}

/** A `Watching` (the `watching` answer) from its JSON. */
export function watching(raw: Answer<"watching">): Watching {
  return { subscription: raw.subscription, panes: (raw.panes ?? []).map(paneSummary) };
}

/** An event of a watch from its JSON; one this client does not know becomes an `other` event. */
export function watchEvent(raw: Raw.Event): WatchEvent {
  const event = tagged(raw, "event");
  switch (event.kind) {
    case "pane_started":
      return { kind: "pane_started", pane: paneSummary(event.body.pane) };
    case "pane_activity":
      return { kind: "pane_activity", pane: event.body.pane, activity: event.body.activity ?? "unknown" };
    case "pane_changed":
      return { kind: "pane_changed", pane: event.body.pane, size: size(event.body.size), title: event.body.title ?? "" };
    case "pane_exited":
      return { kind: "pane_exited", pane: event.body.pane, status: exitStatus(event.body.status) };
    case "pane_ended":
      return { kind: "pane_ended", pane: event.body.pane, reason: event.body.reason ?? "" };
    case "pane_list":
      return { kind: "pane_list", panes: (event.body.panes ?? []).map(paneSummary), missed: event.body.missed ?? 0 };
    case "ended":
      return { kind: "ended", reason: event.body.reason };
    case "output":
    case "resync":
    case "resized":
    case "exited":
    case "turn_started":
    case "turn_completed":
    case "awaiting_input":
    case "approval_requested":
      // Events of a pane's subscription, not of a watch.
      return { kind: "other", name: event.kind, body: event.body };
    default: {
      const other = unknownVariant(event);
      return { kind: "other", name: other.kind, body: other.body };
    }
  }
}

/** A `WaitMatch` (the `waited` answer) from its JSON. */
export function waitMatch(raw: Raw.WaitMatch): WaitMatch {
  return { pane: raw.pane, target: raw.target, offset: raw.offset, matched: raw.matched };
}
