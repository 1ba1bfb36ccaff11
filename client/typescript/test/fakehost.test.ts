// The client against a scripted host on a temp socket: corrupt frames,
// timeouts, answers out of order, resumes where the host replays more than
// asked or the generation changed, requests across a lost connection,
// aborts, streams that let go of their subscription when their consumer
// falls behind, and the limit of streams. A client has one connection:
// each script below plays one connection of the host, in the order the
// client makes them. Every frame either side writes is checked against the
// protocol's schema (schema.ts), but for the few a newer host would send,
// which are checked to be beyond it.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  AbortError,
  type Client,
  connect,
  type ConnectOptions,
  ConnectionLostError,
  encodeFrame,
  FrameDecoder,
  FrameError,
  HostRevisionError,
  MAX_HOST_FRAME,
  PanehostError,
  RequestTimeoutError,
  type StreamItem,
} from "../src/index.js";
import { assertNoSchemaMismatch, checkBeyondSchema, checkFrame } from "./schema.js";
import { withTimeout } from "./support.js";

type Json = any;

/** One accepted connection of the fake host, seen from the host's side. */
class Peer {
  private readonly decoder = new FrameDecoder(MAX_HOST_FRAME);
  private readonly frames: Json[] = [];
  private waiting: ((frame: Json) => void) | undefined;
  private received = 0;
  private sent = 0;
  closed: Promise<void>;

  constructor(
    readonly socket: net.Socket,
    private readonly where: string,
  ) {
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      this.decoder.push(chunk);
      for (let payload = this.decoder.next(); payload; payload = this.decoder.next()) {
        const frame = JSON.parse(Buffer.from(payload).toString("utf8"));
        const index = this.received++;
        checkFrame(index === 0 ? "Hello" : "RequestFrame", frame, `${this.where}, client frame ${index}`);
        this.frames.push(frame);
      }
      if (this.waiting && this.frames.length > 0) {
        const waiting = this.waiting;
        this.waiting = undefined;
        waiting(this.frames.shift());
      }
    });
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
  }

  /** The next frame the client sent. */
  next(): Promise<Json> {
    if (this.frames.length > 0) return Promise.resolve(this.frames.shift());
    return withTimeout(new Promise((resolve) => (this.waiting = resolve)), 10_000, "a frame from the client");
  }

  /** Sends a message, which must match the schema: the handshake reply first, then server messages. */
  send(message: Json): void {
    this.socket.write(this.frame(message));
  }

  /** The frame of a message, checked as {@link Peer.send} checks it, for a test that writes it its own way. */
  frame(message: Json): Buffer {
    const index = this.sent++;
    checkFrame(index === 0 ? "HandshakeReply" : "ServerMessage", message, `${this.where}, host frame ${index}`);
    return encodeFrame(Buffer.from(JSON.stringify(message)), MAX_HOST_FRAME);
  }

  /** Sends a server message of a newer host: one that must not match this schema. */
  sendBeyondSchema(message: Json): void {
    checkBeyondSchema("ServerMessage", message, `${this.where}, host frame ${this.sent++}`);
    this.socket.write(encodeFrame(Buffer.from(JSON.stringify(message)), MAX_HOST_FRAME));
  }

  /** Reads the hello and welcomes the client, as a host of `revision` (none: one that predates revisions). */
  async welcome(revision?: number): Promise<Json> {
    const hello = await this.next();
    this.send({ welcome: { protocol: 1, ...(revision === undefined ? {} : { revision }), host: "fake 0", encoding: "json" } });
    return hello;
  }

  /** True when the client sent a frame that was not read yet. */
  get hasUnread(): boolean {
    return this.frames.length > 0;
  }
}

/** A fake host: each accepted connection is handed to the next script. */
class FakeHost {
  readonly path: string;
  private readonly server: net.Server;
  private scripts: Array<(peer: Peer) => Promise<void>> = [];
  private readonly peers: Peer[] = [];

  constructor(dir: string, name: string) {
    this.path = path.join(dir, name);
    this.server = net.createServer((socket) => {
      const peer = new Peer(socket, `${name}, connection ${this.peers.length + 1}`);
      this.peers.push(peer);
      const script = this.scripts.shift();
      if (script) void script(peer).catch(() => socket.destroy());
      else socket.destroy();
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.path, () => resolve()));
  }

  /** Scripts for the next connections, in order. */
  script(...scripts: Array<(peer: Peer) => Promise<void>>): void {
    this.scripts.push(...scripts);
  }

  async close(): Promise<void> {
    for (const peer of this.peers) peer.socket.destroy();
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let dir: string;
let fakes = 0;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ph-ts-fake-"));
});

/** Every fake host and client made, so that a failed test leaves none open. */
const hosts: FakeHost[] = [];
const clients: Client[] = [];

after(async () => {
  await Promise.allSettled(clients.map((client) => client.disconnect()));
  await Promise.allSettled(hosts.map((host) => host.close()));
  fs.rmSync(dir, { recursive: true, force: true });
  // Frames of the last disconnects, after the last test's own check.
  assertNoSchemaMismatch();
});

async function fake(): Promise<FakeHost> {
  const host = new FakeHost(dir, `fake-${++fakes}.sock`);
  hosts.push(host);
  await host.listen();
  return host;
}

/** `connect`, remembering the client to disconnect after the tests. */
async function connected(options: ConnectOptions): Promise<Client> {
  const client = await connect(options);
  clients.push(client);
  return client;
}

const summary = {
  id: "p1",
  runtime: "shell",
  generation: 1,
  state: "running",
  pid: 42,
  size: { cols: 80, rows: 24 },
  offset: 0,
  cwd: "/",
  title: "",
  created_at_ms: 1,
  some_future_field: true,
};

function screen(offset: number) {
  return {
    offset,
    size: { cols: 80, rows: 24 },
    text: "",
    formatted: "G1tI",
    cursor: { row: 0, col: 0, visible: true },
    title: "",
    alternate_screen: false,
    modes: { bracketed_paste: false, mouse: false, application_keypad: false, application_cursor: false },
  };
}

function output(subscription: number, offset: number, text: string) {
  return { event: { subscription, event: { output: { offset, data: Buffer.from(text).toString("base64") } } } };
}

/** Reads the next request (a subscription to p1) and answers it `subscribed`, starting with `start`. */
async function subscribed(peer: Peer, start: Json, subscription: number, generation: number): Promise<Json> {
  const request = await peer.next();
  peer.send({ response: { id: request.id, body: { subscribed: { subscription, pane: "p1", generation, start } } } });
  return request;
}

/** Welcomes a connection and does nothing more. */
async function welcomeOnly(peer: Peer): Promise<void> {
  await peer.welcome();
}

async function collect(stream: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

function describeItems(items: StreamItem[]): string[] {
  return items.map((item) => {
    if (item.kind === "start") return `start:${item.start.kind}:${item.generation}`;
    const event = item.event;
    if (event.kind === "output") return `output:${event.offset}:${Buffer.from(event.data).toString()}`;
    if (event.kind === "ended") return `ended:${event.reason}`;
    return event.kind;
  });
}

describe("client against a scripted host", () => {
  test("the hello is JSON with protocol 1, revision 3 and the client's name", async () => {
    const host = await fake();
    let hello: Json;
    host.script(async (peer) => {
      hello = await peer.welcome();
    });
    const client = await connected({ socketPath: host.path, clientName: "named/1" });
    assert.deepEqual(hello, { protocol: 1, revision: 3, encoding: "json", client: "named/1" });
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

  test("the new request fields go on the wire; answers without optional fields decode as null", async () => {
    const host = await fake();
    const requests: Json[] = [];
    host.script(
      async (peer) => {
        await peer.welcome();
        const start = await peer.next();
        requests.push(start.request);
        peer.send({ response: { id: start.id, body: { started: summary } } });
        const interrupt = await peer.next();
        requests.push(interrupt.request);
        peer.send({ response: { id: interrupt.id, body: { interrupted: { pane: "p1", outcome: "not_running", steps: [] } } } });
        const runtimes = await peer.next();
        const minimal = { id: "fx", display_name: "Fx", supported: true, available: false, resume_modes: [], limitations: [] };
        const receipt = { runtime: "fx", passed: false, detail: "timeout", path: "/bin/fx", sha256: "ab", taken_at_ms: 5, elapsed_ms: 6, read_only_enforced: true };
        peer.send({ response: { id: runtimes.id, body: { runtimes: { runtimes: [minimal, { ...minimal, id: "fy", receipt, permission_profiles: ["read_only"] }] } } } });
        // `ask` and `probe_runtime` come on the same connection.
        const ask = await peer.next();
        requests.push(ask.request);
        const usage = { kind: "measured", input_tokens: 12 };
        peer.send({ response: { id: ask.id, body: { answered: { source: "shell_integration", started_offset: 1, completed_offset: 9, duration_ms: 40, added_text: "hi", usage, exit_code: 7 } } } });
        const probe = await peer.next();
        requests.push(probe.request);
        const taken = { runtime: "fx", passed: true, detail: "ok", path: "/bin/fx", version: null, sha256: "ab", taken_at_ms: 5, elapsed_ms: 6, read_only_enforced: false };
        peer.send({ response: { id: probe.id, body: { receipt: taken } } });
      },
    );
    const client = await connected({ socketPath: host.path });
    const pane = await client.start({ runtime: "fx", permission_profile: "read_only", accept_weaker_boundary: true, require_ready: true, max_wall_ms: 900 });
    // A host that does not send them: the defaults, never `undefined`.
    assert.deepEqual([pane.activity, pane.restored_by, pane.completion], ["unknown", "", ""]);
    assert.deepEqual(await client.interrupt("p1", { terminate: true }), { pane: "p1", outcome: "not_running", steps: [] });
    const [fx, fy] = await client.runtimes();
    assert.deepEqual([fx!.receipt, fx!.permission_profiles, fx!.readiness_gate, fx!.receipt_valid], [null, [], null, false]);
    assert.deepEqual(fy!.receipt, { runtime: "fx", passed: false, detail: "timeout", path: "/bin/fx", version: null, sha256: "ab", taken_at_ms: 5, elapsed_ms: 6, read_only_enforced: true });
    assert.deepEqual(fy!.permission_profiles, ["read_only"]);
    const turn = await client.ask("p1", "hello");
    assert.deepEqual(turn.usage, { kind: "measured", input_tokens: 12, output_tokens: null, cost_micro_usd: null });
    assert.equal(turn.added_text, "hi");
    assert.equal(turn.exit_code, 7);
    const receipt = await client.probeRuntime("fx", { accept_weaker_boundary: true });
    assert.equal(receipt.passed, true);
    assert.equal(receipt.version, null);
    assert.deepEqual(requests, [
      { start: { runtime: "fx", cwd: null, size: null, command: [], model: null, resume: null, max_wall_ms: 900, permission_profile: "read_only", accept_weaker_boundary: true, require_ready: true, rerun_after_host_loss: false, labels: {}, env: {} } },
      { interrupt: { pane: "p1", terminate: true } },
      { ask: { pane: "p1", text: "hello", timeout_ms: null } },
      { probe_runtime: { runtime: "fx", model: null, accept_weaker_boundary: true } },
    ]);
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
});

/** A promise that the test opens when it wants. */
function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Resolves when the client's state becomes `state`. */
function stateBecomes(client: Client, state: string): Promise<void> {
  return withTimeout(
    new Promise<void>((resolve) => {
      const stop = client.onStateChange((now) => {
        if (now === state) {
          stop();
          resolve();
        }
      });
    }),
    10_000,
    `the state ${state}`,
  );
}

describe("calls: waiting, aborts, timeouts, revisions", () => {
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
    await assert.rejects(client.list({ timeoutMs: 100 }), (error: unknown) => {
      assert.ok(error instanceof RequestTimeoutError, String(error));
      assert.equal(error.timeoutMs, 100);
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

    const slow = client.inspect("p1", { timeoutMs: 150 });
    await withTimeout(timedOutRead.promise, 10_000, "the inspect to reach the host");
    await assert.rejects(slow, (error: unknown) => {
      assert.ok(error instanceof RequestTimeoutError, String(error));
      assert.equal(error.timeoutMs, 150);
      return true;
    });
    const next = client.inspect("p2");
    sendLateAgain.open();
    assert.equal((await next).pane.id, "p2", "the late answer of the timed-out inspect was dropped");
    assert.deepEqual(seen, [{ list: {} }, { inspect: { pane: "p1" } }, { inspect: { pane: "p2" } }]);
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
    const stream = client.events("p1", { from: 0, timeoutMs: 100 });
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

  test("a host older than revision 3: watch, wait_for, labels, env and the list filter are refused before anything is sent", async () => {
    const host = await fake();
    const requests: Json[] = [];
    host.script(async (peer) => {
      await peer.welcome(2);
      const list = await peer.next();
      requests.push(list.request);
      peer.send({ response: { id: list.id, body: { panes: { panes: [] } } } });
    });
    const client = await connected({ socketPath: host.path });
    assert.equal(client.welcome.revision, 2);
    const isRevisionError = (feature: string) => (error: unknown) => {
      assert.ok(error instanceof HostRevisionError, String(error));
      assert.equal(error.feature, feature);
      assert.equal(error.needed, 3);
      assert.equal(error.hostRevision, 2);
      return true;
    };
    const watch = client.watch();
    await assert.rejects(watch.ready, isRevisionError("watch"));
    await assert.rejects(watch.next(), isRevisionError("watch"));
    assert.deepEqual(await watch.next(), { done: true, value: undefined });
    await assert.rejects(client.list({ labels: { owner: "ada" } }), isRevisionError("list by labels"));
    await assert.rejects(client.start({ runtime: "shell", labels: { owner: "ada" } }), isRevisionError("start with labels"));
    await assert.rejects(client.start({ runtime: "shell", env: { A: "1" } }), isRevisionError("start with env"));
    await assert.rejects(client.waitFor("p1", "x"), isRevisionError("wait_for"));
    assert.deepEqual(await client.list(), []);
    assert.deepEqual(requests, [{ list: {} }], "only the plain list was sent");
    await client.disconnect();
    await host.close();
  });

  test("labels, env, the list filter, wait_for and watch events go on the wire and decode", async () => {
    const host = await fake();
    const requests: Json[] = [];
    const labelled = { ...summary, labels: { owner: "ada" } };
    host.script(async (peer) => {
      await peer.welcome(3);
      const start = await peer.next();
      requests.push(start.request);
      peer.send({ response: { id: start.id, body: { started: labelled } } });
      const list = await peer.next();
      requests.push(list.request);
      peer.send({ response: { id: list.id, body: { panes: { panes: [labelled] } } } });
      const wait = await peer.next();
      requests.push(wait.request);
      peer.send({ response: { id: wait.id, body: { waited: { pane: "p1", target: "output", offset: 42, matched: "done" } } } });
      const watch = await peer.next();
      requests.push(watch.request);
      peer.send({ response: { id: watch.id, body: { watching: { subscription: 4, panes: [summary] } } } });
      const event = (body: Json) => peer.send({ event: { subscription: 4, event: body } });
      event({ pane_started: { pane: labelled } });
      event({ pane_activity: { pane: "p1", activity: "busy" } });
      event({ pane_exited: { pane: "p1", status: { code: 1, signal: null } } });
      event({ pane_ended: { pane: "p1", reason: "closed" } });
      event({ pane_list: { panes: [labelled], missed: 12 } });
      peer.sendBeyondSchema({ event: { subscription: 4, event: { pane_renamed: { pane: "p1" } } } });
      event({ ended: { reason: "closed" } });
    });
    const client = await connected({ socketPath: host.path });
    const pane = await client.start({ runtime: "shell", labels: { owner: "ada" }, env: { GREETING: "hi" } });
    assert.deepEqual(pane.labels, { owner: "ada" });
    assert.deepEqual((await client.list({ labels: { owner: "ada" } }))[0]!.labels, { owner: "ada" });
    assert.deepEqual(await client.waitFor("p1", "do+ne", { target: "output", from: 7, timeout_ms: 500 }), {
      pane: "p1",
      target: "output",
      offset: 42,
      matched: "done",
    });
    const items = [];
    for await (const item of client.watch()) items.push(item);
    assert.equal(requests[0].start.labels.owner, "ada");
    assert.deepEqual(requests[0].start.env, { GREETING: "hi" });
    assert.deepEqual(requests.slice(1), [
      { list: { labels: { owner: "ada" } } },
      { wait_for: { pane: "p1", pattern: "do+ne", target: "output", from: 7, timeout_ms: 500 } },
      { watch: {} },
    ]);
    const described = items.map((item) => (item.kind === "start" ? `start:${item.cause}:${item.panes[0]!.id}` : item.event));
    assert.equal(described[0], "start:watching:p1");
    const expectedPane = { ...pane, labels: { owner: "ada" } };
    assert.deepEqual(described.slice(1), [
      { kind: "pane_started", pane: expectedPane },
      { kind: "pane_activity", pane: "p1", activity: "busy" },
      { kind: "pane_exited", pane: "p1", status: { code: 1, signal: null } },
      { kind: "pane_ended", pane: "p1", reason: "closed" },
      { kind: "pane_list", panes: [expectedPane], missed: 12 },
      { kind: "other", name: "pane_renamed", body: { pane: "p1" } },
      { kind: "ended", reason: "closed" },
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
});
