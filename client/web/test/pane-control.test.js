// Starting and closing panes from the page: the start form (runtimes with
// their readiness, a directory, labels, a permission profile), Close where
// it applies, and the gateway's routes behind them, against a real host
// and a real `panehost web`.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, Rig, waitFor } from './support.js';

/** The host's panes, as `panehost ls --json` lists them. */
async function hostPanes(rig) {
  return JSON.parse(await rig.run('ls', '--json')).panes;
}

describe('starting and closing panes', () => {
  let rig;
  let browser;
  let page;

  before(async () => {
    rig = await Rig.start();
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });

  after(async () => {
    await browser?.close();
    await rig?.stop();
  });

  /** A request to the gateway from node, with the page's Origin unless told otherwise. */
  async function api(route, { method = 'GET', body, token = rig.token, origin = rig.base, type = 'application/json' } = {}) {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (origin) headers.origin = origin;
    if (body !== undefined) headers['content-type'] = type;
    const response = await fetch(`${rig.base}${route}`, { method, headers, body });
    return { status: response.status, body: await response.json().catch(() => null) };
  }

  test('the form lists every runtime with its readiness; one that is not ready cannot be chosen', async () => {
    await page.goto(rig.url);
    const shell = page.locator('#start-runtime option[value="shell"]');
    await shell.waitFor({ state: 'attached', timeout: 15000 });
    assert.equal(await shell.isDisabled(), false);
    assert.match(await shell.textContent(), /^shell · ready$/);
    assert.equal(await page.locator('#start-runtime').inputValue(), 'shell');
    assert.equal(await page.locator('#start-readiness').textContent(), 'ready');
    // No agent CLI is installed here: each is listed, not startable, with why.
    const claude = page.locator('#start-runtime option[value="claude"]');
    assert.equal(await claude.isDisabled(), true);
    assert.match(await claude.textContent(), /^claude · not ready \(installed\): none of \["claude"\] was found/);
    // The shell enforces no permission profile: only its default can be chosen.
    const profiles = await page.locator('#start-profile option').evaluateAll((options) =>
      options.map((option) => [option.value, option.disabled]),
    );
    assert.deepEqual(profiles, [
      ['', false],
      ['read_only', true],
      ['workspace_write', true],
      ['full_access', true],
    ]);
  });

  test('the form starts a pane in a directory, with labels', async () => {
    const work = path.join(rig.root, 'work dir');
    fs.mkdirSync(work);
    await page.goto(`${rig.base}/`);
    await page.locator('#start-runtime option[value="shell"]').waitFor({ state: 'attached', timeout: 15000 });
    await page.locator('#start-cwd').fill(work);
    await page.locator('#start-labels').fill('task=T-7 owner=bo');
    await page.locator('#start-form button[type=submit]').click();
    const result = page.locator('#start-result');
    const said = await waitFor(async () => /^Started (\S+)\.$/.exec((await result.textContent()) ?? ''), {
      what: 'the start to be confirmed',
      describe: () => result.textContent(),
    });
    const pane = said[1];
    rig.panes.push(pane);
    const started = (await hostPanes(rig)).find((p) => p.id === pane);
    assert.equal(started.runtime, 'shell');
    assert.equal(started.cwd, work);
    assert.deepEqual(started.labels, { owner: 'bo', task: 'T-7' });
    const labels = page.locator(`tr[data-pane="${pane}"] .label`);
    await labels.first().waitFor({ timeout: 15000 });
    assert.deepEqual(await labels.allTextContents(), ['owner=bo', 'task=T-7']);

    // A label that is not NAME=VALUE is refused by the page itself.
    await page.locator('#start-labels').fill('nolabel');
    await page.locator('#start-form button[type=submit]').click();
    await waitFor(async () => /NAME=VALUE/.test(await result.textContent()), { what: 'the label refused' });
  });

  test('the routes need the token and the page\'s origin, bound what they read, and answer structured errors', async () => {
    const start = JSON.stringify({ runtime: 'shell' });
    assert.equal((await api('/api/runtimes', { token: null })).status, 401);
    assert.equal((await api('/api/panes', { method: 'POST', body: start, token: null })).status, 401);
    assert.equal((await api('/api/panes', { method: 'POST', body: start, token: 'f'.repeat(64) })).status, 401);
    assert.equal((await api('/api/panes', { method: 'POST', body: start, origin: 'http://evil.example' })).status, 403);
    assert.equal((await api('/api/panes', { method: 'POST', body: start, origin: null })).status, 403);
    assert.equal((await api('/api/panes/p1/close', { method: 'POST', token: null })).status, 401);
    assert.equal((await api('/api/panes/p1/close', { method: 'POST', origin: 'http://evil.example' })).status, 403);
    const before = (await hostPanes(rig)).length;

    const runtimes = await api('/api/runtimes');
    assert.equal(runtimes.status, 200);
    assert.ok(runtimes.body.runtimes.some((runtime) => runtime.id === 'shell' && runtime.readiness === 'ready'));

    const refused = async (init, status, code) => {
      const answer = await api('/api/panes', { method: 'POST', ...init });
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, code, JSON.stringify(answer.body));
      assert.equal(typeof answer.body.error.message, 'string');
      return answer.body.error;
    };
    await refused({ body: '{"runtime":', type: 'application/json' }, 400, 'BAD_REQUEST');
    await refused({ body: start, type: 'text/plain' }, 415, 'UNSUPPORTED_MEDIA_TYPE');
    await refused({ body: JSON.stringify({ runtime: 'shell', cwd: 'relative' }) }, 400, 'BAD_REQUEST');
    await refused({ body: JSON.stringify({ runtime: 'shell', command: ['true'] }) }, 400, 'BAD_REQUEST');
    const labels = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`l${i}`, 'v']));
    assert.match((await refused({ body: JSON.stringify({ runtime: 'shell', labels }) }, 400, 'BAD_REQUEST')).message, /too many/);
    await refused({ body: JSON.stringify({ runtime: 'shell', filler: 'x'.repeat(20000) }) }, 413, 'BODY_TOO_LARGE');
    // The host's own refusals pass through.
    await refused({ body: JSON.stringify({ runtime: 'claude' }) }, 422, 'RUNTIME_NOT_AVAILABLE');
    await refused({ body: JSON.stringify({ runtime: 'shell', permission_profile: 'read_only' }) }, 422, 'OPERATION_UNSUPPORTED');
    assert.equal((await hostPanes(rig)).length, before, 'no refused start started a pane');

    const unknown = await api('/api/panes/p999/close', { method: 'POST' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'UNKNOWN_PANE');
  });

  test('Close is offered on running panes only, and closes them, from the list and from the pane', async () => {
    const exited = await rig.startShell(['sh', '-c', 'exit 3']);
    const running = await rig.startShell(['sleep', '300']);
    const viewed = await rig.startShell(['sleep', '300']);
    await waitFor(async () => (await hostPanes(rig)).some((p) => p.id === exited && p.state.exited), {
      what: 'the pane to exit',
    });
    await page.goto(`${rig.base}/`);
    const close = (pane) => page.locator(`tr[data-pane="${pane}"] button.close`);
    await close(running).waitFor({ timeout: 15000 });
    await page.locator(`tr[data-pane="${exited}"]`).waitFor();
    assert.equal(await close(exited).count(), 0, 'no Close on an exited pane');
    await close(running).click();
    await waitFor(async () => !(await hostPanes(rig)).some((p) => p.id === running), { what: 'the pane to be closed' });
    await page.locator(`tr[data-pane="${running}"]`).waitFor({ state: 'detached', timeout: 15000 });

    // In the pane's view: hidden on an exited pane, shown on a running one.
    const status = () => page.locator('#status').textContent();
    await page.goto(`${rig.base}/?pane=${exited}`);
    await waitFor(async () => (await status()) === 'ended (exited)', { what: 'the stream to end', describe: status });
    assert.equal(await page.locator('#close').isVisible(), false, 'no Close on an exited pane');
    await page.goto(`${rig.base}/?pane=${viewed}`);
    await waitFor(async () => (await status()) === 'live' && (await page.locator('#close').isVisible()), {
      what: 'Close on a running pane',
      describe: status,
    });
    await page.locator('#close').click();
    await waitFor(async () => !(await hostPanes(rig)).some((p) => p.id === viewed), { what: 'the viewed pane to be closed' });
    await waitFor(async () => !(await page.locator('#close').isVisible()), { what: 'Close to go once the pane ended' });
  });
});
