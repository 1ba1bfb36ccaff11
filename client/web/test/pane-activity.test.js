// The pane list follows each pane's activity, against a real host whose
// shell is bash (its prompt marks say when a command starts and ends).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, Rig, waitFor } from './support.js';

describe("the pane list's activity", () => {
  let rig;
  let browser;
  let page;

  before(async () => {
    rig = await Rig.start({ env: { SHELL: '/bin/bash' } });
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });

  after(async () => {
    await browser?.close();
    await rig?.stop();
  });

  test('goes from idle to busy while a command runs, and back, without a reload', async () => {
    const pane = await rig.startShell();
    const listed = async () => JSON.parse(await rig.run('ls', '--json')).panes.find((p) => p.id === pane);
    assert.equal((await listed()).completion, 'shell_integration');
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
    // read that times out): long enough for the list, which polls every
    // 2 s, to show it busy. (Ending it by sending a line instead raced the
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
  });
});
