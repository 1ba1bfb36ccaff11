// Frames checked against the protocol's JSON Schema
// (docs/protocol.schema.json) with ajv: what the client writes (a Hello,
// then request frames) and what a host sends it (a handshake reply, then
// server messages), in the tests against the scripted host and against the
// real host. A frame that does not match is kept as a mismatch, and the
// test during which it went by fails (support.ts checks after every test).

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { FrameDecoder, MAX_HOST_FRAME } from "../src/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
/** client/typescript, from dist/test. */
export const packageDir = path.resolve(here, "..", "..");
const repositoryDir = path.resolve(packageDir, "..", "..");
/** The schema the Rust wire types generate, committed with them. */
export const schemaPath = path.join(repositoryDir, "docs", "protocol.schema.json");

/** The `$defs` entries a frame is checked against. */
export type FrameKind = "Hello" | "HandshakeReply" | "RequestFrame" | "ServerMessage";

const validators = (() => {
  const schema = JSON.parse(fs.readFileSync(schemaPath, "utf8"));
  // Strict: a keyword ajv does not know is an error, not ignored. Every
  // error, so that a variant the schema does not know is named.
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  // The integer widths the schema names (`"format": "uint64"`), checked.
  const widths: Array<[string, number]> = [
    ["uint8", 0xff],
    ["uint16", 0xffff],
    ["uint32", 0xffff_ffff],
    ["uint64", 2 ** 64 - 1],
  ];
  for (const [name, max] of widths) {
    ajv.addFormat(name, { type: "number", validate: (n: number) => Number.isInteger(n) && n >= 0 && n <= max });
  }
  // The schema's own annotations (PROTOCOL.md section 4): known to ajv,
  // checked for nothing.
  for (const keyword of ["x-open-vocabulary", "x-answer", "x-streams"]) ajv.addKeyword(keyword);
  ajv.addSchema(schema, "protocol");
  const get = (kind: FrameKind): ValidateFunction => {
    const validate = ajv.getSchema(`protocol#/$defs/${kind}`);
    if (validate === undefined) throw new Error(`${schemaPath} has no $defs/${kind}`);
    return validate;
  };
  return {
    Hello: get("Hello"),
    HandshakeReply: get("HandshakeReply"),
    RequestFrame: get("RequestFrame"),
    ServerMessage: get("ServerMessage"),
  };
})();

/** Keywords whose errors say most, first; the rest come from a `oneOf`'s variants that did not apply. */
const TELLING = ["type", "format", "const", "enum", "pattern", "minimum", "maximum", "additionalProperties", "required", "oneOf"];

/**
 * Why `value` is not a valid `kind`, or `undefined` when it is: the errors
 * at the deepest place in the value (where a field is wrong, rather than
 * every variant of the enums around it that did not match), the most
 * telling first.
 */
export function schemaErrors(kind: FrameKind, value: unknown): string | undefined {
  const validate = validators[kind];
  if (validate(value)) return undefined;
  const errors = validate.errors ?? [];
  const depth = (instancePath: string) => instancePath.split("/").length;
  const deepest = Math.max(...errors.map((error) => depth(error.instancePath)));
  const rank = (keyword: string) => {
    const at = TELLING.indexOf(keyword);
    return at < 0 ? TELLING.length : at;
  };
  const said = errors
    .filter((error) => depth(error.instancePath) === deepest)
    .sort((a, b) => rank(a.keyword) - rank(b.keyword))
    .map((error) => {
      const extra = error.keyword === "additionalProperties" ? ` (\`${String(error.params["additionalProperty"])}\`)` : "";
      return `${error.instancePath || "/"} ${error.message ?? error.keyword}${extra}`;
    });
  const unique = [...new Set(said)];
  return unique.slice(0, 3).join("; ") + (unique.length > 3 ? "; ..." : "") || "invalid";
}

const mismatches: string[] = [];

/** Checks one frame, keeping a mismatch when it is not a valid `kind`. */
export function checkFrame(kind: FrameKind, value: unknown, where: string): void {
  const errors = schemaErrors(kind, value);
  if (errors !== undefined) {
    mismatches.push(`${where}: not a valid ${kind} (${errors}): ${JSON.stringify(value)?.slice(0, 300)}`);
  }
}

/**
 * Checks a frame a host sends that is, on purpose, beyond this schema (a
 * newer host's event, say): a mismatch is kept when it is valid after all,
 * since then the test does not show what it claims to.
 */
export function checkBeyondSchema(kind: FrameKind, value: unknown, where: string): void {
  if (schemaErrors(kind, value) === undefined) {
    mismatches.push(`${where}: meant to be beyond the schema, yet a valid ${kind}: ${JSON.stringify(value)?.slice(0, 300)}`);
  }
}

/** Fails with the mismatches kept since the last check (the first ten of them), and forgets them. */
export function assertNoSchemaMismatch(): void {
  const found = mismatches.splice(0);
  if (found.length > 0) {
    const shown = found.slice(0, 10).join("\n") + (found.length > 10 ? `\n... and ${found.length - 10} more` : "");
    assert.fail(`${found.length} frame(s) do not match ${path.relative(repositoryDir, schemaPath)}:\n${shown}`);
  }
}

/**
 * Follows one direction of a connection, a byte stream of frames, and
 * checks each JSON frame: the first as `first`, the later ones as `rest`
 * (`null`: not checked, as after a Hello asking for bincode).
 */
export class FrameChecker {
  private readonly decoder = new FrameDecoder(MAX_HOST_FRAME);
  private seen = 0;
  private failed = false;
  rest: FrameKind | null;

  constructor(
    private readonly first: FrameKind,
    rest: FrameKind,
    private readonly where: string,
    /** Called with each frame after it was checked. */
    private readonly onFrame?: (value: unknown, index: number) => void,
  ) {
    this.rest = rest;
  }

  /** Takes the bytes of one read. */
  push(chunk: Uint8Array): void {
    if (this.failed) return;
    this.decoder.push(chunk);
    for (;;) {
      let payload: Uint8Array | undefined;
      try {
        payload = this.decoder.next();
      } catch (error) {
        this.failed = true;
        mismatches.push(`${this.where}: ${(error as Error).message}`);
        return;
      }
      if (payload === undefined) return;
      const index = this.seen++;
      const kind = index === 0 ? this.first : this.rest;
      if (kind === null) continue;
      let value: unknown;
      try {
        value = JSON.parse(Buffer.from(payload).toString("utf8"));
      } catch {
        mismatches.push(`${this.where}: frame ${index} is not JSON`);
        continue;
      }
      checkFrame(kind, value, `${this.where}, frame ${index}`);
      this.onFrame?.(value, index);
    }
  }
}
