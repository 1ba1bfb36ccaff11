// Turns, interrupts, permission profiles and readiness against a real host
// running the workspace's fixture agent, which ends every turn with an
// OSC 9 notification.

import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import { type Client, connect, type PaneEvent, PanehostError } from "../src/index.js";
import { Collector, TestHost } from "./support.js";

/** A host of its own and a client connected to it. */
async function hostAndClient(): Promise<{ host: TestHost; client: Client }> {
  const host = await TestHost.start();
  try {
    return { host, client: await connect({ socketPath: host.socket, clientName: "ts-tests/turns" }) };
  } catch (error) {
    await host.stop();
    throw error;
  }
}

/** Disconnects the client, then ends the host. */
async function finish(host: TestHost | undefined, client: Client | undefined): Promise<void> {
  try {
    if (client) await client.disconnect();
  } finally {
    if (host) await host.stop();
  }
}

/** The turn events among `events`, in order. */
function turnEvents(events: PaneEvent[]): PaneEvent[] {
  return events.filter((event) => event.kind.startsWith("turn_"));
}

/** Whether the pane's events hold a `turn_completed`, after `after` of them. */
function completedAfter(collector: Collector, after: number): boolean {
  return turnEvents(collector.events).slice(after).some((event) => event.kind === "turn_completed");
}

/** Asserts that `error` is a host error with this code (and limitation, when given). */
function hostError(code: string, limitation?: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof PanehostError, String(error));
    assert.equal(error.code, code, error.message);
    if (limitation !== undefined) assert.equal(error.limitation, limitation, error.message);
    return true;
  };
}

describe("turns of the fixture agent", () => {
  let host: TestHost | undefined;
  let client: Client | undefined;

  before(async () => {
    ({ host, client } = await hostAndClient());
  });

  after(() => finish(host, client));

  /** Starts the fixture and waits for its prompt. */
  async function fixture(): Promise<{ id: string; collector: Collector }> {
    const pane = await client!.start({ runtime: "fixture" });
    const collector = new Collector(client!.events(pane.id, { from: 0 }));
    await collector.waitForText("fixture> ");
    return { id: pane.id, collector };
  }

  test("start describes the pane's activity, completion and origin", async () => {
    const pane = await client!.start({ runtime: "fixture" });
    assert.equal(pane.completion, "terminal_notification");
    assert.equal(pane.restored_by, "started");
    assert.ok(["unknown", "idle"].includes(pane.activity), pane.activity);
    const listed = (await client!.list()).find((p) => p.id === pane.id);
    assert.equal(listed?.completion, "terminal_notification");
    await client!.close(pane.id);
  });

  test("ask answers with the turn's report; the stream holds the turn's events in order", async () => {
    const { id, collector } = await fixture();
    const report = await client!.ask(id, "hello there", { timeout_ms: 20_000 });
    assert.equal(report.source, "terminal_notification");
    assert.match(report.added_text, /answer: ereht olleh/);
    assert.ok(report.completed_offset > report.started_offset, JSON.stringify(report));
    assert.equal(typeof report.duration_ms, "number");
    assert.deepEqual(report.usage, { kind: "unavailable", input_tokens: null, output_tokens: null, cost_micro_usd: null });
    assert.equal((await client!.inspect(id)).pane.activity, "idle");

    await collector.waitFor("turn_completed", (c) => completedAfter(c, 0));
    const [started, completed, ...rest] = turnEvents(collector.events);
    assert.deepEqual(rest, []);
    assert.ok(started?.kind === "turn_started" && started.source === "input", JSON.stringify(started));
    // The turn starts with the Enter, after the prompt's echo.
    assert.ok(started.offset >= report.started_offset && started.offset <= report.completed_offset);
    assert.deepEqual(completed, {
      kind: "turn_completed",
      offset: report.completed_offset,
      source: "terminal_notification",
      usage: report.usage,
      exit_code: null,
    });
    await collector.stream.close();
    await client!.close(id);
  });

  test("send with enter starts a turn; turn_started, the answer, then turn_completed", async () => {
    const { id, collector } = await fixture();
    await client!.send(id, { text: "second turn", enter: true });
    await collector.waitFor("turn_completed", (c) => completedAfter(c, 0));

    // The stream from offset 0: output bytes are at their own offsets, and
    // each turn event comes once the output before its offset has come.
    let received = 0;
    const seen: Array<{ event: PaneEvent; outputBefore: number }> = [];
    for (const event of collector.events) {
      if (event.kind === "output") received += event.data.length;
      else if (event.kind.startsWith("turn_")) seen.push({ event, outputBefore: received });
    }
    assert.deepEqual(
      seen.map(({ event }) => event.kind),
      ["turn_started", "turn_completed"],
    );
    const [started, completed] = seen.map(({ event }) => event) as [PaneEvent, PaneEvent];
    assert.ok(started.kind === "turn_started" && started.source === "input");
    assert.ok(completed.kind === "turn_completed" && completed.source === "terminal_notification");
    assert.equal(completed.usage.kind, "unavailable");
    for (const { event, outputBefore } of seen) {
      assert.ok(event.kind === "turn_started" || event.kind === "turn_completed");
      assert.ok(outputBefore >= event.offset, `${event.kind} at ${event.offset} came after ${outputBefore} bytes`);
    }
    const turn = collector.output.subarray(started.offset, completed.offset).toString("utf8");
    assert.match(turn, /working: second turn/);
    assert.match(turn, /answer: nrut dnoces/);
    await collector.stream.close();
    await client!.close(id);
  });

  test("interrupt of a busy turn is confirmed, and the turn ends", async () => {
    const { id, collector } = await fixture();
    // A command is no agent turn: typed, not submitted as one.
    await client!.send(id, { text: "/delay 5000\r" });
    await collector.waitForText("delay: 5000");
    await client!.send(id, { text: "slow one", enter: true });
    await collector.waitForText("working: slow one");
    assert.equal((await client!.inspect(id)).pane.activity, "busy");

    const report = await client!.interrupt(id);
    assert.equal(report.pane, id);
    // The keys stop it and the output going quiet confirms it: no signal.
    assert.equal(report.outcome, "turn_cancelled", JSON.stringify(report));
    assert.equal(report.steps[0]?.action, "keys");
    assert.equal(report.steps.at(-1)?.action, "observed");
    assert.ok(!report.steps.some((step) => step.action.startsWith("sig")), JSON.stringify(report));
    await collector.waitForText("interrupted");
    await collector.waitFor("turn_completed", (c) => completedAfter(c, 0));
    const turns = turnEvents(collector.events).map((event) => ("source" in event ? `${event.kind}(${event.source})` : event.kind));
    assert.deepEqual(turns, ["turn_started(input)", "turn_completed(heuristic)"]);
    const detail = await client!.inspect(id);
    assert.equal(detail.pane.activity, "idle");
    assert.deepEqual(detail.pane.state, { kind: "running" });
    await collector.stream.close();
    await client!.close(id);
  });

  test("interrupt with terminate escalates to SIGTERM when the keys and SIGINT are ignored", async () => {
    const script = "trap '' INT; while true; do echo tick; sleep 0.2; done";
    const pane = await client!.start({ runtime: "shell", command: ["sh", "-c", script] });
    const collector = new Collector(client!.events(pane.id, { from: 0 }));
    await collector.waitForText("tick");
    // A submission opens a turn, which is what allows signals.
    await client!.send(pane.id, { enter: true });
    const report = await client!.interrupt(pane.id, { terminate: true });
    assert.equal(report.outcome, "process_ended", JSON.stringify(report));
    assert.deepEqual(
      report.steps.map((step) => step.action),
      ["keys", "sigint", "sigterm", "observed", "sweep", "observed"],
    );
    assert.deepEqual(report.sweep?.survivors, [], JSON.stringify(report));
    await collector.waitForEnd();
    await client!.close(pane.id);
  });

  test("a permission profile the fixture cannot enforce is refused, unless a weaker boundary is accepted", async () => {
    const info = (await client!.runtimes()).find((runtime) => runtime.id === "fixture");
    assert.ok(info, "the fixture runtime is listed");
    assert.deepEqual(info.permission_profiles, []);
    assert.ok(info.limitations.includes("PERMISSION_PROFILE_UNENFORCED"));

    await assert.rejects(
      client!.start({ runtime: "fixture", permission_profile: "read_only" }),
      hostError("OPERATION_UNSUPPORTED", "PERMISSION_PROFILE_UNENFORCED"),
    );
    await assert.rejects(
      client!.start({ runtime: "fixture", permission_profile: "no_such_profile", accept_weaker_boundary: true }),
      hostError("INVALID_ARGUMENT"),
    );
    const pane = await client!.start({ runtime: "fixture", permission_profile: "read_only", accept_weaker_boundary: true });
    assert.deepEqual(pane.state, { kind: "running" });
    await client!.close(pane.id);
  });

  test("notify from outside the pane is refused, even with the pane's own token", async () => {
    const { id, collector } = await fixture();
    await client!.send(id, { text: "/env PANEHOST_NOTIFY_TOKEN\r" });
    await collector.waitFor("the token", (c) => /PANEHOST_NOTIFY_TOKEN=\w+\r?\n/.test(c.text));
    const token = /PANEHOST_NOTIFY_TOKEN=(\w+)/.exec(collector.text)![1]!;
    // Only a process of the pane's own session reports its turns (a CLI's
    // hook, run by the CLI in the pane): this test's process is not one.
    await assert.rejects(client!.notify(id, { token, event: "turn_completed", payload: "{}" }), (error: unknown) => {
      assert.ok(error instanceof PanehostError && error.code === "NOTIFY_REFUSED", String(error));
      assert.match((error as Error).message, /is not one of pane \w+'s processes/);
      return true;
    });
    await assert.rejects(client!.notify(id, { token: `${token}x`, event: "turn_completed" }), hostError("NOTIFY_REFUSED"));
    await assert.rejects(client!.notify("p-nonexistent", { token, event: "turn_completed" }), hostError("UNKNOWN_PANE"));
    await collector.stream.close();
    await client!.close(id);
  });

  test("a pane past its wall time is ended and stays listed as exited", async () => {
    const pane = await client!.start({ runtime: "shell", command: ["sleep", "100"], max_wall_ms: 300 });
    const collector = new Collector(client!.events(pane.id, { from: 0 }));
    await collector.waitForEnd();
    const exited = collector.events.find((event) => event.kind === "exited");
    assert.ok(exited?.kind === "exited" && exited.status.signal === "SIGHUP", JSON.stringify(exited));
    const listed = (await client!.list()).find((p) => p.id === pane.id);
    assert.equal(listed?.state.kind, "exited");
    await client!.close(pane.id);
  });
});

describe("readiness and the completion receipt", () => {
  // A host per test, so that no receipt is left from another test.
  let host: TestHost | undefined;
  let client: Client | undefined;

  afterEach(async () => {
    await finish(host, client);
    host = client = undefined;
  });

  test("before a receipt the fixture is not ready, and a start requiring readiness is refused", async () => {
    ({ host, client } = await hostAndClient());
    const info = (await client.runtimes()).find((runtime) => runtime.id === "fixture");
    assert.ok(info, "the fixture runtime is listed");
    assert.equal(info.readiness, "not_ready");
    assert.equal(info.readiness_gate, "receipt");
    assert.equal(typeof info.readiness_reason, "string");
    assert.equal(info.receipt, null);
    assert.equal(info.receipt_valid, false);
    assert.equal(info.sign_in, "not_required");
    await assert.rejects(client.start({ runtime: "fixture", require_ready: true }), hostError("RUNTIME_NOT_READY"));
    // The shell is no agent: it needs no receipt.
    const shell = await client.start({ runtime: "shell", require_ready: true });
    await client.close(shell.id);
  });

  test("probeRuntime takes a passing receipt; runtimes then reports the fixture ready", async () => {
    ({ host, client } = await hostAndClient());
    await assert.rejects(client.probeRuntime("fixture"), hostError("OPERATION_UNSUPPORTED", "PERMISSION_PROFILE_UNENFORCED"));
    await assert.rejects(client.probeRuntime("shell", { accept_weaker_boundary: true }), hostError("INVALID_ARGUMENT"));

    const receipt = await client.probeRuntime("fixture", { accept_weaker_boundary: true });
    assert.equal(receipt.runtime, "fixture");
    assert.equal(receipt.passed, true, receipt.detail);
    assert.equal(receipt.read_only_enforced, false);
    assert.equal(receipt.version, "panehost-fixture-agent 1.0.0");
    assert.match(receipt.sha256, /^[0-9a-f]{64}$/);

    const info = (await client.runtimes()).find((runtime) => runtime.id === "fixture");
    assert.ok(info, "the fixture runtime is listed");
    assert.equal(info.readiness, "ready", info.readiness_reason ?? "");
    assert.equal(info.readiness_gate, null);
    assert.equal(info.receipt_valid, true);
    assert.deepEqual(info.receipt, receipt);
    assert.equal(info.sha256, receipt.sha256);

    const pane = await client.start({ runtime: "fixture", require_ready: true });
    await client.close(pane.id);
  });
});
