// The pane list follows each pane's activity, size and title live, from
// the host's `watch` that the gateway relays, against a real host whose shell is bash (its
// prompt marks say when a command starts and ends); the pane's view says
// when its agent waits for the user.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { installAsker } from './asker.js';
import { launchBrowser, Rig, waitFor } from './support.js';

/** The rows' backgrounds (style.css): an approval asked, another wait, none. */
const APPROVAL_HIGHLIGHT = 'rgb(90, 42, 0)';
const INPUT_HIGHLIGHT = 'rgb(58, 48, 0)';
const NO_HIGHLIGHT = 'rgba(0, 0, 0, 0)';

describe("the pane list's activity", () => {
  let rig;
  let browser;
  let page;
  let tools;

  before(async () => {
    tools = installAsker();
    rig = await Rig.start({ env: { SHELL: '/bin/bash', ...tools.env } });
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });

  after(async () => {
    await browser?.close();
    await rig?.stop();
    tools?.remove();
  });

  /** Every request the page makes to `/api/...`, by path. */
  function apiRequests() {
    const seen = [];
    page.on('request', (request) => {
      const { pathname } = new URL(request.url());
      if (pathname.startsWith('/api/')) seen.push(`${request.method()} ${pathname}`);
    });
    return seen;
  }

  test('goes from idle to busy while a command runs, and back, live from the watch', async () => {
    const pane = await rig.startShell();
    const listed = async () => JSON.parse(await rig.run('ls', '--json')).panes.find((p) => p.id === pane);
    assert.equal((await listed()).completion, 'shell_integration');
    const requests = apiRequests();
    await page.goto(rig.url);
    const row = page.locator(`tr[data-pane="${pane}"]`);
    const activity = async () => ({
      shown: await row.locator('td').nth(3).textContent(),
      marked: await row.getAttribute('data-activity'),
    });
    const reaches = (value) =>
      waitFor(
        async () => {
          const { shown, marked } = await activity();
          return shown === value && marked === value;
        },
        { what: `the list to show ${value}`, describe: async () => JSON.stringify(await activity()) },
      );

    // A command that runs for a few seconds and then ends by itself (a
    // read that times out). (Ending it by sending a line instead raced the
    // host's turn tracking once in CI: the pane stayed busy after the
    // prompt came back; a host finding, kept apart from this page test.)
    await reaches('idle');
    await rig.run('send', pane, 'echo reading-$((6*7)); read -t 6 line', '--enter');
    await waitFor(async () => (await listed()).activity === 'busy', { what: 'the host to count the pane busy' });
    await reaches('busy');
    await waitFor(async () => (await listed()).activity === 'idle', {
      what: 'the host to count the pane idle',
      describe: async () => JSON.stringify((await rig.inspect(pane)).screen.text),
    });
    await reaches('idle');
    // All of it came on the one stream of the watch: the page polled nothing.
    assert.deepEqual(
      requests.filter((request) => request !== 'GET /api/runtimes'),
      ['GET /api/watch'],
    );
  });

  test("shows a pane's new size and title live, from the watch", async () => {
    const pane = await rig.startShell();
    const listed = async () => JSON.parse(await rig.run('ls', '--json')).panes.find((p) => p.id === pane);
    await waitFor(async () => (await listed()).activity === 'idle', { what: 'the host to count the pane idle' });
    await page.goto(rig.url);
    const row = page.locator(`tr[data-pane="${pane}"]`);
    const shown = async () => ({
      size: await row.locator('td').nth(5).textContent(),
      title: await row.locator('td').nth(6).textContent(),
    });
    const shows = (size, title) =>
      waitFor(
        async () => {
          const now = await shown();
          return now.size === size && now.title === title;
        },
        { what: `the list to show ${size} "${title}"`, describe: async () => JSON.stringify(await shown()) },
      );
    const before = await listed();
    await shows(`${before.size.cols}×${before.size.rows}`, before.title);

    const requests = apiRequests();
    await rig.run('resize', pane, '131x37');
    await shows('131×37', before.title);
    await rig.run('send', pane, "printf '\\033]2;%s\\007' web-title", '--enter');
    await shows('131×37', 'web-title');
    // Both came on the stream of the watch the page had open: it asked
    // for nothing since.
    assert.deepEqual(
      requests.filter((request) => request !== 'GET /api/runtimes'),
      [],
    );
  });

  test('after a host restart the list follows the new host', async () => {
    const pane = await rig.startShell();
    const listed = async () => JSON.parse(await rig.run('ls', '--json')).panes.find((p) => p.id === pane);
    await waitFor(async () => (await listed()).activity === 'idle', { what: 'the host to count the pane idle' });
    await page.goto(rig.url);
    const row = page.locator(`tr[data-pane="${pane}"]`);
    const marked = () => row.getAttribute('data-activity');
    await waitFor(async () => (await marked()) === 'idle', { what: 'the list to show idle', describe: marked });

    await rig.restartHost();
    // The restored pane's activity as the new host has it, whatever it
    // is, then its next command live: never what the old host said last.
    await waitFor(async () => (await listed())?.activity !== undefined, { what: 'the new host to list the pane' });
    await rig.run('send', pane, 'echo after-restart; read -t 4 line', '--enter');
    await waitFor(async () => (await listed()).activity === 'busy', { what: 'the new host to count the pane busy' });
    await waitFor(async () => (await marked()) === 'busy', { what: 'the list to show busy', describe: marked });
    await waitFor(async () => (await listed()).activity === 'idle', { what: 'the new host to count the pane idle' });
    await waitFor(async () => (await marked()) === 'idle', { what: 'the list to show idle again', describe: marked });
    assert.equal(await page.locator('#list-error').isVisible(), false);
  });

  test("a pane's view and its row in the list tell an approval asked from a question", async () => {
    const pane = (await rig.run('start', 'asker')).trim();
    rig.panes.push(pane);
    await page.goto(rig.url); // the token, for this tab
    await page.goto(`${rig.base}/?pane=${pane}`);
    const status = () => page.locator('#status').textContent();
    await waitFor(async () => (await status()) === 'live', { what: 'the stream', describe: status });
    const attention = page.locator('#attention');
    assert.equal(await attention.isVisible(), false);
    // The agent asks: its hook reports the notification, and the host
    // sends approval_requested on the pane's stream and awaiting_approval
    // as its activity.
    await page.locator('#terminal').click();
    await page.keyboard.type('approve');
    await page.keyboard.press('Enter');
    await waitFor(async () => (await attention.isVisible()) && (await attention.textContent()), {
      what: 'the approval in the header',
      describe: async () => JSON.stringify((await rig.inspect(pane)).screen.text),
    });
    assert.equal(await attention.textContent(), 'approval requested: Asker needs your permission to use Bash');
    assert.equal(await attention.getAttribute('data-kind'), 'approval_requested');

    // In the list (a second tab), the pane's row is marked as asking for
    // approval: its activity, and a highlight of its own.
    const list = await browser.context.newPage();
    await list.goto(rig.url); // a new tab: the printed address, with the token
    const row = list.locator(`tr[data-pane="${pane}"]`);
    const shown = async () => ({
      activity: await row.locator('td').nth(3).textContent(),
      marked: await row.getAttribute('data-activity'),
      background: await row.locator('td').first().evaluate((td) => getComputedStyle(td).backgroundColor),
    });
    const shows = (activity) =>
      waitFor(
        async () => {
          const now = await shown();
          return now.activity === activity && now.marked === activity;
        },
        { what: `the row to show ${activity}`, describe: async () => JSON.stringify(await shown()) },
      );
    await shows('awaiting_approval');
    assert.equal((await shown()).background, APPROVAL_HIGHLIGHT, 'the row is highlighted as an approval');

    // A view opened after the agent asked (its stream starts after the
    // event) says so too, from the pane's activity.
    const late = await browser.context.newPage();
    await late.goto(rig.url);
    await late.goto(`${rig.base}/?pane=${pane}`);
    const lateAttention = late.locator('#attention');
    await waitFor(
      async () =>
        (await lateAttention.isVisible()) && (await lateAttention.getAttribute('data-kind')) === 'approval_requested',
      { what: 'the late view to say approval', describe: () => lateAttention.textContent() },
    );
    assert.equal(await lateAttention.textContent(), 'approval requested');

    // The user answers: the turn ends, and so does the highlight, in both.
    await page.locator('#terminal').click();
    await page.keyboard.type('yes');
    await page.keyboard.press('Enter');
    await waitFor(async () => !(await attention.isVisible()), { what: 'the approval to clear' });
    await waitFor(async () => !(await lateAttention.isVisible()), { what: 'the approval to clear in the late view' });
    await late.close();
    await shows('idle');
    assert.equal((await shown()).background, NO_HIGHLIGHT, 'the highlight is gone');

    // A question that asks no approval: the list tells it apart.
    await page.locator('#terminal').click();
    await page.keyboard.type('question');
    await page.keyboard.press('Enter');
    await waitFor(async () => (await attention.getAttribute('data-kind')) === 'awaiting_input', {
      what: 'the question in the header',
      describe: () => attention.textContent(),
    });
    assert.equal(await attention.textContent(), 'awaiting input: Asker is waiting for your input');
    await shows('awaiting_input');
    assert.equal((await shown()).background, INPUT_HIGHLIGHT, 'the row is highlighted as a wait for input');
    await page.locator('#terminal').click();
    await page.keyboard.type('blue');
    await page.keyboard.press('Enter');
    await waitFor(async () => !(await attention.isVisible()), { what: 'the question to clear' });
    await shows('idle');
    await list.close();
  });
});
