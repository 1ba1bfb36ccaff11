// Waiting for a pattern (wait_for) and a bash pane's shell integration
// (the exit status of each command), both of protocol revision 3, against
// a real host whose shell is bash.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Client, connect, type PaneEvent, PanehostError } from "../src/index.js";
import { Collector, TestHost, withTimeout } from "./support.js";

let host: TestHost;
let client: Client;

before(async () => {
  host = await TestHost.start({ shell: "/bin/bash" });
  client = await connect({ socketPath: host.socket, clientName: "ts-tests/wait" });
});

after(async () => {
  try {
    if (client) await client.disconnect();
  } finally {
    if (host) await host.stop();
  }
});

/** A shell's prompt at the end of the screen: `$ `, or `# ` for root. */
const PROMPT = "[$#] $";

/** Asserts that `error` is a host error with this code. */
function hostError(code: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof PanehostError, String(error));
    assert.equal(error.code, code, error.message);
    return true;
  };
}

describe("wait_for", () => {
  test("waits for the screen to show a pattern: at once when it does, else until it does", async () => {
    const pane = await client.start({ runtime: "shell" });
    const prompt = await client.waitFor(pane.id, PROMPT, { timeout_ms: 15_000 });
    assert.equal(prompt.pane, pane.id);
    assert.equal(prompt.target, "screen");
    assert.match(prompt.matched, /^[$#] $/);
    // Already on the screen: answered at once.
    assert.equal((await client.waitFor(pane.id, PROMPT, { timeout_ms: 0 })).matched, prompt.matched);

    // The command line shows `wait-$((6*7))`; only its output shows `wait-42`.
    const waiting = client.waitFor(pane.id, "wait-\\d+", { timeout_ms: 15_000 });
    await client.send(pane.id, { text: "echo wait-$((6*7))", enter: true });
    const found = await waiting;
    assert.equal(found.matched, "wait-42");
    assert.ok(found.offset > prompt.offset, "the matching screen reflects later output");
    await client.close(pane.id);
  });

  test("waits for the output from an offset; the answer's offset is just after the match", async () => {
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", "read x; echo out-$x; read y"] });
    const waiting = client.waitFor(pane.id, "out-[a-z]+", { target: "output", from: 0, timeout_ms: 15_000 });
    const stream = new Collector(client.events(pane.id, { from: 0 }));
    await client.send(pane.id, { text: "go", enter: true });
    const found = await waiting;
    assert.deepEqual([found.target, found.matched], ["output", "out-go"]);
    await stream.waitFor(`offset ${found.offset}`, (c) => c.length >= found.offset);
    assert.equal(stream.output.subarray(found.offset - "out-go".length, found.offset).toString(), "out-go");
    await stream.stream.close();
    await client.close(pane.id);
  });

  test("a wait holds up no other request of the connection", async () => {
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", "read x; echo late-$x; read y"] });
    const waiting = client.waitFor(pane.id, "late-[a-z]+", { target: "output", from: 0, timeout_ms: 30_000 });
    // While it waits, other requests are answered.
    assert.ok((await withTimeout(client.list(), 5_000, "a list beside the wait")).some((listed) => listed.id === pane.id));
    assert.equal((await withTimeout(client.inspect(pane.id), 5_000, "an inspect beside the wait")).pane.id, pane.id);
    await client.send(pane.id, { text: "ok", enter: true });
    assert.equal((await waiting).matched, "late-ok");
    await client.close(pane.id);
  });

  test("WAIT_TIMEOUT, INVALID_ARGUMENT for a bad pattern, PANE_EXITED when the process ends without a match", async () => {
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", "read x; echo bye"] });
    await assert.rejects(client.waitFor(pane.id, "never-there", { timeout_ms: 200 }), hostError("WAIT_TIMEOUT"));
    await assert.rejects(client.waitFor(pane.id, "(", { timeout_ms: 200 }), hostError("INVALID_ARGUMENT"));
    await assert.rejects(client.waitFor(pane.id, "", { timeout_ms: 200 }), hostError("INVALID_ARGUMENT"));
    const waiting = client.waitFor(pane.id, "never-there", { target: "output", from: 0, timeout_ms: 15_000 });
    // The process may end, and the wait with it, before the send is answered.
    const exited = assert.rejects(waiting, hostError("PANE_EXITED"));
    await client.send(pane.id, { text: "x", enter: true });
    await exited;
    await assert.rejects(client.waitFor("p-none", PROMPT), hostError("UNKNOWN_PANE"));
    await client.close(pane.id);
  });
});

describe("shell integration", () => {
  test("a bash pane's turns end with the command's exit status, in ask and on its stream", async () => {
    const pane = await client.start({ runtime: "shell" });
    assert.equal(pane.completion, "shell_integration");
    await client.waitFor(pane.id, PROMPT, { timeout_ms: 15_000 });
    const stream = new Collector(client.events(pane.id, { from: 0 }));

    const failed = await client.ask(pane.id, "sh -c 'exit 7'", { timeout_ms: 15_000 });
    assert.equal(failed.source, "shell_integration");
    assert.equal(failed.exit_code, 7);
    const succeeded = await client.ask(pane.id, "true", { timeout_ms: 15_000 });
    assert.equal(succeeded.exit_code, 0);

    const completions = (c: Collector) =>
      c.events.filter((event): event is Extract<PaneEvent, { kind: "turn_completed" }> => event.kind === "turn_completed");
    await stream.waitFor("two turn_completed events", (c) => completions(c).length >= 2);
    const [first, second] = completions(stream);
    assert.deepEqual([first!.source, first!.exit_code, first!.offset], ["shell_integration", 7, failed.completed_offset]);
    assert.deepEqual([second!.source, second!.exit_code, second!.offset], ["shell_integration", 0, succeeded.completed_offset]);
    await stream.stream.close();
    await client.close(pane.id);
  });
});
