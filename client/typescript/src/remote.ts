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
 * @module
 */

import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { ConnectionLostError, RemoteError, type RemoteErrorReason, RemoteTargetError, RequestTimeoutError } from "./errors.js";

/** The ssh client run when none is named. */
export const DEFAULT_SSH_PROGRAM = "ssh";
/** The program run on the other machine when none is named. */
export const DEFAULT_REMOTE_PROGRAM = "panehost";
/** How long ssh has to sign in and the other machine's `panehost up` to answer, by default: 20 s. */
export const DEFAULT_REMOTE_READY_TIMEOUT_MS = 20_000;
/** The longest destination accepted, in bytes: a user name, `@`, a DNS name of at most 253 bytes and a port, with room for `ssh://`. */
export const MAX_DESTINATION_LEN = 320;
/** The longest program path accepted, in bytes (for ssh, and on the other machine). */
export const MAX_PROGRAM_LEN = 1024;
/** The longest socket path a Unix-domain socket can have, in bytes, without the terminating NUL. */
export const MAX_SOCKET_PATH_LEN = 107;

/** The longest line of the other side's output that is read. */
const MAX_LINE = 4096;
/** How many lines of the other side's output are looked through for its answer (a login script may print a greeting first). */
const MAX_LINES = 64;
/** How much of ssh's standard error is kept for an error message. */
const STDERR_TAIL_LINES = 12;
/** How long the local end may take to appear once the other side answered (ssh binds it before it runs the remote command). */
const SOCKET_GRACE_MS = 2_000;
/** The name of the local end of a forward inside its private directory. */
const SOCKET_FILE_NAME = "host.sock";

/** Where a remote host is and how to reach it: the `remote` option of {@link connect}. */
export interface RemoteOptions {
  /**
   * The ssh destination: `[user@]host` (a host name, an address or a
   * `Host` alias of the ssh configuration) or `ssh://[user@]host[:port]`.
   */
  destination: string;
  /** The ssh client to run: a name looked up on `PATH`, or a path. Default `ssh`. */
  sshProgram?: string | undefined;
  /** The ssh configuration file (`ssh -F`) to read instead of `~/.ssh/config`. */
  sshConfig?: string | undefined;
  /**
   * The program run on the other machine: a name its `PATH` finds, an
   * absolute path, or a path below its home (`~/...`). Default
   * `panehost`. A non-interactive ssh session's `PATH` is short (often
   * `/usr/bin:/bin`), so a `panehost` installed by `cargo install` needs
   * `~/.cargo/bin/panehost`.
   */
  remoteProgram?: string | undefined;
  /** The host's socket on the other machine. Default: the one its own defaults name. */
  remoteSocket?: string | undefined;
  /**
   * How long ssh has to sign in and the other side to answer (starting a
   * host there when none answers), in milliseconds. Default 20000.
   */
  readyTimeoutMs?: number | undefined;
}

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

/** A field of {@link RemoteOptions}. */
type RemoteField = keyof RemoteOptions;

/** A remote target with every value checked and every default filled in. */
export interface RemoteTarget {
  destination: string;
  sshProgram: string;
  sshConfig: string | undefined;
  remoteProgram: string;
  remoteSocket: string | undefined;
  readyTimeoutMs: number;
  /** The directory inside which each forward gets a new private directory for its local end. */
  localDir: string;
}

const byteLength = (text: string) => Buffer.byteLength(text, "utf8");
const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);
const every = (text: string, ok: (c: string) => boolean) => [...text].every(ok);
// `char::is_control`: C0, DEL and C1.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A value shown in a message: control characters escaped, shortened. */
function shown(value: string): string {
  const chars = [...value];
  const short = chars.slice(0, 80).join("") + (chars.length > 80 ? "..." : "");
  return JSON.stringify(short);
}

/** A user name: letters, digits, `_ . -`, not starting with `-`. */
function checkUser(user: string): string | null {
  if (user.length === 0 || byteLength(user) > 64) return "has a user name that is empty or longer than 64 bytes";
  if (user.startsWith("-") || !every(user, (c) => isAlnum(c) || "_.-".includes(c))) {
    return "has a user name with a character other than letters, digits and `_ . -`";
  }
  return null;
}

/** A host name, an IPv4 address or a `Host` alias: letters, digits, `_ . -`, starting with a letter or digit. */
function checkHostName(host: string): string | null {
  if (host.length === 0 || byteLength(host) > 253) return "has a host name that is empty or longer than 253 bytes";
  if (!isAlnum(host[0]!) || !every(host, (c) => isAlnum(c) || "_.-".includes(c))) {
    return "has a host name with a character other than letters, digits and `_ . -` (or one that does not start with a letter or digit)";
  }
  return null;
}

/** An IPv6 address as ssh takes it: hex digits and colons, with a `%zone`. */
function checkIpv6(value: string): string | null {
  const cut = value.indexOf("%");
  const address = cut >= 0 ? value.slice(0, cut) : value;
  const zone = cut >= 0 ? value.slice(cut + 1) : "";
  const valid =
    address.includes(":") &&
    address.length <= 45 &&
    every(address, (c) => /^[0-9A-Fa-f:.]$/.test(c)) &&
    zone.length <= 16 &&
    every(zone, (c) => isAlnum(c) || "_-.".includes(c));
  return valid ? null : "has an IPv6 address that is not one";
}

/** Splits at the last `@`. */
function splitUser(text: string): [string | undefined, string] {
  const at = text.lastIndexOf("@");
  return at >= 0 ? [text.slice(0, at), text.slice(at + 1)] : [undefined, text];
}

/**
 * Why `destination` cannot be given to ssh, or `null` when it can:
 * `[user@]host` or `ssh://[user@]host[:port]`, at most
 * {@link MAX_DESTINATION_LEN} bytes, never starting with `-` (an option),
 * only characters a user or host name can have.
 */
export function checkDestination(destination: string): string | null {
  if (destination.length === 0) return "is empty";
  if (byteLength(destination) > MAX_DESTINATION_LEN) return `is longer than ${MAX_DESTINATION_LEN} bytes`;
  if (destination.startsWith("-")) return "starts with `-`, which ssh would read as an option";
  if (destination.startsWith("ssh://")) {
    const [user, hostPort] = splitUser(destination.slice("ssh://".length));
    if (user !== undefined) {
      const problem = checkUser(user);
      if (problem) return problem;
    }
    let port: string | undefined;
    if (hostPort.startsWith("[")) {
      const close = hostPort.indexOf("]");
      if (close < 0) return "has a `[` without its `]`";
      const problem = checkIpv6(hostPort.slice(1, close));
      if (problem) return problem;
      const after = hostPort.slice(close + 1);
      if (after !== "") {
        if (!after.startsWith(":")) return "has something other than `:port` after its `]`";
        port = after.slice(1);
      }
    } else {
      const colon = hostPort.indexOf(":");
      const problem = checkHostName(colon >= 0 ? hostPort.slice(0, colon) : hostPort);
      if (problem) return problem;
      if (colon >= 0) port = hostPort.slice(colon + 1);
    }
    if (port !== undefined) {
      const valid = /^[0-9]{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535;
      if (!valid) return "has a port that is not a number from 1 to 65535";
    }
    return null;
  }
  if (destination.includes("://")) return "names a scheme other than ssh://";
  const [user, host] = splitUser(destination);
  if (user !== undefined) {
    const problem = checkUser(user);
    if (problem) return problem;
  }
  return host.includes(":") ? checkIpv6(host) : checkHostName(host);
}

/**
 * Why `program` cannot be run by the remote shell, or `null` when it can:
 * not empty, at most {@link MAX_PROGRAM_LEN} bytes, not starting with `-`,
 * only letters, digits and `_ . / + -` after an optional leading `~/`
 * (nothing in it may need quoting, or be expanded, in any shell).
 */
export function checkRemoteProgram(program: string): string | null {
  if (program.length === 0) return "is empty";
  if (byteLength(program) > MAX_PROGRAM_LEN) return `is longer than ${MAX_PROGRAM_LEN} bytes`;
  if (program.startsWith("-")) return "starts with `-`";
  const body = program.startsWith("~/") ? program.slice(2) : program;
  if (!every(body, (c) => isAlnum(c) || "_./+-".includes(c))) {
    return "holds a character other than letters, digits and `_ . / + -` (and a leading `~/`)";
  }
  return null;
}

/**
 * Why `socketPath` cannot cross ssh (`-L local:remote`), or `null` when it
 * can: absolute, at most {@link MAX_SOCKET_PATH_LEN} bytes, and free of
 * what ssh or a shell would read as something else (`:` separates the two
 * paths, `%` and `$` are expanded, whitespace splits words).
 */
export function checkSocketPath(socketPath: string): string | null {
  if (!socketPath.startsWith("/")) return "is not an absolute path";
  if (byteLength(socketPath) > MAX_SOCKET_PATH_LEN) {
    return `is longer than ${MAX_SOCKET_PATH_LEN} bytes, the most a socket path can have`;
  }
  if (!every(socketPath, (c) => isAlnum(c) || "_./+-@,=".includes(c))) {
    return "holds a character other than letters, digits and `_ . / + - @ , =`, which ssh's forwarding cannot carry";
  }
  return null;
}

/** Why a local path cannot be given to ssh's command line, or `null`. */
function checkLocalPath(value: string): string | null {
  if (value.length === 0) return "is empty";
  if (byteLength(value) > 4096) return "is longer than 4096 bytes";
  if (CONTROL.test(value)) return "holds a control character";
  if (value.startsWith("-")) return "starts with `-`";
  return null;
}

/**
 * Checks every value of `options` and fills in the defaults.
 *
 * @param localDir - The directory for the local ends of forwards.
 * @throws {@link RemoteTargetError} naming the first value refused.
 */
export function resolveRemote(options: RemoteOptions, localDir: string): RemoteTarget {
  if (options === null || typeof options !== "object") {
    throw new RemoteTargetError("destination", "the remote option must be an object with a `destination`");
  }
  const text = (field: RemoteField, value: unknown): string | undefined => {
    if (value === undefined) return undefined;
    if (typeof value !== "string") throw new RemoteTargetError(field, `the remote ${field} must be a string`);
    return value;
  };
  const destination = text("destination", options.destination) ?? "";
  const refuse = (field: RemoteField, what: string, value: string, problem: string | null) => {
    if (problem !== null) throw new RemoteTargetError(field, `the remote ${what} ${shown(value)} ${problem}`);
  };
  refuse("destination", "destination", destination, checkDestination(destination));
  const sshProgram = text("sshProgram", options.sshProgram) ?? DEFAULT_SSH_PROGRAM;
  refuse("sshProgram", "ssh program", sshProgram, checkLocalPath(sshProgram));
  const sshConfig = text("sshConfig", options.sshConfig);
  if (sshConfig !== undefined) refuse("sshConfig", "ssh configuration file", sshConfig, checkLocalPath(sshConfig));
  const remoteProgram = text("remoteProgram", options.remoteProgram) ?? DEFAULT_REMOTE_PROGRAM;
  refuse("remoteProgram", "program", remoteProgram, checkRemoteProgram(remoteProgram));
  const remoteSocket = text("remoteSocket", options.remoteSocket);
  if (remoteSocket !== undefined) refuse("remoteSocket", "socket", remoteSocket, checkSocketPath(remoteSocket));
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_REMOTE_READY_TIMEOUT_MS;
  if (typeof readyTimeoutMs !== "number" || !Number.isFinite(readyTimeoutMs) || readyTimeoutMs <= 0) {
    throw new RemoteTargetError("readyTimeoutMs", "the remote readyTimeoutMs must be a positive, finite number of milliseconds");
  }
  return {
    destination,
    sshProgram,
    // `-F` is read relative to ssh's working directory, which is this
    // process's: make it absolute so that it means what was meant.
    sshConfig: sshConfig === undefined ? undefined : path.resolve(sshConfig),
    remoteProgram,
    remoteSocket,
    readyTimeoutMs,
    localDir,
  };
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
class SshProcess {
  readonly child: ChildProcess;
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

  get pid(): number | undefined {
    return this.child.pid;
  }

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

/** What ssh said, for a message. */
function tailOf(ssh: SshProcess): string {
  const text = ssh.stderrText;
  return text === "" ? "" : `: ${text.replace(/\n/g, "; ")}`;
}

/**
 * A failure a new forward may cure: the local end refused or vanished (ssh
 * died), the connection closed at once (ssh could not reach the remote
 * socket), or it timed out.
 */
function throughALostLink(error: unknown): boolean {
  return error instanceof ConnectionLostError || error instanceof RequestTimeoutError;
}
