// Operations against a real host: handshake, start, send, events, inspect,
// resize, interrupt, close, errors, replay.

import assert from "node:assert/strict";
import * as net from "node:net";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type Client,
  connect,
  encodeFrame,
  FrameDecoder,
  PanehostError,
  PROTOCOL_REVISION,
  PROTOCOL_VERSION,
} from "../src/index.js";
import { Collector, Proxy, TestHost, waitUntil, withTimeout } from "./support.js";

let host: TestHost;
let client: Client;

before(async () => {
  host = await TestHost.start();
  client = await connect({ socketPath: host.socket, clientName: "ts-tests/1" });
});

after(async () => {
  try {
    if (client) await client.disconnect();
  } finally {
    if (host) await host.stop();
  }
});

/** Starts an interactive shell and waits for its prompt. */
async function shellWithPrompt(): Promise<{ id: string; collector: Collector }> {
  const pane = await client.start({ runtime: "shell" });
  const collector = new Collector(client.events(pane.id, { from: 0 }));
  // dash's prompt: "$ ", or "# " for root.
  await collector.waitFor("the shell's prompt", (c) => /[$#] $/.test(c.text));
  return { id: pane.id, collector };
}

describe("handshake", () => {
  test("connect performs the handshake in JSON", () => {
    assert.equal(client.welcome.protocol, PROTOCOL_VERSION);
    // A JSON client is served by a host of any revision (PROTOCOL.md
    // section 11): this one's, or a newer one.
    assert.ok(client.welcome.revision >= PROTOCOL_REVISION, `revision ${client.welcome.revision}`);
    assert.equal(client.welcome.encoding, "json");
    assert.match(client.welcome.host, /^panehost /);
  });

  test("a hello with protocol 999 is refused with PROTOCOL_MISMATCH (raw socket)", async () => {
    const socket = net.createConnection({ path: host.socket });
    socket.on("error", () => {});
    const decoder = new FrameDecoder();
    const reply = await withTimeout(
      new Promise<Record<string, any>>((resolve, reject) => {
        socket.once("connect", () => {
          const hello = { protocol: 999, encoding: "json", client: "ts-tests/raw" };
          socket.write(encodeFrame(Buffer.from(JSON.stringify(hello))));
        });
        socket.on("data", (chunk) => {
          decoder.push(chunk);
          const payload = decoder.next();
          if (payload) resolve(JSON.parse(Buffer.from(payload).toString("utf8")));
        });
        socket.once("close", () => reject(new Error("closed without a reply")));
      }),
      10_000,
      "the handshake reply",
    );
    socket.destroy();
    assert.ok(reply["refused"], `expected refused, got ${JSON.stringify(reply)}`);
    assert.equal(reply["refused"].code, "PROTOCOL_MISMATCH");
    assert.equal(reply["refused"].protocol, 1);
    assert.equal(typeof reply["refused"].message, "string");
  });

  test("connect rejects with a PanehostError carrying the refusal's code", async () => {
    const proxy = await Proxy.start(host.socket, path.join(host.dir, "refuse.sock"));
    try {
      proxy.rewriteFirstFrame((hello) => ({ ...hello, protocol: 999 }));
      await assert.rejects(connect({ socketPath: proxy.path }), (error: unknown) => {
        assert.ok(error instanceof PanehostError);
        assert.equal(error.code, "PROTOCOL_MISMATCH");
        assert.equal(error.refused, true);
        assert.equal(error.protocol, 1);
        return true;
      });
    } finally {
      await proxy.close();
    }
  });

  test("no host at the path rejects with a lost connection", async () => {
    await assert.rejects(connect({ socketPath: path.join(host.dir, "nobody.sock") }), { name: "ConnectionLostError" });
  });
});

describe("operations", () => {
  test("runtimes lists the shell", async () => {
    const runtimes = await client.runtimes();
    const shell = runtimes.find((runtime) => runtime.id === "shell");
    assert.ok(shell, "shell runtime");
    assert.equal(shell.supported, true);
    assert.ok(Array.isArray(shell.limitations));
  });

  test("start a shell, send a command, read its output, inspect the screen, list it", async () => {
    const { id, collector } = await shellWithPrompt();
    const start = collector.starts[0]!;
    assert.equal(start.start.kind, "replay");
    assert.equal(start.generation, 1);

    const sent = await client.send(id, { text: "echo ts-$((6*7))", enter: true });
    assert.equal(sent.pane, id);
    assert.equal(sent.bytes, "echo ts-$((6*7))".length + 1);
    await collector.waitForText("ts-42");

    // Output is contiguous from 0.
    let next = 0;
    for (const event of collector.events) {
      if (event.kind !== "output") continue;
      assert.equal(event.offset, next);
      next += event.data.length;
    }

    // The screen model may trail the output a little: wait for it.
    const deadline = Date.now() + 10_000;
    let detail = await client.inspect(id);
    while (!/^ts-42$/m.test(detail.screen.text) && Date.now() < deadline) {
      detail = await client.inspect(id);
    }
    assert.match(detail.screen.text, /^ts-42$/m);
    assert.equal(detail.pane.id, id);
    assert.equal(detail.pane.runtime, "shell");
    assert.deepEqual(detail.pane.state, { kind: "running" });
    assert.ok(detail.screen.formatted instanceof Uint8Array && detail.screen.formatted.length > 0);
    assert.ok(detail.screen.offset <= detail.pane.offset);

    const panes = await client.list();
    assert.ok(panes.some((pane) => pane.id === id));

    await collector.stream.close();
    await client.close(id);
  });

  test("history returns the lines that scrolled off, then the screen", async () => {
    const pane = await client.start({ runtime: "shell", command: ["seq", "1", "300"] });
    const collector = new Collector(client.events(pane.id, { from: 0 }));
    await collector.waitFor("the exit", (c) => c.events.some((event) => event.kind === "exited"));
    const all = await client.history(pane.id);
    assert.deepEqual(all.text.split("\n"), Array.from({ length: 300 }, (_, i) => String(i + 1)));
    assert.equal(all.from, 0);
    assert.equal(all.truncated, false);
    const some = await client.history(pane.id, { lines: 10 });
    assert.deepEqual(some.text.split("\n"), Array.from({ length: 33 }, (_, i) => String(i + 268)));
    assert.equal(some.truncated, true);
    await collector.stream.close();
    await client.close(pane.id);
  });

  test("send with raw bytes and a large input split over several requests", async () => {
    const size = 2_000_000;
    const pane = await client.start({
      runtime: "shell",
      command: ["sh", "-c", `stty raw -echo; echo RAW-READY; head -c ${size} | wc -c; sleep 30`],
    });
    const collector = new Collector(client.events(pane.id, { from: 0 }));
    // Raw mode first: a canonical terminal would cut long lines.
    await collector.waitForText("RAW-READY");
    const first = await client.send(pane.id, { bytes: new Uint8Array([0x61]) });
    assert.equal(first.bytes, 1);
    const rest = new Uint8Array(size - 1).fill(0x62);
    const report = await client.send(pane.id, { bytes: rest });
    assert.equal(report.bytes, size - 1);
    await collector.waitFor(`wc to count ${size} bytes`, (c) => c.text.includes(String(size)), 20_000);
    await client.close(pane.id);
    await collector.waitForEnd();
  });

  test("resize answers the new size and subscribers see it", async () => {
    const { id, collector } = await shellWithPrompt();
    const report = await client.resize(id, { cols: 100, rows: 30 });
    assert.deepEqual(report, { pane: id, size: { cols: 100, rows: 30 } });
    await collector.waitFor("a resized event", (c) =>
      c.events.some((event) => event.kind === "resized" && event.size.cols === 100 && event.size.rows === 30),
    );
    const detail = await client.inspect(id);
    assert.deepEqual(detail.pane.size, { cols: 100, rows: 30 });
    await assert.rejects(client.resize(id, { cols: 0, rows: 30 }), { name: "PanehostError", code: "INVALID_ARGUMENT" });
    await collector.stream.close();
    await client.close(id);
  });

  test("interrupt stops a running command and reports its steps", async () => {
    const { id, collector } = await shellWithPrompt();
    // The shell itself prints started-5 and then waits in `read`, so Ctrl-C
    // meets a running command whichever instant it arrives. (A child process
    // could catch the signal between fork and exec and lose it; an echo of
    // the typed text would not prove that the line runs.)
    await client.send(id, { text: "echo started-$((2+3)); read line", enter: true });
    await collector.waitForText("started-5");
    const report = await client.interrupt(id);
    assert.equal(report.pane, id);
    assert.equal(typeof report.outcome, "string");
    assert.ok(report.steps.length >= 1, "at least one step");
    assert.equal(report.steps[0]!.action, "keys");
    assert.equal(typeof report.steps[0]!.at_ms, "number");
    // The shell is back (a new prompt after the ^C): a new command runs, and
    // is not taken as the answer to `read`.
    await collector.waitFor("a prompt after ^C", (c) => /\^C[^]*[$#] $/.test(c.text));
    await client.send(id, { text: "echo after-$((1+1))", enter: true });
    await collector.waitForText("after-2");
    await collector.stream.close();
    await client.close(id);
  });

  test("close ends the pane: exited then ended(closed), and the pane is unknown afterwards", async () => {
    const { id, collector } = await shellWithPrompt();
    const closed = await client.close(id);
    assert.equal(closed.pane, id);
    assert.equal(typeof closed.status.code, "number");
    await collector.waitForEnd();
    assert.equal(collector.error, undefined);
    const events = collector.events;
    const exitedAt = events.findIndex((event) => event.kind === "exited");
    assert.ok(exitedAt >= 0, "an exited event");
    const exited = events[exitedAt]!;
    assert.ok(exited.kind === "exited");
    assert.deepEqual(exited.status, closed.status);
    assert.equal(exited.offset, collector.length);
    const last = events[events.length - 1]!;
    assert.equal(last.kind, "ended");
    // After a close, every subscriber is told `closed` (PROTOCOL.md).
    assert.ok(last.kind === "ended" && last.reason === "closed", `reason ${JSON.stringify(last)}`);
    assert.equal(collector.stream.isDone, true);

    await assert.rejects(client.inspect(id), (error: unknown) => {
      assert.ok(error instanceof PanehostError);
      assert.equal(error.code, "UNKNOWN_PANE");
      assert.equal(error.limitation, null);
      assert.equal(typeof error.requestId, "number");
      return true;
    });
  });

  test("a pane that exits on its own ends its stream with exited and ended(exited)", async () => {
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", "echo bye; exit 3"] });
    const collector = new Collector(client.events(pane.id, { from: 0 }));
    await collector.waitForEnd();
    assert.equal(collector.error, undefined);
    assert.match(collector.text, /bye/);
    const exited = collector.events.find((event) => event.kind === "exited");
    assert.ok(exited && exited.kind === "exited");
    assert.deepEqual(exited.status, { code: 3, signal: null });
    assert.deepEqual(collector.events.at(-1), { kind: "ended", reason: "exited" });
    await assert.rejects(client.send(pane.id, { text: "x" }), { code: "PANE_EXITED" });
    const listed = (await client.list()).find((p) => p.id === pane.id);
    assert.deepEqual(listed?.state, { kind: "exited", status: { code: 3, signal: null } });
    await client.close(pane.id);
  });
});

describe("errors", () => {
  test("UNKNOWN_PANE rejects with the code, for requests and for streams", async () => {
    await assert.rejects(client.send("p-nonexistent", { text: "x" }), { name: "PanehostError", code: "UNKNOWN_PANE" });
    const stream = client.events("p-nonexistent");
    await assert.rejects(stream.ready, { code: "UNKNOWN_PANE" });
    await assert.rejects(stream.next(), { code: "UNKNOWN_PANE" });
    await stream.close();
  });

  test("UNKNOWN_RUNTIME, OPERATION_UNSUPPORTED with a limitation, LOGIN_NOT_REQUIRED", async () => {
    await assert.rejects(client.start({ runtime: "emacs" }), { code: "UNKNOWN_RUNTIME" });
    await assert.rejects(client.start({ runtime: "shell", resume: { reference: "4f9c2d1e-8b7a-4e3f-9c61-2a5d0b7e3f10" } }), {
      code: "OPERATION_UNSUPPORTED",
      limitation: "NATIVE_RESUME_UNSUPPORTED",
    });
    await assert.rejects(client.login("shell"), { code: "LOGIN_NOT_REQUIRED" });
  });

  test("OFFSET_OUT_OF_RANGE for a stream from beyond the end", async () => {
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", "sleep 30"] });
    const stream = client.events(pane.id, { from: 1_000_000 });
    await assert.rejects(stream.next(), { code: "OFFSET_OUT_OF_RANGE" });
    await stream.close();
    await client.close(pane.id);
  });
});

describe("replay", () => {
  test("events from 0 replay byte-exact (two streams agree)", async () => {
    const pane = await client.start({
      runtime: "shell",
      command: ["sh", "-c", "i=0; while [ $i -lt 3000 ]; do printf 'r%d\\t\\033[1mx\\033[0m\\n' $i; i=$((i+1)); done; sleep 30"],
    });
    const first = new Collector(client.events(pane.id, { from: 0 }));
    await first.waitFor("the whole output", (c) => c.output.includes("r2999\t"), 20_000);
    const end = (await client.list()).find((p) => p.id === pane.id)!.offset;
    await first.waitFor(`offset ${end}`, (c) => c.length >= end);

    const second = new Collector(client.events(pane.id, { from: 0 }));
    await second.waitFor(`offset ${end}`, (c) => c.length >= end);
    assert.equal(first.starts[0]!.start.kind, "replay");
    assert.deepEqual(second.starts[0]!.start, { kind: "replay", from: 0 });
    assert.equal(first.length, end);
    assert.equal(second.length, end);
    assert.ok(first.output.equals(second.output), "both replays are the same bytes");

    // From the middle: exactly the tail.
    const middle = Math.floor(end / 2);
    const third = new Collector(client.events(pane.id, { from: middle }));
    await third.waitFor(`offset ${end}`, (c) => c.length >= end - middle);
    assert.ok(third.output.equals(first.output.subarray(middle)));
    assert.equal(third.stream.offset, end);

    // Without `from`: a snapshot start, no output before its offset. The
    // host's screen model may trail the output; once it has shown the
    // last line, a later snapshot shows it too.
    await waitUntil("the screen to show the last line", 15_000, async () =>
      /r2999/.test((await client.inspect(pane.id)).screen.text) ? true : undefined,
    );
    const fourth = client.events(pane.id);
    const start = await withTimeout(fourth.next(), 10_000, "a snapshot start");
    assert.ok(!start.done && start.value.kind === "start" && start.value.start.kind === "snapshot");
    assert.equal(start.value.start.skipped_from, null);
    assert.match(start.value.start.snapshot.text, /r2999/);

    await Promise.all([first.stream.close(), second.stream.close(), third.stream.close(), fourth.close()]);
    await client.close(pane.id);
  });
});
