// Test support: a real host in a temp directory, behind a tap that checks
// every frame against the protocol's schema, a Unix-socket proxy, and a
// collector that reads a stream in the background and lets tests wait for
// conditions with timeouts.
//
// Every test of a file that imports this module fails when a frame that
// went by during it does not match the schema (schema.ts).

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach } from "node:test";
import type { PaneStream, PaneWatch, StreamItem, WatchEvent, WatchItem } from "../src/index.js";
import { assertNoSchemaMismatch, FrameChecker, packageDir } from "./schema.js";

afterEach(() => assertNoSchemaMismatch());

let cachedTargetDir: string | undefined;

/** The workspace's target directory, as cargo says (it honours CARGO_TARGET_DIR). */
export function targetDir(): string {
  if (cachedTargetDir !== undefined) return cachedTargetDir;
  const metadata = execFileSync("cargo", ["metadata", "--format-version", "1", "--no-deps"], {
    cwd: path.resolve(packageDir, "..", ".."),
    maxBuffer: 64 * 1024 * 1024,
  });
  cachedTargetDir = JSON.parse(metadata.toString("utf8")).target_directory as string;
  return cachedTargetDir;
}

/** The panehost binary: $PANEHOST_BIN, else the workspace's debug build. */
export function panehostBin(): string {
  const bin = process.env["PANEHOST_BIN"] || path.join(targetDir(), "debug", "panehost");
  if (!fs.existsSync(bin)) {
    throw new Error(`${bin} is missing: build it first (cargo build -p panehost-host), or set PANEHOST_BIN`);
  }
  return bin;
}

/** Rejects with a message naming `what` unless `promise` settles within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Retries `check` (every few ms) until it returns a value other than `undefined`, or fails after `ms`. */
export async function waitUntil<T>(what: string, ms: number, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A `panehost host` of its own: temp socket, state dir and HOME, clean
 * environment. Clients connect to {@link TestHost.socket}, a
 * {@link SchemaTap} in front of the host's own socket.
 */
export class TestHost {
  readonly dir: string;
  /** Where clients connect: the tap that checks every frame. */
  readonly socket: string;
  /** The host's own socket, behind the tap. */
  readonly hostSocket: string;
  private readonly child: ChildProcess;
  private tap: SchemaTap | undefined;
  private log = "";

  private constructor(dir: string, socket: string, hostSocket: string, child: ChildProcess) {
    this.dir = dir;
    this.socket = socket;
    this.hostSocket = hostSocket;
    this.child = child;
    child.stderr?.on("data", (chunk: Buffer) => {
      this.log += chunk.toString("utf8");
      if (this.log.length > 200_000) this.log = this.log.slice(-100_000);
    });
  }

  /**
   * Starts the host and waits until its socket accepts connections. Its
   * PATH begins with the directory of the panehost binary, so that the
   * workspace's other binaries next to it (the fixture agent, the keeper)
   * are found there. `shell` is its `SHELL`, the program of `shell` panes
   * (default `/bin/sh`).
   */
  static async start(options: { shell?: string } = {}): Promise<TestHost> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ph-ts-"));
    const home = path.join(dir, "home");
    fs.mkdirSync(home);
    const hostSocket = path.join(dir, "host", "host.sock");
    const bin = panehostBin();
    const child = spawn(bin, ["host", "--socket", hostSocket, "--state-dir", path.join(dir, "state")], {
      env: { HOME: home, SHELL: options.shell ?? "/bin/sh", PATH: `${path.dirname(bin)}:/usr/bin:/bin`, LANG: "C.UTF-8" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const host = new TestHost(dir, path.join(dir, "run", "host.sock"), hostSocket, child);
    // A last resort when the test process ends without its `after` hooks
    // (an uncaught error): end the host by its pid all the same.
    const killOnExit = () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, "SIGKILL");
    };
    process.once("exit", killOnExit);
    child.once("exit", () => process.off("exit", killOnExit));
    const exited = new Promise<never>((_, reject) => {
      child.once("exit", (code, signal) => reject(new Error(`host exited early (${code ?? signal}):\n${host.log}`)));
    });
    exited.catch(() => {});
    try {
      await Promise.race([waitUntil("the host to listen", 15_000, () => accepts(hostSocket)), exited]);
      // The client checks that the socket's directory is the user's alone.
      fs.mkdirSync(path.dirname(host.socket), { mode: 0o700 });
      host.tap = await SchemaTap.start(hostSocket, host.socket, "real host");
    } catch (error) {
      await host.stop();
      throw error;
    }
    return host;
  }

  /** The host's pid. */
  get pid(): number {
    return this.child.pid!;
  }

  /** What the host logged so far. */
  get logText(): string {
    return this.log;
  }

  /**
   * Ends the host by its pid (SIGTERM, then SIGKILL) and removes its
   * directory; then fails if a frame that went by since the last test does
   * not match the schema.
   */
  async stop(): Promise<void> {
    await this.tap?.close();
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
      process.kill(this.pid, "SIGTERM");
      try {
        await withTimeout(exited, 10_000, "the host to exit");
      } catch {
        process.kill(this.pid, "SIGKILL");
        await exited;
      }
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
    assertNoSchemaMismatch();
  }
}

/**
 * A Unix-socket relay in front of a host that checks every frame against
 * the schema (schema.ts): from the client a `Hello`, then request frames;
 * from the host a handshake reply, then server messages. It passes the
 * bytes on unchanged, whatever it finds.
 */
export class SchemaTap {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private connections = 0;

  private constructor(server: net.Server, target: string, name: string) {
    this.server = server;
    server.on("connection", (client) => this.accept(client, target, `${name}, connection ${++this.connections}`));
  }

  /** Listens on `socketPath` and relays to `target`; `name` heads its mismatches. */
  static async start(target: string, socketPath: string, name: string): Promise<SchemaTap> {
    const server = net.createServer();
    const tap = new SchemaTap(server, target, name);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => resolve());
    });
    return tap;
  }

  /** Stops listening and drops every connection. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket, target: string, where: string): void {
    const upstream = net.createConnection({ path: target });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("error", () => {});
      socket.once("close", () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    const fromHost = new FrameChecker("HandshakeReply", "ServerMessage", `${where}, host to client`);
    const fromClient = new FrameChecker("Hello", "RequestFrame", `${where}, client to host`, (hello, index) => {
      // After a Hello asking for bincode, later frames are not JSON.
      if (index === 0 && (hello as { encoding?: unknown } | null)?.encoding !== "json") fromClient.rest = fromHost.rest = null;
    });
    client.on("data", (chunk: Buffer) => fromClient.push(chunk));
    upstream.on("data", (chunk: Buffer) => fromHost.push(chunk));
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

/** True (not undefined) once a connection to `socket` is accepted. */
function accepts(socket: string): Promise<true | undefined> {
  return new Promise((resolve) => {
    const probe = net.createConnection({ path: socket });
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(undefined));
  });
}

/**
 * A Unix-socket proxy in front of the host. It can drop every proxied
 * connection, refuse the next few connections (closing them at once), or
 * rewrite the first frame a client sends.
 */
export class Proxy {
  readonly path: string;
  /** Connections accepted so far, refused ones included. */
  accepted = 0;
  private readonly server: net.Server;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private refuseNext = 0;
  private rewriteHello: ((hello: Record<string, unknown>) => Record<string, unknown>) | undefined;

  private constructor(server: net.Server, socketPath: string, target: string) {
    this.server = server;
    this.path = socketPath;
    server.on("connection", (client) => this.accept(client, target));
  }

  /** Listens on `socketPath` and forwards to `target`. */
  static async start(target: string, socketPath: string): Promise<Proxy> {
    const server = net.createServer();
    const proxy = new Proxy(server, socketPath, target);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => resolve());
    });
    return proxy;
  }

  /** Closes the next `n` connections as soon as they are accepted. */
  refuse(n: number): void {
    this.refuseNext = n;
  }

  /** Rewrites the `Hello` of every later connection. */
  rewriteFirstFrame(rewrite: (hello: Record<string, unknown>) => Record<string, unknown>): void {
    this.rewriteHello = rewrite;
  }

  /** Drops every proxied connection, both sides. */
  dropAll(): void {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    this.pairs.clear();
  }

  /** Stops listening and drops every connection. */
  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket, target: string): void {
    this.accepted += 1;
    client.on("error", () => {});
    if (this.refuseNext > 0) {
      this.refuseNext -= 1;
      client.destroy();
      return;
    }
    const upstream = net.createConnection({ path: target });
    upstream.on("error", () => {});
    const pair: [net.Socket, net.Socket] = [client, upstream];
    this.pairs.add(pair);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.once("close", drop);
    upstream.once("close", drop);
    upstream.pipe(client);
    const rewrite = this.rewriteHello;
    if (rewrite === undefined) {
      client.pipe(upstream);
      return;
    }
    // Take the first frame apart, rewrite it, then pass the rest through.
    let pending = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (pending.length < 4) return;
      const length = pending.readUInt32BE(0);
      if (pending.length < 4 + length) return;
      client.off("data", onData);
      const hello = rewrite(JSON.parse(pending.subarray(4, 4 + length).toString("utf8")));
      const payload = Buffer.from(JSON.stringify(hello), "utf8");
      const header = Buffer.alloc(4);
      header.writeUInt32BE(payload.length, 0);
      upstream.write(Buffer.concat([header, payload, pending.subarray(4 + length)]));
      client.pipe(upstream);
    };
    client.on("data", onData);
  }
}

/**
 * Reads a stream in the background and keeps everything: items, the output
 * bytes in order, errors. Tests wait for conditions on that with timeouts.
 */
export class Collector {
  readonly items: StreamItem[] = [];
  private chunks: Buffer[] = [];
  private outputBytes = 0;
  private joined: Buffer | undefined;
  error: unknown;
  done = false;
  private waiters = new Set<() => void>();
  /** Called for each item as it is read, before waiters are checked. */
  onItem: ((item: StreamItem, collector: Collector) => void) | undefined;

  constructor(readonly stream: PaneStream) {
    void this.run();
  }

  private async run(): Promise<void> {
    try {
      for await (const item of this.stream) {
        this.items.push(item);
        if (item.kind === "event" && item.event.kind === "output") {
          this.chunks.push(Buffer.from(item.event.data));
          this.outputBytes += item.event.data.length;
          this.joined = undefined;
        }
        this.onItem?.(item, this);
        this.notify();
      }
    } catch (error) {
      this.error = error;
    }
    this.done = true;
    this.notify();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Every output byte read so far, in order. */
  get output(): Buffer {
    this.joined ??= Buffer.concat(this.chunks);
    return this.joined;
  }

  /** How many output bytes were read. */
  get length(): number {
    return this.outputBytes;
  }

  /** The output as (lossy) UTF-8 text. */
  get text(): string {
    return this.output.toString("utf8");
  }

  /** The events read so far (without starts). */
  get events() {
    return this.items.flatMap((item) => (item.kind === "event" ? [item.event] : []));
  }

  /** The starts read so far. */
  get starts() {
    return this.items.flatMap((item) => (item.kind === "start" ? [item] : []));
  }

  /**
   * Resolves once `condition` holds, checked after every item; rejects
   * after `ms`, or when the stream ends or fails first.
   */
  waitFor(what: string, condition: (collector: Collector) => boolean, ms = 15_000): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (condition(this)) {
          finish();
          resolve();
        } else if (this.done) {
          finish();
          reject(new Error(`the stream ended (${String(this.error ?? "no error")}) before ${what}; output:\n${this.tail()}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${ms} ms waiting for ${what}; output:\n${this.tail()}`));
      }, ms);
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Waits until the output contains `text`. */
  waitForText(text: string, ms = 15_000): Promise<void> {
    return this.waitFor(JSON.stringify(text), (c) => c.output.includes(text), ms);
  }

  /** Waits until the stream is over. */
  waitForEnd(ms = 15_000): Promise<void> {
    return this.waitFor("the end of the stream", (c) => c.done, ms);
  }

  private tail(): string {
    return JSON.stringify(this.output.subarray(-400).toString("utf8"));
  }
}

/**
 * Reads a watch in the background and keeps its items and error. Tests
 * wait for conditions on them with timeouts.
 */
export class WatchCollector {
  readonly items: WatchItem[] = [];
  error: unknown;
  done = false;
  /** The most events the watch held buffered, seen after each item. */
  maxBuffered = 0;
  private waiters = new Set<() => void>();

  constructor(readonly watch: PaneWatch) {
    void this.run();
  }

  private async run(): Promise<void> {
    try {
      for await (const item of this.watch) {
        this.maxBuffered = Math.max(this.maxBuffered, this.watch.buffered);
        this.items.push(item);
        this.notify();
      }
    } catch (error) {
      this.error = error;
    }
    this.done = true;
    this.notify();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** The events read so far (without starts). */
  get events(): WatchEvent[] {
    return this.items.flatMap((item) => (item.kind === "event" ? [item.event] : []));
  }

  /** The starts read so far. */
  get starts() {
    return this.items.flatMap((item) => (item.kind === "start" ? [item] : []));
  }

  /** Resolves with the first event `match` accepts (one already read included); rejects after `ms` or at the end. */
  async waitForEvent<E extends WatchEvent>(what: string, match: (event: WatchEvent) => event is E, ms?: number): Promise<E>;
  async waitForEvent(what: string, match: (event: WatchEvent) => boolean, ms?: number): Promise<WatchEvent>;
  async waitForEvent(what: string, match: (event: WatchEvent) => boolean, ms = 15_000): Promise<WatchEvent> {
    await this.waitFor(what, (c) => c.events.some(match), ms);
    return this.events.find(match)!;
  }

  /**
   * Resolves once `condition` holds, checked after every item; rejects
   * after `ms`, or when the watch ends or fails first.
   */
  waitFor(what: string, condition: (collector: WatchCollector) => boolean, ms = 15_000): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (condition(this)) {
          finish();
          resolve();
        } else if (this.done) {
          finish();
          reject(new Error(`the watch ended (${String(this.error ?? "no error")}) before ${what}; items: ${this.describe()}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${ms} ms waiting for ${what}; items: ${this.describe()}`));
      }, ms);
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** The items read so far, shortly, for messages. */
  describe(): string {
    return this.items
      .map((item) => (item.kind === "start" ? `start:${item.cause}:${item.panes.length}` : JSON.stringify(item.event).slice(0, 120)))
      .join(", ");
  }
}
