// Transparent reconnect and backpressure against a real host, with a proxy
// between the client and the host that can drop or refuse connections. A
// client has one connection, shared by its requests and its streams.

import assert from "node:assert/strict";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { type Client, connect, isConnectionLost, type StreamItem } from "../src/index.js";
import { Collector, Proxy, TestHost, waitUntil, WatchCollector, withTimeout } from "./support.js";

const LINES = 20_000;
const FLOOD = `i=0; while [ $i -lt ${LINES} ]; do echo line-$i; i=$((i+1)); done; sleep 30`;
const LAST_LINE = Buffer.from(`line-${LINES - 1}\r\n`);

let host: TestHost;
let client: Client;
let proxies = 0;

before(async () => {
  host = await TestHost.start();
  client = await connect({ socketPath: host.socket, clientName: "ts-tests/reconnect" });
});

after(async () => {
  try {
    if (client) await client.disconnect();
  } finally {
    if (host) await host.stop();
  }
});

async function proxy(): Promise<Proxy> {
  return Proxy.start(host.socket, path.join(host.dir, `proxy-${++proxies}.sock`));
}

/** The pane's whole output from offset 0, read on a fresh stream of the direct client. */
async function freshOutput(pane: string, length: number): Promise<Buffer> {
  const fresh = new Collector(client.events(pane, { from: 0 }));
  await fresh.waitFor(`${length} bytes on a fresh stream`, (c) => c.length >= length, 20_000);
  await fresh.stream.close();
  assert.deepEqual(fresh.starts[0]!.start, { kind: "replay", from: 0 });
  return fresh.output;
}

/** Checks that output events are contiguous from 0 and never overlap. */
function assertContiguous(items: StreamItem[]): void {
  let next = 0;
  for (const item of items) {
    if (item.kind === "start") {
      if (item.start.kind === "replay") assert.equal(item.start.from, next, "a replay resumes at the offset handed on");
      continue;
    }
    if (item.event.kind !== "output") continue;
    assert.equal(item.event.offset, next, "output is contiguous");
    next += item.event.data.length;
  }
}

describe("transparent reconnect", () => {
  test("dropping the connection in the middle of a flood loses and repeats nothing", async () => {
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", FLOOD] });
    const middle = await proxy();
    const viaProxy = await connect({ socketPath: middle.path });
    const stream = viaProxy.events(pane.id, { from: 0 });
    const collector = new Collector(stream);
    let droppedAt: number | undefined;
    let tail = Buffer.alloc(0);
    let sawLast = false;
    collector.onItem = (item, c) => {
      if (item.kind === "event" && item.event.kind === "output") {
        tail = Buffer.concat([tail, Buffer.from(item.event.data)]).subarray(-64);
        if (tail.includes(LAST_LINE)) sawLast = true;
        if (droppedAt === undefined && c.length >= 40_000) {
          droppedAt = c.length;
          middle.dropAll();
        }
      }
    };
    await collector.waitFor("the last line of the flood", () => sawLast, 30_000);
    assert.ok(droppedAt !== undefined, "the connection was dropped");
    assert.ok(droppedAt < collector.length, `dropped at ${droppedAt} of ${collector.length}: in the middle`);

    const starts = collector.starts;
    assert.equal(starts.length, 2, "one start, and one after the reconnect");
    assert.deepEqual(starts[0]!.start, { kind: "replay", from: 0 });
    assert.equal(starts[1]!.start.kind, "replay");
    assert.equal(starts[1]!.generation, pane.generation);
    assert.equal(middle.accepted, 2, "the client's one connection, and the same again after the drop");
    assertContiguous(collector.items);
    assert.ok(!collector.events.some((event) => event.kind === "resync"), "no resync");

    const expected = await freshOutput(pane.id, collector.length);
    assert.equal(expected.length, collector.length);
    assert.ok(collector.output.equals(expected), "the collected output is exactly the pane's output from 0");
    assert.equal(stream.offset, collector.length);

    await stream.close();
    await viaProxy.disconnect();
    await middle.close();
    await client.close(pane.id);
  });

  test("refused connections are retried with backoff until one succeeds", async () => {
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", "echo first; read x; echo second-$x; sleep 30"] });
    const middle = await proxy();
    const viaProxy = await connect({ socketPath: middle.path, reconnect: { initialBackoffMs: 10 } });
    const collector = new Collector(viaProxy.events(pane.id, { from: 0 }));
    await collector.waitForText("first");
    const acceptedBefore = middle.accepted;
    middle.refuse(3);
    middle.dropAll();
    await collector.waitFor("a second start", (c) => c.starts.length === 2);
    assert.ok(middle.accepted >= acceptedBefore + 4, `three refused, then one accepted (${middle.accepted - acceptedBefore})`);
    assert.equal(collector.starts[1]!.start.kind, "replay");
    await client.send(pane.id, { text: "ok", enter: true });
    await collector.waitForText("second-ok");
    assertContiguous(collector.items);
    assert.ok(collector.output.equals(await freshOutput(pane.id, collector.length)));
    await collector.stream.close();
    await viaProxy.disconnect();
    await middle.close();
    await client.close(pane.id);
  });

  test("a stream gives up once the policy's time is over", async () => {
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", "echo here; sleep 30"] });
    const middle = await proxy();
    const viaProxy = await connect({
      socketPath: middle.path,
      reconnect: { initialBackoffMs: 20, maxBackoffMs: 50, maxTotalMs: 300 },
    });
    const stream = viaProxy.events(pane.id, { from: 0 });
    const collector = new Collector(stream);
    await collector.waitForText("here");
    await middle.close(); // Stops listening and drops the connections.
    const started = Date.now();
    await collector.waitForEnd(10_000);
    assert.ok(isConnectionLost(collector.error), `a lost connection, got ${String(collector.error)}`);
    assert.ok(Date.now() - started < 5_000);
    await viaProxy.disconnect();
    await client.close(pane.id);
  });

  test("closing a stream unsubscribes; the pane goes on", async () => {
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", "echo one; read x; echo two-$x; sleep 30"] });
    const stream = client.events(pane.id, { from: 0 });
    const collector = new Collector(stream);
    await collector.waitForText("one");
    await stream.close();
    await collector.waitForEnd();
    assert.equal(collector.error, undefined);
    assert.deepEqual(await stream.next(), { done: true, value: undefined });
    await client.send(pane.id, { text: "x", enter: true });
    // Where a later process would pick up: generation and offset, saved.
    const saved = { generation: stream.generation!, offset: stream.offset! };
    const again = new Collector(client.events(pane.id, { from: saved.offset, generation: saved.generation }));
    await again.waitForText("two-x");
    assert.deepEqual(again.starts[0]!.start, { kind: "replay", from: saved.offset });
    assert.equal(again.starts[0]!.generation, saved.generation);
    assert.ok(again.output.equals((await freshOutput(pane.id, saved.offset + again.length)).subarray(saved.offset)));
    await again.stream.close();
    await client.close(pane.id);
  });
});

describe("backpressure", () => {
  test("a stream buffers at most maxBuffered events, lets go of its subscription, and loses nothing", async () => {
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", FLOOD] });
    // The flood is 228,890 bytes and an output event carries at most 32 KiB,
    // so at least 7 events are coming: more than the buffer takes.
    const max = 4;
    const stream = client.events(pane.id, { from: 0, maxBuffered: max });
    await withTimeout(stream.ready, 10_000, "the subscription");
    // Read nothing until the pane has printed the whole flood.
    await waitUntil("the whole flood in the pane", 30_000, async () => {
      const detail = await client.inspect(pane.id);
      return detail.screen.text.includes(`line-${LINES - 1}`) ? true : undefined;
    });
    await waitUntil(`${max} buffered events`, 10_000, () => (stream.buffered === max ? true : undefined));
    const end = (await client.inspect(pane.id)).pane.offset;

    const chunks: Buffer[] = [];
    let length = 0;
    let maxSeen = 0;
    const items: StreamItem[] = [];
    await withTimeout(
      (async () => {
        for await (const item of stream) {
          maxSeen = Math.max(maxSeen, stream.buffered);
          items.push(item);
          if (item.kind === "event" && item.event.kind === "output") {
            chunks.push(Buffer.from(item.event.data));
            length += item.event.data.length;
            if (length >= end) break;
          }
        }
      })(),
      30_000,
      "the whole output",
    );
    assert.ok(maxSeen <= max, `at most ${max} buffered, saw ${maxSeen}`);
    assert.equal(length, end);
    assert.ok(!items.some((item) => item.kind === "event" && item.event.kind === "resync"), "no resync");
    assertContiguous(items);
    assert.ok(Buffer.concat(chunks).equals(await freshOutput(pane.id, end)));
    await client.close(pane.id);
  });
});

describe("one connection", () => {
  test("requests, streams and a watch share one connection; a stalled stream holds up none of them", async () => {
    const middle = await proxy();
    const viaProxy = await connect({ socketPath: middle.path, maxBufferedEvents: 4 });
    try {
      const flood = await viaProxy.start({ runtime: "shell", command: ["sh", "-c", FLOOD] });
      const stalled = viaProxy.events(flood.id, { from: 0 }); // Never read until the end.
      await withTimeout(stalled.ready, 10_000, "the stalled stream");
      const watch = new WatchCollector(viaProxy.watch());
      const echo = await viaProxy.start({ runtime: "shell", command: ["sh", "-c", "while read x; do echo got-$x; done"] });
      const live = new Collector(viaProxy.events(echo.id, { from: 0 }));
      await withTimeout(live.stream.ready, 10_000, "the live stream");
      await watch.waitFor("pane_started of the echo pane", (c) =>
        c.events.some((event) => event.kind === "pane_started" && event.pane.id === echo.id),
      );
      await waitUntil("the stalled stream to fill its buffer", 30_000, () => (stalled.buffered >= 4 ? true : undefined));
      // With the flood's stream full and unread, the rest goes on.
      for (let i = 0; i < 3; i++) {
        await viaProxy.send(echo.id, { text: `${i}`, enter: true });
        await live.waitForText(`got-${i}`);
        assert.ok((await viaProxy.list()).some((pane) => pane.id === flood.id));
      }
      assert.ok(stalled.buffered <= 4, `the stalled stream holds ${stalled.buffered} events`);
      assert.equal(middle.accepted, 1, "one connection for everything");
      await stalled.close();
      await live.stream.close();
      await watch.watch.close();
      await viaProxy.close(flood.id);
      await viaProxy.close(echo.id);
    } finally {
      await viaProxy.disconnect();
      await middle.close();
    }
  });
});
