// The web terminal against a real host and a real `panehost web`, in
// headless Chromium.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inspectedRows, launchBrowser, RING_BYTES, Rig, trimTrailingEmpty, waitFor } from './support.js';

/** A shell prompt: `$ ` for a user, `# ` for root. */
function isPrompt(text) {
  return /[$#] ?$/m.test(text);
}

/** What the page shows: rows, size, and where it stands. */
function pageState(page) {
  return page.evaluate(() => {
    const view = window.panehost.view;
    if (!view || !view.term) return null;
    return {
      pane: view.pane,
      rows: view.visibleRows(),
      cols: view.term.cols,
      rowCount: view.term.rows,
      generation: view.renderedGeneration,
      offset: view.renderedOffset,
      notice: document.getElementById('notice').hidden ? '' : document.getElementById('notice').textContent,
    };
  });
}

function allLines(page) {
  return page.evaluate(() => window.panehost.view.allLines());
}

/** An HTTP upgrade to /ws: resolves to the status code the server answered. */
function upgradeStatus(base, { origin, query = '', protocol, host } = {}) {
  return new Promise((resolve, reject) => {
    const url = new URL(`/ws?${query}`, base);
    const headers = {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': Buffer.from('0123456789abcdef').toString('base64'),
    };
    if (origin) headers.Origin = origin;
    if (protocol) headers['Sec-WebSocket-Protocol'] = protocol;
    if (host) headers.Host = host;
    const request = http.request(url, { headers });
    request.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve(response.statusCode);
    });
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.on('error', reject);
    request.end();
  });
}

describe('panehost web', () => {
  let rig;
  let browser;
  let page;
  let shellPane;

  before(async () => {
    rig = await Rig.start();
    // The shell pane exists before the page opens.
    shellPane = await rig.startShell();
    await waitFor(async () => isPrompt((await rig.inspect(shellPane)).screen.text), {
      what: "the shell's prompt",
    });
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });

  after(async () => {
    await browser?.close();
    await rig?.stop();
  });

  test('opens a shell pane from the list and types into it', async () => {
    await page.goto(rig.url);
    // The token left the address bar (and the history) for the tab's
    // sessionStorage, which only this origin can read.
    assert.equal(page.url(), `${rig.base}/`);
    const link = page.locator(`tr[data-pane="${shellPane}"] a`);
    await link.waitFor({ timeout: 15000 });
    await link.click();
    await waitFor(() => page.url() === `${rig.base}/?pane=${shellPane}`, { what: 'the pane view' });
    await waitFor(
      async () => {
        const state = await pageState(page);
        return state && state.offset !== null && state.rows.some(isPrompt);
      },
      { what: 'the prompt in the terminal', describe: async () => JSON.stringify(await pageState(page)) },
    );

    await page.locator('#terminal').click();
    await page.keyboard.type('echo web-$((6*7))');
    await page.keyboard.press('Enter');
    await waitFor(async () => (await allLines(page)).some((line) => line.trim() === 'web-42'), {
      what: 'web-42 in the terminal',
      describe: async () => JSON.stringify((await pageState(page))?.rows),
    });
  });

  test("the list and the socket speak the protocol's own JSON", async () => {
    await page.goto(`${rig.base}/?pane=${shellPane}`);
    await waitFor(async () => (await pageState(page))?.offset != null, { what: 'the pane to be drawn' });
    // A second socket to the pane, from the page: its first message, a
    // line it types, and the output that echoes it.
    const seen = await page.evaluate(async (pane) => {
      const { authorization, socketProtocols } = await import('/access.js');
      const list = await (await fetch('/api/panes', { headers: authorization() })).json();
      const socket = new WebSocket(`ws://${location.host}/ws?pane=${encodeURIComponent(pane)}`, socketProtocols());
      const messages = [];
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no echo in ${JSON.stringify(messages)}`)), 15000);
        socket.onmessage = (event) => {
          const message = JSON.parse(event.data);
          messages.push(message);
          if (messages.length === 1) socket.send(JSON.stringify({ input: btoa('echo proto-$((3*4))\r') }));
          const output = message.event?.output;
          if (output && atob(output.data).includes('proto-12')) {
            clearTimeout(timer);
            resolve();
          }
        };
        socket.onerror = () => reject(new Error('the socket failed'));
      });
      socket.close();
      return { list, messages };
    }, shellPane);

    // /api/panes: the `panes` answer, each pane as `ls --json` prints it.
    const listed = JSON.parse(await rig.run('ls', '--json'));
    const fromList = seen.list.panes.find((pane) => pane.id === shellPane);
    const fromCli = listed.panes.find((pane) => pane.id === shellPane);
    assert.deepEqual(Object.keys(fromList).sort(), Object.keys(fromCli).sort());
    assert.equal(fromList.state, 'running');

    // The socket: a `start` holding the protocol's StreamStart (a new viewer
    // gets a snapshot), then events, each an object with one key.
    const [first, ...rest] = seen.messages;
    assert.deepEqual(Object.keys(first), ['start']);
    assert.equal(first.start.pane, shellPane);
    assert.equal(typeof first.start.generation, 'number');
    const { snapshot, skipped_from: skippedFrom } = first.start.start.snapshot;
    assert.equal(skippedFrom, null);
    assert.deepEqual(Object.keys(snapshot.size).sort(), ['cols', 'rows']);
    assert.match(snapshot.formatted, /^[A-Za-z0-9+/]*=*$/);
    for (const message of rest) {
      assert.deepEqual(Object.keys(message), ['event'], JSON.stringify(message));
      assert.equal(Object.keys(message.event).length, 1, JSON.stringify(message));
    }
    const outputs = rest.filter((message) => message.event.output).map((message) => message.event.output);
    assert.equal(outputs[0].offset, snapshot.offset, 'output continues where the snapshot ends');
  });

  test('the list says how an exited pane ended', async () => {
    const pane = await rig.startShell(['sh', '-c', 'exit 3']);
    await waitFor(async () => JSON.parse(await rig.run('ls', '--json')).panes.some((p) => p.id === pane && p.state.exited), {
      what: 'the pane to exit',
    });
    await page.goto(`${rig.base}/`);
    const row = page.locator(`tr[data-pane="${pane}"]`);
    await row.waitFor({ timeout: 15000 });
    assert.equal(await row.locator('td').nth(2).textContent(), 'exited (3)');
  });

  test("the list shows each pane's labels", async () => {
    const args = ['start', 'shell', '--label', 'task=T-42', '--label', 'owner=ada'];
    const labelled = (await rig.run(...args)).trim();
    rig.panes.push(labelled);
    await page.goto(`${rig.base}/`);
    const labels = page.locator(`tr[data-pane="${labelled}"] .label`);
    await labels.first().waitFor({ timeout: 15000 });
    assert.deepEqual(await labels.allTextContents(), ['owner=ada', 'task=T-42']);
    // A pane without labels has none.
    assert.equal(await page.locator(`tr[data-pane="${shellPane}"] .label`).count(), 0);
  });

  test('Interrupt is offered while the process runs, never on an exited pane', async () => {
    const interrupt = page.locator('#interrupt');
    const status = () => page.locator('#status').textContent();

    // A pane that exited before the page opened it.
    const exited = await rig.startShell(['sh', '-c', 'exit 5']);
    await waitFor(async () => JSON.parse(await rig.run('ls', '--json')).panes.some((p) => p.id === exited && p.state.exited), {
      what: 'the pane to exit',
    });
    await page.goto(`${rig.base}/?pane=${exited}`);
    await waitFor(async () => (await status()) === 'ended (exited)', { what: 'the stream to end', describe: status });
    assert.equal(await interrupt.isVisible(), false, 'no Interrupt on an exited pane');

    // A pane that exits while it is shown.
    const running = await rig.startShell(['sh', '-c', 'read line; exit 4']);
    await page.goto(`${rig.base}/?pane=${running}`);
    await waitFor(async () => (await status()) === 'live' && (await interrupt.isVisible()), {
      what: 'Interrupt on a running pane',
      describe: status,
    });
    await page.locator('#terminal').click();
    await page.keyboard.press('Enter');
    await waitFor(async () => (await status()) === 'ended (exited)', { what: 'the process to exit', describe: status });
    assert.equal(await interrupt.isVisible(), false, 'no Interrupt once the process exited');
  });

  test('the interrupt button stops a running command', async () => {
    await page.goto(`${rig.base}/?pane=${shellPane}`);
    await waitFor(async () => (await pageState(page))?.offset != null, { what: 'the pane to be drawn' });
    await page.locator('#terminal').click();
    await page.keyboard.type('sleep 100; echo not-interrupted');
    await page.keyboard.press('Enter');
    await waitFor(async () => (await pageState(page)).rows.some((row) => /sleep 100; echo not-interrupted$/.test(row)), {
      what: 'the command line in the terminal',
    });
    await page.locator('#interrupt').click();
    await waitFor(async () => /^Interrupt: (?!…)/.test((await pageState(page)).notice), {
      what: "the interrupt's outcome",
      describe: async () => JSON.stringify(await pageState(page)),
    });
    // The answer and the pane's output come on different connections: the
    // prompt the shell draws once the command has ended may reach the page
    // just after the outcome does.
    const promptAfterCommand = (rows) => {
      const commandRow = rows.findLastIndex((row) => row.endsWith('sleep 100; echo not-interrupted'));
      return rows.slice(commandRow + 1).some(isPrompt);
    };
    await waitFor(async () => promptAfterCommand(trimTrailingEmpty((await pageState(page)).rows)), {
      what: 'a prompt after the command',
      describe: async () => JSON.stringify((await pageState(page)).rows),
    });
    const rows = trimTrailingEmpty((await pageState(page)).rows);
    assert.equal(rows.some((row) => row === 'not-interrupted'), false);
  });

  /**
   * Starts a flood of 3000 lines in a new pane, reloads the page while it
   * is being drawn, and checks the result once the flood is over. Returns
   * where the reloaded page resumed and where the flood began and ended.
   */
  async function floodAndReload() {
    // The loop waits for one line, so that the page is following the pane
    // before the flood begins.
    const script = 'read go; i=0; while [ $i -lt 3000 ]; do echo line-$i; i=$((i+1)); done; sleep 60';
    const pane = await rig.startShell(['sh', '-c', script]);
    await page.goto(`${rig.base}/?pane=${pane}`);
    const ready = await waitFor(async () => {
      const state = await pageState(page);
      return state?.offset != null ? state : null;
    }, { what: 'the pane to be drawn' });

    // Reload from inside the page as soon as the first line of the flood
    // is drawn, while the rest is still coming. (The old page goes on
    // drawing until the new one replaces it; what it has drawn by then is
    // what it saves.)
    await page.evaluate(() => {
      window.addEventListener('panehost:rendered', function reloadOnce() {
        if (!window.panehost.view.allLines().some((line) => line.startsWith('line-'))) return;
        window.removeEventListener('panehost:rendered', reloadOnce);
        location.reload();
      });
    });
    const navigated = page.waitForEvent('framenavigated', { timeout: 15000 });
    await rig.run('send', pane, 'go', '--enter');
    await navigated;

    // The flood ends; the page catches up.
    const detail = await waitFor(
      async () => {
        const detail = await rig.inspect(pane);
        return detail.screen.text.includes('line-2999') ? detail : null;
      },
      {
        what: 'the end of the flood',
        timeout: 30000,
        describe: async () => {
          const detail = await rig.inspect(pane);
          return JSON.stringify({ offset: detail.pane.offset, screen: detail.screen.text.slice(-200), page: await pageState(page) });
        },
      },
    );
    const end = detail.pane.offset;
    await waitFor(async () => (await pageState(page))?.offset === end, {
      what: `the page to draw up to offset ${end}`,
      timeout: 30000,
      describe: async () => JSON.stringify(await pageState(page)),
    });
    const openedWith = await page.evaluate(() => window.panehost.view.openedWith);
    assert.ok(openedWith.screen, `the reloaded page restored its screen: ${JSON.stringify(openedWith)}`);

    // The visible rows are the pane's screen.
    const state = await pageState(page);
    const screen = await rig.inspect(pane);
    assert.equal(state.cols, screen.screen.size.cols);
    assert.equal(state.rowCount, screen.screen.size.rows);
    assert.deepEqual(trimTrailingEmpty(state.rows), trimTrailingEmpty(inspectedRows(screen)));

    // And the flood's lines are there once each, in order: the screen saved
    // at the reload, then the replay from exactly where it ended, with no
    // gap and no repeat. (The saved screen keeps 2000 lines of scrollback,
    // so the oldest lines may be gone; none may be missing after them.)
    const numbers = (await allLines(page))
      .filter((line) => /^line-\d+$/.test(line))
      .map((line) => Number(line.slice('line-'.length)));
    const firstWrong = numbers.findIndex((n, i) => i > 0 && n !== numbers[i - 1] + 1);
    assert.ok(
      firstWrong === -1 && numbers.at(-1) === 2999 && (numbers[0] === 0 || numbers.length >= 2000),
      `consecutive flood lines up to line-2999; got ${numbers.length} from line-${numbers[0]}, ` +
        `out of order at index ${firstWrong}: ` +
        JSON.stringify(numbers.slice(Math.max(0, firstWrong - 3), firstWrong + 3)) +
        `; the page began with ${JSON.stringify(openedWith)}`,
    );
    assert.equal(state.notice.includes('skipped'), false, 'nothing was skipped');
    return { seam: openedWith.offset, floodStart: ready.offset + 'go\r\n'.length, end };
  }

  test('a reload in the middle of a flood loses and repeats nothing', async (t) => {
    // Where the old page stopped drawing depends on timing: try again (a
    // new pane) until the reload fell inside the flood, at most 5 times.
    const seams = [];
    for (let attempt = 1; ; attempt++) {
      const { seam, floodStart, end } = await floodAndReload();
      seams.push(`${seam} in [${floodStart}, ${end}]`);
      if (seam > floodStart && seam < end) break;
      assert.ok(attempt < 5, `no reload fell inside the flood: ${seams.join('; ')}`);
    }
    t.diagnostic(`resumed at ${seams.join('; ')}`);
  });

  test('a reload in the middle of an escape sequence finishes it', async () => {
    // The output stops inside `ESC [ 3 1 m` (after `ESC [ 3`) until the
    // second line arrives; the page reloads in between.
    const script = "stty -echo; read go; printf 'before\\n\\033[3'; read go; printf '1mred\\033[0m\\n'; sleep 60";
    const pane = await rig.startShell(['sh', '-c', script]);
    await page.goto(`${rig.base}/?pane=${pane}`);
    await waitFor(async () => (await pageState(page))?.offset != null, { what: 'the pane to be drawn' });
    await rig.run('send', pane, 'go', '--enter');
    const half = await waitFor(async () => {
      const detail = await rig.inspect(pane);
      return detail.screen.text.includes('before') ? detail.pane.offset : null;
    }, { what: 'the first half' });
    await waitFor(async () => (await pageState(page)).offset === half, { what: 'the page to draw the first half' });
    await page.reload();
    await waitFor(async () => (await pageState(page))?.offset === half, { what: 'the reloaded page' });
    assert.equal((await page.evaluate(() => window.panehost.view.openedWith)).screen, true);

    await rig.run('send', pane, 'go', '--enter');
    const row = await waitFor(
      async () =>
        page.evaluate(() => {
          const buffer = window.panehost.term.buffer.active;
          for (let y = 0; y < buffer.length; y++) {
            const line = buffer.getLine(y);
            const text = line.translateToString(true);
            if (text.endsWith('red')) {
              const cell = line.getCell(text.length - 3);
              return { text, red: cell.isFgPalette() && cell.getFgColor() === 1 };
            }
          }
          return null;
        }),
      { what: 'the red line', describe: async () => JSON.stringify((await pageState(page)).rows) },
    );
    assert.deepEqual(row, { text: 'red', red: true });
  });

  test('a dropped WebSocket reconnects and resumes exactly', async () => {
    const script = 'read go; i=0; while [ $i -lt 60 ]; do echo tick-$i; i=$((i+1)); sleep 0.05; done; sleep 60';
    const pane = await rig.startShell(['sh', '-c', script]);
    await page.goto(`${rig.base}/?pane=${pane}`);
    await waitFor(async () => (await pageState(page))?.offset != null, { what: 'the pane to be drawn' });
    await rig.run('send', pane, 'go', '--enter');
    const ticks = async () =>
      (await allLines(page)).filter((line) => /^tick-\d+$/.test(line)).map((line) => Number(line.slice(5)));
    let drops = 0;
    for (const at of [5, 20, 35]) {
      await waitFor(async () => (await ticks()).includes(at), { what: `tick-${at}`, timeout: 20000 });
      // What a lost network does to the page: the socket closes under it.
      drops += await page.evaluate(() => {
        const socket = window.panehost.view.socket;
        socket?.close();
        return socket ? 1 : 0;
      });
    }
    assert.ok(drops >= 2, `the socket was dropped while output was coming (${drops} times)`);
    const seen = await waitFor(
      async () => {
        const seen = await ticks();
        return seen.includes(59) ? seen : null;
      },
      { what: 'tick-59', timeout: 30000, describe: async () => JSON.stringify(await ticks()) },
    );
    assert.deepEqual(seen, Array.from({ length: 60 }, (_, i) => i), 'every tick once, in order');
  });

  test('a position the host no longer holds resumes from a snapshot, saying what was skipped', async () => {
    const lines = 20000;
    const script = `read go; i=0; while [ $i -lt ${lines} ]; do echo skip-$i; i=$((i+1)); done; sleep 60`;
    const pane = await rig.startShell(['sh', '-c', script]);
    await page.goto(`${rig.base}/?pane=${pane}`);
    const saved = await waitFor(async () => {
      const state = await pageState(page);
      return state?.offset != null ? state : null;
    }, { what: 'the pane to be drawn' });
    // Leave the pane (its position and screen stay saved), let it print
    // more than its ring holds, and come back.
    await page.goto(`${rig.base}/`);
    await rig.run('send', pane, 'go', '--enter');
    const detail = await waitFor(
      async () => {
        const detail = await rig.inspect(pane);
        return detail.screen.text.includes(`skip-${lines - 1}`) ? detail : null;
      },
      { what: 'the end of the output', timeout: 30000 },
    );
    assert.ok(detail.pane.offset - saved.offset > RING_BYTES, 'the ring no longer holds the saved position');
    await page.goto(`${rig.base}/?pane=${pane}`);
    const state = await waitFor(
      async () => {
        const state = await pageState(page);
        return state?.offset === detail.pane.offset ? state : null;
      },
      { what: 'the page to catch up', describe: async () => JSON.stringify(await pageState(page)) },
    );
    const opened = await page.evaluate(() => window.panehost.view.openedWith);
    assert.equal(opened.offset, saved.offset, 'the page asked for the position it had saved');
    const skipped = /^(\d+) bytes were skipped$/.exec(state.notice);
    assert.ok(skipped, `a notice says what was skipped: ${JSON.stringify(state.notice)}`);
    const count = Number(skipped[1]);
    assert.ok(count > 0 && count <= detail.pane.offset - saved.offset, `${count} bytes skipped`);
    const now = await waitFor(
      async () => {
        const now = await rig.inspect(pane);
        return now.pane.size.cols === state.cols && now.pane.size.rows === state.rowCount ? now : null;
      },
      { what: "the pane to have the page's size" },
    );
    assert.deepEqual(trimTrailingEmpty(state.rows), trimTrailingEmpty(inspectedRows(now)));
  });

  test("the pane's size follows the browser window", async () => {
    await page.goto(`${rig.base}/?pane=${shellPane}`);
    const before = await waitFor(async () => {
      const state = await pageState(page);
      return state?.offset != null ? state : null;
    });
    await waitFor(
      async () => {
        const size = (await rig.inspect(shellPane)).pane.size;
        return size.cols === before.cols && size.rows === before.rowCount;
      },
      { what: 'the pane to have the page size' },
    );

    await page.setViewportSize({ width: 640, height: 360 });
    const after = await waitFor(async () => {
      const state = await pageState(page);
      return state && state.cols < before.cols && state.rowCount < before.rowCount ? state : null;
    }, { what: 'the terminal to fit the smaller window' });
    await waitFor(
      async () => {
        const size = (await rig.inspect(shellPane)).pane.size;
        return size.cols === after.cols && size.rows === after.rowCount;
      },
      {
        what: `the pane to become ${after.cols}x${after.rowCount}`,
        describe: async () => JSON.stringify((await rig.inspect(shellPane)).pane.size),
      },
    );
    await page.setViewportSize({ width: 1000, height: 600 });
  });

  test('a page opened without the token, or with a wrong one, says how to get it', async () => {
    // A new tab holds no token: sessionStorage belongs to one tab.
    const tab = await browser.context.newPage();
    try {
      const help = tab.locator('#token-help');
      const shown = async (what) => {
        await waitFor(async () => (await help.isVisible()) && (await help.textContent()).includes(what), {
          what: `the token help saying "${what}"`,
          describe: async () => JSON.stringify(await tab.locator('main').innerText()),
        });
        const text = await help.textContent();
        assert.match(text, /panehost web/);
        assert.match(text, /#token=/);
        assert.equal(await tab.locator('#list-error').isVisible(), false, 'no bare "HTTP 401"');
      };
      await tab.goto(`${rig.base}/`);
      await shown('opened without one');
      await tab.goto(`${rig.base}/?pane=${shellPane}`);
      await shown('opened without one');
      assert.equal(await tab.locator('#status').textContent(), 'no access token');

      await tab.goto(`${rig.base}/#token=${'0'.repeat(64)}`);
      await shown('does not accept');

      // The right address: the help goes, the panes come.
      await tab.goto(rig.url);
      await tab.locator(`tr[data-pane="${shellPane}"]`).waitFor({ timeout: 15000 });
      assert.equal(await help.isVisible(), false);
    } finally {
      await tab.close();
    }
  });

  test('refuses other host names, requests without the token, and WebSockets from other origins', async () => {
    // The page's own files hold no data: they need no token. The panes do.
    for (const route of ['/', '/app.js', '/access.js']) {
      assert.equal((await fetch(`${rig.base}${route}`)).status, 200, route);
    }
    assert.equal((await fetch(`${rig.base}/api/panes`)).status, 401, 'no token');
    const wrong = { authorization: `Bearer ${'0'.repeat(64)}` };
    assert.equal((await fetch(`${rig.base}/api/panes`, { headers: wrong })).status, 401, 'a wrong token');
    const bearer = { authorization: `Bearer ${rig.token}` };
    const panes = await fetch(`${rig.base}/api/panes`, { headers: bearer });
    assert.equal(panes.status, 200);
    assert.ok((await panes.json()).panes.some((pane) => pane.id === shellPane));
    // No cookie is ever set: a browser would send it to every port of this host.
    assert.equal(panes.headers.get('set-cookie'), null);

    // An address with the token in its query goes on to the fragment.
    const old = await fetch(`${rig.base}/?token=${rig.token}`, { redirect: 'manual' });
    assert.equal(old.status, 303);
    assert.equal(old.headers.get('location'), `/#token=${rig.token}`);

    // DNS rebinding: a request naming another host is refused, token or not.
    const port = new URL(rig.base).port;
    const rebound = await new Promise((resolve, reject) => {
      const request = http.request(new URL('/api/panes', rig.base), {
        headers: { Host: `evil.example:${port}`, ...bearer },
      });
      request.on('response', (response) => {
        response.resume();
        resolve(response.statusCode);
      });
      request.on('error', reject);
      request.end();
    });
    assert.equal(rebound, 421);

    const query = `pane=${shellPane}`;
    const protocol = `panehost, panehost.token.${rig.token}`;
    assert.equal(await upgradeStatus(rig.base, { origin: 'http://evil.example', query, protocol }), 403);
    assert.equal(
      await upgradeStatus(rig.base, { origin: 'http://evil.example', query: `${query}&token=${rig.token}` }),
      403,
    );
    assert.equal(await upgradeStatus(rig.base, { query, protocol }), 403, 'an upgrade without an Origin');
    assert.equal(await upgradeStatus(rig.base, { origin: rig.base, query }), 401, 'an upgrade without the token');
    assert.equal(
      await upgradeStatus(rig.base, { origin: `http://evil.example:${port}`, host: `evil.example:${port}`, query, protocol }),
      421,
      'a rebound upgrade',
    );
    assert.equal(await upgradeStatus(rig.base, { origin: rig.base, query, protocol }), 101);

    // The token never reaches the gateway's (debug) log.
    const log = fs.readFileSync(rig.webLog, 'utf8');
    assert.ok(log.includes('token=REDACTED'), 'the log shows requests, with the token redacted');
    assert.equal(log.includes(rig.token), false, 'the token is not in the log');
  });

  test('an installed panehost serves its page from anywhere, once its packages are installed', async () => {
    // The executable alone, outside the source tree, run from elsewhere.
    const installed = fs.mkdtempSync(path.join(os.tmpdir(), 'panehost-web-installed-'));
    const bin = path.join(installed, 'panehost');
    fs.copyFileSync(rig.bin, bin);
    fs.chmodSync(bin, 0o755);
    const env = { XDG_DATA_HOME: path.join(installed, 'data'), PATH: process.env.PATH };
    try {
      // The one install step (npm, from the registry).
      const { execFile } = await import('node:child_process');
      await new Promise((resolve, reject) =>
        // npm needs the machine's own settings (registry, certificates).
        execFile(bin, ['web', '--install-assets'], { env: { ...process.env, ...env }, cwd: '/', timeout: 300000 }, (error, stdout) =>
          error ? reject(error) : resolve(stdout),
        ),
      );
      const gateway = await rig.startGateway([], { bin, env, cwd: '/' });
      try {
        // The packages come from the data directory the step filled, and
        // the page's own files from the executable.
        const said = fs.readFileSync(gateway.log, 'utf8');
        assert.ok(said.includes(`packages are served from ${path.join(env.XDG_DATA_HOME, 'panehost', 'web')}`), said);
        const other = await browser.context.newPage();
        try {
          await other.goto(gateway.url);
          await other.locator(`tr[data-pane="${shellPane}"] a`).click({ timeout: 15000 });
          await waitFor(
            async () => {
              const state = await pageState(other);
              return state && state.rows.some(isPrompt);
            },
            { what: 'the prompt in the installed page', describe: async () => JSON.stringify(await pageState(other)) },
          );
        } finally {
          await other.close();
        }
      } finally {
        await rig.stopGateway(gateway);
      }
    } finally {
      fs.rmSync(installed, { recursive: true, force: true });
    }
  });

  test('answers a clear 500 page when the npm packages are missing', async () => {
    const assets = fs.mkdtempSync(path.join(os.tmpdir(), 'panehost-web-assets-'));
    fs.copyFileSync(new URL('../index.html', import.meta.url), path.join(assets, 'index.html'));
    const gateway = await rig.startGateway(['--assets', assets]);
    try {
      const response = await fetch(new URL('/', gateway.url));
      assert.equal(response.status, 500);
      assert.match(await response.text(), /--install-assets/);
    } finally {
      await rig.stopGateway(gateway);
      fs.rmSync(assets, { recursive: true, force: true });
    }
  });
});
