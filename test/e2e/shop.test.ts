/**
 * A shop's day at the counter in a real browser against the real server: sign up, scan a
 * car's four tires, read and switch the overlays, record a gauge reading, print the
 * customer report, find the scans in the history, redeem a pack, manage API keys, settings.
 */
import { readFile } from 'node:fs/promises';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from './support/app.js';
import { launchChromium, openPage } from './support/browser.js';
import { createFirstAccount } from './support/first-run.js';
import { saveScreenshot, tirePhotos } from './support/files.js';
import { waitForResults } from './support/results.js';
import { heldoutLabels } from '../analysis/helpers.js';

const PLATE = 'AB-123-CD';

describe('shop account in the browser', () => {
  let app: RunningApp;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let photos: string[];

  /** A README picture: from the top of the page, or scrolled so `scrollTo` sits under the header. */
  const shot = async (name: string, scrollTo?: Locator) => {
    // Runs in the page; the Node typings of this file have no DOM.
    const scroll = (y: number) => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, y);
    await page.mouse.move(0, 0);
    await page.evaluate(scroll, 0);
    const box = scrollTo ? await scrollTo.boundingBox() : null;
    if (box) await page.evaluate(scroll, box.y - 80);
    await saveScreenshot(page, name);
  };

  beforeAll(async () => {
    photos = tirePhotos();
    app = await startApp();
    browser = await launchChromium();
    ({ page, errors } = await openPage(browser, app.url));
    page.on('dialog', (dialog) => void dialog.accept());
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('creates the shop account on first run and signs in', async () => {
    await createFirstAccount(page, 'owner@mainstreet-tires.test');
    await expect(page.locator('.who').textContent()).resolves.toBe('owner@mainstreet-tires.test');
  });

  it('saves the shop name used on reports', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel(/Shop name/).fill('Main Street Tires');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await expect(page.locator('.brand').textContent()).resolves.toContain('Main Street Tires');
  });

  it('analyzes a dropped photo and picked photos, one result card each', async () => {
    await page.getByRole('link', { name: 'Scan' }).click();
    await page.getByRole('textbox', { name: 'Vehicle / plate' }).fill(PLATE);
    await page.getByRole('radio', { name: 'Front left' }).check();
    const bytes = (await readFile(photos[0]!)).toString('base64');
    const dataTransfer = await page.evaluateHandle((b64) => {
      // Runs in the page; the Node typings of this file have no DOM.
      const { DataTransfer } = globalThis as unknown as { DataTransfer: new () => { items: { add(file: File): void } } };
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([data], 'front-left.jpg', { type: 'image/jpeg' }));
      return transfer;
    }, bytes);
    await page.getByTestId('drop-zone').dispatchEvent('drop', { dataTransfer });
    for (const [i, position] of (['Front right', 'Rear left', 'Rear right'] as const).entries()) {
      // the next corner is chosen by itself once a photo is on the last one
      await expect.poll(() => page.getByRole('radio', { name: position }).isChecked()).toBe(true);
      await page.getByTestId('file-input').setInputFiles(photos[(i + 1) % photos.length]!);
    }
    await waitForResults(page, 4);

    const cards = page.locator('article.result-card');
    await expect(cards.count()).resolves.toBe(4);
    for (let i = 0; i < 4; i++) {
      const card = cards.nth(i);
      await expect(card.locator('.badge').getAttribute('data-wear')).resolves.toMatch(/^(new|good|medium|worn|critical)$/);
      await expect(card.locator('.depth-main').textContent()).resolves.toMatch(/^\d+\.\d mm \(\d+\/32″\)$/);
      await expect(card.locator('.disclaimer').textContent()).resolves.toContain('not a full safety inspection');
      await expect(card.getByRole('meter', { name: 'Tread health' }).getAttribute('aria-valuenow')).resolves.toMatch(/^\d+$/);
    }
    await expect(cards.first().locator('h3').textContent()).resolves.toBe(`${PLATE} · Rear right`);
    expect(errors).toEqual([]);
  });

  it('switches the analysis overlays over the photo', async () => {
    const card = page.locator('article.result-card').first();
    await expect(card.locator('img.overlay').count()).resolves.toBe(0);
    await card.getByLabel('Depth heat map').check();
    await expect(card.locator('img.overlay').getAttribute('data-overlay')).resolves.toBe('depthHeatmap');
    await expect(card.locator('img.overlay').getAttribute('src')).resolves.toMatch(/^data:image\/png;base64,/);
    await expect(card.locator('.overlay-note').textContent()).resolves.toContain('not which part is more worn');
    await card.getByLabel('Tread / groove / TWI mask').check();
    await expect(card.locator('img.overlay').getAttribute('data-overlay')).resolves.toBe('mask');
    await expect(card.locator('.overlay-note').count()).resolves.toBe(0);
    await card.getByLabel('Photo only').check();
    await expect(card.locator('img.overlay').count()).resolves.toBe(0);
  });

  it('records the gauge reading beside the estimate', async () => {
    const card = page.locator('article.result-card').first();
    await card.getByLabel('Gauge reading (mm)').fill('4.5');
    await card.getByRole('button', { name: 'Save reading' }).click();
    await card.getByText('Saved: 4.5 mm.').waitFor();
    await expect(card.locator('.depth-bar figcaption').textContent()).resolves.toContain('gauge 4.5 mm');
    await card.getByLabel('Depth heat map').check();
    await shot('scan', page.getByText(/scans left this month/));
  });

  it('prints the customer report on one page', async () => {
    await page.getByRole('button', { name: 'Customer report' }).click();
    const report = page.getByTestId('report');
    await report.waitFor();
    await expect(report.locator('.report-tire').count()).resolves.toBe(4);
    await expect(report.locator('h2').textContent()).resolves.toBe('Main Street Tires');
    await expect(report.textContent()).resolves.toContain(PLATE);
    await expect(report.locator('.report-position').allTextContents()).resolves.toEqual(['Front left', 'Front right', 'Rear left', 'Rear right']);
    await page.emulateMedia({ media: 'print' });
    await expect(page.locator('.app-header').isVisible()).resolves.toBe(false);
    await expect(page.getByRole('button', { name: 'Print report' }).isVisible()).resolves.toBe(false);
    await shot('report');
    const pdf = await page.pdf({ format: 'A4' });
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    // One sheet: a PDF lists its pages as /Type /Page objects.
    expect(pdf.toString('latin1').match(/\/Type\s*\/Page\b/g)?.length).toBe(1);
    await page.emulateMedia({ media: 'screen' });
  });

  it('finds the scans in the history, with filters, detail and the CSV export', async () => {
    await page.getByRole('link', { name: 'History' }).click();
    await page.locator('.history-item').nth(3).waitFor();
    await expect(page.locator('.history-item img').first().getAttribute('src')).resolves.toContain('variant=thumbnail');
    await page.getByRole('search').getByLabel('Vehicle / plate').fill('ab-123');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: `Report for ab-123` }).waitFor();
    await expect(page.locator('.history-item').count()).resolves.toBe(4);
    await page.getByRole('link', { name: `Report for ab-123` }).click();
    await page.getByTestId('report').locator('.report-tire').nth(3).waitFor();
    await expect(page.getByTestId('report').textContent()).resolves.toContain(`Tread depth report for ${PLATE}`);
    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('search').getByLabel('Vehicle / plate').fill('ZZ-999');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No scans match.').waitFor();
    await page.getByRole('search').getByLabel('Vehicle / plate').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('.history-item').nth(3).waitFor();

    // the filter reads what a row's badge shows, the band of the depth of record: the estimate's
    // without a gauge reading, the gauge's with one
    const plain = page.locator('.history-item').filter({ hasNotText: 'gauge' }).first();
    const wear = await plain.locator('.badge').getAttribute('data-wear');
    const plainId = (await plain.getAttribute('data-scan-id'))!;
    const wearFilter = page.getByLabel('Wear', { exact: true });
    const listed = async (band: string) => {
      await wearFilter.selectOption(band);
      const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/vehicles' && new URL(r.url()).searchParams.get('wear') === band);
      await page.getByRole('button', { name: 'Search' }).click();
      await answered;
      await expect.poll(() => page.getByTestId('history-status').textContent()).toMatch(/ shown\.$|^No scans match/);
      return page
        .locator('.history-item')
        .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-scan-id'), r.querySelector('.badge')?.getAttribute('data-wear')]));
    };
    await wearFilter.selectOption(wear === 'critical' ? 'new' : 'critical');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No scans match.').waitFor();
    // a gauge reading in another band than that scan's estimate: the filter follows the gauge (then the reading is cleared again)
    const origin = new URL(app.url).origin;
    const [reading, band] = wear === 'good' ? [3.5, 'medium'] : [6, 'good'];
    const measure = (measurementMm: number | null) =>
      page.request.put(`${origin}/api/v1/scans/${plainId}/measurement`, { headers: { origin }, data: { measurementMm } });
    expect((await measure(reading)).status()).toBe(200);
    for (const filter of [wear!, band]) {
      const rows = await listed(filter);
      // every row listed wears the band asked for, and the measured scan is listed by its gauge's band only
      expect(
        rows.every(([, badge]) => badge === filter),
        `${filter}: ${JSON.stringify(rows)}`,
      ).toBe(true);
      expect(
        rows.some(([id]) => id === plainId),
        filter,
      ).toBe(filter === band);
    }
    expect((await measure(null)).status()).toBe(200);
    const rows = await listed(wear!);
    expect(rows.some(([id]) => id === plainId)).toBe(true);
    expect(rows.every(([, badge]) => badge === wear)).toBe(true);
    await wearFilter.selectOption('');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('.history-item').nth(3).waitFor();
    await shot('history');

    const href = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
    expect(href).toContain('format=excel'); // Excel's own dialect for this browser's number format (en-US: comma, BOM)
    const csv = await page.request.get(new URL(href!, app.url).toString());
    expect(csv.status()).toBe(200);
    const body = await csv.body();
    expect([...body.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(body.toString('utf8')).toContain('4.5');

    await page.locator('.history-item').first().click();
    await page.getByRole('heading', { name: 'Scan details' }).waitFor();
    const detail = page.getByRole('region', { name: 'Scan details' });
    await expect(detail.locator('.depth-bar figcaption').textContent()).resolves.toContain('gauge 4.5 mm');
  });

  it('deletes a scan from its detail view', async () => {
    await page.getByRole('button', { name: 'Delete scan' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    await page.locator('.history-item').nth(2).waitFor();
    await expect(page.locator('.history-item').count()).resolves.toBe(3);
  });

  it('shows usage and redeems scan pack and pro licenses', async () => {
    await page.getByRole('link', { name: 'Account' }).click();
    await expect(page.getByTestId('plan').textContent()).resolves.toBe('Free');
    await expect(page.getByTestId('usage').textContent()).resolves.toBe('4 of 10 scans used');
    await page.getByLabel(/License code/).fill(app.issueCode({ kind: 'pack', scans: 100 }));
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByText('Scan pack added: 100 scans.').waitFor();
    await expect(page.getByTestId('pack-credit').textContent()).resolves.toBe('100 scans');
    await shot('account');
    await page.getByLabel(/License code/).fill('TWL1.bogus.code');
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByText('That license code was not accepted.').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('LICENSE_INVALID');

    await page.getByLabel(/License code/).fill(app.issueCode({ kind: 'pro', expiresAt: '2099-01-01T00:00:00.000Z' }));
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByText('Pro plan active until', { exact: false }).waitFor();
    await expect(page.getByTestId('plan').textContent()).resolves.toBe('Pro');
    await expect(page.getByRole('row').count()).resolves.toBe(3);
  });

  it('creates an API key shown once, with a ready curl example, and revokes it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel(/Name of the new key/).fill('Front desk POS');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByTestId('new-key').textContent();
    expect(key).toMatch(/^tw_[0-9A-Za-z]{32}$/);
    const curl = await page.getByTestId('curl-example').textContent();
    expect(curl).toContain(`${new URL(app.url).origin}/api/v1/analyze`);
    expect(curl).toContain(`X-API-Key: ${key}`);
    await page.getByRole('row').filter({ hasText: 'Front desk POS' }).waitFor();
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await shot('keys');

    await page.getByRole('button', { name: 'Revoke key Front desk POS' }).click();
    await page.getByText('No keys yet.').waitFor();
  });

  it('changes settings and says when a restart is needed', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Show depths in').selectOption('32nds');
    await page.getByLabel('Port', { exact: true }).fill('8787');
    await page.getByLabel(/LAN access/).check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Restart required', { exact: false }).waitFor();
    await shot('settings');
    await page.getByRole('link', { name: 'Scan' }).click();
    await expect(page.locator('.depth-main').first().textContent()).resolves.toMatch(/^\d+\/32″ \(\d+\.\d mm\)$/);
  });

  it("calibrates to the shop's gauge from Settings, applied at once, and goes back to the shipped models", async () => {
    // too few readings yet: the panel says how many more, and the button waits for them
    await page.getByRole('link', { name: 'Settings' }).click();
    const early = page.getByRole('region', { name: 'Calibrate to your tire gauge' });
    await expect(early.getByTestId('calibration-measured').textContent()).resolves.toMatch(/^[01] \((29|30) more needed\)$/);
    await expect(early.getByRole('button', { name: 'Calibrate now' }).isDisabled()).resolves.toBe(true);
    await expect(early.getByRole('button', { name: 'Back to the models as shipped' }).count()).resolves.toBe(0);

    // READINGS more scans with gauge readings, through the same API as the page (its cookie): a gauge that reads
    // 1.3 × the truth + 0.4 mm, i.e. photos this shop's models read too shallow; 50 or more let the
    // calibration fit a reader of the shop's own. On these renders it must beat the line by 0.05 mm to be
    // kept: with tread-2026.11.29.5, 52 readings gave 3.08 against 3.11 mm (not kept), 80 gave 2.98
    // against 2.92, 120 give 2.74 against 2.99 (kept), 160 2.76 against 2.91; the renders' depth is
    // hard for both, so the test takes 120 to exercise the reader, not to measure it
    // (the shipped gate may refuse a few renders as no tire, 1.2 % with tread-2026.11.29.5: those are skipped)
    const READINGS = 120;
    const origin = new URL(app.url).origin;
    let answered = 0;
    let refused = 0;
    for (const tire of heldoutLabels().filter((l) => l.depthMm !== null)) {
      if (answered === READINGS) break;
      const res = await page.request.post(`${origin}/api/v1/analyze`, {
        headers: { origin },
        multipart: { image: { name: 'tire.jpg', mimeType: 'image/jpeg', buffer: await readFile(tire.file) } },
      });
      if (res.status() === 422 && (await res.json()).error.code === 'NO_TIRE_DETECTED') {
        refused++;
        continue;
      }
      expect(res.status(), await res.text()).toBe(200);
      answered++;
      const { scanId } = (await res.json()).data;
      const gauge = Math.round((1.3 * tire.depthMm! + 0.4) * 10) / 10;
      const put = await page.request.put(`${origin}/api/v1/scans/${scanId}/measurement`, { headers: { origin }, data: { measurementMm: gauge } });
      expect(put.status(), await put.text()).toBe(200);
    }
    expect(answered).toBe(READINGS);
    expect(refused).toBeLessThanOrEqual(5);
    await page.getByRole('link', { name: 'Scan' }).click();
    await page.getByRole('link', { name: 'Settings' }).click();
    const panel = page.getByRole('region', { name: 'Calibrate to your tire gauge' });
    const shipped = (await panel.getByTestId('calibration-model').textContent())!;
    expect(shipped).toMatch(/^tread-[\d.]+$/);
    // the READINGS and the reading entered at the counter, unless that scan was the one deleted above
    const measured = Number(await panel.getByTestId('calibration-measured').textContent());
    expect([READINGS, READINGS + 1]).toContain(measured);
    await panel.getByRole('button', { name: 'Calibrate now' }).click();
    const finished = new RegExp(`^Calibrated on ${measured} photos: analyses now answer with`);
    await panel.locator('p.message').filter({ hasText: finished }).waitFor({ timeout: 60_000 });
    // a screen reader is told the ending once, in the panel's one live region (not each photo read)
    await expect(panel.getByTestId('calibration-announcement').textContent()).resolves.toMatch(finished);
    await expect(panel.getByTestId('calibration-model').textContent()).resolves.toMatch(new RegExp(`^${shipped.replace(/\./g, '\\.')}\\+shop\\.`));
    // the shop chose 32nds above: errors in tenths of a 32nd, millimetres beside them
    await expect(panel.getByRole('row', { name: /Mean error against the gauge/ }).textContent()).resolves.toMatch(
      /\d\.\d\/32″ \(\d\.\d\d mm\).*\d\.\d\/32″ \(\d\.\d\d mm\)/,
    );
    await expect(panel.getByRole('columnheader', { name: 'Your own reader' }).count()).resolves.toBe(1);
    await panel.getByText(new RegExp(`^Made .* on ${measured} tires, a reader of your own: mean error`)).waitFor();
    await shot('calibration', panel);
    await panel.getByRole('button', { name: 'Back to the models as shipped' }).click();
    await panel.getByRole('button', { name: 'Calibrate now' }).waitFor();
    await expect(panel.getByTestId('calibration-model').textContent()).resolves.toBe(shipped);
    await expect(panel.getByRole('button', { name: 'Back to the models as shipped' }).count()).resolves.toBe(0);
    expect(errors).toEqual([]);
  });

  it('signs out and back in', async () => {
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Welcome to TireWear' }).waitFor();
    await page.getByRole('button', { name: 'I already have an account' }).click();
    await page.getByLabel('Email').fill('owner@mainstreet-tires.test');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Wrong email or password.').waitFor();
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // back at the counter's Scan page, not on Account where "Sign out" was clicked
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/scan');
    await expect(page.locator('.who').textContent()).resolves.toBe('owner@mainstreet-tires.test');
    expect(errors).toEqual([]);
  });
});
