/**
 * The counter's details in a real browser: depths in 32nds everywhere once chosen (card, bar,
 * gauge reading, history, report) and never at odds with the colour legend; a PDF dropped by
 * mistake gets a card saying so, with no pointless "Try again"; a webcam result comes into view;
 * keyboard focus after hiding a card, deleting or cancelling, and revoking a key; history search
 * kept on the way back from a scan; form problems in plain words.
 */
import type { Page } from 'playwright-core';
import type { WireScan } from '../../src/shared/api.js';
import { describe, expect, it } from 'vitest';
import type { RunningApp } from './support/app.js';
import { dropFiles, focused, photoFile } from './support/drop.js';
import { sidewaysOverflow } from './support/overflow.js';
import { waitForResults } from './support/results.js';
import { webcamSessionForSuite } from './support/webcam.js';

/** Whole 32nds each colour may show, as the report's legend states them. */
const LEGEND_32NDS = { red: [0, 3], yellow: [4, 6], green: [7, Infinity] } as const;
const COLOUR = { critical: 'red', worn: 'red', medium: 'yellow', good: 'green', new: 'green' } as const;

describe('counter details in the browser', () => {
  let app: RunningApp;
  let page: Page;
  let errors: string[];
  let photos: string[];

  const origin = () => new URL(app.url).origin;
  /** An error the app found itself: its words only, no "Something went wrong." and no code. */
  const plainError = async (text: string) => {
    const alert = page.getByRole('alert').filter({ hasText: text });
    await alert.waitFor();
    const content = (await alert.textContent()) ?? '';
    expect.soft(content).not.toContain('Something went wrong');
    expect.soft(content).not.toContain('UNKNOWN');
  };

  webcamSessionForSuite((session) => ({ app, page, errors, photos } = session));

  it('says what is wrong with a short password in plain words, then creates the account', async () => {
    await page.getByLabel('Email').fill('owner@counter.test');
    await page.getByLabel(/^Password/).fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await plainError('The password needs at least 8 characters.');
    // the field says so too, and has the focus: a screen reader reads the message with it
    const password = page.getByLabel(/^Password/);
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'INPUT' });
    expect(await password.getAttribute('aria-invalid')).toBe('true');
    const describedBy = await password.getAttribute('aria-describedby');
    await expect(page.locator(`[id="${describedBy}"]`).textContent()).resolves.toContain('The password needs at least 8 characters.');
    await page.getByLabel(/^Password/).fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
  });

  it('keeps an emptied port field empty and explains it in plain words', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    const port = page.getByLabel('Port', { exact: true });
    await port.fill('');
    await expect.soft(port.inputValue()).resolves.toBe('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await plainError('Enter a port number from 1 to 65535');
    await expect.poll(() => port.getAttribute('aria-invalid')).toBe('true');
    await expect
      .poll(() => port.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement))
      .toBe(true);
    // described by the message (and by the port in use now)
    const described = await Promise.all(
      ((await port.getAttribute('aria-describedby')) ?? '').split(' ').map((id) => page.locator(`[id="${id}"]`).textContent()),
    );
    expect(described.some((text) => text?.includes('Enter a port number'))).toBe(true);
  });

  it('gives a PDF dropped with a photo its own card saying it is not a photo, with no "Try again"', async () => {
    await page.reload(); // forget the emptied port
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Show depths in').selectOption('32nds');
    await page.getByLabel('Legal minimum tread depth').selectOption('2/32in');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();

    await page.getByRole('link', { name: 'Scan' }).click();
    await page.getByRole('textbox', { name: 'Vehicle / plate' }).fill('AB-1');
    await dropFiles(page, [
      await photoFile(photos[1]!, 'rear.jpg'),
      { name: 'invoice.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n') },
    ]);
    const pdf = page.locator('article.queue-failed').filter({ hasText: 'invoice.pdf' });
    await pdf.waitFor();
    await expect(pdf.textContent()).resolves.toContain('That file is not a photo we can read. Use JPEG, PNG or WebP.');
    await expect(pdf.textContent()).resolves.toContain('invoice.pdf is not a photo.');
    await expect(pdf.getByRole('button', { name: 'Try again' }).count()).resolves.toBe(0);
    await expect(pdf.getByRole('button', { name: 'Remove' }).count()).resolves.toBe(1);
    await page.locator('article.result-card').first().waitFor({ timeout: 90_000 });
  });

  it('shows every depth of the card in 32nds, and echoes a gauge reading typed in 32nds', async () => {
    const card = page.locator('article.result-card').first();
    await expect(card.locator('.depth-main').textContent()).resolves.toMatch(/^\d+\/32″ \(\d+\.\d mm\)$/);
    await expect(card.locator('.depth-bar figcaption').textContent()).resolves.toMatch(/^Likely \d+\/32″–\d+\/32″ · legal minimum 2\/32″$/);
    await expect(card.locator('.depth-ticks span').last().textContent()).resolves.toMatch(/^\d+\/32″$/);

    const gauge = card.getByLabel('Gauge reading (32nds of an inch)');
    await gauge.fill('abc');
    await card.getByRole('button', { name: 'Save reading' }).click();
    await plainError('Type 32nds of an inch, such as 4 or 4/32″.');

    await gauge.fill('6');
    await card.getByRole('button', { name: 'Save reading' }).click();
    await card.getByText('Saved: 6/32″.', { exact: true }).waitFor();
    await expect(card.locator('.depth-bar figcaption').textContent()).resolves.toContain('gauge 6/32″');
    expect(await card.locator('.depth-bar figcaption').textContent()).not.toContain('mm');
  });

  it('moves the focus to the next card, then to the drop zone, as cards are removed with the keyboard', async () => {
    const remove = page.locator('article.queue-failed').getByRole('button', { name: 'Remove' });
    await remove.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'ARTICLE', label: 'Result: AB-1 · Front left' });

    // a second photo, for the history and the report: onto the next corner by itself
    await expect(page.getByRole('radio', { name: 'Front right' }).isChecked()).resolves.toBe(true);
    await page.getByTestId('file-input').setInputFiles(photos[2]!);
    await page.locator('article.result-card').nth(1).waitFor({ timeout: 90_000 });
    // the status line said the newest result once; hiding its card announces nothing old again
    const status = page.getByTestId('queue-status');
    await expect.poll(() => status.textContent()).toMatch(/: (New|Good|Medium|Worn|Critical), /);
    const said = await status.textContent();
    await page.getByRole('button', { name: 'Hide card' }).first().focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'ARTICLE', label: 'Result: AB-1 · Front left' });
    expect(await status.textContent()).toBe(said);
    await page.getByRole('button', { name: 'Hide card' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toMatchObject({ testId: 'drop-zone' });
  });

  it('never shows a depth in 32nds that the colour legend contradicts', async () => {
    // gauge readings at the edges of the colour bands, as a shop in mm would type them
    const ids: string[] = [];
    for (const photo of photos) {
      const res = await page.request.post(`${origin()}/api/v1/analyze`, {
        headers: { origin: origin() },
        multipart: { image: await photoFile(photo), vehicle: 'EDGE-1' },
      });
      expect(res.status(), await res.text()).toBe(200);
      ids.push(((await res.json()) as { data: { scanId: string } }).data.scanId);
    }
    const edges = [
      [1.5, '1/32″'], // critical (under 1.6 mm): below the 2/32″ legal line, not on it
      [2.8, '3/32″'], // worn, red: not 4/32″, which the legend gives to yellow
      [4.8, '6/32″'], // medium, yellow
      [5.0, '7/32″'], // good, green: not 6/32″, which the legend gives to yellow
    ] as const;
    for (const [i, [mm]] of edges.entries()) {
      const put = await page.request.put(`${origin()}/api/v1/scans/${ids[i]}/measurement`, { headers: { origin: origin() }, data: { measurementMm: mm } });
      expect(put.status(), await put.text()).toBe(200);
    }
    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('search').getByLabel('Vehicle / plate').fill('EDGE-1');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.locator('.history-item').count()).toBe(4);
    for (const [i, [, shown]] of edges.entries()) {
      const row = page.locator(`a.history-item[data-scan-id="${ids[i]}"]`);
      await expect(row.textContent()).resolves.toContain(`gauge ${shown}`);
    }

    // and every estimate on screen sits inside the legend's 32nds for its badge's colour
    await page.getByRole('search').getByLabel('Vehicle / plate').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.locator('.history-item').count()).toBe(6);
    const rows = await Promise.all(
      (await page.locator('.history-item').all()).map(async (item) => ({
        text: (await item.textContent()) ?? '',
        wear: (await item.locator('.badge').getAttribute('data-wear')) ?? '',
      })),
    );
    for (const row of rows) {
      const n = Number(/(\d+)\/32″ \(\d+\.\d mm\)/.exec(row.text)?.[1]);
      const [low, high] = LEGEND_32NDS[COLOUR[row.wear as keyof typeof COLOUR]];
      expect(n, row.text).toBeGreaterThanOrEqual(low);
      expect(n, row.text).toBeLessThanOrEqual(high);
    }
  });

  it('keeps the history search on the way back from a scan, with the scan in focus', async () => {
    await page.getByRole('search').getByLabel('Vehicle / plate').fill('AB-1');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.locator('.history-item').count()).toBe(2);
    // the scan with the gauge reading typed at the counter
    const measured = page.locator('.history-item').filter({ hasText: 'gauge 6/32″' });
    const opened = await measured.getAttribute('data-scan-id');
    await measured.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Scan details' }).waitFor();
    await page.getByRole('link', { name: 'Back to history' }).click();
    await page.locator('.history-item').nth(1).waitFor();
    await expect(page.getByRole('search').getByLabel('Vehicle / plate').inputValue()).resolves.toBe('AB-1');
    await expect(page.locator('.history-item').count()).resolves.toBe(2);
    await expect.poll(async () => (await focused(page)).text).toMatch(/^AB-1(?!\d)/);
    await expect(
      page.evaluate(() =>
        (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null } } }).document.activeElement.getAttribute(
          'data-scan-id',
        ),
      ),
    ).resolves.toBe(opened);

    // the browser's Back too
    await page.locator('.history-item').nth(1).click();
    await page.getByRole('heading', { name: 'Scan details' }).waitFor();
    await page.goBack();
    await page.locator('.history-item').nth(1).waitFor();
    await expect(page.getByRole('search').getByLabel('Vehicle / plate').inputValue()).resolves.toBe('AB-1');
  });

  it('shows the report in 32nds with a legend that matches them', async () => {
    await page.getByRole('link', { name: 'Report for AB-1' }).click();
    const report = page.getByTestId('report');
    await report.locator('.report-tire').nth(1).waitFor();
    // the front left tire has the gauge reading typed at the counter: it is the depth of record
    const measured = report.locator('.report-tire').filter({ hasText: 'Front left' });
    await expect(measured.locator('.report-depth').textContent()).resolves.toBe('6/32″ (4.8 mm)');
    await expect(measured.locator('.small').first().textContent()).resolves.toMatch(/^Measured with a gauge · photo estimate \d+\/32″$/);
    const estimated = report.locator('.report-tire').filter({ hasText: 'Front right' });
    await expect(estimated.locator('.report-depth').textContent()).resolves.toMatch(/^\d+\/32″ \(\d+\.\d mm\)$/);
    await expect(estimated.locator('.small').first().textContent()).resolves.toMatch(/^likely \d+\/32″–\d+\/32″/);
    await expect(report.getByTestId('legend').textContent()).resolves.toBe(
      'Green: 7/32″ or more (5.0 mm or more) · yellow: 4/32″–6/32″ (3.0–4.9 mm) · red: 3/32″ or less (under 3.0 mm), replace. Legal minimum 2/32″ (1.6 mm).',
    );
  });

  it('names the view in the title and takes the focus to its heading; a history row reads with its depth and wear', async () => {
    await page.getByRole('link', { name: 'History' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.title()).toBe('History – TireWear');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'H2', text: expect.stringContaining('History') });
    await page.locator('.history-item').first().waitFor();
    const row = page.locator('a.history-item').first();
    // no aria-label replacing the row's words: vehicle, date, depth, gauge and "Wear: <class>" are its name
    expect(await row.getAttribute('aria-label')).toBeNull();
    await expect(
      page
        .getByRole('link', { name: /″.*Wear: (New|Good|Medium|Worn|Critical)/ })
        .first()
        .isVisible(),
    ).resolves.toBe(true);
    await expect.poll(() => page.getByTestId('history-status').textContent()).toMatch(/^\d+ scans? of \d+ vehicles? shown/);
    await row.click();
    await expect.poll(() => page.title()).toBe('Scan details – TireWear');
    await page.getByRole('link', { name: 'Scan', exact: true }).click();
    await expect.poll(() => page.title()).toBe('Scan tires – TireWear');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'H2', text: 'Scan tires' });
  });

  it('moves the focus to "Yes, delete", and back to "Delete scan" on Cancel or Escape', async () => {
    await page.getByRole('link', { name: 'History' }).click();
    await page.locator('.history-item').first().click();
    const del = page.getByRole('button', { name: 'Delete scan' });
    await del.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Yes, delete' });
    await page.keyboard.press('Tab');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Cancel' });
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Delete scan' });
    // the question names the choice for a screen reader; Escape is Cancel
    await page.keyboard.press('Enter');
    await page.getByRole('group', { name: 'Delete this scan for good?' }).getByRole('button', { name: 'Yes, delete' }).waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Delete scan' });
  });

  it('does not say "Copied" on a new key, and moves the focus to the next key after a revoke', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    for (const name of ['Front desk', 'Back office']) {
      await page.getByLabel(/Name of the new key/).fill(name);
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('row').filter({ hasText: name }).waitFor();
      await page.getByText(`New key “${name}”`).waitFor();
      await expect(page.locator('.new-key').getByRole('button').textContent()).resolves.toBe('Copy key');
      await page.locator('.new-key').getByRole('button', { name: 'Copy key' }).click();
      await page.locator('.new-key').getByRole('button', { name: 'Copied' }).waitFor();
    }
    // created from the keyboard: the focus stays on the button while it works (a disabled one lost it)
    await page.getByLabel(/Name of the new key/).fill('Till 3');
    await page.getByRole('button', { name: 'Create key' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('row').filter({ hasText: 'Till 3' }).waitFor();
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Create key' });
    await page.getByRole('button', { name: 'Revoke key Till 3' }).click();
    await page.getByRole('row').filter({ hasText: 'Till 3' }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Revoke key Front desk' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('row').filter({ hasText: 'Front desk' }).waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'BUTTON', label: 'Revoke key Back office' });
    await page.keyboard.press('Enter');
    await page.getByText('No keys yet.').waitFor();
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'INPUT' });
  });

  it('brings the result of a webcam photo into view', async () => {
    await page.getByRole('link', { name: 'Scan' }).click();
    await page.getByRole('button', { name: 'Use webcam' }).click();
    const camera = page.getByRole('region', { name: 'Camera capture' });
    await page.waitForFunction(() => {
      // Runs in the page; the Node typings of this file have no DOM.
      // the tire video's own frames (640 wide, as in the demo test), a moment in: not a first blank one
      const { document } = globalThis as unknown as { document: { querySelector(s: string): { videoWidth: number; currentTime: number } | null } };
      const video = document.querySelector('.camera video');
      return video?.videoWidth === 640 && video.currentTime > 0.3;
    });
    await expect.poll(() => camera.getByRole('button', { name: 'Capture' }).getAttribute('aria-disabled')).toBeNull();
    await camera.getByRole('button', { name: 'Capture' }).focus();
    await page.keyboard.press('Enter');
    // each step's button takes the focus from the one that went away
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Analyze photo' });
    await page.keyboard.press('Enter');
    await camera.getByText('Photo sent for analysis. Its result appears below the camera.').waitFor();
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Capture' });
    await waitForResults(page, 1);
    const card = page.locator('article.result-card').first();
    // Runs in the page; the Node typings of this file have no DOM.
    const top = () => card.evaluate((el) => Math.round((el as unknown as { getBoundingClientRect(): { top: number } }).getBoundingClientRect().top));
    await expect.poll(top).toBeLessThan(200);
    await expect.poll(top).toBeGreaterThanOrEqual(0);
    await page.getByRole('button', { name: 'Hide camera' }).click();
    expect(errors).toEqual([]);
  });

  it('fits a window 320 px wide (400 % zoom) on every page without scrolling sideways (tables aside)', async () => {
    await page.setViewportSize({ width: 320, height: 700 });
    const found: Record<string, { extra: number; out: string[] }> = {};
    try {
      const overflow = () => sidewaysOverflow(page);
      for (const [link, heading] of [
        ['Scan', 'Scan tires'],
        ['History', 'History'],
        ['Account', 'Account'],
        ['API keys', 'API keys'],
        ['Settings', 'Settings'],
      ] as const) {
        await page.getByRole('link', { name: link, exact: true }).click();
        await page.getByRole('heading', { name: heading, exact: true }).first().waitFor();
        if (link === 'History') await page.locator('.history-item').first().waitFor();
        found[link] = await overflow();
      }
      await page
        .locator('.history-item')
        .first()
        .click()
        .catch(async () => {
          await page.getByRole('link', { name: 'History', exact: true }).click();
          await page.locator('.history-item').first().click();
        });
      await page.getByRole('heading', { name: 'Scan details' }).waitFor();
      await page.getByRole('region', { name: 'Scan details' }).locator('.result-card').waitFor();
      found['scan details'] = await overflow();
      const clean = { extra: 0, out: [] };
      expect(found).toEqual({ Scan: clean, History: clean, Account: clean, 'API keys': clean, Settings: clean, 'scan details': clean });
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('says why a result is preliminary, reason by reason, as the server gives them (docs/API.md §2)', async () => {
    // the counter's words for each of the wire's reasons (src/renderer/src/lib/preliminary.ts)
    const WORDS: Record<string, RegExp> = {
      models_disagree: /The models disagree \(alignment \d+%\)\./,
      tread_barely_visible: /Little of the photo shows tread the models can read\./,
      unlike_training_photos: /a kind of photo the models did not learn wear from/,
      unlike_shop_photos: /unlike the photos your shop's own reader learned from/,
    };
    await page.getByRole('link', { name: 'Scan', exact: true }).click();
    await page.getByRole('textbox', { name: 'Vehicle / plate' }).fill('PRELIM-1');
    // two more scans: the free plan's 10 a month hold them after this suite's others
    const sent = photos.slice(2);
    await dropFiles(page, await Promise.all(sent.map((file, i) => photoFile(file, `prelim-${i}.png`))));
    const cards = page.locator('article.result-card').filter({ hasText: 'PRELIM-1' });
    await expect.poll(() => cards.count(), { timeout: 60_000 }).toBe(sent.length);
    let preliminary = 0;
    for (const card of await cards.all()) {
      const id = (await card.getAttribute('data-scan-id'))!;
      const res = await page.request.get(`${origin()}/api/v1/scans/${id}`);
      expect(res.status()).toBe(200);
      const { result } = ((await res.json()) as { data: WireScan }).data;
      const warning = card.locator('.message-warn').filter({ hasText: 'Preliminary result.' });
      if (!result.isPreliminary) {
        expect(result.preliminaryReasons).toEqual([]);
        await expect(warning.count()).resolves.toBe(0);
        continue;
      }
      preliminary += 1;
      expect(result.preliminaryReasons!.length).toBeGreaterThan(0);
      const text = (await warning.textContent()) ?? '';
      for (const reason of result.preliminaryReasons!) expect(text).toMatch(WORDS[reason]!);
      for (const other of Object.keys(WORDS).filter((r) => !result.preliminaryReasons!.includes(r as never))) expect(text).not.toMatch(WORDS[other]!);
      expect(text).toContain('Check this tire with a tread depth gauge.');
    }
    // the shipped models read most renders as photos they did not learn wear from
    expect(preliminary).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });
});
