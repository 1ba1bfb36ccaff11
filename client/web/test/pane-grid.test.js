// Several panes side by side, against a real host and a real `panehost
// web`, in headless Chromium: each in its own cell, with its own
// WebSocket, size and resume state.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, Rig, waitFor } from './support.js';

/** A shell prompt: `$ ` for a user, `# ` for root. */
function isPrompt(text) {
  return /[$#] ?$/m.test(text);
}

/** What each cell's view shows. */
function cells(page) {
  return page.evaluate(() =>
    window.panehost.grid.views.map((view) => ({
      pane: view.pane,
      cols: view.term?.cols,
      rows: view.term?.rows,
      offset: view.renderedOffset,
      lines: view.term ? view.allLines() : [],
      openedWith: view.openedWith,
    })),
  );
}

describe('panes side by side', () => {
  let rig;
  let browser;
  let page;

  before(async () => {
    rig = await Rig.start();
    browser = await launchBrowser({ width: 1200, height: 700 });
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });

  after(async () => {
    await browser?.close();
    await rig?.stop();
  });

  test('ticked panes open side by side, each with its own socket, size and resume state', async () => {
    const left = await rig.startShell();
    const right = await rig.startShell();
    for (const pane of [left, right]) {
      await waitFor(async () => isPrompt((await rig.inspect(pane)).screen.text), { what: `${pane}'s prompt` });
    }
    const sockets = [];
    page.on('websocket', (socket) => sockets.push(new URL(socket.url()).searchParams.get('pane')));

    await page.goto(rig.url);
    const openGrid = page.locator('#open-grid');
    await page.locator(`tr[data-pane="${left}"] input.pick`).check();
    assert.equal(await openGrid.isDisabled(), true, 'one pane is no grid');
    await page.locator(`tr[data-pane="${right}"] input.pick`).check();
    await openGrid.click();
    await waitFor(() => page.url() === `${rig.base}/?panes=${left},${right}`, { what: 'the grid address' });

    const drawn = () =>
      waitFor(
        async () => {
          const shown = await cells(page);
          return shown.length === 2 && shown.every((cell) => cell.offset != null) ? shown : null;
        },
        { what: 'both cells drawn', describe: async () => JSON.stringify(await cells(page)) },
      );
    const shown = await drawn();
    assert.deepEqual(shown.map((cell) => cell.pane), [left, right]);
    assert.deepEqual([...sockets].sort(), [left, right].sort(), 'a WebSocket each');

    // Each pane takes its own cell's size: half the window's width each.
    for (const cell of shown) {
      await waitFor(
        async () => {
          const size = (await rig.inspect(cell.pane)).pane.size;
          return size.cols === cell.cols && size.rows === cell.rows;
        },
        { what: `${cell.pane} at its cell's size, ${cell.cols}x${cell.rows}` },
      );
    }
    const widths = await page.evaluate(() => ({
      grid: document.getElementById('grid-view').clientWidth,
      cells: [...document.querySelectorAll('.cell')].map((cell) => cell.getBoundingClientRect()),
    }));
    assert.equal(widths.cells.length, 2);
    assert.ok(widths.cells.every((cell) => cell.width <= widths.grid / 2), 'each cell is at most half the width');
    assert.ok(widths.cells[0].right <= widths.cells[1].left, 'side by side, left to right');

    // Typing goes to the cell typed into, and only there.
    const type = async (index, text) => {
      await page.locator('.cell-terminal').nth(index).click();
      await page.keyboard.type(text);
      await page.keyboard.press('Enter');
    };
    await type(0, 'echo left-$((6*7))');
    await type(1, 'echo right-$((6*7))');
    await waitFor(
      async () => {
        const [a, b] = await cells(page);
        return a.lines.some((line) => line.trim() === 'left-42') && b.lines.some((line) => line.trim() === 'right-42');
      },
      { what: 'each echo in its own cell' },
    );
    const [a, b] = await cells(page);
    assert.equal(a.lines.some((line) => line.trim() === 'right-42'), false);
    assert.equal(b.lines.some((line) => line.trim() === 'left-42'), false);

    // A reload resumes each cell where it was, from its own saved screen.
    await page.reload();
    const resumed = await drawn();
    for (const cell of resumed) {
      assert.equal(cell.openedWith.screen, true, `${cell.pane} resumed from its saved screen`);
    }
    assert.ok(resumed[0].lines.some((line) => line.trim() === 'left-42'));
    assert.ok(resumed[1].lines.some((line) => line.trim() === 'right-42'));
    assert.equal(resumed[0].lines.filter((line) => line.trim() === 'left-42').length, 1, 'nothing shown twice');

    // Interrupt and Close in each cell's own header.
    assert.equal(await page.locator('.cell').nth(1).locator('.cell-close').isVisible(), true);
    await page.locator('.cell').nth(1).locator('.cell-close').click();
    await waitFor(async () => !JSON.parse(await rig.run('ls', '--json')).panes.some((p) => p.id === right), {
      what: 'the right pane to be closed',
    });
    await waitFor(async () => !(await page.locator('.cell').nth(1).locator('.cell-close').isVisible()), {
      what: "the closed pane's Close to go",
    });
    assert.equal(await page.locator('.cell').nth(0).locator('.cell-close').isVisible(), true);
  });
});
