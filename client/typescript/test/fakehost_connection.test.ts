// The client's connection against a scripted host (fakehost.ts): the
// handshake, corrupt frames, answers out of order, errors of the
// connection, and calls across a lost connection, with aborts and
// timeouts.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  AbortError,
  type AskOptions,
  type EventsOptions,
  type WatchOptions,
  ConnectionLostError,
  FrameError,
  MAX_HOST_FRAME,
  PanehostError,
  PROTOCOL_REVISION,
  RequestTimeoutError,
} from "../src/index.js";
import { connected, fake, gate, type Json, screen, stateBecomes, summary } from "./fakehost.js";
import { withTimeout } from "./support.js";

describe("frames and answers", () => {
  test("the hello is JSON with protocol 1, the client's revision and its name", async () => {
    const host = await fake();
    let hello: Json;
    host.script(async (peer) => {
      hello = await peer.welcome();
    });
    const client = await connected({ socketPath: host.path, clientName: "named/1" });
    assert.deepEqual(hello, { protocol: 1, revision: PROTOCOL_REVISION, encoding: "json", client: "named/1" });
    await client.disconnect();
    await host.close();
  });

  test("an oversized length prefix from the host fails the request in flight and closes that connection", async () => {
    const host = await fake();
    host.script(async (peer) => {
      await peer.welcome();
      await peer.next();
      const header = Buffer.alloc(4);
      header.writeUInt32BE(MAX_HOST_FRAME + 1, 0);
      peer.socket.write(header); // And no payload: the client must not wait for 16 MiB.
    });
    const client = await connected({ socketPath: host.path, reconnect: false });
    await assert.rejects(client.send("p1", { text: "x" }), FrameError);
    assert.equal(client.isClosed, true);
    await assert.rejects(client.list(), ConnectionLostError);
    await host.close();
  });

  test("after a corrupt frame the client connects again; the next request goes on the new connection", async () => {
    const host = await fake();
    host.script(
      async (peer) => {
        await peer.welcome();
        await peer.next();
        const header = Buffer.alloc(4);
        header.writeUInt32BE(MAX_HOST_FRAME + 1, 0);
        peer.socket.write(header);
      },
      async (peer) => {
        await peer.welcome();
        const list = await peer.next();
        peer.send({ response: { id: list.id, body: { panes: { panes: [summary] } } } });
      },
    );
    const client = await connected({ socketPath: host.path, reconnect: { initialBackoffMs: 5 } });
    await assert.rejects(client.send("p1", { text: "x" }), FrameError);
    assert.equal((await client.list()).length, 1);
    assert.equal(client.state, "connected");
    await client.disconnect();
    await host.close();
  });

  test("a request with no answer times out", async () => {
    const host = await fake();
    host.script(async (peer) => {
      await peer.welcome();
    });
    const client = await connected({ socketPath: host.path, requestTimeoutMs: 200 });
    const started = Date.now();
    await assert.rejects(client.list(), RequestTimeoutError);
    assert.ok(Date.now() - started < 5_000);
    await client.disconnect();
    await host.close();
  });

  test("answers are matched by id, even out of order and byte by byte", async () => {
    const host = await fake();
    host.script(async (peer) => {
      await peer.welcome();
      const first = await peer.next();
      const second = await peer.next();
      assert.ok(first.id < second.id, "ids increase");
      const messages = [
        { response: { id: second.id, body: { panes: { panes: [summary] } } } },
        { error: { id: first.id, error: { code: "UNKNOWN_PANE", message: "no pane p9", limitation: null } } },
      ];
      const bytes = Buffer.concat(messages.map((m) => peer.frame(m)));
      for (const byte of bytes) peer.socket.write(Uint8Array.of(byte));
    });
    const client = await connected({ socketPath: host.path });
    const inspected = client.inspect("p9");
    const listed = client.list();
    await assert.rejects(inspected, (error: unknown) => {
      assert.ok(error instanceof PanehostError);
      assert.equal(error.code, "UNKNOWN_PANE");
      assert.equal(error.message, "no pane p9");
      return true;
    });
    const panes = await listed;
    assert.equal(panes.length, 1);
    assert.deepEqual(panes[0]!.state, { kind: "running" });
    assert.equal((panes[0] as Json).some_future_field, undefined);
    await client.disconnect();
    await host.close();
  });

  test("a connection error with no id is the cause of the lost connection", async () => {
    const host = await fake();
    host.script(async (peer) => {
      await peer.welcome();
      await peer.next();
      peer.send({ error: { id: null, error: { code: "FRAME_TOO_LARGE", message: "too large", limitation: null } } });
      peer.socket.end();
    });
    const client = await connected({ socketPath: host.path, reconnect: false });
    await assert.rejects(client.send("p1", { text: "x" }), (error: unknown) => {
      assert.ok(error instanceof ConnectionLostError);
      assert.equal(error.requestSent, true);
      assert.ok(error.cause instanceof ConnectionLostError);
      assert.ok(error.cause.cause instanceof PanehostError);
      assert.equal((error.cause.cause as PanehostError).code, "FRAME_TOO_LARGE");
      return true;
    });
    await host.close();
  });
});

describe("calls: waiting, aborts, timeouts", () => {
  test("a request made while the client reconnects waits for the new connection; one whose time runs out first is never sent", async () => {
    const host = await fake();
    const drop = gate();
    const welcomeAgain = gate();
    const requests: Json[] = [];
    host.script(
      async (peer) => {
        await peer.welcome(3);
        await drop.promise;
        peer.socket.destroy();
      },
      async (peer) => {
        await welcomeAgain.promise;
        await peer.welcome(3);
        const inspect = await peer.next();
        requests.push(inspect.request);
        peer.send({ response: { id: inspect.id, body: { inspected: { pane: summary, screen: screen(0) } } } });
        const runtimes = await peer.next();
        requests.push(runtimes.request);
        peer.send({ response: { id: runtimes.id, body: { runtimes: { runtimes: [] } } } });
      },
    );
    const client = await connected({ socketPath: host.path, reconnect: { initialBackoffMs: 5 } });
    const reconnecting = stateBecomes(client, "reconnecting");
    drop.open();
    await reconnecting;
    const inspected = client.inspect("p1");
    await assert.rejects(client.list({ deadlineMs: 100 }), (error: unknown) => {
      assert.ok(error instanceof RequestTimeoutError, String(error));
      assert.equal(error.deadlineMs, 100);
      return true;
    });
    assert.equal(client.state, "reconnecting");
    welcomeAgain.open();
    const detail = await withTimeout(inspected, 10_000, "the inspect");
    assert.equal(detail.pane.id, "p1");
    assert.deepEqual(await client.runtimes(), []);
    assert.deepEqual(requests, [{ inspect: { pane: "p1" } }, { runtimes: {} }], "the timed-out list was never sent");
    await client.disconnect();
    await host.close();
  });

  test("requests waiting when the reconnect policy gives up reject, unsent; the next request connects again", async () => {
    const host = await fake();
    const drop = gate();
    host.script(async (peer) => {
      await peer.welcome(3);
      await drop.promise;
      peer.socket.destroy();
    });
    // With no script, the fake host closes every connection at once.
    const client = await connected({ socketPath: host.path, reconnect: { initialBackoffMs: 5, maxBackoffMs: 20, maxTotalMs: 200 } });
    const reconnecting = stateBecomes(client, "reconnecting");
    drop.open();
    await reconnecting;
    const down = stateBecomes(client, "down");
    await assert.rejects(client.inspect("p1"), (error: unknown) => {
      assert.ok(error instanceof ConnectionLostError, String(error));
      assert.equal(error.requestSent, false);
      return true;
    });
    await down;
    host.script(async (peer) => {
      await peer.welcome(3);
      const list = await peer.next();
      peer.send({ response: { id: list.id, body: { panes: { panes: [summary] } } } });
    });
    assert.equal((await client.list()).length, 1);
    assert.equal(client.state, "connected");
    await client.disconnect();
    await host.close();
  });

  test("an abort rejects with AbortError at once, a timeout with RequestTimeoutError; late answers are dropped", async () => {
    const host = await fake();
    const firstRead = gate();
    const sendLate = gate();
    const timedOutRead = gate();
    const sendLateAgain = gate();
    const seen: Json[] = [];
    host.script(async (peer) => {
      await peer.welcome(3);
      const aborted = await peer.next();
      firstRead.open();
      await sendLate.promise;
      // The answer to the aborted list, late: it must not answer the next list.
      peer.send({ response: { id: aborted.id, body: { panes: { panes: [summary] } } } });
      const list = await peer.next();
      seen.push(list.request);
      peer.send({ response: { id: list.id, body: { panes: { panes: [] } } } });
      const slow = await peer.next();
      seen.push(slow.request);
      timedOutRead.open();
      await sendLateAgain.promise;
      peer.send({ response: { id: slow.id, body: { inspected: { pane: summary, screen: screen(0) } } } });
      const next = await peer.next();
      seen.push(next.request);
      peer.send({ response: { id: next.id, body: { inspected: { pane: { ...summary, id: "p2" }, screen: screen(0) } } } });
    });
    const client = await connected({ socketPath: host.path });

    const controller = new AbortController();
    const aborted = client.list({ signal: controller.signal });
    await withTimeout(firstRead.promise, 10_000, "the list to reach the host");
    controller.abort("enough");
    await assert.rejects(aborted, (error: unknown) => {
      assert.ok(error instanceof AbortError, String(error));
      assert.equal(error.name, "AbortError");
      assert.equal(error.code, "ABORT_ERR");
      assert.equal(error.cause, "enough");
      return true;
    });
    // A signal aborted before the call: rejected at once, nothing sent.
    await assert.rejects(client.inspect("p1", { signal: AbortSignal.abort() }), AbortError);
    const listed = client.list();
    sendLate.open();
    assert.deepEqual(await listed, [], "the late answer of the aborted list was dropped");

    const slow = client.inspect("p1", { deadlineMs: 150 });
    await withTimeout(timedOutRead.promise, 10_000, "the inspect to reach the host");
    await assert.rejects(slow, (error: unknown) => {
      assert.ok(error instanceof RequestTimeoutError, String(error));
      assert.equal(error.deadlineMs, 150);
      return true;
    });
    const next = client.inspect("p2");
    sendLateAgain.open();
    assert.equal((await next).pane.id, "p2", "the late answer of the timed-out inspect was dropped");
    assert.deepEqual(seen, [{ list: {} }, { inspect: { pane: "p1" } }, { inspect: { pane: "p2" } }]);
    await client.disconnect();
    await host.close();
  });

  test("the client's deadline is deadlineMs; an options object naming timeoutMs is refused, nothing sent", async () => {
    const host = await fake();
    const seen: Json[] = [];
    host.script(async (peer) => {
      await peer.welcome();
      for (;;) {
        const request = await peer.next();
        seen.push(request.request);
        peer.send({ response: { id: request.id, body: { panes: { panes: [] } } } });
      }
    });
    const client = await connected({ socketPath: host.path });
    // The mix-up the old name allowed: the host's wait and the client's deadline in one object.
    const mixed = { timeout_ms: 5000, timeoutMs: 300 } as unknown as AskOptions;
    await assert.rejects(client.ask("p1", "make", mixed), (error: unknown) => {
      assert.ok(error instanceof TypeError, String(error));
      assert.match(error.message, /deadlineMs.*timeout_ms/);
      return true;
    });
    assert.throws(() => client.events("p1", { timeoutMs: 5 } as unknown as EventsOptions), TypeError);
    assert.throws(() => client.watch({ timeoutMs: 5 } as unknown as WatchOptions), TypeError);
    assert.deepEqual(await client.list({ deadlineMs: 5_000 }), []);
    assert.deepEqual(seen, [{ list: {} }], "only the list reached the host");
    await client.disconnect();
    await host.close();
  });
});
