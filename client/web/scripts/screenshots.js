// Takes the screenshots in docs/WEB.md from the real page, in headless
// Chromium, against a host and a `panehost web` of its own (the browser
// tests' rig): `npm run screenshots` (after `cargo build -p panehost-host`,
// or with PANEHOST_BIN naming a binary). Writes docs/web/*.png.

import fs from 'node:fs';
import path from 'node:path';
import { installAsker } from '../test/asker.js';
import { launchBrowser, repoDir, Rig, waitFor } from '../test/support.js';

const OUT = path.join(repoDir, 'docs', 'web');
const VIEWPORT = { width: 1100, height: 560 };

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const tools = installAsker();
  const rig = await Rig.start({ env: { SHELL: '/bin/bash', ...tools.env } });
  const browser = await launchBrowser(VIEWPORT);
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    // A short prompt: the directory's name.
    fs.writeFileSync(path.join(rig.home, '.bashrc'), "PS1='\\W\\$ '\n");
    const project = path.join(rig.root, 'project');
    fs.mkdirSync(project);
    const start = async (...args) => {
      const pane = (await rig.run('start', '--cwd', project, ...args)).trim();
      rig.panes.push(pane);
      return pane;
    };
    const agent = await start('asker', '--label', 'task=T-42', '--label', 'owner=ada');
    const shell = await start('shell', '--label', 'task=T-43');
    const build = await start('shell', '--label', 'task=T-44', '--', 'sh', '-c', 'echo building; sleep 600');
    const done = await start('shell', '--', 'sh', '-c', 'echo done; exit 0');
    await waitFor(async () => JSON.parse(await rig.run('ls', '--json')).panes.some((p) => p.id === done && p.state.exited), {
      what: 'the short pane to exit',
    });

    // The agent asks for approval.
    await page.goto(rig.url);
    await page.goto(`${rig.base}/?pane=${agent}`);
    await waitFor(async () => (await page.locator('#status').textContent()) === 'live', { what: "the agent's stream" });
    await page.locator('#terminal').click();
    await page.keyboard.type('approve');
    await page.keyboard.press('Enter');
    await page.locator('#attention').waitFor({ state: 'visible' });
    await page.screenshot({ path: path.join(OUT, 'pane.png') });

    // The list: the form, the labels, the highlighted agent, Close where it applies.
    await page.goto(`${rig.base}/`);
    await page.locator(`tr[data-pane="${agent}"][data-activity="awaiting_approval"]`).waitFor();
    await page.locator('#start-runtime option[value="shell"]').waitFor({ state: 'attached' });
    await page.locator('#start-labels').fill('task=T-45');
    await page.screenshot({ path: path.join(OUT, 'list.png') });

    // Two panes side by side.
    await page.goto(`${rig.base}/?panes=${shell},${build}`);
    await waitFor(
      () => page.evaluate(() => window.panehost.grid.views.every((view) => view.renderedOffset != null)),
      { what: 'both cells drawn' },
    );
    await page.locator('.cell-terminal').first().click();
    await page.keyboard.type('ls -la');
    await page.keyboard.press('Enter');
    await waitFor(async () => (await page.evaluate(() => window.panehost.grid.views[0].allLines())).some((l) => l.includes('total')), {
      what: 'the listing',
    });
    await page.screenshot({ path: path.join(OUT, 'side-by-side.png') });
    for (const name of ['list.png', 'pane.png', 'side-by-side.png']) {
      console.log(`${path.relative(repoDir, path.join(OUT, name))}: ${fs.statSync(path.join(OUT, name)).size} bytes`);
    }
  } finally {
    await browser.close();
    await rig.stop();
    tools.remove();
  }
}

await main();
