// Test support: a scripted host on a temp socket. A client has one
// connection: each script plays one connection of the host, in the order
// the client makes them. Every frame either side writes is checked against
// the protocol's schema (schema.ts), but for the few a newer host would
// send, which are checked to be beyond it.
//
// A test file that imports this module gets a temp directory for the fake
// hosts' sockets, and after its tests every client and fake host made
// through it is closed and the schema checked once more.

import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, before } from "node:test";
import {
  type Client,
  connect,
  type ConnectOptions,
  encodeFrame,
  FrameDecoder,
  MAX_HOST_FRAME,
  type StreamItem,
} from "../src/index.js";
import { assertNoSchemaMismatch, checkBeyondSchema, checkFrame } from "./schema.js";
import { withTimeout } from "./support.js";

/** A frame as JSON, unchecked by the type system (the schema checks it). */
export type Json = any;

/** One accepted connection of the fake host, seen from the host's side. */
export class Peer {
  private readonly decoder = new FrameDecoder(MAX_HOST_FRAME);
  private readonly frames: Json[] = [];
  private waiting: ((frame: Json) => void) | undefined;
  private received = 0;
  private sent = 0;
  /** Resolves when the connection closed. */
  closed: Promise<void>;

  /** Reads `socket`; `where` names it in schema mismatches. */
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
export class FakeHost {
  /** Its socket. */
  readonly path: string;
  private readonly server: net.Server;
  private scripts: Array<(peer: Peer) => Promise<void>> = [];
  private readonly peers: Peer[] = [];

  /** A fake host at `dir/name`, not listening yet. */
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

  /** Listens on its socket. */
  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.path, () => resolve()));
  }

  /** Scripts for the next connections, in order. */
  script(...scripts: Array<(peer: Peer) => Promise<void>>): void {
    this.scripts.push(...scripts);
  }

  /** Ends every connection and stops listening. */
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

/** A new fake host on a socket of its own, listening, closed after the tests. */
export async function fake(): Promise<FakeHost> {
  const host = new FakeHost(dir, `fake-${++fakes}.sock`);
  hosts.push(host);
  await host.listen();
  return host;
}

/** `connect`, remembering the client to disconnect after the tests. */
export async function connected(options: ConnectOptions): Promise<Client> {
  const client = await connect(options);
  clients.push(client);
  return client;
}

/** A pane as the host lists it, with a field of a newer host that the client ignores. */
export const summary = {
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

/** A screen snapshot at `offset`, as JSON. */
export function screen(offset: number) {
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

/** An `output` event of `subscription`, as JSON. */
export function output(subscription: number, offset: number, text: string) {
  return { event: { subscription, event: { output: { offset, data: Buffer.from(text).toString("base64") } } } };
}

/** Reads the next request (a subscription to p1) and answers it `subscribed`, starting with `start`. */
export async function subscribed(peer: Peer, start: Json, subscription: number, generation: number): Promise<Json> {
  const request = await peer.next();
  peer.send({ response: { id: request.id, body: { subscribed: { subscription, pane: "p1", generation, start } } } });
  return request;
}

/** Welcomes a connection and does nothing more. */
export async function welcomeOnly(peer: Peer): Promise<void> {
  await peer.welcome();
}

/** Every item of `stream`, until it ends. */
export async function collect(stream: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

/** Items as short strings, to compare with an expected list. */
export function describeItems(items: StreamItem[]): string[] {
  return items.map((item) => {
    if (item.kind === "start") return `start:${item.start.kind}:${item.generation}`;
    const event = item.event;
    if (event.kind === "output") return `output:${event.offset}:${Buffer.from(event.data).toString()}`;
    if (event.kind === "ended") return `ended:${event.reason}`;
    return event.kind;
  });
}

/** A promise that the test opens when it wants. */
export function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Resolves when the client's state becomes `state`. */
export function stateBecomes(client: Client, state: string): Promise<void> {
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
