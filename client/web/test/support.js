// What the browser tests share: the panehost binary, a host and a gateway
// of their own, a headless Chromium, and waiting for conditions.

import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
export const webDir = path.resolve(here, '..');
export const repoDir = path.resolve(webDir, '../..');

const execFileAsync = promisify(execFile);

/** The output ring of the test host's panes. */
export const RING_BYTES = 64 * 1024;

/** Chromium as Debian packages it (`apt-get install chromium`). */
export const CHROMIUM = process.env.PANEHOST_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Polls `condition` until it returns a truthy value (which is returned),
 * or throws once `timeout` ms have passed, saying what was awaited and
 * what `describe` says about the last state.
 */
export async function waitFor(condition, { timeout = 15000, interval = 50, what = 'a condition', describe } = {}) {
  const deadline = Date.now() + timeout;
  let lastError;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      let state = '';
      if (describe) {
        try {
          state = `; last state: ${await describe()}`;
        } catch (error) {
          state = `; cannot describe the state: ${error.message}`;
        }
      }
      const cause = lastError ? `; last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeout} ms waiting for ${what}${state}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** Builds the binary (cargo does nothing when it is up to date), unless PANEHOST_BIN names one. */
export async function panehostBinary() {
  if (process.env.PANEHOST_BIN) return process.env.PANEHOST_BIN;
  await execFileAsync('cargo', ['build', '-p', 'panehost-host'], {
    cwd: repoDir,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 30 * 60 * 1000,
  });
  // Where cargo put it: it honours CARGO_TARGET_DIR.
  const { stdout } = await execFileAsync('cargo', ['metadata', '--format-version', '1', '--no-deps'], {
    cwd: repoDir,
    maxBuffer: 64 * 1024 * 1024,
  });
  return path.join(JSON.parse(stdout).target_directory, 'debug', 'panehost');
}

/** Waits until something accepts connections on a Unix socket. */
function socketAnswers(socketPath) {
  return new Promise((resolve) => {
    const connection = net.connect(socketPath);
    connection.once('connect', () => {
      connection.destroy();
      resolve(true);
    });
    connection.once('error', () => resolve(false));
  });
}

/** Waits for a child to exit; SIGKILL when it does not within `ms`. */
async function stop(child, ms = 5000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }, ms);
  await exited;
  clearTimeout(timer);
}

/**
 * A host and a gateway in a scratch directory, with a clean environment
 * (HOME there, SHELL=/bin/sh).
 */
export class Rig {
  /** `env`: more of the environment, for the host and the gateway (such as `SHELL`). */
  static async start({ env = {} } = {}) {
    const rig = new Rig();
    await rig.#start(env);
    return rig;
  }

  async #start(extraEnv) {
    this.bin = await panehostBinary();
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), 'panehost-web-test-'));
    this.home = path.join(this.root, 'home');
    fs.mkdirSync(this.home);
    this.socket = path.join(this.root, 'run', 'host.sock');
    this.stateDir = path.join(this.root, 'state');
    this.env = {
      HOME: this.home,
      SHELL: '/bin/sh',
      PATH: '/usr/local/bin:/usr/bin:/bin',
      LANG: 'C.UTF-8',
      ...extraEnv,
    };
    this.panes = [];

    await this.startHost();

    const gateway = await this.startGateway([]);
    this.web = gateway.child;
    this.url = gateway.url;
    this.webLog = gateway.log;
    const parsed = new URL(this.url);
    this.base = parsed.origin;
    this.token = new URLSearchParams(parsed.hash.slice(1)).get('token');
  }

  /** Starts the host (a small ring, 64 KiB, so that a test can outrun it) and waits until it listens. */
  async startHost() {
    this.hostStarts = (this.hostStarts ?? 0) + 1;
    this.host = spawn(this.bin, [...this.globals(), 'host'], {
      env: { ...this.env, PANEHOST_RING_BYTES: String(RING_BYTES) },
      stdio: ['ignore', 'ignore', fs.openSync(path.join(this.root, `host-${this.hostStarts}.log`), 'w')],
    });
    await waitFor(() => socketAnswers(this.socket), { what: 'the host to listen', timeout: 20000 });
  }

  /**
   * Stops the host (its panes stay with their keepers), and has a
   * new one take them back: the one the gateway starts when it finds none,
   * or the one this command starts, whichever comes first (`panehost stop`
   * ends it at the end).
   */
  async restartHost() {
    // `panehost stop` leaves the panes with their keepers (a SIGTERM would close them).
    const exited = new Promise((resolve) => this.host.once('exit', resolve));
    await this.run('stop');
    await exited;
    this.host = null;
    this.detachedHost = true;
    await this.run('ls');
  }

  globals() {
    return ['--socket', this.socket, '--state-dir', this.stateDir];
  }

  /**
   * Starts `panehost web --listen 127.0.0.1:0` (with `extra` arguments and
   * debug logging; another `bin`, more `env` and a `cwd` when given), and
   * reads the URL it prints.
   */
  async startGateway(extra, { bin = this.bin, env = {}, cwd } = {}) {
    const log = path.join(this.root, `web-${Date.now()}-${Math.random().toString(16).slice(2)}.log`);
    const child = spawn(bin, [...this.globals(), 'web', '--listen', '127.0.0.1:0', ...extra], {
      env: { ...this.env, PANEHOST_LOG: 'debug', ...env },
      cwd,
      stdio: ['ignore', 'pipe', fs.openSync(log, 'w')],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    const url = await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`panehost web exited: ${fs.readFileSync(log, 'utf8')}`);
        const line = stdout.split('\n')[0];
        return stdout.includes('\n') ? line.trim() : null;
      },
      { what: 'panehost web to print its URL', timeout: 20000 },
    );
    return { child, url, log, stdout: () => stdout };
  }

  async stopGateway(gateway) {
    await stop(gateway.child);
  }

  /** Runs a client subcommand and returns its standard output. */
  async run(...args) {
    const { stdout } = await execFileAsync(this.bin, [...this.globals(), ...args], {
      env: this.env,
      timeout: 30000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  }

  /** `panehost start shell [-- command...]`: the new pane's id. */
  async startShell(command = []) {
    const args = ['start', 'shell'];
    if (command.length) args.push('--', ...command);
    const pane = (await this.run(...args)).trim();
    this.panes.push(pane);
    return pane;
  }

  /** `panehost inspect PANE --json`: the host's `inspected` answer, `{pane, screen}`. */
  async inspect(pane) {
    return JSON.parse(await this.run('inspect', pane, '--json'));
  }

  /** Closes the panes, then stops the gateway and the host, by pid. */
  async stop() {
    for (const pane of this.panes) {
      await this.run('close', pane).catch(() => {});
    }
    await stop(this.web);
    await stop(this.host);
    if (this.detachedHost) await this.run('stop').catch(() => {});
    if (!process.env.PANEHOST_KEEP_TEST_DIR) fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/** A fresh headless Chromium context with its own profile directory. */
export async function launchBrowser(viewport = { width: 1000, height: 600 }) {
  const { chromium } = await import('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'panehost-web-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The screen's rows from `inspect --json`, as many as it has rows. */
export function inspectedRows(detail) {
  const rows = detail.screen.text.split('\n');
  while (rows.length < detail.screen.size.rows) rows.push('');
  return rows.map((row) => row.trimEnd());
}

/** Rows without the empty ones at the end. */
export function trimTrailingEmpty(rows) {
  const copy = [...rows];
  while (copy.length && copy[copy.length - 1] === '') copy.pop();
  return copy;
}
