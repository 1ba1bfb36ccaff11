// Requests and answers against a scripted host (fakehost.ts): the fields
// requests put on the wire, answers that leave out optional fields, and
// what revision 3 added (labels, env, the list filter, wait_for, watch),
// refused before anything is sent to an older host.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HostRevisionError } from "../src/index.js";
import { connected, fake, type Json, summary } from "./fakehost.js";

describe("requests and answers on the wire", () => {
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
        const swept = await peer.next();
        const sweep = { method: "process_tree", ended: 2, survivors: [4242] };
        peer.send({ response: { id: swept.id, body: { interrupted: { pane: "p1", outcome: "unconfirmed", steps: [], sweep } } } });
        const close = await peer.next();
        requests.push(close.request);
        peer.send({ response: { id: close.id, body: { closed: { pane: "p1", status: { code: 0, signal: null } } } } });
        const runtimes = await peer.next();
        const minimal = { id: "fx", display_name: "Fx", supported: true, available: false, resume_modes: [], limitations: [] };
        const receipt = { runtime: "fx", passed: false, detail: "timeout", path: "/bin/fx", sha256: "ab", taken_at_ms: 5, elapsed_ms: 6, read_only_enforced: true };
        const refused = { from: "1.52.0", reason: "retired" };
        const fz = { ...minimal, id: "fz", default_permission_profile: "workspace_write", version_refused: refused, package: "pypi fz 1.52.0", fingerprint: "cd" };
        peer.send({ response: { id: runtimes.id, body: { runtimes: { runtimes: [minimal, { ...minimal, id: "fy", receipt, permission_profiles: ["read_only"] }, fz] } } } });
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
    const pane = await client.start({ runtime: "fx", permission_profile: "read_only", accept_weaker_boundary: true, require_ready: true, max_wall_ms: 900, allow_refused_version: true });
    // A host that does not send them: the defaults, never `undefined`.
    assert.deepEqual([pane.activity, pane.restored_by, pane.completion], ["unknown", "", ""]);
    assert.deepEqual(await client.interrupt("p1", { terminate: true }), { pane: "p1", outcome: "not_running", steps: [], sweep: null });
    assert.deepEqual((await client.interrupt("p1", { terminate: true })).sweep, { method: "process_tree", ended: 2, survivors: [4242] });
    assert.deepEqual(await client.close("p1"), { pane: "p1", status: { code: 0, signal: null }, sweep: null });
    const [fx, fy, fz] = await client.runtimes();
    assert.deepEqual([fx!.receipt, fx!.permission_profiles, fx!.readiness_gate, fx!.receipt_valid], [null, [], null, false]);
    // Revision 7's fields: null from a host that does not send them.
    assert.deepEqual([fx!.default_permission_profile, fx!.version_refused, fx!.package, fx!.fingerprint], [null, null, null, null]);
    assert.deepEqual([fz!.default_permission_profile, fz!.version_refused, fz!.package, fz!.fingerprint], ["workspace_write", { from: "1.52.0", before: null, reason: "retired" }, "pypi fz 1.52.0", "cd"]);
    assert.deepEqual(fy!.receipt, { runtime: "fx", passed: false, detail: "timeout", path: "/bin/fx", version: null, sha256: "ab", fingerprint: null, taken_at_ms: 5, elapsed_ms: 6, read_only_enforced: true });
    assert.deepEqual(fy!.permission_profiles, ["read_only"]);
    const turn = await client.ask("p1", "hello");
    assert.deepEqual(turn.usage, { kind: "measured", input_tokens: 12, output_tokens: null, cost_micro_usd: null });
    assert.equal(turn.added_text, "hi");
    assert.equal(turn.exit_code, 7);
    const receipt = await client.probeRuntime("fx", { accept_weaker_boundary: true });
    assert.equal(receipt.passed, true);
    assert.equal(receipt.version, null);
    assert.deepEqual(requests, [
      { start: { runtime: "fx", cwd: null, size: null, command: [], model: null, resume: null, max_wall_ms: 900, permission_profile: "read_only", accept_weaker_boundary: true, require_ready: true, rerun_after_host_loss: false, labels: {}, env: {}, allow_refused_version: true } },
      { interrupt: { pane: "p1", terminate: true } },
      { close: { pane: "p1" } },
      { ask: { pane: "p1", text: "hello", timeout_ms: null } },
      { probe_runtime: { runtime: "fx", model: null, accept_weaker_boundary: true } },
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
      event({ pane_changed: { pane: "p1", size: { cols: 120, rows: 40 }, title: "build" } });
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
      { kind: "pane_changed", pane: "p1", size: { cols: 120, rows: 40 }, title: "build" },
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
