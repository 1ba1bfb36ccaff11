// The client and the protocol's JSON Schema (docs/protocol.schema.json):
// the raw types of src/protocol.generated.ts are what the schema generates
// now, and the check the other tests run on every frame (schema.ts)
// rejects what the schema does.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";
import { encodeFrame } from "../src/index.js";
import { assertNoSchemaMismatch, checkBeyondSchema, checkFrame, FrameChecker, packageDir, schemaErrors } from "./schema.js";

const REGENERATE = "run `npm run generate:protocol` in client/typescript and commit src/protocol.generated.ts";

describe("the raw types", () => {
  test("src/protocol.generated.ts is what docs/protocol.schema.json generates", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ph-ts-types-"));
    try {
      const fresh = path.join(dir, "protocol.generated.ts");
      execFileSync(process.execPath, [path.join(packageDir, "scripts", "protocol-types.mjs"), "--out", fresh], {
        cwd: packageDir,
        stdio: ["ignore", "ignore", "pipe"],
        timeout: 60_000,
      });
      const expected = fs.readFileSync(fresh, "utf8");
      const committedPath = path.join(packageDir, "src", "protocol.generated.ts");
      if (!fs.existsSync(committedPath)) assert.fail(`src/protocol.generated.ts is missing: ${REGENERATE}`);
      const committed = fs.readFileSync(committedPath, "utf8");
      if (committed !== expected) {
        const ours = committed.split("\n");
        const theirs = expected.split("\n");
        let line = 0;
        while (line < ours.length && ours[line] === theirs[line]) line++;
        assert.fail(
          `src/protocol.generated.ts differs from what docs/protocol.schema.json generates, from line ${line + 1}:\n` +
            `  committed: ${JSON.stringify(ours[line] ?? "(end of file)")}\n` +
            `  generated: ${JSON.stringify(theirs[line] ?? "(end of file)")}\n` +
            `${REGENERATE}; the build then shows what the client must change.`,
        );
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("frames against the schema", () => {
  const output = (event: unknown) => ({ event: { subscription: 1, event: event } });

  test("frames as the host and this client write them match, unknown fields of a struct included", () => {
    assert.equal(schemaErrors("Hello", { protocol: 1, revision: 3, encoding: "json", client: "ts" }), undefined);
    assert.equal(schemaErrors("HandshakeReply", { welcome: { protocol: 1, revision: 3, host: "panehost 0.1.0", encoding: "json" } }), undefined);
    assert.equal(schemaErrors("RequestFrame", { id: 1, request: { list: {} } }), undefined);
    assert.equal(schemaErrors("RequestFrame", { id: 2, request: { send: { pane: "p1", text: "ls", bytes: "", enter: true } } }), undefined);
    assert.equal(schemaErrors("ServerMessage", output({ output: { offset: 0, data: "aGk=" } })), undefined);
    assert.equal(schemaErrors("ServerMessage", { error: { id: null, error: { code: "FRAME_TOO_LARGE", message: "too large" } } }), undefined);
    assert.equal(schemaErrors("ServerMessage", { response: { id: 3, body: { sent: { pane: "p1", bytes: 3, later: true } } } }), undefined);
  });

  test("a wrong type, a missing field, an unknown variant, bad base64 and a number out of range do not match, named where they are", () => {
    const cases: Array<[unknown, RegExp]> = [
      [output({ output: { offset: "0", data: "aGk=" } }), /\/event\/event\/output\/offset must be integer/],
      [output({ output: { offset: -1, data: "aGk=" } }), /\/event\/event\/output\/offset must be >= 0/],
      [output({ output: { offset: 0, data: "aGk" } }), /\/event\/event\/output\/data must match pattern/],
      [output({ pane_renamed: { pane: "p1" } }), /\/event\/event must NOT have additional properties \(`pane_renamed`\)/],
      [{ response: { id: 1, body: { sent: { pane: "p1" } } } }, /\/response\/body\/sent must have required property 'bytes'/],
      [{ response: { id: 1, body: { closed: { pane: "p1", status: { code: 2 ** 32 } } } } }, /\/response\/body\/closed\/status\/code must match format "uint32"/],
    ];
    for (const [frame, expected] of cases) {
      assert.match(schemaErrors("ServerMessage", frame) ?? "matched", expected, JSON.stringify(frame));
    }
    assert.match(schemaErrors("RequestFrame", { id: 1, request: { lists: {} } }) ?? "matched", /\/request must NOT have additional properties \(`lists`\)/);
    assert.match(schemaErrors("Hello", { protocol: 1, encoding: "yaml" }) ?? "matched", /\/encoding must be equal to constant/);
  });

  test("a mismatch fails the next check, once; so does a frame meant to be beyond the schema that matches it", () => {
    checkFrame("RequestFrame", { id: -1, request: { list: {} } }, "here");
    assert.throws(() => assertNoSchemaMismatch(), /1 frame\(s\) do not match docs\/protocol\.schema\.json:\nhere: not a valid RequestFrame \([^)]*\/id must be >= 0/);
    assertNoSchemaMismatch();
    checkBeyondSchema("ServerMessage", output({ pane_renamed: { pane: "p1" } }), "newer");
    assertNoSchemaMismatch();
    checkBeyondSchema("ServerMessage", output({ ended: { reason: "closed" } }), "older");
    assert.throws(() => assertNoSchemaMismatch(), /older: meant to be beyond the schema, yet a valid ServerMessage/);
  });

  test("the frame checker reads a byte stream split anywhere: the first frame a Hello, then requests", () => {
    const frames = [
      { protocol: 1, revision: 3, encoding: "json", client: "ts" },
      { id: 1, request: { list: {} } },
      { id: 2, request: { inspect: {} } },
      { id: 3, request: { runtimes: {} } },
    ];
    const bytes = Buffer.concat(frames.map((frame) => encodeFrame(Buffer.from(JSON.stringify(frame)))));
    const seen: number[] = [];
    const checker = new FrameChecker("Hello", "RequestFrame", "stream", (_, index) => seen.push(index));
    for (const byte of bytes) checker.push(Uint8Array.of(byte));
    assert.deepEqual(seen, [0, 1, 2, 3]);
    assert.throws(() => assertNoSchemaMismatch(), (error: unknown) => {
      const message = (error as Error).message;
      assert.match(message, /^1 frame\(s\) do not match/);
      assert.match(message, /stream, frame 2: not a valid RequestFrame \(\/request\/inspect must have required property 'pane'\)/);
      return true;
    });
  });
});
