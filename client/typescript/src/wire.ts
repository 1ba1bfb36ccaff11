/**
 * Conversions between the JSON encoding and the types of `types.ts`:
 * externally tagged enums become `kind` unions and base64 strings become
 * bytes. Unknown fields are ignored, as PROTOCOL.md asks of clients.
 *
 * @module
 * @internal
 */

import { FrameError } from "./errors.js";
import type {
  ExitStatus,
  InterruptReport,
  PaneDetail,
  PaneEvent,
  PaneHistory,
  PaneState,
  PaneSummary,
  Receipt,
  RuntimeInfo,
  ScreenSnapshot,
  Size,
  StreamStart,
  Subscription,
  TurnReport,
  Usage,
  WaitMatch,
  WatchEvent,
  Watching,
} from "./types.js";

type Json = any;

/** Decodes a standard base64 string into fresh bytes. */
export function fromBase64(text: string): Uint8Array {
  const buffer = Buffer.from(text, "base64");
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength).slice();
}

/** Encodes bytes as standard base64 with padding. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** The single key of an externally tagged enum value, and its content. */
export function tagged(value: Json, what: string): [string, Json] {
  if (typeof value === "string") return [value, {}];
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1) return [keys[0]!, value[keys[0]!]];
  }
  throw new FrameError(`malformed ${what}: ${JSON.stringify(value)?.slice(0, 200)}`);
}

function size(raw: Json): Size {
  return { cols: raw.cols, rows: raw.rows };
}

function exitStatus(raw: Json): ExitStatus {
  return { code: raw.code, signal: raw.signal ?? null };
}

function paneState(raw: Json): PaneState {
  const [kind, body] = tagged(raw, "pane state");
  if (kind === "exited") return { kind: "exited", status: exitStatus(body) };
  return { kind: "running" };
}

/** A `PaneSummary` from its JSON. */
export function paneSummary(raw: Json): PaneSummary {
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
function stringMap(raw: Json): Record<string, string> {
  const map: Record<string, string> = {};
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return map;
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value === "string") map[name] = value;
  }
  return map;
}

/** A `ScreenSnapshot` from its JSON. */
export function screenSnapshot(raw: Json): ScreenSnapshot {
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
  };
}

/** A `PaneDetail` from its JSON. */
export function paneDetail(raw: Json): PaneDetail {
  return { pane: paneSummary(raw.pane), screen: screenSnapshot(raw.screen) };
}

/** A `PaneHistory` from its JSON. */
export function paneHistory(raw: Json): PaneHistory {
  return { pane: raw.pane, from: raw.from, to: raw.to, text: raw.text, truncated: raw.truncated };
}

/** A `RuntimeInfo` from its JSON (absent optional fields become `null`). */
export function runtimeInfo(raw: Json): RuntimeInfo {
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
    readiness: raw.readiness,
    readiness_gate: raw.readiness_gate ?? null,
    readiness_reason: raw.readiness_reason ?? null,
    sign_in: raw.sign_in,
    sign_in_detail: raw.sign_in_detail ?? null,
    receipt: raw.receipt == null ? null : receipt(raw.receipt),
    receipt_valid: raw.receipt_valid ?? false,
    completion: raw.completion,
    login: raw.login,
    evidence: raw.evidence,
    permission_profiles: raw.permission_profiles ?? [],
  };
}

/** An `InterruptReport` (the `interrupted` answer) from its JSON. */
export function interruptReport(raw: Json): InterruptReport {
  return {
    pane: raw.pane,
    outcome: raw.outcome,
    steps: (raw.steps ?? []).map((step: Json) => ({ action: step.action, detail: step.detail, at_ms: step.at_ms })),
  };
}

/** A `Receipt` (the `receipt` answer, or `RuntimeInfo.receipt`) from its JSON. */
export function receipt(raw: Json): Receipt {
  return {
    runtime: raw.runtime,
    passed: raw.passed,
    detail: raw.detail,
    path: raw.path,
    version: raw.version ?? null,
    sha256: raw.sha256,
    taken_at_ms: raw.taken_at_ms,
    elapsed_ms: raw.elapsed_ms,
    read_only_enforced: raw.read_only_enforced,
  };
}

/** A `Usage` from its JSON (absent numbers become `null`; an absent usage is `unavailable`). */
export function usage(raw: Json): Usage {
  return {
    kind: raw?.kind ?? "unavailable",
    input_tokens: raw?.input_tokens ?? null,
    output_tokens: raw?.output_tokens ?? null,
    cost_micro_usd: raw?.cost_micro_usd ?? null,
  };
}

/** A `TurnReport` (the `answered` answer) from its JSON. */
export function turnReport(raw: Json): TurnReport {
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
export function streamStart(raw: Json): StreamStart {
  const [kind, body] = tagged(raw, "stream start");
  switch (kind) {
    case "replay":
      return { kind: "replay", from: body.from };
    case "snapshot":
      return { kind: "snapshot", snapshot: screenSnapshot(body.snapshot), skipped_from: body.skipped_from ?? null };
    case "generation_changed":
      return { kind: "generation_changed", previous: body.previous, snapshot: screenSnapshot(body.snapshot) };
    default:
      throw new FrameError(`unknown stream start \`${kind}\``);
  }
}

/** A `Subscription` (the `subscribed` answer) from its JSON. */
export function subscription(raw: Json): Subscription {
  return {
    subscription: raw.subscription,
    pane: raw.pane,
    generation: raw.generation,
    start: streamStart(raw.start),
  };
}

/** An event from its JSON; one this client does not know becomes an `other` event. */
export function paneEvent(raw: Json): PaneEvent {
  const [kind, body] = tagged(raw, "event");
  switch (kind) {
    case "output":
      return { kind: "output", offset: body.offset, data: fromBase64(body.data) };
    case "resync":
      return { kind: "resync", skipped_from: body.skipped_from, snapshot: screenSnapshot(body.snapshot) };
    case "resized":
      return { kind: "resized", size: size(body.size) };
    case "exited":
      return { kind: "exited", status: exitStatus(body.status), offset: body.offset };
    case "ended":
      return { kind: "ended", reason: body.reason };
    case "turn_started":
      return { kind: "turn_started", offset: body.offset, source: body.source };
    case "turn_completed":
      return {
        kind: "turn_completed",
        offset: body.offset,
        source: body.source,
        usage: usage(body.usage),
        exit_code: body.exit_code ?? null,
      };
    case "awaiting_input":
    case "approval_requested":
      return { kind, offset: body.offset, source: body.source, detail: body.detail ?? "" };
    default:
      return { kind: "other", name: kind, body };
  }
}

/** A `Watching` (the `watching` answer) from its JSON. */
export function watching(raw: Json): Watching {
  return { subscription: raw.subscription, panes: (raw.panes ?? []).map(paneSummary) };
}

/** An event of a watch from its JSON; one this client does not know becomes an `other` event. */
export function watchEvent(raw: Json): WatchEvent {
  const [kind, body] = tagged(raw, "event");
  switch (kind) {
    case "pane_started":
      return { kind: "pane_started", pane: paneSummary(body.pane) };
    case "pane_activity":
      return { kind: "pane_activity", pane: body.pane, activity: body.activity ?? "unknown" };
    case "pane_exited":
      return { kind: "pane_exited", pane: body.pane, status: exitStatus(body.status) };
    case "pane_ended":
      return { kind: "pane_ended", pane: body.pane, reason: body.reason ?? "" };
    case "pane_list":
      return { kind: "pane_list", panes: (body.panes ?? []).map(paneSummary), missed: body.missed ?? 0 };
    case "ended":
      return { kind: "ended", reason: body.reason };
    default:
      return { kind: "other", name: kind, body };
  }
}

/** A `WaitMatch` (the `waited` answer) from its JSON. */
export function waitMatch(raw: Json): WaitMatch {
  return { pane: raw.pane, target: raw.target, offset: raw.offset, matched: raw.matched };
}
