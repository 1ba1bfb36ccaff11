// A viewer's resize does not outlive the viewer: when the last page that
// resized a pane leaves, the gateway gives the pane back the size it had
// before (docs/WEB.md, "The viewer's size"), against a real host and a
// real `panehost web`, in headless Chromium.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, Rig, waitFor } from './support.js';

describe("a viewer's size", () => {
  let rig;
  let browser;

  before(async () => {
    rig = await Rig.start();
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await rig?.stop();
  });

  const hostSize = async (pane) => (await rig.inspect(pane)).pane.size;
  const sizeText = (size) => `${size.cols}x${size.rows}`;

  /** Waits until the host has `pane` at `size`. */
  function paneBecomes(pane, size, what) {
    return waitFor(async () => sizeText(await hostSize(pane)) === sizeText(size), {
      what: `${what} (${sizeText(size)})`,
      describe: async () => sizeText(await hostSize(pane)),
    });
  }

  /**
   * A tab with the token, at the pane's view with this window; the size its
   * terminal fitted. The view draws the pane's screen at the pane's size
   * first and fits it to the window after: the size is read once both are
   * done (the terminal is at the size the window proposes).
   */
  async function view(pane, viewport) {
    const page = await browser.context.newPage();
    await page.setViewportSize(viewport);
    await page.goto(rig.url);
    await page.goto(`${rig.base}/?pane=${pane}`);
    const fitted = await waitFor(
      () =>
        page.evaluate(() => {
          const view = window.panehost.view;
          if (view?.renderedOffset == null) return null;
          const proposed = view.fit.proposeDimensions();
          const { cols, rows } = view.term;
          return proposed?.cols === cols && proposed?.rows === rows ? { cols, rows } : null;
        }),
      { what: 'the pane to be drawn and fitted to the window' },
    );
    return { page, fitted };
  }

  /** How many viewers of the gateway's log have left so far. */
  function disconnections() {
    return (fs.readFileSync(rig.webLog, 'utf8').match(/page disconnected/g) ?? []).length;
  }

  test('the pane gets its size back when its viewer leaves', async () => {
    const pane = await rig.startShell();
    const original = await hostSize(pane);
    const { page, fitted } = await view(pane, { width: 1000, height: 600 });
    assert.notEqual(sizeText(fitted), sizeText(original), 'the window fits another size than the pane had');
    await paneBecomes(pane, fitted, "the pane to take the viewer's size");
    // The viewer goes back to the list: its socket closes.
    await page.goto(`${rig.base}/`);
    await paneBecomes(pane, original, 'the pane to get its size back');
    await page.close();
  });

  test('a reload keeps the size: the viewer is back within the grace', async () => {
    const pane = await rig.startShell();
    const { page, fitted } = await view(pane, { width: 900, height: 500 });
    await paneBecomes(pane, fitted, "the pane to take the viewer's size");
    const kept = () => (fs.readFileSync(rig.webLog, 'utf8').match(/the size stays/g) ?? []).length;
    const before = kept();
    await page.reload();
    await waitFor(() => kept() > before, { what: 'the gateway to keep the size for the reloaded viewer' });
    assert.equal(sizeText(await hostSize(pane)), sizeText(fitted));
    // Once it leaves for good, the size comes back.
    const original = { cols: 80, rows: 24 };
    await page.close();
    await paneBecomes(pane, original, 'the pane to get its size back');
  });

  test('with two viewers, the size comes back when the last one leaves', async () => {
    const pane = await rig.startShell();
    const original = await hostSize(pane);
    const first = await view(pane, { width: 1000, height: 600 });
    await paneBecomes(pane, first.fitted, 'the first viewer to resize the pane');
    const second = await view(pane, { width: 720, height: 420 });
    await paneBecomes(pane, second.fitted, 'the second viewer to resize the pane');

    const left = disconnections();
    await second.page.close();
    await waitFor(() => disconnections() > left, { what: 'the gateway to see the second viewer leave' });
    // The first viewer still holds the pane: it keeps the size it is at.
    assert.equal(sizeText(await hostSize(pane)), sizeText(second.fitted));
    await first.page.close();
    await paneBecomes(pane, original, 'the pane to get its first size back once both left');
  });
});
