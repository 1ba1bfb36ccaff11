// Requests on one client run concurrently (docs/PROTOCOL.md section 5): an
// `ask` that waits for its turn holds up no other call of the same client,
// which shares one connection for all of them.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Client, connect, type TurnReport } from "../src/index.js";
import { Collector, TestHost, withTimeout } from "./support.js";

describe("one client, calls that do not wait for each other", () => {
  let host: TestHost | undefined;
  let client: Client | undefined;

  before(async () => {
    host = await TestHost.start();
    client = await connect({ socketPath: host.socket, clientName: "ts-tests/concurrency" });
  });

  after(async () => {
    try {
      if (client) await client.disconnect();
    } finally {
      if (host) await host.stop();
    }
  });

  test("while an ask waits on pane A: inspect A, send to B and interrupt A are each answered", async () => {
    const agent = await client!.start({ runtime: "fixture" });
    const shell = await client!.start({ runtime: "shell" });
    const agentOutput = new Collector(client!.events(agent.id, { from: 0 }));
    const shellOutput = new Collector(client!.events(shell.id, { from: 0 }));
    await agentOutput.waitForText("fixture> ");
    // Its turns now work for a minute.
    await client!.send(agent.id, { text: "/delay 60000\r" });
    await agentOutput.waitForText("delay: 60000");

    let askDone = false;
    const asked: Promise<TurnReport> = client!.ask(agent.id, "slow question", { timeout_ms: 60_000 }).finally(() => {
      askDone = true;
    });
    const inspected = await withTimeout(client!.inspect(agent.id), 10_000, "inspect while the ask waits");
    assert.equal(inspected.pane.id, agent.id);
    const sent = await withTimeout(client!.send(shell.id, { text: "echo b-$((40+2))\r" }), 10_000, "send to B");
    assert.equal(sent.bytes, "echo b-$((40+2))\r".length);
    await shellOutput.waitForText("b-42");
    // An interrupt before the program has read the prompt would cancel the
    // prompt instead of the turn: wait until it works on it.
    await agentOutput.waitForText("working: slow question");
    assert.equal(askDone, false, "the ask was answered before its turn ended");

    const interrupted = await withTimeout(client!.interrupt(agent.id), 20_000, "interrupt A");
    assert.equal(interrupted.outcome, "turn_cancelled", JSON.stringify(interrupted));
    const report = await withTimeout(asked, 20_000, "the ask, once the interrupt ended its turn");
    assert.ok(report.completed_offset > report.started_offset, JSON.stringify(report));

    await agentOutput.stream.close();
    await shellOutput.stream.close();
    await client!.close(agent.id);
    await client!.close(shell.id);
  });
});
