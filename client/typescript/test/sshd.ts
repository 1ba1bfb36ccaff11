// A machine reached through OpenSSH, on loopback, as the Rust tests make
// it (tests/tests/ssh_fixture): an sshd of the test's own (its own
// configuration, host key and port, run as root, not the system's
// service), a client key and a `known_hosts` for it, and a second local
// user whose host the test's client drives through it. The second user's
// sessions get their own XDG_RUNTIME_DIR and XDG_STATE_HOME inside the
// test's directory (sshd's SetEnv), so every test file has a host of its
// own for that user.
//
// Where sshd cannot run (not root, OpenSSH missing) `start` says SKIPPED
// and why, and returns undefined; with PANEHOST_REQUIRE_SSHD set it throws
// instead.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { panehostBin, withTimeout } from "./support.js";

/** How long any one wait may take. */
export const WAIT_MS = 30_000;
/** The second user, made by the first test that needs it and kept for the next. */
export const SECOND_USER = "panehost-remote";
/** The ssh `Host` names the client configuration defines. */
export const MACHINE = "machine";
/** The same machine, with a `known_hosts` that does not know it. */
export const MACHINE_UNKNOWN_KEY = "machine-with-an-unknown-key";
/** Set (by CI) when sshd must run: a missing sshd then fails instead of skipping. */
export const REQUIRE_ENV = "PANEHOST_REQUIRE_SSHD";

/** Why sshd cannot run here, if it cannot. */
function cannotRun(): string | undefined {
  if (typeof process.geteuid !== "function" || process.geteuid() !== 0) {
    return "it runs its own sshd and plays a second user, so it needs root (as CI runs it)";
  }
  for (const program of ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen", "/usr/sbin/useradd"]) {
    if (!fs.existsSync(program)) return `${program} is missing (.ci/run installs openssh-server)`;
  }
  return undefined;
}

function run(program: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(program, args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", timeout: WAIT_MS });
  return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

function runOk(program: string, args: string[]): string {
  const result = run(program, args);
  if (result.status !== 0) throw new Error(`${program} ${args.join(" ")}: ${result.status}\n${result.stderr}`);
  return result.stdout;
}

/** The second user's uid, making the user when missing (no password: `*`, which sshd takes without PAM). */
async function secondUser(): Promise<number> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const id = run("id", ["-u", SECOND_USER]);
    if (id.status === 0) {
      const shadow = fs.existsSync("/etc/shadow") ? fs.readFileSync("/etc/shadow", "utf8") : "";
      if (shadow.split("\n").some((line) => line.startsWith(`${SECOND_USER}:!`))) {
        run("usermod", ["-p", "*", SECOND_USER]);
        continue;
      }
      return Number(id.stdout.trim());
    }
    // Another test may be making it at this moment: then this fails, and the next look finds it.
    run("/usr/sbin/useradd", ["--create-home", "--shell", "/bin/sh", "--password", "*", "--comment", "panehost remote tests", SECOND_USER]);
    if (Date.now() > deadline) throw new Error(`cannot create the user ${SECOND_USER}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function mode(file: string): number {
  try {
    return fs.statSync(file).mode & 0o7777;
  } catch {
    return 0;
  }
}

/** True when every directory above `file` lets others in and `file` lets others run it. */
function runnableByOthers(file: string): boolean {
  if ((mode(file) & 0o005) !== 0o005) return false;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if ((mode(dir) & 0o001) === 0) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

/** Why sshd's StrictModes would refuse files below `dir` (a directory above it others may write to), if it would. */
function unsafeForStrictModes(dir: string): string | undefined {
  for (let current = dir; ; current = path.dirname(current)) {
    const stat = fs.statSync(current);
    if (stat.uid !== 0 || (stat.mode & 0o022) !== 0) return `${current} is writable by others than root`;
    if (current === path.dirname(current)) return undefined;
  }
}

function mkdir(dir: string, dirMode: number, owner?: number): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(dir, dirMode);
  if (owner !== undefined) fs.chownSync(dir, owner, owner);
}

/** True while a process with this pid exists (a zombie counts as gone). */
export function processExists(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !(stat.slice(stat.lastIndexOf(")") + 1).trimStart().startsWith("Z"));
  } catch {
    return false;
  }
}

/** Resolves once `pid` is gone; false after `ms`. */
export async function waitGone(pid: number, ms = WAIT_MS): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (processExists(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** An sshd on loopback, a client configuration for it and a second user. */
export class SshMachine {
  /** Pids of the second user's hosts the tests met (from `up`'s answer): ended by `stop`. */
  readonly remoteHostPids = new Set<number>();

  private constructor(
    readonly dir: string,
    readonly port: number,
    /** The second user's uid. */
    readonly uid: number,
    /** The client configuration (`ssh -F`). */
    readonly sshConfig: string,
    /** The panehost the second user runs. */
    readonly remoteProgram: string,
    /** The second user's XDG_RUNTIME_DIR. */
    readonly remoteRuntimeDir: string,
    /** This user's directory for the client's socket: the local ends of forwards go in here. */
    readonly localRuntimeDir: string,
    private readonly sshd: ChildProcess,
    private readonly log: { text: string },
  ) {}

  /** Starts the machine, or says why it cannot (SKIPPED) and returns undefined. */
  static async start(test: string): Promise<SshMachine | undefined> {
    let reason = cannotRun();
    let tmp: string | undefined;
    if (reason === undefined) {
      // Not under /tmp, nor under the checkout (which may be): sshd's
      // StrictModes wants every directory above the authorized keys to be
      // writable by no one but root. /run is root's.
      tmp = "/run/panehost-test-ssh";
      fs.mkdirSync(tmp, { recursive: true, mode: 0o755 });
      fs.chmodSync(tmp, 0o755);
      reason = unsafeForStrictModes(tmp);
    }
    if (reason !== undefined || tmp === undefined) {
      if (process.env[REQUIRE_ENV]) throw new Error(`${test}: sshd must run here (${REQUIRE_ENV} is set), but ${reason}`);
      console.log(`SKIPPED: ${test}: ${reason}`);
      return undefined;
    }
    const uid = await secondUser();
    const base = fs.mkdtempSync(path.join(tmp, "ts-ssh-"));
    fs.chmodSync(base, 0o755);
    let sshd: ChildProcess | undefined;
    try {
      mkdir("/run/sshd", 0o755);
      const keygen = (file: string) => runOk("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "panehost-test", "-f", file]);
      const hostKey = path.join(base, "host_ed25519");
      const clientKey = path.join(base, "client_ed25519");
      keygen(hostKey);
      keygen(clientKey);
      const keysDir = path.join(base, "authorized_keys");
      mkdir(keysDir, 0o755);
      const clientPublic = fs.readFileSync(`${clientKey}.pub`, "utf8");
      for (const user of [SECOND_USER, "root"]) fs.writeFileSync(path.join(keysDir, user), clientPublic, { mode: 0o644 });
      const hostPublic = fs.readFileSync(`${hostKey}.pub`, "utf8").split(/\s+/).slice(0, 2).join(" ");
      fs.writeFileSync(path.join(base, "known_hosts"), `panehost-test-machine ${hostPublic}\n`);
      fs.writeFileSync(path.join(base, "empty_known_hosts"), "");

      const remoteRuntimeDir = path.join(base, "remote-run");
      const remoteState = path.join(base, "remote-state");
      mkdir(remoteRuntimeDir, 0o700, uid);
      mkdir(remoteState, 0o700, uid);
      const localRuntimeDir = path.join(base, "local-run");
      mkdir(localRuntimeDir, 0o700);

      // The panehost the second user runs: the one under test, or a copy they can reach.
      let remoteProgram = panehostBin();
      if (!runnableByOthers(remoteProgram)) {
        const bin = path.join(base, "bin");
        mkdir(bin, 0o755);
        const copy = path.join(bin, "panehost");
        fs.copyFileSync(remoteProgram, copy);
        fs.chmodSync(copy, 0o755);
        remoteProgram = copy;
      }

      let config = "";
      for (const [alias, user, known] of [
        [MACHINE, SECOND_USER, "known_hosts"],
        [MACHINE_UNKNOWN_KEY, SECOND_USER, "empty_known_hosts"],
      ] as const) {
        config +=
          `Host ${alias}\n  HostName 127.0.0.1\n  Port PORT\n  User ${user}\n  IdentityFile ${clientKey}\n  IdentitiesOnly yes\n` +
          `  IdentityAgent none\n  UserKnownHostsFile ${path.join(base, known)}\n  GlobalKnownHostsFile /dev/null\n` +
          "  StrictHostKeyChecking yes\n  HostKeyAlias panehost-test-machine\n  CheckHostIP no\n  LogLevel ERROR\n";
      }

      const log = { text: "" };
      let port = 0;
      for (let attempt = 1; ; attempt++) {
        port = await freePort();
        const sshdConfig = path.join(base, "sshd_config");
        fs.writeFileSync(
          sshdConfig,
          `Port ${port}\nListenAddress 127.0.0.1\nHostKey ${hostKey}\nPidFile none\nUsePAM no\n` +
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n" +
            `AuthorizedKeysFile ${keysDir}/%u\nStrictModes yes\nPermitRootLogin prohibit-password\n` +
            `AllowUsers ${SECOND_USER} root\nAllowTcpForwarding local\nAllowStreamLocalForwarding local\n` +
            "X11Forwarding no\nPrintMotd no\nLogLevel VERBOSE\n" +
            `Match User ${SECOND_USER}\n  SetEnv XDG_RUNTIME_DIR=${remoteRuntimeDir} XDG_STATE_HOME=${remoteState}\n`,
        );
        const child = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", sshdConfig], { stdio: ["ignore", "ignore", "pipe"] });
        sshd = child;
        const ready = new Promise<string | undefined>((resolve) => {
          let pending = "";
          child.stderr!.setEncoding("utf8");
          child.stderr!.on("data", (chunk: string) => {
            log.text += chunk;
            if (log.text.length > 200_000) log.text = log.text.slice(-100_000);
            pending += chunk;
            const lines = pending.split("\n");
            pending = lines.pop() ?? "";
            for (const line of lines) {
              if (line.includes("Server listening on")) resolve(undefined);
              else if (line.includes("Address already in use") || line.includes("Cannot bind")) resolve(line);
            }
          });
          child.once("exit", (code) => resolve(`sshd ended (${code})`));
        });
        const problem = await withTimeout(ready, WAIT_MS, "sshd to listen");
        if (problem === undefined) break;
        await killAndWait(child);
        sshd = undefined;
        if (attempt >= 5) throw new Error(`sshd did not start: ${problem}\n${log.text}`);
      }
      const sshConfig = path.join(base, "ssh_config");
      fs.writeFileSync(sshConfig, config.replaceAll("PORT", String(port)), { mode: 0o600 });
      return new SshMachine(base, port, uid, sshConfig, remoteProgram, remoteRuntimeDir, localRuntimeDir, sshd!, log);
    } catch (error) {
      if (sshd) await killAndWait(sshd);
      fs.rmSync(base, { recursive: true, force: true });
      throw error;
    }
  }

  /** The `remote` option that reaches the second user's host through this machine. */
  remote(destination = MACHINE): { destination: string; sshProgram: string; sshConfig: string; remoteProgram: string } {
    return { destination, sshProgram: "/usr/bin/ssh", sshConfig: this.sshConfig, remoteProgram: this.remoteProgram };
  }

  /** A socket path in this user's directory for the test: the local ends of forwards go beside it. */
  get localSocketPath(): string {
    return path.join(this.localRuntimeDir, "panehost", "host.sock");
  }

  /**
   * Runs `panehost --remote machine ... ARGS` (the CLI under test) as this
   * user and resolves with its exit status; ends it by its pid and rejects
   * after {@link WAIT_MS}.
   */
  async panehost(args: string[]): Promise<number | null> {
    const child = spawn(
      panehostBin(),
      ["--remote", MACHINE, "--ssh-config", this.sshConfig, "--remote-panehost", this.remoteProgram, ...args],
      {
        stdio: ["ignore", "ignore", "ignore"],
        env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: this.localRuntimeDir, XDG_RUNTIME_DIR: this.localRuntimeDir, LANG: "C.UTF-8" },
      },
    );
    const ended = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      return await withTimeout(ended, WAIT_MS, `panehost --remote ${args.join(" ")}`);
    } catch (error) {
      await killAndWait(child);
      throw error;
    }
  }

  /** What sshd logged so far. */
  get sshdLog(): string {
    return this.log.text;
  }

  /**
   * Ends the second user's host (with its panes: `panehost --remote
   * machine up`, then `stop --close-panes`, then by its pid if that did
   * not end it),
   * then sshd by its pid, and removes the directory.
   */
  async stop(): Promise<void> {
    try {
      if (this.remoteHostPids.size > 0) {
        // A host there (started again if a test left it stopped: it takes
        // back the panes their keepers hold), then stopped with its panes.
        await this.panehost(["up"]).catch(() => {});
        await this.panehost(["stop", "--close-panes"]).catch(() => {});
        for (const pid of this.remoteHostPids) {
          if (!(await waitGone(pid))) process.kill(pid, "SIGKILL");
        }
      }
    } finally {
      await killAndWait(this.sshd);
      fs.rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** SIGKILL to a child, by its pid, and its exit. */
async function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  process.kill(child.pid!, "SIGKILL");
  await exited;
}

/** The user a process runs as, from /proc. */
export function uidOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const line = status.split("\n").find((l) => l.startsWith("Uid:"))!;
  return Number(line.split(/\s+/)[1]);
}

