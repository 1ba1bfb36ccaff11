// The `remote` option without an sshd: every value is checked before
// anything runs, and ssh's failures (played by small scripts that stand in
// for ssh) become typed errors that say what to do.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  checkDestination,
  checkRemoteProgram,
  checkSocketPath,
  connect,
  isConnectionLost,
  MAX_DESTINATION_LEN,
  MAX_PROGRAM_LEN,
  MAX_SOCKET_PATH_LEN,
  RemoteError,
  RemoteTargetError,
} from "../src/index.js";
import { resolveRemote } from "../src/remote_target.js";
import { forwardArgs, parseUpLine, upArgs } from "../src/ssh.js";

let dir: string;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ph-ts-remote-"));
  fs.chmodSync(dir, 0o700);
});

after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A stand-in for ssh: records its arguments in `<name>.args`, writes `stderr`, exits with `code`. */
function fakeSsh(name: string, code: number, stderr = "", stdout = ""): { program: string; ran: () => string | undefined } {
  const program = path.join(dir, name);
  const record = path.join(dir, `${name}.args`);
  fs.writeFileSync(
    program,
    `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}'\nprintf '%s' '${stdout}'\nprintf '%s\\n' '${stderr}' >&2\nexit ${code}\n`,
    { mode: 0o755 },
  );
  return { program, ran: () => (fs.existsSync(record) ? fs.readFileSync(record, "utf8") : undefined) };
}

describe("values are checked before anything runs", () => {
  test("destinations ssh takes are accepted", () => {
    for (const good of [
      "build-3",
      "ada@build-3",
      "ada@build-3.example.com",
      "a.b_c@10.0.0.7",
      "ada@::1",
      "fe80::1%eth0",
      "ssh://build-3",
      "ssh://ada@build-3:2222",
      "ssh://ada@[::1]:22",
      "ssh://[fe80::1%eth0]",
      "my_alias",
    ]) {
      assert.equal(checkDestination(good), null, good);
    }
  });

  test("destinations that could be anything else are refused", () => {
    for (const [bad, says] of [
      ["", "is empty"],
      ["-oProxyCommand=sh", "starts with `-`"],
      ["ada@-oProxyCommand=x", "host name"],
      ["-ada@x", "starts with `-`"],
      ["ada@x y", "host name"],
      ["ada@x;rm", "host name"],
      ["ada@x\n", "host name"],
      ["ada@.x", "host name"],
      ["ada@", "host name"],
      ["@x", "user name"],
      ["ada b@x", "user name"],
      ["ada@$(id)", "host name"],
      ["ssh://ada@x:0", "port"],
      ["ssh://ada@x:65536", "port"],
      ["ssh://ada@x:22a", "port"],
      ["ssh://ada@[::1", "`]`"],
      ["ssh://ada@[zz::1]:22", "IPv6"],
      ["http://x", "scheme"],
      ["ada@x:22", "IPv6"],
      ["ada@bü", "host name"],
    ] as const) {
      const problem = checkDestination(bad);
      assert.ok(problem?.includes(says), `${JSON.stringify(bad)}: ${problem}`);
    }
    assert.match(checkDestination(`ada@${"a".repeat(MAX_DESTINATION_LEN)}`) ?? "", /longer than 320 bytes/);
  });

  test("remote programs need no quoting, and socket paths survive the forward", () => {
    for (const good of ["panehost", "/usr/local/bin/panehost", "~/.cargo/bin/panehost", "bin/panehost-0.1+x"]) {
      assert.equal(checkRemoteProgram(good), null, good);
    }
    for (const bad of ["", "-x", "panehost; rm -rf ~", "pane host", "$HOME/panehost", "~user/panehost", "a`b`", "a'b"]) {
      assert.notEqual(checkRemoteProgram(bad), null, bad);
    }
    assert.notEqual(checkRemoteProgram("a".repeat(MAX_PROGRAM_LEN + 1)), null);
    assert.equal(checkSocketPath("/run/user/1000/panehost/host.sock"), null);
    for (const [bad, says] of [
      ["relative/host.sock", "absolute"],
      ["/a:b/host.sock", "character"],
      ["/a%h/host.sock", "character"],
      ["/a${HOME}/host.sock", "character"],
      ["/a b/host.sock", "character"],
      ["/a~/host.sock", "character"],
    ] as const) {
      assert.ok(checkSocketPath(bad)?.includes(says), bad);
    }
    const long = `/${"a".repeat(MAX_SOCKET_PATH_LEN)}`;
    assert.match(checkSocketPath(long) ?? "", /longer than 107 bytes/);
    assert.equal(checkSocketPath(long.slice(0, MAX_SOCKET_PATH_LEN)), null);
    // Bytes, not characters.
    assert.notEqual(checkSocketPath(`/${"é".repeat(60)}`), null);
  });

  test("a destination that looks like an option is refused, and ssh never runs", async () => {
    const ssh = fakeSsh("ssh-never", 0);
    for (const remote of [
      { destination: "-oProxyCommand=touch /tmp/owned" },
      { destination: "ada@build-3", remoteProgram: "panehost; id" },
      { destination: "ada@build-3", remoteSocket: "/tmp/a:b" },
      { destination: "ada@build-3", sshConfig: "-oProxyCommand=x" },
      { destination: "ada@build-3", readyTimeoutMs: -1 },
    ]) {
      const error = await connect({ remote: { ...remote, sshProgram: ssh.program }, socketPath: path.join(dir, "run", "host.sock") }).then(
        () => assert.fail("connected"),
        (error: unknown) => error,
      );
      assert.ok(error instanceof RemoteTargetError, `${JSON.stringify(remote)}: ${String(error)}`);
      assert.ok(!isConnectionLost(error));
    }
    const error = await connect({ remote: { destination: "-oProxyCommand=sh", sshProgram: ssh.program } }).catch((e: unknown) => e);
    assert.ok(error instanceof RemoteTargetError);
    assert.equal(error.field, "destination");
    assert.equal(error.message, 'the remote destination "-oProxyCommand=sh" starts with `-`, which ssh would read as an option');
    assert.equal(ssh.ran(), undefined, "ssh was not run");
    assert.ok(!fs.existsSync(path.join(dir, "run")), "nothing was made for the local end");
    // An ssh program that looks like an option is refused too.
    const program = await connect({ remote: { destination: "x", sshProgram: "-oX" } }).catch((e: unknown) => e);
    assert.ok(program instanceof RemoteTargetError && program.field === "sshProgram");
  });
});

describe("the command lines", () => {
  test("ssh gets its options, `--`, the destination and plain words", () => {
    const target = resolveRemote(
      { destination: "ada@m", sshConfig: "/etc/x.conf", remoteProgram: "~/.cargo/bin/panehost", remoteSocket: "/srv/ph/host.sock", readyTimeoutMs: 5000 },
      "/run/user/1/panehost",
    );
    const base = [
      "-F", "/etc/x.conf",
      "-o", "BatchMode=yes", "-o", "ControlMaster=no", "-o", "ControlPath=none", "-o", "ForwardAgent=no", "-o", "ForwardX11=no",
      "-o", "RequestTTY=no", "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3", "-o", "ConnectTimeout=5",
    ];
    assert.deepEqual(upArgs(target), [...base, "-n", "--", "ada@m", "~/.cargo/bin/panehost --socket /srv/ph/host.sock up"]);
    assert.deepEqual(forwardArgs(target, "/l/host.sock", "/r/host.sock"), [
      ...base,
      "-o", "ExitOnForwardFailure=yes", "-o", "StreamLocalBindUnlink=yes",
      "-L", "/l/host.sock:/r/host.sock",
      "--", "ada@m", "exec ~/.cargo/bin/panehost --socket /srv/ph/host.sock up --hold",
    ]);
  });

  test("the answer of `up` is one JSON line with socket, uid, pid and host", () => {
    const host = parseUpLine('{"socket":"/run/user/1001/panehost/host.sock","uid":1001,"pid":4242,"host":"panehost 0.1.0"}\n');
    assert.deepEqual(host, { socket: "/run/user/1001/panehost/host.sock", uid: 1001, pid: 4242, host: "panehost 0.1.0" });
    for (const other of ["Welcome", "{not json", '{"socket":1}', '{"socket":"/s","uid":-1,"pid":1,"host":""}', ""]) {
      assert.equal(parseUpLine(other), undefined, other);
    }
  });
});

describe("ssh's failures say what to do", () => {
  const cases: Array<[string, number, string, string, RegExp, boolean]> = [
    ["host-key", 255, "Host key verification failed.", "host_key", /host key.*known_hosts/, false],
    ["denied", 255, "ada@m: Permission denied (publickey).", "permission_denied", /could not sign in/, false],
    ["refused", 255, "ssh: connect to host m port 22: Connection refused", "ssh_failed", /Connection refused/, true],
    ["missing", 127, "sh: 1: panehost: not found", "remote_program_missing", /`panehost` was not found.*remoteProgram/, false],
    ["not-executable", 126, "sh: 1: panehost: Permission denied", "remote_program_not_executable", /cannot be run/, false],
    ["old", 2, "error: unrecognized subcommand 'up'", "remote_outdated", /older than this client/, false],
    ["other", 1, "error: cannot start the host", "remote_failed", /failed there \(exit status 1\)/, false],
  ];
  for (const [name, code, stderr, reason, says, transient] of cases) {
    test(`${name}: exit status ${code}`, async () => {
      const ssh = fakeSsh(`ssh-${name}`, code, stderr);
      const socketPath = path.join(dir, `run-${name}`, "host.sock");
      const error = await connect({ remote: { destination: "ada@m", sshProgram: ssh.program }, socketPath, reconnect: false }).catch(
        (e: unknown) => e,
      );
      assert.ok(error instanceof RemoteError, String(error));
      assert.equal(error.reason, reason);
      assert.equal(error.exitCode, code);
      assert.equal(error.transient, transient);
      assert.equal(isConnectionLost(error), transient);
      assert.match(error.message, says);
      assert.ok(error.message.startsWith("ada@m: "), error.message);
      // The first ssh asked for the host: `up`, with `--` before the destination.
      assert.match(ssh.ran() ?? "", /BatchMode=yes\n[^]*-n\n--\nada@m\npanehost up\n$/);
    });
  }

  test("an ssh that cannot be run is named", async () => {
    const error = await connect({ remote: { destination: "m", sshProgram: path.join(dir, "no-such-ssh") } }).catch((e: unknown) => e);
    assert.ok(error instanceof RemoteError && error.reason === "ssh_missing", String(error));
    assert.match(error.message, /cannot run `.*no-such-ssh`: not found/);
  });

  test("an ssh that says nothing of use within readyTimeoutMs is ended", async () => {
    const program = path.join(dir, "ssh-silent");
    const pidFile = path.join(dir, "ssh-silent.pid");
    fs.writeFileSync(program, `#!/bin/sh\necho $$ > '${pidFile}'\necho Welcome\nexec sleep 60\n`, { mode: 0o755 });
    const started = Date.now();
    const error = await connect({ remote: { destination: "m", sshProgram: program, readyTimeoutMs: 500 } }).catch((e: unknown) => e);
    assert.ok(error instanceof RemoteError && error.reason === "timeout" && error.transient, String(error));
    assert.ok(Date.now() - started < 10_000);
    const pid = Number(fs.readFileSync(pidFile, "utf8"));
    // It was killed by its pid and reaped: no process with that pid is left.
    assert.throws(() => process.kill(pid, 0), /ESRCH/);
  });
});
