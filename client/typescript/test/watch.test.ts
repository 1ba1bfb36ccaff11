// Watching every pane of a real host (protocol revision 3): panes
// arriving, changing activity, size and title (revision 8), exiting and
// leaving; a watch across a dropped connection; a watch whose consumer
// falls behind.

import assert from "node:assert/strict";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type Client,
  connect,
  type PaneActivityEvent,
  type PaneChangedEvent,
  type PaneEndedEvent,
  type PaneExitedEvent,
  type PaneStartedEvent,
  type WatchEvent,
} from "../src/index.js";
import { Collector, Proxy, TestHost, waitUntil, WatchCollector, withTimeout } from "./support.js";

let host: TestHost;
let client: Client;

before(async () => {
  host = await TestHost.start();
  client = await connect({ socketPath: host.socket, clientName: "ts-tests/watch" });
});

after(async () => {
  try {
    if (client) await client.disconnect();
  } finally {
    if (host) await host.stop();
  }
});

function started(pane: string): (event: WatchEvent) => event is PaneStartedEvent {
  return (event): event is PaneStartedEvent => event.kind === "pane_started" && event.pane.id === pane;
}

function activity(pane: string, value: string): (event: WatchEvent) => event is PaneActivityEvent {
  return (event): event is PaneActivityEvent =>
    event.kind === "pane_activity" && event.pane === pane && event.activity === value;
}

function changed(
  pane: string,
  matches: (event: PaneChangedEvent) => boolean,
): (event: WatchEvent) => event is PaneChangedEvent {
  return (event): event is PaneChangedEvent => event.kind === "pane_changed" && event.pane === pane && matches(event);
}

function exited(pane: string): (event: WatchEvent) => event is PaneExitedEvent {
  return (event): event is PaneExitedEvent => event.kind === "pane_exited" && event.pane === pane;
}

function ended(pane: string): (event: WatchEvent) => event is PaneEndedEvent {
  return (event): event is PaneEndedEvent => event.kind === "pane_ended" && event.pane === pane;
}

describe("watch (revision 3)", () => {
  test("a watch starts with every pane, then sees panes start, turn busy and idle, exit and be closed", async () => {
    const earlier = await client.start({ runtime: "shell", command: ["sh", "-c", "read x"], labels: { role: "earlier" } });
    const watch = client.watch();
    const panes = await withTimeout(watch.ready, 10_000, "the watch");
    assert.ok(panes.some((pane) => pane.id === earlier.id && pane.labels["role"] === "earlier"), "the list holds the pane");
    const collector = new WatchCollector(watch);
    await collector.waitFor("the first start", (c) => c.starts.length === 1);
    assert.equal(collector.starts[0]!.cause, "watching");
    assert.deepEqual(
      collector.starts[0]!.panes.map((pane) => pane.id),
      panes.map((pane) => pane.id),
    );

    // An interactive shell: a submitted command makes it busy, and the
    // screen heuristic makes it idle 1.5 seconds after its output ends.
    const shell = await client.start({ runtime: "shell", labels: { role: "shell" } });
    const start = await collector.waitForEvent("pane_started of the shell", started(shell.id));
    assert.deepEqual(start.pane.labels, { role: "shell" });
    assert.equal(start.pane.runtime, "shell");
    const output = new Collector(client.events(shell.id, { from: 0 }));
    await output.waitFor("the shell's prompt", (c) => /[$#] $/.test(c.text));
    await client.send(shell.id, { text: "echo watched", enter: true });
    await collector.waitForEvent("the shell busy", activity(shell.id, "busy"));
    await collector.waitForEvent("the shell idle", activity(shell.id, "idle"));
    const busyAt = collector.events.findIndex(activity(shell.id, "busy"));
    const idleAt = collector.events.findIndex(activity(shell.id, "idle"));
    assert.ok(busyAt < idleAt, "busy, then idle");

    // A pane whose process exits on its own stays until it is closed.
    const oneShot = await client.start({ runtime: "shell", command: ["sh", "-c", "read x; exit 3"] });
    await collector.waitForEvent("pane_started of the one-shot pane", started(oneShot.id));
    await client.send(oneShot.id, { text: "go", enter: true });
    const exit = await collector.waitForEvent("pane_exited of the one-shot pane", exited(oneShot.id));
    assert.deepEqual(exit.status, { code: 3, signal: null });
    assert.ok(!collector.events.some(ended(oneShot.id)), "an exited pane has not left");

    // Closing the shell ends the pane; an exit told for it comes first.
    await client.close(shell.id);
    const left = await collector.waitForEvent("pane_ended of the shell", ended(shell.id));
    assert.equal(left.reason, "closed");
    const exitAt = collector.events.findIndex(exited(shell.id));
    assert.ok(exitAt < collector.events.indexOf(left), "pane_exited, when told, before pane_ended");
    await client.close(oneShot.id);
    assert.equal((await collector.waitForEvent("pane_ended of the one-shot pane", ended(oneShot.id))).reason, "closed");

    await watch.close();
    await collector.waitFor("the end of the watch", (c) => c.done);
    assert.equal(collector.error, undefined);
    assert.equal(collector.starts.length, 1, "one start: the watch was never made anew");
    await output.stream.close();
    await client.close(earlier.id);
  });

  test("a resize and a title the program sets come as pane_changed, each with the size and title now (revision 8)", async () => {
    const watch = client.watch();
    await withTimeout(watch.ready, 10_000, "the watch");
    const collector = new WatchCollector(watch);
    const shell = await client.start({ runtime: "shell", size: { cols: 80, rows: 24 } });
    await collector.waitForEvent("pane_started of the shell", started(shell.id));
    const output = new Collector(client.events(shell.id, { from: 0 }));
    await output.waitFor("the shell's prompt", (c) => /[$#] $/.test(c.text));

    await client.resize(shell.id, { cols: 120, rows: 40 });
    const resized = await collector.waitForEvent(
      "pane_changed with the new size",
      changed(shell.id, (event) => event.size.cols === 120 && event.size.rows === 40),
    );
    assert.notEqual(resized.title, "ts-title", "no title set yet");

    // The shell's printf writes OSC 2 (ESC ] 2 ; title BEL): the escapes
    // reach the shell as written, a backslash and 033, a backslash and 007.
    await client.send(shell.id, { text: "printf '\\033]2;%s\\007' ts-title", enter: true });
    const titled = await collector.waitForEvent(
      "pane_changed with the title",
      changed(shell.id, (event) => event.title === "ts-title"),
    );
    assert.deepEqual(titled.size, { cols: 120, rows: 40 }, "the title's event states the size now as well");
    assert.ok(
      collector.events.indexOf(resized) < collector.events.indexOf(titled),
      "the resize's event, then the title's",
    );
    const listed = (await client.list()).find((pane) => pane.id === shell.id);
    assert.equal(listed?.title, "ts-title");
    assert.deepEqual(listed?.size, { cols: 120, rows: 40 });

    await watch.close();
    await collector.waitFor("the end of the watch", (c) => c.done);
    assert.equal(collector.error, undefined);
    await output.stream.close();
    await client.close(shell.id);
  });

  test("break out of the watch unsubscribes: the client holds no subscription for it", async () => {
    const before = client.openStreams;
    const watch = client.watch();
    assert.equal(client.openStreams, before + 1);
    for await (const item of watch) {
      assert.equal(item.kind, "start");
      break;
    }
    assert.equal(watch.isDone, true);
    assert.equal(client.openStreams, before);
    assert.deepEqual(await watch.next(), { done: true, value: undefined });
  });

  test("after a dropped connection the watch is made again and lists every pane", async () => {
    const middle = await Proxy.start(host.socket, path.join(host.dir, "watch-proxy.sock"));
    const viaProxy = await connect({ socketPath: middle.path, reconnect: { initialBackoffMs: 10 } });
    const collector = new WatchCollector(viaProxy.watch());
    await collector.waitFor("the first start", (c) => c.starts.length === 1);
    // Refuse reconnecting until a pane has started: its pane_started is
    // sent to no watcher of this client, and the new list stands for it.
    middle.refuse(1_000_000);
    middle.dropAll();
    await waitUntil("the client to reconnect", 10_000, () => (viaProxy.state === "reconnecting" ? true : undefined));
    const pane = await client.start({ runtime: "shell", command: ["sh", "-c", "read x"] });
    middle.refuse(0);
    await collector.waitFor("a second start", (c) => c.starts.length === 2);
    const again = collector.starts[1]!;
    assert.equal(again.cause, "reconnected");
    assert.ok(again.panes.some((listed) => listed.id === pane.id), "the new list holds the pane started meanwhile");
    // And the watch goes on.
    await client.close(pane.id);
    await collector.waitForEvent("pane_ended after the reconnect", ended(pane.id));
    await viaProxy.disconnect();
    await collector.waitFor("the end of the watch", (c) => c.done);
    await middle.close();
  });

  test("a watch whose consumer falls behind buffers at most maxBuffered events, and a new start stands for the rest", async () => {
    const max = 2;
    const watch = client.watch({ maxBuffered: max });
    const initial = await withTimeout(watch.ready, 10_000, "the watch");
    const count = 5;
    const panes = [];
    for (let i = 0; i < count; i++) {
      panes.push(await client.start({ runtime: "shell", command: ["sh", "-c", `exit ${i}`] }));
    }
    const ids = panes.map((pane) => pane.id);
    // Read nothing until every pane has exited: 5 pane_started and 5
    // pane_exited events at least, more than the watch takes.
    await waitUntil("every pane to exit", 15_000, async () => {
      const listed = await client.list();
      return ids.every((id) => listed.find((pane) => pane.id === id)?.state.kind === "exited") ? true : undefined;
    });
    await waitUntil(`${max} buffered events`, 10_000, () => (watch.buffered === max ? true : undefined));
    const collector = new WatchCollector(watch);
    await collector.waitFor("a start after falling behind", (c) => c.starts.some((start) => start.cause === "fell_behind"));
    const caughtUp = collector.starts.find((start) => start.cause === "fell_behind")!;
    assert.ok(collector.maxBuffered <= max, `at most ${max} buffered, saw ${collector.maxBuffered}`);
    assert.equal(collector.starts[0]!.cause, "watching");
    assert.equal(collector.starts[0]!.panes.length, initial.length);
    // The new list stands for what was let go: every pane, each exited.
    for (const [i, id] of ids.entries()) {
      const pane = caughtUp.panes.find((listed) => listed.id === id);
      assert.ok(pane, `pane ${id} in the list after falling behind`);
      assert.deepEqual(pane.state, { kind: "exited", status: { code: i, signal: null } });
    }
    // Before it: the events the watch kept, at most `max`.
    const startAt = collector.items.indexOf(caughtUp);
    assert.ok(startAt - 1 <= max, `${startAt - 1} events kept before the new start`);
    // The watch goes on after it.
    await client.close(ids[0]!);
    await collector.waitForEvent("pane_ended after catching up", ended(ids[0]!));
    await watch.close();
    for (const id of ids.slice(1)) await client.close(id);
  });
});
