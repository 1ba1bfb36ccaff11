// The client checks whom it talks to: a socket in a directory that is not
// the user's own, or a socket file of another user, is refused before
// anything is sent (docs/SECURITY.md).

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { connect, UntrustedHostError } from "../src/index.js";
import { panehostBin, withTimeout } from "./support.js";

/** Waits until `file` exists. */
async function until(file: string): Promise<void> {
  await withTimeout(
    (async () => {
      while (!fs.existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 20));
    })(),
    20_000,
    `${file} to appear`,
  );
}

test("a host of another user on the path is refused, and so is its socket moved into a private directory", async (t) => {
  if (process.geteuid?.() !== 0) {
    t.skip("plays two users: needs root, as CI has");
    return;
  }
  const run = fs.mkdtempSync(path.join(os.tmpdir(), "panehost-trust-"));
  fs.chmodSync(run, 0o1777);
  const socket = path.join(run, "panehost-0", "host.sock");
  // Another local user (nobody) listens on the path first.
  const squatter: ChildProcess = spawn(
    "setpriv",
    ["--reuid=65534", "--regid=65534", "--clear-groups", "--", panehostBin(), "--socket", socket, "--state-dir", path.join(run, "state"), "host"],
    { env: { HOME: run, PATH: "/usr/bin:/bin" }, stdio: "ignore" },
  );
  try {
    await until(socket);
    await assert.rejects(connect({ socketPath: socket }), (error: unknown) => {
      assert.ok(error instanceof UntrustedHostError, String(error));
      assert.match((error as Error).message, /is owned by uid 65534, not by this user \(uid 0\)/);
      return true;
    });
    const mine = path.join(run, "mine");
    fs.mkdirSync(mine, { mode: 0o700 });
    const moved = path.join(mine, "host.sock");
    fs.renameSync(socket, moved);
    await assert.rejects(connect({ socketPath: moved }), (error: unknown) => {
      assert.ok(error instanceof UntrustedHostError, String(error));
      assert.match((error as Error).message, /belongs to uid 65534, not to this user \(uid 0\)/);
      return true;
    });
  } finally {
    squatter.kill("SIGKILL");
    fs.rmSync(run, { recursive: true, force: true });
  }
});
