/**
 * Running OpenSSH's client for a remote host: the command lines of its two
 * runs (`panehost up`, and the forward of the host's socket), what the
 * other side answers, what ssh's failures mean, and {@link SshProcess}, a
 * running ssh read line by line.
 *
 * @module
 */

import { type ChildProcess, spawn } from "node:child_process";
import { RemoteError, type RemoteErrorReason } from "./errors.js";
import { byteLength, CONTROL, type RemoteTarget } from "./remote_target.js";

/** The longest line of the other side's output that is read. */
const MAX_LINE = 4096;
/** How many lines of the other side's output are looked through for its answer (a login script may print a greeting first). */
const MAX_LINES = 64;
/** How much of ssh's standard error is kept for an error message. */
const STDERR_TAIL_LINES = 12;

/** What the other machine's `panehost up` says: its user's host. */
export interface RemoteHost {
  /** The host's socket on the other machine. */
  socket: string;
  /** The user the host runs as there (its uid). */
  uid: number;
  /** The host's process id there. */
  pid: number;
  /** The host's name and version, as its handshake says. */
  host: string;
}

/** One line of `panehost up`'s output, or `undefined` when it is something else. */
export function parseUpLine(line: string): RemoteHost | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{") || byteLength(trimmed) > MAX_LINE) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  const record = value as Record<string, unknown>;
  const { socket, uid, pid, host } = record;
  const u32 = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= 0xffffffff;
  if (typeof socket !== "string" || !u32(uid) || !u32(pid) || typeof host !== "string") return undefined;
  return { socket, uid, pid, host: [...host.replace(new RegExp(CONTROL.source, "g"), "")].slice(0, 200).join("") };
}

/** `ssh` and the options every run of it gets (see docs/TYPESCRIPT.md for why each). */
export function baseArgs(target: RemoteTarget): string[] {
  const args: string[] = [];
  if (target.sshConfig !== undefined) args.push("-F", target.sshConfig);
  const timeout = Math.min(3600, Math.max(1, Math.floor(target.readyTimeoutMs / 1000)));
  for (const option of [
    "BatchMode=yes",
    "ControlMaster=no",
    "ControlPath=none",
    "ForwardAgent=no",
    "ForwardX11=no",
    "RequestTTY=no",
    "ServerAliveInterval=10",
    "ServerAliveCountMax=3",
    `ConnectTimeout=${timeout}`,
  ]) {
    args.push("-o", option);
  }
  return args;
}

/** The command line the other machine's shell runs: its panehost with `args`, plain words only. */
export function remoteCommand(target: RemoteTarget, args: string[]): string {
  const words = [target.remoteProgram];
  if (target.remoteSocket !== undefined) words.push("--socket", target.remoteSocket);
  words.push(...args);
  return words.join(" ");
}

/** The full argument list of the `ssh` that asks for the host (`panehost up`). */
export function upArgs(target: RemoteTarget): string[] {
  return [...baseArgs(target), "-n", "--", target.destination, remoteCommand(target, ["up"])];
}

/** The full argument list of the `ssh` that forwards `local` to `remote` (`exec panehost up --hold`). */
export function forwardArgs(target: RemoteTarget, local: string, remote: string): string[] {
  return [
    ...baseArgs(target),
    "-o",
    "ExitOnForwardFailure=yes",
    "-o",
    "StreamLocalBindUnlink=yes",
    "-L",
    `${local}:${remote}`,
    "--",
    target.destination,
    // `exec`: the remote shell gives way to panehost.
    `exec ${remoteCommand(target, ["up", "--hold"])}`,
  ];
}

/**
 * What ssh's failure means, for people: OpenSSH's own exit status 255 (it
 * could not connect or sign in), the remote shell's 127 (no such program)
 * and 126 (not executable), or the remote program's own (2 with
 * "unrecognized subcommand": a panehost without `up`).
 */
export function sshFailure(target: RemoteTarget, code: number | null, signal: string | null, stderr: string, during: string): RemoteError {
  const destination = target.destination;
  const program = target.remoteProgram;
  const trimmed = stderr.trim();
  const said = trimmed === "" ? "" : `: ${trimmed.replace(/\n/g, "; ")}`;
  const error = (reason: RemoteErrorReason, message: string, transient = false) =>
    new RemoteError(destination, reason, message, { transient, exitCode: code });
  switch (code) {
    case 255:
      if (stderr.includes("Host key verification failed") || stderr.includes("REMOTE HOST IDENTIFICATION")) {
        return error(
          "host_key",
          `ssh refused the machine's host key${said} (it is not in known_hosts, or it changed: check it, then connect once ` +
            `with \`ssh ${destination}\` to accept it; prompts are off here)`,
        );
      }
      if (stderr.includes("Permission denied")) {
        return error("permission_denied", `ssh could not sign in${said} (only keys and agents work here: no password prompt is shown)`);
      }
      return error("ssh_failed", `ssh failed ${during}${said}`, true);
    case 127:
      return error(
        "remote_program_missing",
        `\`${program}\` was not found on the other machine${said} (install panehost there, or name it with the remoteProgram ` +
          `option, e.g. ~/.cargo/bin/panehost: a non-interactive ssh session's PATH is short)`,
      );
    case 126:
      return error("remote_program_not_executable", `\`${program}\` cannot be run on the other machine${said}`);
    case null:
      return error("ssh_failed", `ssh ended by a signal${signal ? ` (${signal})` : ""} ${during}${said}`, true);
    default:
      if (code === 2 && stderr.includes("unrecognized subcommand")) {
        return error("remote_outdated", `the panehost on the other machine has no \`up\` command${said}: it is older than this client; update it`);
      }
      return error("remote_failed", `\`${program} up\` failed there (exit status ${code})${said}`);
  }
}

/** `ssh` could not be started at all. */
function spawnFailure(target: RemoteTarget, error: NodeJS.ErrnoException): RemoteError {
  const message =
    error.code === "ENOENT"
      ? `cannot run \`${target.sshProgram}\`: not found (install OpenSSH's client, e.g. the openssh-client package, or name one with the sshProgram option)`
      : `cannot run \`${target.sshProgram}\`: ${error.message}`;
  return new RemoteError(target.destination, "ssh_missing", message);
}

/** A running ssh: its exit, its last lines of standard error, its standard output line by line. */
export class SshProcess {
  /** The ssh process. */
  readonly child: ChildProcess;
  /** Resolves with its exit status, or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  private readonly tail: string[] = [];
  private partialErr = "";
  private outBuffer = "";
  private outLines: string[] = [];
  private outEnded = false;
  private lineWaiter: (() => void) | undefined;
  private exitInfo: { code: number | null; signal: string | null } | undefined;

  private constructor(child: ChildProcess) {
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        resolve({ code, signal });
      });
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      const text = this.partialErr + chunk;
      const lines = text.split("\n");
      this.partialErr = lines.pop() ?? "";
      if (this.partialErr.length > MAX_LINE) this.partialErr = this.partialErr.slice(0, MAX_LINE);
      for (const line of lines) this.keep(line);
    });
    child.stderr?.on("end", () => {
      if (this.partialErr) this.keep(this.partialErr);
      this.partialErr = "";
    });
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      const text = this.outBuffer + chunk;
      const lines = text.split("\n");
      this.outBuffer = lines.pop() ?? "";
      if (this.outBuffer.length > MAX_LINE) this.outBuffer = this.outBuffer.slice(0, MAX_LINE);
      this.outLines.push(...lines);
      this.wake();
    });
    child.stdout?.on("end", () => {
      if (this.outBuffer) this.outLines.push(this.outBuffer);
      this.outBuffer = "";
      this.outEnded = true;
      this.wake();
    });
  }

  /**
   * Starts `program args`. Rejects with a {@link RemoteError}
   * (`ssh_missing`) when it cannot be run.
   */
  static start(target: RemoteTarget, args: string[], stdin: "ignore" | "pipe"): Promise<SshProcess> {
    return new Promise((resolve, reject) => {
      const child = spawn(target.sshProgram, args, { stdio: [stdin, "pipe", "pipe"] });
      const onError = (error: Error) => reject(spawnFailure(target, error as NodeJS.ErrnoException));
      child.once("error", onError);
      child.once("spawn", () => {
        child.off("error", onError);
        // Errors after the start (a pipe closing) are seen as its exit.
        child.on("error", () => {});
        child.stdin?.on("error", () => {});
        resolve(new SshProcess(child));
      });
    });
  }

  /** Its process id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True once it exited. */
  get hasExited(): boolean {
    return this.exitInfo !== undefined || this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** What ssh said, one line per line. */
  get stderrText(): string {
    return [...this.tail, ...(this.partialErr ? [this.partialErr] : [])].join("\n");
  }

  /**
   * The first line of standard output that is an answer of `panehost up`,
   * looking at most at {@link MAX_LINES} lines; `undefined` when the output
   * ended (or held no answer in those lines). Lines after the answer are
   * read and dropped.
   */
  async answer(): Promise<RemoteHost | undefined> {
    let looked = 0;
    for (;;) {
      while (this.outLines.length > 0) {
        const line = this.outLines.shift()!;
        looked += 1;
        const host = parseUpLine(line);
        if (host !== undefined) {
          this.stopReading();
          return host;
        }
        if (looked >= MAX_LINES) {
          this.stopReading();
          return undefined;
        }
      }
      if (this.outEnded) return undefined;
      await new Promise<void>((resolve) => (this.lineWaiter = resolve));
    }
  }

  /** Ends ssh by its own pid (SIGKILL) and waits for its exit. */
  async kill(): Promise<void> {
    if (!this.hasExited) {
      try {
        this.child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await this.exited;
  }

  /** Whatever else the other side prints is read and dropped, so that it never blocks on a full pipe. */
  private stopReading(): void {
    this.outLines = [];
    this.outBuffer = "";
    this.child.stdout?.removeAllListeners("data");
    this.child.stdout?.resume();
  }

  private wake(): void {
    const waiter = this.lineWaiter;
    this.lineWaiter = undefined;
    waiter?.();
  }

  private keep(line: string): void {
    const clean = [...line.trimEnd().replace(new RegExp(CONTROL.source, "g"), "")].slice(0, 300).join("");
    if (clean === "") return;
    if (this.tail.length === STDERR_TAIL_LINES) this.tail.shift();
    this.tail.push(clean);
  }
}

/** What ssh said, for a message: `""`, or `": "` and its lines joined by `; `. */
export function tailOf(ssh: SshProcess): string {
  const text = ssh.stderrText;
  return text === "" ? "" : `: ${text.replace(/\n/g, "; ")}`;
}
