/**
 * Where a host on another machine is and how to reach it: the `remote`
 * option of {@link connect}, and the checks every value of it passes
 * before anything of it reaches ssh's command line.
 *
 * @module
 */

import * as path from "node:path";
import { RemoteTargetError } from "./errors.js";

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

/** A field of {@link RemoteOptions}. */
type RemoteField = keyof RemoteOptions;

/** A remote target with every value checked and every default filled in. */
export interface RemoteTarget {
  /** The ssh destination. */
  destination: string;
  /** The ssh client to run. */
  sshProgram: string;
  /** The ssh configuration file, as an absolute path, if one was named. */
  sshConfig: string | undefined;
  /** The program run on the other machine. */
  remoteProgram: string;
  /** The host's socket on the other machine, if one was named. */
  remoteSocket: string | undefined;
  /** How long ssh has to sign in and the other side to answer, in milliseconds. */
  readyTimeoutMs: number;
  /** The directory inside which each forward gets a new private directory for its local end. */
  localDir: string;
}

/** The length of `text` in UTF-8 bytes. */
export const byteLength = (text: string) => Buffer.byteLength(text, "utf8");
const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);
const every = (text: string, ok: (c: string) => boolean) => [...text].every(ok);
/** A control character, as Rust's `char::is_control` has it: C0, DEL and C1. */
// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A value shown in a message: control characters escaped, shortened. */
export function shown(value: string): string {
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
