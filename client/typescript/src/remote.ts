/**
 * A host on another machine, reached through OpenSSH: the `remote` option
 * of {@link connect}.
 *
 * A host serves one user on one machine. To drive the host of a user on
 * another machine, the client runs `ssh` (OpenSSH's own client, with the
 * user's keys, agent, known hosts and configuration) and forwards the
 * remote host's Unix socket to a local one. Nothing of the protocol
 * changes, and neither do the checks: the local end is a socket in a new
 * directory private to this user (mode 0700), served by this user's ssh;
 * the remote host accepts only its own user, which is whoever ssh signed
 * in as.
 *
 * This module holds {@link RemoteLink}, which opens the forward, opens it
 * again when a connection through it fails, and ends it. The `remote`
 * option and its checks are in `remote_target.ts`; ssh's command lines,
 * its answers and its failures in `ssh.ts`. Their exports are re-exported
 * here.
 *
 * @module
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { ConnectionLostError, RemoteError, RequestTimeoutError } from "./errors.js";
import { checkSocketPath, type RemoteTarget, shown } from "./remote_target.js";
import { forwardArgs, type RemoteHost, SshProcess, sshFailure, tailOf, upArgs } from "./ssh.js";

export {
  checkDestination,
  checkRemoteProgram,
  checkSocketPath,
  DEFAULT_REMOTE_PROGRAM,
  DEFAULT_REMOTE_READY_TIMEOUT_MS,
  DEFAULT_SSH_PROGRAM,
  MAX_DESTINATION_LEN,
  MAX_PROGRAM_LEN,
  MAX_SOCKET_PATH_LEN,
  resolveRemote,
} from "./remote_target.js";
export type { RemoteOptions, RemoteTarget } from "./remote_target.js";
export { baseArgs, forwardArgs, parseUpLine, remoteCommand, sshFailure, upArgs } from "./ssh.js";
export type { RemoteHost } from "./ssh.js";

/** How long the local end may take to appear once the other side answered (ssh binds it before it runs the remote command). */
const SOCKET_GRACE_MS = 2_000;
/** The name of the local end of a forward inside its private directory. */
const SOCKET_FILE_NAME = "host.sock";

/** Resolves with `promise`'s value, or `timedOut` after `ms`. */
async function within<T, U>(promise: Promise<T>, ms: number, timedOut: U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<U>((resolve) => {
    timer = setTimeout(() => resolve(timedOut), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const TIMED_OUT = Symbol("timed out");

/**
 * Why `dir` is not a directory private to this user (owned by them, mode
 * 0700, not a symbolic link), or `null` when it is.
 */
function privateDirProblem(dir: string): string | null {
  const uid = typeof process.geteuid === "function" ? process.geteuid() : null;
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(dir);
  } catch (error) {
    return `${dir}: ${(error as Error).message}`;
  }
  if (!stat.isDirectory()) return `${dir} is not a directory (a symbolic link is not followed)`;
  if (uid !== null && stat.uid !== uid) return `${dir} is owned by uid ${stat.uid}, not by this user (uid ${uid})`;
  if ((stat.mode & 0o077) !== 0) return `${dir} has mode ${(stat.mode & 0o777).toString(8)}; it must be 0700`;
  return null;
}

/** One running `ssh -L`. */
interface Forward {
  ssh: SshProcess;
  generation: number;
  /** The local end. */
  socket: string;
  /** Its private directory. */
  dir: string;
}

/**
 * The link to a host on another machine: the ssh forward to its socket,
 * opened again when a connection through it fails. Made by {@link connect}
 * with the `remote` option; the client's {@link Client.remote} is this.
 */
export class RemoteLink {
  /** The checked target. */
  readonly target: RemoteTarget;
  private forward: Forward | undefined;
  private host: RemoteHost | undefined;
  private generation = 0;
  /** Serialises the opening of forwards. */
  private opening: Promise<unknown> = Promise.resolve();
  private closed = false;
  private closing: Promise<void> | undefined;

  /** @internal Made by {@link connect}. */
  constructor(target: RemoteTarget) {
    this.target = target;
    openLinks.add(this);
    if (openLinks.size === 1) process.once("exit", killOpenLinks);
  }

  /** The ssh destination. */
  get destination(): string {
    return this.target.destination;
  }

  /** The process id of the running ssh forward, if one runs. */
  get sshPid(): number | undefined {
    const forward = this.forward;
    return forward !== undefined && !forward.ssh.hasExited ? forward.ssh.pid : undefined;
  }

  /** The local end of the running forward, if one runs. */
  get localSocket(): string | undefined {
    return this.forward?.socket;
  }

  /** What the other machine's `panehost up` said last: its socket, uid, pid and name. */
  get remoteHost(): RemoteHost | undefined {
    return this.host;
  }

  /**
   * Runs `ssh DEST panehost up` once (starting the host there when none
   * answers) and returns what it says.
   *
   * @throws {@link RemoteError}
   */
  async up(): Promise<RemoteHost> {
    const target = this.target;
    const ssh = await SshProcess.start(target, upArgs(target), "ignore");
    const run = (async () => {
      const host = await ssh.answer();
      const { code, signal } = await ssh.exited;
      return { host, code, signal };
    })();
    const outcome = await within(run, target.readyTimeoutMs, TIMED_OUT);
    if (outcome === TIMED_OUT) {
      await ssh.kill();
      throw new RemoteError(
        target.destination,
        "timeout",
        `no answer within ${target.readyTimeoutMs} ms (ssh signing in, or panehost up there)${tailOf(ssh)}`,
        { transient: true },
      );
    }
    // Let standard error be read to its end.
    await new Promise((resolve) => setImmediate(resolve));
    if (outcome.code !== 0) throw sshFailure(target, outcome.code, outcome.signal, ssh.stderrText, "while asking for the host");
    if (outcome.host === undefined) {
      throw new RemoteError(target.destination, "remote_failed", `\`${target.remoteProgram} up\` printed no socket`);
    }
    this.checkAnswer(outcome.host);
    this.host = outcome.host;
    return outcome.host;
  }

  /**
   * Opens a connection through the forward with `open` (opening the
   * forward, and starting the remote host, when needed). When it fails as
   * a lost link would, ends that ssh and tries once more through a new
   * forward.
   *
   * @internal
   */
  async connect<T>(open: (socketPath: string) => Promise<T>): Promise<T> {
    const first = await this.current(undefined);
    try {
      return await open(first.socket);
    } catch (error) {
      if (!throughALostLink(error)) throw error;
    }
    const second = await this.current(first.generation);
    try {
      return await open(second.socket);
    } catch (error) {
      if (!throughALostLink(error)) throw error;
      throw await this.diagnose(second, error as Error);
    }
  }

  /** Ends the forward (by its ssh's pid) and removes its directory; the link opens no more. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      await this.opening.catch(() => {});
      const forward = this.forward;
      this.forward = undefined;
      if (forward) await endForward(forward);
      openLinks.delete(this);
      if (openLinks.size === 0) process.off("exit", killOpenLinks);
    })();
    return this.closing;
  }

  /** The running forward, or a new one when there is none or `failed` names it. */
  private current(failed: number | undefined): Promise<Forward> {
    const next = this.opening.catch(() => {}).then(async () => {
      if (this.closed) throw new ConnectionLostError("the remote link is closed");
      const forward = this.forward;
      if (forward !== undefined && forward.generation !== failed && !forward.ssh.hasExited) return forward;
      this.forward = undefined;
      if (forward !== undefined) await endForward(forward);
      const host = this.host ?? (await this.up());
      let opened = await this.open(host.socket);
      if (opened.announced.socket !== host.socket) {
        // The host there moved to another socket since it was asked.
        await endForward(opened.forward);
        const again = await this.open(opened.announced.socket);
        if (again.announced.socket !== opened.announced.socket) {
          await endForward(again.forward);
          throw new RemoteError(
            this.target.destination,
            "remote_failed",
            `the host there keeps moving (${opened.announced.socket} then ${again.announced.socket})`,
            { transient: true },
          );
        }
        opened = again;
      }
      if (this.closed) {
        await endForward(opened.forward);
        throw new ConnectionLostError("the remote link is closed");
      }
      this.host = opened.announced;
      this.forward = opened.forward;
      return opened.forward;
    });
    this.opening = next;
    return next;
  }

  /** Starts `ssh -L LOCAL:REMOTE DEST exec panehost up --hold` and waits for its answer and its local end. */
  private async open(remote: string): Promise<{ forward: Forward; announced: RemoteHost }> {
    const target = this.target;
    const remoteProblem = checkSocketPath(remote);
    if (remoteProblem !== null) {
      throw new RemoteError(target.destination, "remote_failed", `the host's socket there, ${shown(remote)}, ${remoteProblem}`);
    }
    const dir = this.privateForwardDir();
    const socket = path.join(dir, SOCKET_FILE_NAME);
    const localProblem = checkSocketPath(socket);
    if (localProblem !== null) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw new RemoteError(
        target.destination,
        "local_dir",
        `the local end of the forward, ${shown(socket)}, ${localProblem}; choose another directory for it (XDG_RUNTIME_DIR, or the directory of socketPath)`,
      );
    }
    let ssh: SshProcess;
    try {
      ssh = await SshProcess.start(target, forwardArgs(target, socket, remote), "pipe");
    } catch (error) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    const forward: Forward = { ssh, generation: ++this.generation, socket, dir };
    try {
      const deadline = Date.now() + target.readyTimeoutMs;
      const announced = await within(ssh.answer(), target.readyTimeoutMs, TIMED_OUT);
      if (announced === TIMED_OUT) {
        throw new RemoteError(
          target.destination,
          "timeout",
          `no answer within ${target.readyTimeoutMs} ms while opening the link${tailOf(ssh)}`,
          { transient: true },
        );
      }
      if (announced === undefined) {
        // ssh ended, or the other side said nothing of use.
        const status = await within(ssh.exited, Math.max(0, deadline - Date.now()), TIMED_OUT);
        await new Promise((resolve) => setImmediate(resolve));
        if (status !== TIMED_OUT && status.code === 0) {
          throw new RemoteError(target.destination, "remote_failed", `\`${target.remoteProgram} up --hold\` ended without naming its socket`);
        }
        const { code, signal } = status === TIMED_OUT ? { code: null, signal: null } : status;
        throw sshFailure(target, code, signal, ssh.stderrText, "while opening the link");
      }
      this.checkAnswer(announced);
      // ssh listens on the local end before it runs the remote command,
      // so it is there by now; a little slack for slow file systems.
      const grace = Date.now() + SOCKET_GRACE_MS;
      while (!fs.existsSync(socket)) {
        if (ssh.hasExited || Date.now() >= grace) {
          const status = ssh.hasExited ? await ssh.exited : { code: null, signal: null };
          throw sshFailure(target, status.code, status.signal, ssh.stderrText, "while opening the local end of the link");
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return { forward, announced };
    } catch (error) {
      await endForward(forward);
      throw error;
    }
  }

  /** A new directory private to this user inside the target's local directory (made 0700 when missing, refused when not private). */
  private privateForwardDir(): string {
    const base = this.target.localDir;
    const fail = (message: string) => new RemoteError(this.target.destination, "local_dir", `the local end of the link: ${message}`);
    try {
      fs.mkdirSync(base, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw fail(`cannot create ${base}: ${(error as Error).message}`);
    }
    const baseProblem = privateDirProblem(base);
    if (baseProblem !== null) throw fail(baseProblem);
    let dir: string;
    try {
      dir = fs.mkdtempSync(path.join(base, "ssh-"));
      fs.chmodSync(dir, 0o700);
    } catch (error) {
      throw fail(`cannot create a directory in ${base}: ${(error as Error).message}`);
    }
    const dirProblem = privateDirProblem(dir);
    if (dirProblem !== null) throw fail(dirProblem);
    return dir;
  }

  private checkAnswer(host: RemoteHost): void {
    const problem = checkSocketPath(host.socket);
    if (problem !== null) {
      throw new RemoteError(this.target.destination, "remote_failed", `the host's socket there, ${shown(host.socket)}, ${problem}`);
    }
  }

  /** A connection failed through a new forward too: when ssh says why (sshd refused to connect the channel), say that instead. */
  private async diagnose(forward: Forward, error: Error): Promise<Error> {
    // ssh writes its complaint as the channel fails; give it a moment.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const said = forward.ssh.stderrText;
    if (!said.includes("open failed")) return error;
    return new RemoteError(
      this.target.destination,
      "forward_refused",
      `the other side would not connect the forwarded socket: ${said.replace(/\n/g, "; ")} (its sshd must allow it: ` +
        "AllowStreamLocalForwarding yes or local, AllowTcpForwarding yes or local, no DisableForwarding, and no restrict or " +
        "no-port-forwarding on the key)",
    );
  }

  /** At this process's exit: end ssh by its pid and remove the directory, synchronously. @internal */
  killNow(): void {
    const forward = this.forward;
    if (forward === undefined) return;
    if (!forward.ssh.hasExited) {
      try {
        forward.ssh.child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }
    fs.rmSync(forward.dir, { recursive: true, force: true });
  }
}

/** Links not closed yet: their ssh ends at this process's exit, whatever else happens. */
const openLinks = new Set<RemoteLink>();

function killOpenLinks(): void {
  for (const link of openLinks) link.killNow();
}

/** Ends a forward's ssh by its pid and removes its directory. */
async function endForward(forward: Forward): Promise<void> {
  await forward.ssh.kill();
  fs.rmSync(forward.dir, { recursive: true, force: true });
}

/**
 * A failure a new forward may cure: the local end refused or vanished (ssh
 * died), the connection closed at once (ssh could not reach the remote
 * socket), or it timed out.
 */
function throughALostLink(error: unknown): boolean {
  return error instanceof ConnectionLostError || error instanceof RequestTimeoutError;
}
