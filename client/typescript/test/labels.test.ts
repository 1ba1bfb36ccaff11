// Labels, a shell pane's environment and the list filter (protocol
// revision 3) against a real host.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Client, connect, PanehostError } from "../src/index.js";
import { Collector, TestHost } from "./support.js";

let host: TestHost;
let client: Client;

before(async () => {
  host = await TestHost.start();
  client = await connect({ socketPath: host.socket, clientName: "ts-tests/labels" });
});

after(async () => {
  try {
    if (client) await client.disconnect();
  } finally {
    if (host) await host.stop();
  }
});

/** Asserts that `error` is a host error with this code. */
function hostError(code: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof PanehostError, String(error));
    assert.equal(error.code, code, error.message);
    return true;
  };
}

describe("labels and env (revision 3)", () => {
  test("the host speaks revision 3", () => {
    assert.ok(client.welcome.revision >= 3, `revision ${client.welcome.revision}`);
  });

  test("a pane carries its labels; list matches every label given", async () => {
    const hold = ["sh", "-c", "read x"];
    const a = await client.start({ runtime: "shell", command: hold, labels: { owner: "ada", task: "t-1" } });
    const b = await client.start({ runtime: "shell", command: hold, labels: { owner: "ada", task: "t-2" } });
    const plain = await client.start({ runtime: "shell", command: hold });
    try {
      assert.deepEqual(a.labels, { owner: "ada", task: "t-1" });
      assert.deepEqual(plain.labels, {});

      const ids = async (labels?: Record<string, string>) =>
        (await client.list(labels === undefined ? {} : { labels })).map((pane) => pane.id);
      assert.deepEqual(await ids({ owner: "ada" }), [a.id, b.id], "oldest first");
      assert.deepEqual(await ids({ owner: "ada", task: "t-2" }), [b.id], "every label must match");
      assert.deepEqual(await ids({ owner: "ada", task: "t-3" }), []);
      assert.deepEqual(await ids({ owner: "bob" }), []);
      const all = await ids();
      for (const id of [a.id, b.id, plain.id]) assert.ok(all.includes(id), `${id} in the unfiltered list`);

      const listed = (await client.list({ labels: { task: "t-1" } }))[0]!;
      assert.deepEqual(listed.labels, { owner: "ada", task: "t-1" });
      assert.deepEqual((await client.inspect(b.id)).pane.labels, { owner: "ada", task: "t-2" });
    } finally {
      for (const pane of [a, b, plain]) await client.close(pane.id);
    }
  });

  test("labels out of bounds are refused with INVALID_ARGUMENT, and nothing starts", async () => {
    const before = (await client.list()).length;
    await assert.rejects(client.start({ runtime: "shell", labels: { "no spaces": "x" } }), hostError("INVALID_ARGUMENT"));
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"]));
    await assert.rejects(client.start({ runtime: "shell", labels: many }), hostError("INVALID_ARGUMENT"));
    assert.equal((await client.list()).length, before);
  });

  test("a shell pane gets the client's environment variables", async () => {
    const pane = await client.start({
      runtime: "shell",
      command: ["sh", "-c", 'printf "greeting=%s/%s\\n" "$GREETING" "$SECOND"'],
      env: { GREETING: "hello there", SECOND: "2" },
    });
    const collector = new Collector(client.events(pane.id, { from: 0 }));
    await collector.waitFor("the end of the pane", (c) => c.done);
    assert.match(collector.text, /greeting=hello there\/2\r?\n/);
    await client.close(pane.id);
  });

  test("the host's own variables and bad names are refused with INVALID_ARGUMENT", async () => {
    await assert.rejects(client.start({ runtime: "shell", env: { PANEHOST_PANE: "x" } }), hostError("INVALID_ARGUMENT"));
    await assert.rejects(client.start({ runtime: "shell", env: { "1BAD": "x" } }), hostError("INVALID_ARGUMENT"));
  });
});
