// Streams against a scripted host (fakehost.ts): resumes where the host
// replays more than asked or the generation changed, a lost connection
// with reconnecting off, turn events, a subscription answered after its
// timeout, streams that let go of their subscription when their consumer
// falls behind, and the limit of streams.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConnectionLostError, PanehostError, RequestTimeoutError, type StreamItem } from "../src/index.js";
import {
  collect,
  connected,
  describeItems,
  fake,
  gate,
  type Json,
  output,
  screen,
  subscribed,
  welcomeOnly,
} from "./fakehost.js";
import { withTimeout } from "./support.js";

describe("streams against a scripted host", () => {
  test("a resume where the host replays more than asked: duplicates dropped, overlaps trimmed", async () => {
    const host = await fake();
    let reconnectRequest: Json;
    host.script(
      async (peer) => {
        await peer.welcome();
        const request = await peer.next();
        assert.deepEqual(request.request, { events: { pane: "p1", from: 0 } });
        peer.send({ response: { id: request.id, body: { subscribed: { subscription: 7, pane: "p1", generation: 1, start: { replay: { from: 0 } } } } } });
        peer.send(output(7, 0, "abc"));
        peer.send(output(7, 3, "def"));
        peer.send({ event: { subscription: 7, event: { turn_started: { offset: 6, source: "input" } } } });
        peer.socket.destroy();
      },
      async (peer) => {
        await peer.welcome();
        const request = await peer.next();
        reconnectRequest = request.request;
        peer.send({ response: { id: request.id, body: { subscribed: { subscription: 1, pane: "p1", generation: 1, start: { replay: { from: 6 } } } } } });
        peer.send(output(1, 4, "efgh")); // Overlaps 6: trimmed to "gh".
        peer.send(output(1, 2, "cd")); // Wholly before: dropped.
        peer.send(output(1, 8, "ij"));
        peer.send({ event: { subscription: 1, event: { exited: { status: { code: 0, signal: null }, offset: 10 } } } });
        peer.send({ event: { subscription: 1, event: { ended: { reason: "exited" } } } });
      },
    );
    const client = await connected({ socketPath: host.path, reconnect: { initialBackoffMs: 5, maxTotalMs: 2_000 } });
    const stream = client.events("p1", { from: 0 });
    const items = await withTimeout(collect(stream), 10_000, "the stream");
    assert.deepEqual(reconnectRequest, { reconnect: { pane: "p1", generation: 1, offset: 6 } });
    assert.deepEqual(describeItems(items), [
      "start:replay:1",
      "output:0:abc",
      "output:3:def",
      "turn_started",
      "start:replay:1",
      "output:6:gh",
      "output:8:ij",
      "exited",
      "ended:exited",
    ]);
    assert.equal(stream.offset, 10);
    await client.disconnect();
    await host.close();
  });

  test("a resume after the generation changed hands on the new generation's snapshot", async () => {
    const host = await fake();
    host.script(
      async (peer) => {
        await peer.welcome();
        await subscribed(peer, { snapshot: { snapshot: screen(50), skipped_from: null } }, 1, 1);
        peer.send(output(1, 50, "xy"));
        peer.socket.destroy();
      },
      async (peer) => {
        await peer.welcome();
        const request = await peer.next();
        assert.deepEqual(request.request, { reconnect: { pane: "p1", generation: 1, offset: 52 } });
        peer.send({ response: { id: request.id, body: { subscribed: { subscription: 1, pane: "p1", generation: 2, start: { generation_changed: { previous: 1, snapshot: screen(60) } } } } } });
        peer.send(output(1, 60, "new"));
        peer.send({ event: { subscription: 1, event: { ended: { reason: "closed" } } } });
      },
    );
    const client = await connected({ socketPath: host.path, reconnect: { initialBackoffMs: 5 } });
    const stream = client.events("p1");
    const items = await withTimeout(collect(stream), 10_000, "the stream");
    assert.deepEqual(describeItems(items), [
      "start:snapshot:1",
      "output:50:xy",
      "start:generation_changed:2",
      "output:60:new",
      "ended:closed",
    ]);
    const start = items[0]!;
    assert.ok(start.kind === "start" && start.start.kind === "snapshot");
    assert.deepEqual(Buffer.from(start.start.snapshot.formatted).toString(), "\x1b[H");
    assert.equal(stream.generation, 2);
    await client.disconnect();
    await host.close();
  });

  test("a saved generation and offset open the stream with a reconnect", async () => {
    const host = await fake();
    let first: Json;
    host.script(
      async (peer) => {
        await peer.welcome();
        const request = await peer.next();
        first = request.request;
        peer.send({ response: { id: request.id, body: { subscribed: { subscription: 1, pane: "p1", generation: 4, start: { generation_changed: { previous: 3, snapshot: screen(80) } } } } } });
        peer.send({ event: { subscription: 1, event: { ended: { reason: "closed" } } } });
      },
    );
    const client = await connected({ socketPath: host.path });
    const items = await withTimeout(collect(client.events("p1", { from: 52, generation: 3 })), 10_000, "the stream");
    assert.deepEqual(first, { reconnect: { pane: "p1", generation: 3, offset: 52 } });
    assert.deepEqual(describeItems(items), ["start:generation_changed:4", "ended:closed"]);
    await client.disconnect();
    await host.close();
  });

  test("with reconnect off, a lost connection ends the stream with an error", async () => {
    const host = await fake();
    host.script(
      async (peer) => {
        await peer.welcome();
        await subscribed(peer, { replay: { from: 0 } }, 1, 1);
        peer.send(output(1, 0, "a"));
        peer.socket.destroy();
      },
      welcomeOnly, // The client connects again, for its other streams and requests.
    );
    const client = await connected({ socketPath: host.path });
    const stream = client.events("p1", { from: 0, reconnect: false });
    const items: StreamItem[] = [];
    await assert.rejects(
      withTimeout(
        (async () => {
          for await (const item of stream) items.push(item);
        })(),
        10_000,
        "the stream",
      ),
      ConnectionLostError,
    );
    assert.deepEqual(describeItems(items), ["start:replay:1", "output:0:a"]);
    assert.deepEqual(await stream.next(), { done: true, value: undefined });
    await client.disconnect();
    await host.close();
  });

  test("turn events decode; an event this client does not know passes as other", async () => {
    const host = await fake();
    const event = (body: Json) => ({ event: { subscription: 1, event: body } });
    host.script(
      async (peer) => {
        await peer.welcome();
        await subscribed(peer, { replay: { from: 0 } }, 1, 1);
        peer.send(event({ turn_started: { offset: 0, source: "hook" } }));
        peer.send(output(1, 0, "ab"));
        peer.send(event({ approval_requested: { offset: 2, source: "hook", detail: "may I?" } }));
        peer.send(event({ awaiting_input: { offset: 2, source: "hook", detail: "" } }));
        peer.send(event({ turn_completed: { offset: 2, source: "hook", usage: { kind: "measured", input_tokens: 1, output_tokens: 2, cost_micro_usd: 3 } } }));
        peer.sendBeyondSchema(event({ pane_renamed: { name: "x" } }));
        peer.send(event({ ended: { reason: "closed" } }));
      },
    );
    const client = await connected({ socketPath: host.path });
    const items = await withTimeout(collect(client.events("p1", { from: 0 })), 10_000, "the stream");
    const events = items.flatMap((item) => (item.kind === "event" ? [item.event] : []));
    assert.deepEqual(events.filter((e) => e.kind !== "output"), [
      { kind: "turn_started", offset: 0, source: "hook" },
      { kind: "approval_requested", offset: 2, source: "hook", detail: "may I?" },
      { kind: "awaiting_input", offset: 2, source: "hook", detail: "" },
      { kind: "turn_completed", offset: 2, source: "hook", usage: { kind: "measured", input_tokens: 1, output_tokens: 2, cost_micro_usd: 3 }, exit_code: null },
      { kind: "other", name: "pane_renamed", body: { name: "x" } },
      { kind: "ended", reason: "closed" },
    ]);
    await client.disconnect();
    await host.close();
  });

  test("a resume drops the turn events at its offset that were yielded before", async () => {
    const host = await fake();
    const started = { event: { subscription: 1, event: { turn_started: { offset: 2, source: "input" } } } };
    host.script(
      async (peer) => {
        await peer.welcome();
        await subscribed(peer, { replay: { from: 0 } }, 1, 1);
        peer.send(output(1, 0, "ab"));
        peer.send(started);
        peer.socket.destroy();
      },
      async (peer) => {
        await peer.welcome();
        await subscribed(peer, { replay: { from: 2 } }, 1, 1);
        peer.send(output(1, 2, "cd"));
        peer.send(started);
        peer.send({ event: { subscription: 1, event: { turn_completed: { offset: 4, source: "terminal_notification", usage: { kind: "unavailable" } } } } });
        peer.send({ event: { subscription: 1, event: { ended: { reason: "closed" } } } });
      },
    );
    const client = await connected({ socketPath: host.path, reconnect: { initialBackoffMs: 5 } });
    const items = await withTimeout(collect(client.events("p1", { from: 0 })), 10_000, "the stream");
    assert.deepEqual(describeItems(items), [
      "start:replay:1",
      "output:0:ab",
      "turn_started",
      "start:replay:1",
      "output:2:cd",
      "turn_completed",
      "ended:closed",
    ]);
    await client.disconnect();
    await host.close();
  });

  test("a subscription answered after its timeout is ended; calling next() again subscribes again", async () => {
    const host = await fake();
    const timedOut = gate();
    const unsubscribed = gate();
    const requests: Json[] = [];
    host.script(async (peer) => {
      await peer.welcome(3);
      const late = await peer.next();
      requests.push(late.request);
      await timedOut.promise;
      peer.send({ response: { id: late.id, body: { subscribed: { subscription: 5, pane: "p1", generation: 1, start: { replay: { from: 0 } } } } } });
      peer.send(output(5, 0, "never yielded"));
      const unsubscribe = await peer.next();
      requests.push(unsubscribe.request);
      peer.send({ event: { subscription: 5, event: { ended: { reason: "unsubscribed" } } } });
      peer.send({ response: { id: unsubscribe.id, body: { unsubscribed: { subscription: 5 } } } });
      unsubscribed.open();
      const again = await peer.next();
      requests.push(again.request);
      peer.send({ response: { id: again.id, body: { subscribed: { subscription: 6, pane: "p1", generation: 1, start: { replay: { from: 0 } } } } } });
      peer.send(output(6, 0, "ab"));
      peer.send({ event: { subscription: 6, event: { ended: { reason: "closed" } } } });
    });
    const client = await connected({ socketPath: host.path });
    const stream = client.events("p1", { from: 0, deadlineMs: 100 });
    await assert.rejects(stream.next(), RequestTimeoutError);
    timedOut.open();
    await withTimeout(unsubscribed.promise, 10_000, "the late subscription to be ended");
    const items = await withTimeout(collect(stream), 10_000, "the stream");
    assert.deepEqual(describeItems(items), ["start:replay:1", "output:0:ab", "ended:closed"]);
    assert.deepEqual(requests, [
      { events: { pane: "p1", from: 0 } },
      { unsubscribe: { subscription: 5 } },
      { events: { pane: "p1", from: 0 } },
    ]);
    await client.disconnect();
    await host.close();
  });
});

describe("streams on the one connection", () => {
  test("a turn event placed before the resume offset is kept when the stream lets go of its subscription", async () => {
    const host = await fake();
    const unsubscribed = gate();
    let resume: Json;
    host.script(async (peer) => {
      await peer.welcome(3);
      await subscribed(peer, { replay: { from: 0 } }, 7, 1);
      peer.send(output(7, 0, "ab"));
      peer.send(output(7, 2, "cd"));
      peer.send(output(7, 4, "ef")); // The buffer holds 2: the stream lets go here.
      // A terminal notification the screen model met at offset 1, sent after output it trails.
      peer.send({ event: { subscription: 7, event: { turn_completed: { offset: 1, source: "terminal_notification", usage: { kind: "unavailable" } } } } });
      const unsubscribe = await peer.next();
      assert.deepEqual(unsubscribe.request, { unsubscribe: { subscription: 7 } });
      peer.send({ event: { subscription: 7, event: { ended: { reason: "unsubscribed" } } } });
      peer.send({ response: { id: unsubscribe.id, body: { unsubscribed: { subscription: 7 } } } });
      unsubscribed.open();
      const again = await peer.next();
      resume = again.request;
      peer.send({ response: { id: again.id, body: { subscribed: { subscription: 8, pane: "p1", generation: 1, start: { replay: { from: 4 } } } } } });
      peer.send(output(8, 4, "ef"));
      peer.send({ event: { subscription: 8, event: { ended: { reason: "closed" } } } });
    });
    const client = await connected({ socketPath: host.path });
    const stream = client.events("p1", { from: 0, maxBuffered: 2 });
    await withTimeout(unsubscribed.promise, 10_000, "the stream to let go");
    const items = await withTimeout(collect(stream), 10_000, "the stream");
    assert.deepEqual(resume, { reconnect: { pane: "p1", generation: 1, offset: 4 } });
    assert.deepEqual(describeItems(items), [
      "start:replay:1",
      "output:0:ab",
      "output:2:cd",
      "turn_completed",
      "output:4:ef",
      "ended:closed",
    ]);
    await client.disconnect();
    await host.close();
  });

  test("streams and watches beyond maxSubscriptions are refused with LIMIT_REACHED; closing one makes room", async () => {
    const host = await fake();
    const requests: Json[] = [];
    host.script(async (peer) => {
      await peer.welcome(3);
      await subscribed(peer, { replay: { from: 0 } }, 1, 1);
      const unsubscribe = await peer.next();
      requests.push(unsubscribe.request);
      peer.send({ event: { subscription: 1, event: { ended: { reason: "unsubscribed" } } } });
      peer.send({ response: { id: unsubscribe.id, body: { unsubscribed: { subscription: 1 } } } });
      const watch = await peer.next();
      requests.push(watch.request);
      peer.send({ response: { id: watch.id, body: { watching: { subscription: 2, panes: [] } } } });
    });
    const client = await connected({ socketPath: host.path, maxSubscriptions: 1 });
    const first = client.events("p1", { from: 0 });
    await withTimeout(first.ready, 10_000, "the first stream");
    const refused = (error: unknown) => {
      assert.ok(error instanceof PanehostError, String(error));
      assert.equal(error.code, "LIMIT_REACHED");
      return true;
    };
    await assert.rejects(client.events("p1").next(), refused);
    await assert.rejects(client.watch().next(), refused);
    assert.equal(client.openStreams, 1);
    await first.close();
    assert.equal(client.openStreams, 0);
    const watch = client.watch();
    assert.deepEqual(await withTimeout(watch.ready, 10_000, "the watch"), []);
    assert.deepEqual(requests, [{ unsubscribe: { subscription: 1 } }, { watch: {} }]);
    await client.disconnect();
    await host.close();
  });

  test("aborting a stream's signal ends its for await quietly, and unsubscribes", async () => {
    const host = await fake();
    const unsubscribed = gate<Json>();
    host.script(async (peer) => {
      await peer.welcome();
      await subscribed(peer, { replay: { from: 0 } }, 4, 1);
      peer.send(output(4, 0, "abc"));
      const request = await peer.next();
      unsubscribed.open(request.request);
      peer.send({ event: { subscription: 4, event: { ended: { reason: "unsubscribed" } } } });
      peer.send({ response: { id: request.id, body: { unsubscribed: { subscription: 4 } } } });
    });
    const client = await connected({ socketPath: host.path });
    const controller = new AbortController();
    const items: StreamItem[] = [];
    const reading = (async () => {
      for await (const item of client.events("p1", { from: 0, signal: controller.signal })) {
        items.push(item);
        if (items.length === 2) controller.abort("done reading");
      }
    })();
    await withTimeout(reading, 10_000, "the for await to end");
    assert.deepEqual(describeItems(items), ["start:replay:1", "output:0:abc"]);
    assert.deepEqual(await withTimeout(unsubscribed.promise, 10_000, "the unsubscribe"), { unsubscribe: { subscription: 4 } });
    await client.disconnect();
    await host.close();
  });
});
