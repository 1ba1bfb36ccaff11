/**
 * The protocol's messages as TypeScript types.
 *
 * Structs keep the protocol's field names (`snake_case`, as in PROTOCOL.md),
 * so the field tables there apply word for word. Two things differ from the
 * JSON on the wire, both for convenience in TypeScript:
 *
 * - Enums the host sends (pane state, stream start, events) are
 *   discriminated unions with a `kind` field instead of externally tagged
 *   objects: `{"exited":{...}}` becomes `{kind: "exited", ...}`.
 * - `bytes` fields (output data, formatted screens) are decoded from base64
 *   into `Uint8Array`.
 *
 * Every `u64` of the protocol (offsets, generations, ids, timestamps) is a
 * JavaScript `number`, exact up to `Number.MAX_SAFE_INTEGER` (2^53 - 1).
 * Offsets reach that only after 8 PiB of output from one pane.
 *
 * The types live by protocol area in the modules of `types/`, which this
 * one gathers.
 *
 * @module
 */

export type * from "./types/pane.js";
export type * from "./types/requests.js";
export type * from "./types/answers.js";
export type * from "./types/runtimes.js";
export type * from "./types/events.js";
export type * from "./types/watch.js";
export type * from "./types/handshake.js";
export type * from "./types/vocabularies.js";
