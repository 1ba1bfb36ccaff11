// The `remote` option against a real sshd on loopback (sshd.ts): a second
// local user's host, driven through an ssh forward; a cut link (its ssh
// killed by its pid) resumes byte-exact through a new forward; ssh's
// refusals are typed errors. Skipped, saying SKIPPED and why, where sshd
// cannot run; failed instead under PANEHOST_REQUIRE_SSHD=1.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import { type Client, connect, RemoteError, type StreamItem } from "../src/index.js";
import { Collector, waitUntil } from "./support.js";
import { MACHINE_UNKNOWN_KEY, processExists, SshMachine, uidOf, waitGone, WAIT_MS } from "./sshd.js";

let machine: SshMachine | undefined;

before(async () => {
  machine = await SshMachine.start("remote_ssh.test");
});

after(async () => {
  await machine?.stop();
});

/** The machine, or a skipped test. */
function need(t: TestContext): SshMachine | undefined {
  if (machine === undefined) t.skip("SKIPPED: sshd cannot run here (see the SKIPPED line above)");
  return machine;
}

/** `seq FROM TO` as a terminal shows it: each line ends in CR LF. */
function seqBytes(from: number, to: number): Buffer {
  let text = "";
  for (let n = from; n <= to; n++) text += `${n}\r\n`;
  return Buffer.from(text);
}

/** Output events are contiguous from 0 and never overlap; every start after the first replays from where it was. */
function assertContiguous(items: StreamItem[]): void {
  let next = 0;
  for (const item of items) {
    if (item.kind === "start") {
      if (item.start.kind === "replay") assert.equal(item.start.from, next, "a replay resumes at the offset reached");
      continue;
    }
    if (item.event.kind !== "output") continue;
    assert.equal(item.event.offset, next, "output is contiguous");
    next += item.event.data.length;
  }
}

describe("the remote option through a real sshd", () => {
  test("a pane of the other user's host is read, and resumes byte-exact across a killed ssh", async (t) => {
    const m = need(t);
    if (!m) return;
    let client: Client | undefined;
    try {
      client = await connect({ remote: m.remote(), socketPath: m.localSocketPath, clientName: "ts-tests/remote" });
      const link = client.remote!;
      const remoteHost = link.remoteHost!;
      m.remoteHostPids.add(remoteHost.pid);
      // The host there is the second user's, found by `up`.
      assert.equal(remoteHost.uid, m.uid);
      assert.equal(uidOf(remoteHost.pid), m.uid);
      assert.equal(remoteHost.socket, path.join(m.remoteRuntimeDir, "panehost", "host.sock"));
      // The local end: a socket in a new 0700 directory inside the client's own socket directory.
      const local = link.localSocket!;
      assert.equal(client.socketPath, local);
      assert.equal(path.dirname(path.dirname(local)), path.dirname(m.localSocketPath));
      assert.equal(fs.statSync(path.dirname(local)).mode & 0o777, 0o700);
      const firstSsh = link.sshPid!;
      assert.ok(processExists(firstSsh));

      const pane = await client.start({
        runtime: "shell",
        command: ["sh", "-c", "stty -echo; seq 1 5000; read go; seq 5001 10000; read end"],
      });
      const collector = new Collector(client.events(pane.id, { from: 0 }));
      const first = seqBytes(1, 5000);
      await collector.waitFor("the first 5000 lines", (c) => c.length >= first.length, WAIT_MS);
      assert.deepEqual(collector.output, first);

      // Cut the link mid-stream: kill the forward's ssh by its own pid.
      process.kill(firstSsh, "SIGKILL");
      const newSsh = await waitUntil("a new ssh forward", WAIT_MS, () => {
        const pid = link.sshPid;
        return pid !== undefined && pid !== firstSsh && client!.state === "connected" ? pid : undefined;
      });
      assert.ok(await waitGone(firstSsh), "the killed ssh was reaped");
      assert.notEqual(link.localSocket, local, "the new forward has a new local end");
      assert.ok(!fs.existsSync(path.dirname(local)), "the old forward's directory was removed");

      await client.send(pane.id, { text: "go\r" });
      const expected = Buffer.concat([first, seqBytes(5001, 10000)]);
      await collector.waitFor("all 10000 lines", (c) => c.length >= expected.length, WAIT_MS);
      assert.ok(collector.output.equals(expected), `${collector.length} bytes read, ${expected.length} expected, and they differ`);
      assert.ok(collector.starts.length >= 2, "the stream started again after the cut");
      assert.deepEqual(collector.starts[0]!.start, { kind: "replay", from: 0 });
      for (const start of collector.starts.slice(1)) assert.equal(start.start.kind, "replay", "every resume replays from the offset reached");
      assertContiguous(collector.items);

      await collector.stream.close();
      await client.close(pane.id);
      const newDir = path.dirname(link.localSocket!);
      await client.disconnect();
      client = undefined;
      // Closing the client ends its ssh (by its pid) and removes the directory.
      assert.ok(await waitGone(newSsh), `ssh ${newSsh} outlived its client`);
      assert.ok(!fs.existsSync(newDir), "the forward's directory was removed");
    } finally {
      await client?.disconnect();
    }
  });

  test("a host there that went away is started again through a new ssh, the old one ended by its pid", async (t) => {
    const m = need(t);
    if (!m) return;
    let client: Client | undefined;
    try {
      client = await connect({ remote: m.remote(), socketPath: m.localSocketPath, clientName: "ts-tests/remote-restart" });
      const link = client.remote!;
      const oldHost = link.remoteHost!.pid;
      m.remoteHostPids.add(oldHost);
      const oldSsh = link.sshPid!;
      const pane = await client.start({ runtime: "shell", command: ["sh", "-c", "echo ready; read line"] });
      // The host there stops (its panes stay with their keepers). The
      // forward's ssh would run on with nothing behind it (`up --hold`
      // waits for its standard input): the client, reconnecting, ends it
      // and opens a new forward, whose `up` starts a host there again.
      assert.equal(await m.panehost(["stop"]), 0);
      assert.ok(await waitGone(oldHost), "the host there stopped");
      const panes = await client.list();
      assert.ok(panes.some((p) => p.id === pane.id), "the pane is listed by the new host");
      const newHost = link.remoteHost!.pid;
      m.remoteHostPids.add(newHost);
      assert.notEqual(newHost, oldHost);
      assert.equal(uidOf(newHost), m.uid);
      assert.notEqual(link.sshPid, oldSsh);
      assert.ok(await waitGone(oldSsh), "the old ssh was ended");
      await client.close(pane.id);
    } finally {
      await client?.disconnect();
    }
  });

  test("a machine whose host key is not known is refused with a typed error", async (t) => {
    const m = need(t);
    if (!m) return;
    const error = await connect({ remote: m.remote(MACHINE_UNKNOWN_KEY), socketPath: m.localSocketPath, reconnect: false }).catch(
      (e: unknown) => e,
    );
    assert.ok(error instanceof RemoteError, String(error));
    assert.equal(error.reason, "host_key");
    assert.equal(error.exitCode, 255);
    assert.equal(error.transient, false);
    assert.match(error.message, /Host key verification failed/);
  });

  test("a remote program that is not there is named", async (t) => {
    const m = need(t);
    if (!m) return;
    const error = await connect({
      remote: { ...m.remote(), remoteProgram: "/nonexistent/panehost" },
      socketPath: m.localSocketPath,
      reconnect: false,
    }).catch((e: unknown) => e);
    assert.ok(error instanceof RemoteError, String(error));
    assert.equal(error.reason, "remote_program_missing");
    assert.equal(error.exitCode, 127);
  });
});
