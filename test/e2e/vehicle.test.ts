/**
 * One vehicle at a time at the counter, in a real browser against the real server (issue 42): the
 * plate once, a batch filling the four corners in order and the choice moving on, corners swapped
 * by keyboard and by drag (kept on the server), the report naming every corner; a refused photo
 * answered with a picture of how to photograph a tread; the gauge winning over the estimate;
 * corrections on the card and in History; History by vehicle, found however the plate is typed;
 * overlays with their keys; the webcam's frame and live check; the POS addresses; no HTTP header
 * named to staff; and all of it at 320 px.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WireScan } from '../../src/shared/api.js';
import { FakeAnalyzer } from '../support/fake-analyzer.js';
import { startApp, type RunningApp } from './support/app.js';
import { launchChromium, openPage } from './support/browser.js';
import { dropFiles, focused, photoFile } from './support/drop.js';
import { saveScreenshot } from './support/files.js';
import { sidewaysOverflow } from './support/overflow.js';
import { waitForResults } from './support/results.js';
import { webcamSessionForSuite } from './support/webcam.js';

const PLATE = 'KA TW 204';

describe('one vehicle at a time in the browser', () => {
  let app: RunningApp;
  let page: Page;
  let errors: string[];
  let photos: string[];

  const origin = () => new URL(app.url).origin;
  const corner = (p: string) => page.getByTestId(`corner-${p}`);
  /** The scan behind a corner's photo: the chip names its queue item, whose card carries the scan id. */
  const scanOfCorner = async (p: string) => {
    const queueId = await corner(p).locator('.corner-photo').getAttribute('data-photo-id');
    return page.locator(`article.result-card[data-queue-id="${queueId}"]`).getAttribute('data-scan-id');
  };
  const getScan = async (id: string): Promise<WireScan> => {
    const res = await page.request.get(`${origin()}/api/v1/scans/${id}`);
    expect(res.status(), await res.text()).toBe(200);
    return ((await res.json()) as { data: WireScan }).data;
  };
  /** A README picture, scrolled so that `selector` sits under the top. */
  const shot = async (name: string, selector?: string) => {
    await page.mouse.move(0, 0);
    if (selector)
      await page
        .locator(selector)
        .first()
        .evaluate((el) => (el as unknown as { scrollIntoView(o: unknown): void }).scrollIntoView({ block: 'start' }));
    else await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await saveScreenshot(page, name);
  };

  webcamSessionForSuite((session) => ({ app, page, errors, photos } = session));

  it('creates the shop account', async () => {
    await page.getByLabel('Email').fill('owner@vehicle.test');
    await page.getByLabel(/^Password/).fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
  });

  it('fills the four corners in order from one dropped batch, the choice moving on to the spare', async () => {
    await page.getByRole('textbox', { name: 'Vehicle / plate' }).fill(PLATE);
    await expect(page.getByRole('radio', { name: 'Front left' }).isChecked()).resolves.toBe(true);
    await dropFiles(page, await Promise.all(photos.map((p, i) => photoFile(p, `tire-${i}.jpg`))));
    for (const [i, p] of ['FL', 'FR', 'RL', 'RR'].entries()) {
      await expect(corner(p).locator('.corner-name').textContent()).resolves.toBe(`tire-${i}.jpg`);
    }
    await expect.poll(() => page.getByRole('radio', { name: 'Spare' }).isChecked()).toBe(true);
    await waitForResults(page, 4);
    await page
      .getByRole('status')
      .filter({ hasText: `All four tires of ${PLATE} are done` })
      .waitFor();
    for (const p of ['FL', 'FR', 'RL', 'RR']) await corner(p).locator('.badge').waitFor();
    // the cards name the corner each photo was taken for
    await expect(page.locator('article.result-card h3').allTextContents()).resolves.toEqual(
      ['Rear right', 'Rear left', 'Front right', 'Front left'].map((p) => `${PLATE} · ${p}`),
    );
    await shot('vehicle', '.vehicle-view');
  });

  it('swaps two corners from the keyboard and two by drag, before the report, and the server keeps them', async () => {
    const [fl, fr] = [await scanOfCorner('FL'), await scanOfCorner('FR')];
    const move = corner('FL').getByRole('combobox', { name: 'Move the front left photo tire-0.jpg to' });
    await move.focus();
    await page.keyboard.press('ArrowDown'); // Front left → Front right
    await expect.poll(() => corner('FR').locator('.corner-name').textContent()).toBe('tire-0.jpg');
    await expect(corner('FL').locator('.corner-name').textContent()).resolves.toBe('tire-1.jpg');
    await expect(page.getByTestId('move-status').textContent()).resolves.toBe('tire-0.jpg moved to front right, tire-1.jpg to front left.');

    const [rl, rr] = [await scanOfCorner('RL'), await scanOfCorner('RR')];
    await corner('RL').locator('.corner-photo').dragTo(corner('RR'));
    await expect.poll(() => corner('RR').locator('.corner-name').textContent()).toBe('tire-2.jpg');
    await expect(corner('RL').locator('.corner-name').textContent()).resolves.toBe('tire-3.jpg');

    const positions = async () => Promise.all([fl, fr, rl, rr].map(async (id) => (await getScan(id!)).position));
    await expect.poll(positions).toEqual(['FR', 'FL', 'RR', 'RL']);
    const fresh = await getScan(fl!);
    expect(fresh.changes.map((c) => [c.field, c.from, c.to])).toEqual([['position', 'FL', 'FR']]);
    await expect(page.locator(`article.result-card[data-scan-id="${fl}"] h3`).textContent()).resolves.toBe(`${PLATE} · Front right`);
  });

  it('ends in the customer report, every corner named', async () => {
    await page.getByRole('button', { name: 'Customer report' }).click();
    const report = page.getByTestId('report');
    await report.locator('.report-tire').nth(3).waitFor();
    await expect(report.locator('.report-position').allTextContents()).resolves.toEqual(['Front left', 'Front right', 'Rear left', 'Rear right']);
    await expect(report.textContent()).resolves.toContain(`Tread depth report for ${PLATE}`);
    await page.getByRole('link', { name: 'Back' }).click();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
  });

  it('answers a photo it cannot read with a card showing how to photograph a tread, and asks for that corner again', async () => {
    // a plain grey picture: no tread to read (refused, free)
    const grey = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 128, g: 128, b: 128 } } })
      .jpeg()
      .toBuffer();
    await page.getByRole('radio', { name: 'Spare' }).check();
    await page.getByTestId('file-input').setInputFiles({ name: 'wall.jpg', mimeType: 'image/jpeg', buffer: grey });
    const refused = page.locator('article.queue-failed').filter({ hasText: 'wall.jpg' });
    await refused.waitFor({ timeout: 90_000 });
    await expect(refused.locator('.code').textContent()).resolves.toMatch(/^(NO_TIRE_DETECTED|TREAD_NOT_VISIBLE)$/);
    const guide = refused.getByRole('region', { name: 'How to photograph a tread' });
    await expect(guide.getByRole('img').evaluateAll((imgs) => imgs.map((i) => i.getAttribute('aria-label')))).resolves.toEqual([
      'The tread seen straight on, filling the camera frame from edge to edge',
      'Seen from the side: the phone held about 20 centimetres from the tread, pointing straight at it',
      'A lamp lighting the tread evenly',
    ]);
    await expect(guide.textContent()).resolves.toContain('Not like this:');
    await expect(refused.getByRole('button', { name: 'Try again' }).count()).resolves.toBe(0);
    await expect(corner('SPARE').textContent()).resolves.toContain('Photo refused: take another');
    await expect.poll(() => page.getByRole('radio', { name: 'Spare' }).isChecked()).toBe(true);

    // too small: the same card
    const tiny = await sharp({ create: { width: 200, height: 150, channels: 3, background: { r: 40, g: 40, b: 40 } } })
      .png()
      .toBuffer();
    await page.getByTestId('file-input').setInputFiles({ name: 'thumb.png', mimeType: 'image/png', buffer: tiny });
    const small = page.locator('article.queue-failed').filter({ hasText: 'thumb.png' });
    await small.getByRole('region', { name: 'How to photograph a tread' }).waitFor();
    await expect(small.locator('.code').textContent()).resolves.toBe('IMAGE_TOO_SMALL');
    await shot('guidance', 'article.queue-failed');
    // nothing was charged for either
    await expect(page.locator('.allowance').textContent()).resolves.toMatch(/^6 of 10 free scans left/);
  });

  it('lets a gauge reading typed as 4/32″ win over the estimate: colour, advice, 32nds, no "preliminary", the estimate beside it', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Show depths in').selectOption('32nds');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await page.getByRole('link', { name: 'Scan', exact: true }).click();

    const id = (await scanOfCorner('RL'))!;
    const estimate = (await getScan(id)).result;
    const card = page.locator(`article.result-card[data-scan-id="${id}"]`);
    await card.getByLabel('Gauge reading (32nds of an inch)').fill('4/32″');
    await card.getByRole('button', { name: 'Save reading' }).click();
    await card.getByText('Saved: 4/32″.', { exact: true }).waitFor();
    await expect(card.locator('.result-head .badge').getAttribute('data-wear')).resolves.toBe('medium');
    await expect(card.locator('.depth-main').textContent()).resolves.toBe('4/32″ (3.2 mm)');
    await expect(card.locator('.depth-figure').textContent()).resolves.toContain('measured with a tread depth gauge');
    await expect(card.getByTestId('photo-estimate').textContent()).resolves.toMatch(
      /^Photo estimate \d+\/32″ \(\d+\.\d mm\), likely \d+\/32″–\d+\/32″ \((New|Good|Medium|Worn|Critical)\)$/,
    );
    await expect(card.locator('.advice').textContent()).resolves.toBe('Plan replacement; wet-road grip is reduced.');
    await expect(card.textContent()).resolves.not.toContain('Preliminary');
    await expect(corner('RL').locator('.badge').getAttribute('data-wear')).resolves.toBe('medium');
    // the server agrees: the gauge is the depth of record, nothing preliminary about it
    const saved = await getScan(id);
    expect(saved.measurementMm).toBe(3.2);
    expect(saved.ofRecord).toMatchObject({ source: 'gauge', wear: 'medium', depth32nds: 4 });
    expect(saved.isPreliminary).toBe(false);
    expect(saved.result.estimatedDepthMm).toBe(estimate.estimatedDepthMm);

    // without the inch mark too
    const other = page.locator(`article.result-card[data-scan-id="${await scanOfCorner('FL')}"]`);
    await other.getByLabel('Gauge reading (32nds of an inch)').fill('6/32');
    await other.getByRole('button', { name: 'Save reading' }).click();
    await other.getByText('Saved: 6/32″.', { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Customer report' }).click();
    const tire = page.getByTestId('report').locator('.report-tire').filter({ hasText: 'Rear left' });
    await expect(tire.locator('.report-depth').textContent()).resolves.toBe('4/32″ (3.2 mm)');
    await expect(tire.locator('.badge').getAttribute('data-wear')).resolves.toBe('medium');
    await expect(tire.textContent()).resolves.toMatch(/Measured with a gauge · photo estimate \d+\/32″/);
    await expect(tire.textContent()).resolves.toContain('Plan replacement; wet-road grip is reduced.');
    await expect(tire.textContent()).resolves.not.toContain('Preliminary');
    await page.getByRole('link', { name: 'Back' }).click();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
  });

  it('corrects a plate typo and a position on the card, free, and keeps the change with the scan', async () => {
    await page.getByRole('button', { name: 'Next vehicle' }).click();
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'INPUT' });
    await expect(page.getByRole('radio', { name: 'Front left' }).isChecked()).resolves.toBe(true);
    await page.getByRole('textbox', { name: 'Vehicle / plate' }).fill('KA TW 2O4'); // a letter O for the zero
    await page.getByTestId('file-input').setInputFiles(photos[1]!);
    await expect.poll(() => corner('FL').locator('.badge').count(), { timeout: 90_000 }).toBe(1);
    // this scan is charged (the account is read again after it)
    await expect.poll(() => page.locator('.allowance').textContent()).toMatch(/^5 of 10 free scans left/);
    const allowance = await page.locator('.allowance').textContent();

    const card = page.locator('article.result-card').first();
    const id = (await card.getAttribute('data-scan-id'))!;
    await card.getByRole('button', { name: 'Correct plate or position' }).click();
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'INPUT' });
    await card.getByLabel('Plate of this scan').fill(PLATE);
    await card.getByLabel('Position of this tire').selectOption('SPARE');
    await card.getByRole('button', { name: 'Save correction' }).click();
    await card.getByText('Corrected.', { exact: false }).waitFor();
    await expect(card.locator('h3').textContent()).resolves.toBe(`${PLATE} · Spare`);
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Correct plate or position' });
    // the corner follows the card
    await expect.poll(() => corner('SPARE').locator('.corner-photo').count()).toBe(1);
    await expect(corner('FL').locator('.corner-photo').count()).resolves.toBe(0);
    await expect(page.locator('.allowance').textContent()).resolves.toBe(allowance);
    const scan = await getScan(id);
    expect(scan.vehicle).toBe(PLATE);
    expect(scan.position).toBe('SPARE');
    expect(scan.changes.map((c) => [c.field, c.from, c.to, c.via])).toEqual([
      ['vehicle', 'KA TW 2O4', PLATE, 'session'],
      ['position', 'FL', 'SPARE', 'session'],
    ]);
  });

  it('starts a new vehicle when another plate is typed, or puts the plate right on all of the vehicle’s photos', async () => {
    // the field still holds the typo the card corrected: the corners hold photos of another plate now
    const note = page.getByTestId('plate-change');
    await expect(note.textContent()).resolves.toContain(`The corners hold photos of ${PLATE}: the next photo starts a new vehicle for KA TW 2O4.`);
    const plate = page.getByRole('textbox', { name: 'Vehicle / plate' });
    await plate.fill('ka-tw-204'); // the same car, typed another way
    await expect(note.count()).resolves.toBe(0);

    // the same car after all: its photos take the plate typed, on the server too (free)
    const id = (await scanOfCorner('SPARE'))!;
    await plate.fill('KA TW 205');
    await note.getByRole('button', { name: 'Same vehicle: use KA TW 205 for its photos' }).click();
    await expect(note.count()).resolves.toBe(0);
    await expect.poll(async () => (await getScan(id)).vehicle).toBe('KA TW 205');
    await plate.fill(PLATE);
    await note.getByRole('button', { name: `Same vehicle: use ${PLATE} for its photos` }).click();
    await expect.poll(async () => (await getScan(id)).vehicle).toBe(PLATE);
    // the card re-renders after the server has answered: wait for it as a person would
    await expect.poll(() => page.locator(`article.result-card[data-scan-id="${id}"] h3`).textContent()).toBe(`${PLATE} · Spare`);
  });

  it('finds the car in History however its plate is typed, grouped by vehicle with its visit, and corrects a scan there', async () => {
    await page.getByRole('link', { name: 'History' }).click();
    const search = page.getByRole('search').getByLabel('Vehicle / plate');
    for (const typed of ['ka-tw-204', 'KATW 204', 'k a t w 2 0 4']) {
      await search.fill(typed);
      await page.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => page.getByTestId('history-status').textContent()).toBe('5 scans of 1 vehicle shown.');
    }
    const group = page.locator('.vehicle-group');
    await expect(group.locator('h3').textContent()).resolves.toBe(PLATE);
    await expect(group.locator('.vehicle-group-head').textContent()).resolves.toContain('5 scans');
    await expect(group.locator('.visit').count()).resolves.toBe(1);

    // a scan opened from History: corrected there too
    const row = group.locator('a.history-item').filter({ hasText: 'Front left' });
    const id = (await row.getAttribute('data-scan-id'))!;
    await row.click();
    await page.getByRole('heading', { name: 'Scan details' }).waitFor();
    const card = page.getByRole('region', { name: 'Scan details' }).locator('article.result-card');
    await card.getByRole('button', { name: 'Correct plate or position' }).click();
    await card.getByLabel('Position of this tire').selectOption('FR');
    await card.getByRole('button', { name: 'Save correction' }).click();
    await expect.poll(() => card.locator('h3').textContent()).toBe(`${PLATE} · Front right`);
    await card.getByText('Corrections (3)').click();
    await expect(card.locator('.changes li').first().textContent()).resolves.toMatch(/: position Front left → Front right$/);
    expect((await getScan(id)).position).toBe('FR');
  });

  it('shows the overlays of a scan opened from History, made again from its stored photo (free), once', async () => {
    // still on the scan opened from History: stored without overlays, so none are on the page yet
    const card = page.getByRole('region', { name: 'Scan details' }).locator('article.result-card');
    const id = (await card.getAttribute('data-scan-id'))!;
    const stored = await getScan(id);
    expect(stored.result.overlays).toBeUndefined();
    const account = async () => ((await (await page.request.get(`${origin()}/api/v1/account`)).json()) as { data: unknown }).data;
    const before = await account();
    const asked: number[] = [];
    const listen = (res: { url(): string; status(): number }) => {
      if (new URL(res.url()).pathname === `/api/v1/scans/${id}/overlays`) asked.push(res.status());
    };
    page.on('response', listen);
    try {
      await expect(card.locator('img.overlay').count()).resolves.toBe(0);
      await expect(card.getByLabel('Mark grooves and TWI bars').isChecked()).resolves.toBe(false);
      await card.getByLabel('Depth heat map').check();
      const heat = card.locator('img.overlay[data-overlay="depthHeatmap"]');
      await heat.waitFor({ timeout: 60_000 });
      await expect(heat.getAttribute('src')).resolves.toMatch(/^data:image\/png;base64,/);
      await expect(heat.getAttribute('alt')).resolves.toBe('Depth heat map overlay');
      await expect(card.getByTestId('heat-scale').count()).resolves.toBe(1);
      await expect(card.getByRole('alert').count()).resolves.toBe(0);
      await expect(card.locator('.overlay-loading').textContent()).resolves.toBe('');
      await card.getByLabel('Tread / groove / TWI mask').check();
      await card.locator('img.overlay[data-overlay="mask"]').waitFor();
      await expect(card.getByTestId('mask-key').locator('li').allTextContents()).resolves.toEqual(['Tread', 'Groove', 'TWI bar']);
      await card.getByLabel('Mark grooves and TWI bars').check();
      await expect.poll(() => card.locator('svg.points circle').count()).toBeGreaterThan(0);
      await expect(card.getByTestId('points-key').count()).resolves.toBe(1);
      await card.getByLabel('Photo only').check();
      await expect(card.locator('img.overlay').count()).resolves.toBe(0);
      await card.getByLabel('Depth heat map').check();
      await card.locator('img.overlay[data-overlay="depthHeatmap"]').waitFor();
      // asked once, answered 200; nothing charged, the scan as stored
      expect(asked).toEqual([200]);
      await expect(account()).resolves.toEqual(before);
      expect((await getScan(id)).result).toEqual(stored.result);
      await card.getByLabel('Photo only').check();
    } finally {
      page.off('response', listen);
    }
  });

  it('says so in History when the photo of a scan is gone and its overlays cannot be made', async () => {
    await page.getByRole('link', { name: 'Back to history' }).click();
    const row = page.locator('.vehicle-group a.history-item').filter({ hasText: 'Rear left' }).first();
    const id = (await row.getAttribute('data-scan-id'))!;
    // the photo removed from the images folder, as retention or a person tidying the disk would
    const folder = path.join(app.dataDir, 'images', 'scans', id.slice(0, 2));
    const [original] = (await readdir(folder)).filter((name) => name.startsWith(`${id}.`) && !name.includes('.thumb.'));
    await rm(path.join(folder, original!));
    await row.click();
    const card = page.getByRole('region', { name: 'Scan details' }).locator('article.result-card');
    await card.waitFor();
    await card.getByLabel('Depth heat map').check();
    const alert = card.getByRole('alert');
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toBe('The photo of this scan is no longer kept, so its overlays cannot be made. Its result is as stored.');
    await expect(card.locator('img.overlay').count()).resolves.toBe(0);
    await card.getByLabel('Photo only').check();
  });

  it('shows the overlays with their keys on a fresh card, the TWI markers off until asked for', async () => {
    await page.getByRole('link', { name: 'Scan', exact: true }).click();
    const card = page.locator('article.result-card').first();
    await expect(card.locator('svg.points').count()).resolves.toBe(0);
    const marks = card.getByLabel('Mark grooves and TWI bars');
    await expect(marks.isChecked()).resolves.toBe(false);
    await card.getByLabel('Depth heat map').check();
    const scale = card.getByTestId('heat-scale');
    await expect(scale.locator('.heat-ticks span').allTextContents()).resolves.toEqual(['0', '2', '4', '6', '8', '10/32″+']);
    await expect(scale.getAttribute('aria-label')).resolves.toBe('Heat map colours by depth: red at 0, orange at 2/32″, yellow at 4/32″, green from 9/32″');
    await card.getByLabel('Tread / groove / TWI mask').check();
    await expect(card.getByTestId('mask-key').locator('li').allTextContents()).resolves.toEqual(['Tread', 'Groove', 'TWI bar']);
    await expect(card.getByTestId('heat-scale').count()).resolves.toBe(0);
    await marks.check();
    await expect(card.getByTestId('points-key').textContent()).resolves.toContain('Possible TWI bar: not reliable yet, do not act on it');
    await expect(card.locator('svg.points').count()).resolves.toBe(1);
    await shot('overlays', 'article.result-card');
    await marks.uncheck();
    await card.getByLabel('Photo only').check();
  });

  it('frames the tread in the webcam view and offers Capture once the live check sees a sharp, lit tread', async () => {
    await page.getByRole('button', { name: 'Next vehicle' }).click();
    await page.getByRole('button', { name: 'Use webcam' }).click();
    const camera = page.getByRole('region', { name: 'Camera capture' });
    await expect(camera.textContent()).resolves.toContain('This photo goes to: Front left');
    await expect(camera.locator('.camera-frame').textContent()).resolves.toBe('Fill this frame with the tread');
    const capture = camera.getByRole('button', { name: 'Capture' });
    await expect(capture.getAttribute('aria-disabled')).resolves.toBe('true');
    await camera
      .getByRole('status')
      .filter({ hasText: /^Ready: / })
      .waitFor({ timeout: 20_000 })
      .catch(async (error: unknown) => {
        throw new Error(`the live check did not pass: ${await camera.getByTestId('live-check').textContent()}`, { cause: error });
      });
    // "not checked" where the models in use have no scene reader: sharpness and light are still checked
    const checks = await camera.getByRole('list', { name: 'Live check' }).locator('li').allTextContents();
    expect(checks).toHaveLength(3);
    expect(checks[0]).toMatch(/^✓ Tread in view( \(not checked\))?: yes$/);
    expect(checks.slice(1)).toEqual(['✓ Sharp: yes', '✓ Lit: yes']);
    await expect(capture.getAttribute('aria-disabled')).resolves.toBeNull();
    await capture.click();
    await camera.getByRole('button', { name: 'Analyze photo' }).click();
    await expect.poll(() => corner('FL').locator('.corner-photo').count()).toBe(1);
    await expect.poll(() => page.getByRole('radio', { name: 'Front right' }).isChecked()).toBe(true);
    await expect(camera.textContent()).resolves.toContain('This photo goes to: Front right');
    await corner('FL').locator('.badge').waitFor({ timeout: 90_000 });
    await page.getByRole('button', { name: 'Hide camera' }).click();
  });

  it('lists the addresses a POS can use on the API keys page', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    const addresses = page.getByTestId('pos-addresses');
    await addresses.locator('li').first().waitFor();
    await expect(addresses.locator('li').first().textContent()).resolves.toContain(`http://127.0.0.1:${app.port}`);
    await expect(addresses.textContent()).resolves.toContain('LAN access is off');
    await expect(addresses.getByRole('button', { name: `Copy http://127.0.0.1:${app.port}` }).count()).resolves.toBe(1);
  });

  it('fits a window 320 px wide with the corners, the guide, the groups and the correction form', async () => {
    await page.setViewportSize({ width: 320, height: 700 });
    await page
      .getByRole('button', { name: 'Hide camera' })
      .click({ timeout: 1000 })
      .catch(() => undefined); // left on by a failed step
    try {
      const overflow = () => sidewaysOverflow(page);
      const found: Record<string, unknown> = {};
      await page.getByRole('link', { name: 'Scan', exact: true }).click();
      await page.getByRole('button', { name: 'Use webcam' }).click();
      await page.getByRole('region', { name: 'Camera capture' }).locator('.live-check').waitFor();
      found.scan = await overflow();
      await page.getByRole('button', { name: 'Hide camera' }).click();
      await page.getByRole('link', { name: 'History', exact: true }).click();
      await page.locator('.vehicle-group').first().waitFor();
      found.history = await overflow();
      await page.locator('a.history-item').first().click();
      await page.getByRole('button', { name: 'Correct plate or position' }).click();
      found.details = await overflow();
      await page.getByRole('link', { name: 'API keys', exact: true }).click();
      await page.getByTestId('pos-addresses').locator('li').first().waitFor();
      found.keys = await overflow();
      await page.getByRole('link', { name: 'Settings', exact: true }).click();
      await page.locator('.in-force').first().waitFor();
      found.settings = await overflow();
      const clean = { extra: 0, out: [] };
      expect(found).toEqual({ scan: clean, history: clean, details: clean, keys: clean, settings: clean });
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('names no HTTP header to staff when the window has been signed out', async () => {
    await page.context().clearCookies();
    await page.getByRole('link', { name: 'History', exact: true }).click();
    await page
      .locator('main')
      .getByRole('alert')
      .or(page.getByRole('heading', { name: 'Please sign in again' }))
      .first()
      .waitFor();
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).not.toMatch(/X-API-Key|header/i);
    expect(errors).toEqual([]);
  });
});

describe('Settings and API keys in the browser when the environment sets the port and LAN access', () => {
  let app: RunningApp | undefined;
  let browser: Browser | undefined;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-e2e-env-'));
    // saved in Settings before: 43118; the server was started with TIREWEAR_PORT (here, any free port)
    await writeFile(path.join(dataDir, 'settings.json'), JSON.stringify({ port: 43118 }));
    app = await startApp({
      dataDir,
      overrides: { analyzer: new FakeAnalyzer() },
      // LAN access as the desktop starts it: every IPv4 address; the browser still comes from loopback
      config: {
        host: '0.0.0.0',
        lanAccess: true,
        origins: {
          port: { source: 'env', setBy: 'TIREWEAR_PORT' },
          lanAccess: { source: 'env', setBy: 'TIREWEAR_LAN_ACCESS' },
          host: { source: 'env', setBy: 'TIREWEAR_HOST' },
        },
      },
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('shows the port in force and where it comes from, and says the saved one cannot apply (no "restart required")', async () => {
    const { page, errors } = await openPage(browser!, `http://127.0.0.1:${app!.port}/`);
    await page.getByLabel('Email').fill('owner@env.test');
    await page.getByLabel(/^Password/).fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
    await page.getByRole('link', { name: 'Settings' }).click();
    const port = page.getByLabel('Port', { exact: true });
    await expect.poll(() => port.inputValue()).toBe('43118');
    const inForce = page.locator('.in-force').first();
    await expect(inForce.textContent()).resolves.toContain(`In use now: ${app!.port}, from the environment variable TIREWEAR_PORT.`);
    await expect(inForce.textContent()).resolves.toContain(
      `The value saved here (43118) does not apply, even after a restart: the environment variable TIREWEAR_PORT sets ${app!.port}`,
    );
    // the field's description carries it, for a screen reader on the field
    const describedBy = (await port.getAttribute('aria-describedby')) ?? '';
    expect(describedBy.split(' ')).toContain(await inForce.getAttribute('id'));
    await expect(page.getByText('Restart required').count()).resolves.toBe(0);
    await expect(page.locator('.in-force').nth(1).textContent()).resolves.toContain('In use now: on, from the environment variable TIREWEAR_LAN_ACCESS.');
    await page.mouse.move(0, 0);
    await saveScreenshot(page, 'settings-env');

    // with LAN access in force, the API keys page lists this computer's network addresses and its name
    await page.getByRole('link', { name: 'API keys' }).click();
    const addresses = page.getByTestId('pos-addresses');
    await addresses.locator('li').first().waitFor();
    const listed = await addresses.locator('li code').allTextContents();
    const lan = Object.values(os.networkInterfaces())
      .flat()
      .filter((a) => a && !a.internal && a.family === 'IPv4')
      .map((a) => `http://${a!.address}:${app!.port}`);
    expect(listed[0]).toBe(`http://127.0.0.1:${app!.port}`);
    expect(listed).toEqual(expect.arrayContaining([...lan, `http://${os.hostname()}:${app!.port}`]));
    await expect(addresses.textContent()).resolves.not.toContain('LAN access is off');
    await expect(addresses.textContent()).resolves.toContain('for other computers of the shop network');
    await saveScreenshot(page, 'keys-lan');
    expect(errors).toEqual([]);
  });
});
