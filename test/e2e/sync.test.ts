/**
 * A shop's desktop linked to its chain's hub, in a real browser: two real servers (the
 * hub with its own data dir and port), the hub's key made over HTTP as the chain's
 * office would, link from Settings, scan, sync now, the chain's scans in the history;
 * then the hub goes down (the scan waits, the status says why) and comes back, and
 * another shop's scans page in with "Load more", each scan naming its shop, and a select
 * narrows the list to one shop.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../../src/core/services/support/ids.js';
import { toSyncScan } from '../../src/core/sync/wire.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { FakeAnalyzer } from '../support/fake-analyzer.js';
import { makeScan, randomId } from '../support/store.js';
import { fakeHub, type FakeHub } from '../sync/fake-hub.js';
import { startApp, type AppOptions, type RunningApp } from './support/app.js';
import { launchChromium, openPage } from './support/browser.js';
import { createFirstAccount } from './support/first-run.js';
import { saveScreenshot, tirePhotos } from './support/files.js';
import { waitForResults } from './support/results.js';

/** The hub only stores what desks push; it never analyzes, so it need not load the models. */
const startHub = (options: AppOptions = {}) => startApp({ ...options, overrides: { analyzer: new FakeAnalyzer() } });

/** The chain's office on the hub, over its HTTP API: one account, an API key per shop. */
async function hubOffice(hubUrl: string): Promise<{ newKey(shop: string): Promise<string> }> {
  const api = new URL('api/v1/', hubUrl);
  const post = (path: string, body: object, cookie?: string) =>
    fetch(new URL(path, api), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
  const office = { email: 'ops@chain.test', password: 'chain office password' };
  expect((await post('auth/register', office)).ok).toBe(true);
  const login = await post('auth/login', office);
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('auth-token='))
    ?.split(';')[0];
  expect(cookie).toBeTruthy();
  return {
    async newKey(shop) {
      const created = await post('keys', { name: shop }, cookie);
      expect(created.ok).toBe(true);
      return ((await created.json()) as { data: { key: string } }).data.key;
    },
  };
}

/** Another shop's desktop pushing its history, over the sync protocol (docs/HUB.md §3), oldest first. */
async function pushFromAnotherShop(hubUrl: string, key: string, count: number): Promise<void> {
  const jpeg = await makeJpeg({ width: 320, height: 256 });
  for (let i = 0; i < count; i++) {
    const record = makeScan({ id: randomId(), source: 'session', vehicle: `ELM-${i}`, createdAt: new Date(Date.UTC(2026, 10, 1, 8, i)) });
    const scan = toSyncScan({ ...record, image: { ...record.image, sha256: sha256Hex(jpeg), bytes: jpeg.length } });
    const form = new FormData();
    form.append('scan', JSON.stringify(scan));
    form.append('image', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'image.jpg');
    const pushed = await fetch(new URL(`api/v1/sync/scans/${scan.scanId}`, hubUrl), { method: 'PUT', headers: { 'x-api-key': key }, body: form });
    expect(pushed.status).toBe(200);
  }
}

describe('desktop sync with the hub in the browser', () => {
  let hub: RunningApp;
  let desk: RunningApp;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let photos: string[];
  let office: Awaited<ReturnType<typeof hubOffice>>;
  let key: string;

  const pending = () => page.getByTestId('sync-pending');
  const syncNow = () => page.getByRole('button', { name: 'Sync now' }).click();

  async function scan(vehicle: string, photo: string, count: number): Promise<void> {
    await page.getByRole('link', { name: 'Scan' }).click();
    // The scan page's field (a textbox), not the history's search (a searchbox) that can still be
    // on screen for a moment after the click: by label alone both match and strict mode throws.
    await page.getByRole('textbox', { name: 'Vehicle / plate' }).fill(vehicle);
    await page.getByTestId('file-input').setInputFiles(photo);
    await waitForResults(page, count);
  }

  beforeAll(async () => {
    photos = tirePhotos();
    [hub, desk] = await Promise.all([startHub(), startApp()]);
    office = await hubOffice(hub.url);
    key = await office.newKey('Main Street');
    browser = await launchChromium();
    ({ page, errors } = await openPage(browser, desk.url));
  });

  afterAll(async () => {
    await browser?.close();
    await desk?.close();
    await hub?.close();
  });

  it('links the desktop to the hub, explaining a mistyped and a refused key', async () => {
    await createFirstAccount(page, 'owner@mainstreet-tires.test');

    await page.getByRole('link', { name: 'Settings' }).click();
    const panel = page.getByRole('region', { name: "Sync with the chain's hub" });
    await panel.getByText('Not linked to a hub.').waitFor();
    const hubUrl = hub.url.replace(/\/$/, '');
    await panel.getByLabel('Hub address').fill(hubUrl);
    await panel.getByLabel('Hub API key').fill('tw_short');
    await panel.getByRole('button', { name: 'Link', exact: true }).click();
    await panel.getByText('A hub API key starts with tw_').waitFor();

    await panel.getByLabel('Hub API key').fill(`tw_${'x'.repeat(32)}`);
    await panel.getByRole('button', { name: 'Link', exact: true }).click();
    await panel.getByTestId('sync-error').getByText('did not accept the API key').waitFor();
    await expect(panel.getByTestId('sync-hub').textContent()).resolves.toBe(hubUrl);

    await panel.getByLabel('Hub API key').fill(key);
    await panel.getByRole('button', { name: 'Link', exact: true }).click();
    await panel.getByText(`Linked to ${hubUrl}.`).waitFor();
    await expect(panel.getByTestId('sync-error').count()).resolves.toBe(0);
    await expect(panel.getByLabel('Hub API key').inputValue()).resolves.toBe('');
    await expect(panel.getByLabel('Hub API key').getAttribute('type')).resolves.toBe('password');
    expect(await page.content()).not.toContain(key);

    // linked: a new address needs the key again, and the form says so in the same words as the note above it
    await expect(panel.getByLabel('Hub API key').getAttribute('placeholder')).resolves.toBe('Enter the key again to change the link');
    await panel.getByLabel('Hub address').fill('https://other-hub.example');
    await panel.getByRole('button', { name: 'Link', exact: true }).click();
    const problem = panel.getByRole('alert').filter({ hasText: 'Enter the hub API key as well' });
    await problem.waitFor();
    await expect(problem.textContent()).resolves.not.toContain('VALIDATION_ERROR');
    // the key field says so and has the focus, the message as its description
    const keyField = panel.getByLabel('Hub API key');
    await expect.poll(() => keyField.getAttribute('aria-invalid')).toBe('true');
    await expect
      .poll(() => keyField.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement))
      .toBe(true);
    await expect(panel.locator(`[id="${await keyField.getAttribute('aria-describedby')}"]`).textContent()).resolves.toContain('Enter the hub API key as well');
    expect(await panel.getByLabel('Hub address').getAttribute('aria-invalid')).toBeNull();
    await expect(panel.getByTestId('sync-hub').textContent()).resolves.toBe(hubUrl);
    await panel.getByLabel('Hub address').fill(hubUrl);
  });

  it('uploads a scan with "Sync now"', async () => {
    await scan('HUB-1', photos[0]!, 1);
    await page.getByRole('link', { name: 'Settings' }).click();
    await pending().waitFor();
    await syncNow();
    await pending()
      .filter({ hasText: /^0 scans$/ })
      .waitFor();
    await expect(page.getByTestId('sync-last').textContent()).resolves.not.toBe('not yet');
    await expect(page.getByTestId('sync-error').count()).resolves.toBe(0);
    await page.mouse.move(0, 0);
    const box = await page.getByRole('region', { name: "Sync with the chain's hub" }).boundingBox();
    // Runs in the page; the Node typings of this file have no DOM.
    await page.evaluate((y) => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, y), (box?.y ?? 0) - 80);
    await saveScreenshot(page, 'sync');
  });

  it("lists the chain's scans from the hub in the history, read-only", async () => {
    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('button', { name: 'All shops (hub)' }).click();
    const item = page.locator('.hub-item').filter({ hasText: 'HUB-1' });
    await item.waitFor();
    const thumbnail = item.locator('img');
    await expect(thumbnail.getAttribute('src')).resolves.toMatch(/\/api\/v1\/sync\/hub-scans\/[^/]+\/image\?variant=thumbnail$/);
    // Runs in the page; the Node typings of this file have no DOM.
    await thumbnail.evaluate((img) => (img as unknown as { decode(): Promise<void> }).decode());
    await expect(thumbnail.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).resolves.toBeGreaterThan(0);
    await expect(page.locator('.hub-scans a, .hub-scans .danger').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'This shop' }).click();
    await page.locator('a.history-item').first().waitFor();
  });

  it('keeps a scan waiting while the hub is down, says why, and catches up when it is back', async () => {
    await hub.stop();
    await scan('HUB-2', photos[1]!, 2);
    await page.getByRole('link', { name: 'Settings' }).click();
    await pending()
      .filter({ hasText: /^1 scan$/ })
      .waitFor();
    await syncNow();
    await page.getByTestId('sync-error').getByText('Nothing answers at the hub address').waitFor();
    await expect(pending().textContent()).resolves.toBe('1 scan');
    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('button', { name: 'All shops (hub)' }).click();
    await page.getByText('The hub could not be read right now.').waitFor();
    await page.getByRole('link', { name: 'Settings' }).click();

    hub = await startHub({ dataDir: hub.dataDir, port: hub.port });
    await syncNow();
    await pending()
      .filter({ hasText: /^0 scans$/ })
      .waitFor();
    await page.getByTestId('sync-error').waitFor({ state: 'detached' });

    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('button', { name: 'All shops (hub)' }).click();
    await page.locator('.hub-item').filter({ hasText: 'HUB-2' }).waitFor();
    await expect(page.locator('.hub-item').count()).resolves.toBe(2);
  });

  it("pages through the chain's scans with Load more", async () => {
    await pushFromAnotherShop(hub.url, await office.newKey('Elm Road'), 20);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('.hub-item').nth(19).waitFor();
    await expect(page.locator('.hub-item').count()).resolves.toBe(20);
    // the counter puts each new vehicle's first photo on the front left (issue 42), so the desk's scans name that corner
    await expect(page.locator('.hub-item .history-title').first().textContent()).resolves.toBe('HUB-2 · Front left');
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.locator('.hub-item').nth(21).waitFor();
    await expect(page.locator('.hub-item .history-title').last().textContent()).resolves.toBe('ELM-0');
    await page.getByRole('button', { name: 'Load more' }).waitFor({ state: 'detached' });
  });

  it('names the shop of each scan and lists one shop at a time', async () => {
    const shopOf = (vehicle: string) => page.locator('.hub-item').filter({ hasText: vehicle }).getByTestId('hub-shop').textContent();
    await expect(shopOf('HUB-1')).resolves.toBe('Main Street');
    await expect(shopOf('ELM-0')).resolves.toBe('Elm Road');
    // the shop is in the row's own text (no aria-label replacing it), so a screen reader reads it with the scan
    await expect(page.locator('.hub-item').first().textContent()).resolves.toMatch(/Main Street/);
    await expect(page.locator('.hub-item').first().getAttribute('aria-label')).resolves.toBeNull();

    const shop = page.getByLabel('Shop', { exact: true });
    await expect(shop.locator('option').allTextContents()).resolves.toEqual(['All shops', 'Elm Road', 'Main Street']);
    await shop.selectOption({ label: 'Main Street' });
    await page.locator('.hub-item').filter({ hasText: 'ELM-' }).first().waitFor({ state: 'detached' });
    await expect(page.locator('.hub-item .history-title').allTextContents()).resolves.toEqual(['HUB-2 · Front left', 'HUB-1 · Front left']);
    await expect(page.getByRole('button', { name: 'Load more' }).count()).resolves.toBe(0);
    await page.mouse.move(0, 0);
    await saveScreenshot(page, 'sync-shops');

    await shop.selectOption({ label: 'All shops' });
    await page.locator('.hub-item').nth(19).waitFor();
    await expect(page.locator('.hub-item').filter({ hasText: 'ELM-' }).count()).resolves.toBeGreaterThan(0);
  });

  it('unlinks, keeping the scans on this computer', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Unlink' }).click();
    await page.getByText('Unlinked. The scans stay on this computer.').waitFor();
    await page.getByText('Not linked to a hub.').waitFor();
    await page.getByRole('link', { name: 'History' }).click();
    await page.locator('a.history-item').nth(1).waitFor();
    await expect(page.getByRole('button', { name: 'All shops (hub)' }).count()).resolves.toBe(0);
  });

  it('reads the status every few seconds while Settings shows, and not while the window is hidden', async () => {
    const POLL_MS = 3000; // SYNC_POLL_MS of the renderer
    const statusRead = () => page.waitForResponse((r) => r.url().endsWith('/api/v1/sync/status'));
    // Runs in the page; the Node typings of this file have no DOM.
    const setHidden = (hidden: boolean) =>
      page.evaluate((value) => {
        const g = globalThis as unknown as { document: EventTarget; Event: new (type: string) => Event };
        Object.defineProperty(g.document, 'hidden', { configurable: true, get: () => value });
        g.document.dispatchEvent(new g.Event('visibilitychange'));
      }, hidden);

    await page.clock.install();
    await page.reload();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByText('Not linked to a hub.').waitFor();
    await page.clock.pauseAt(Date.now() + 1000);
    // The hook sets its next timer only once the last read's answer is handled, which a loaded
    // machine may do after the test has already moved the clock on (waitForResponse resolves when
    // the answer arrives, before the page's code runs): move it a poll at a time until a read comes.
    const nextRead = async () => {
      const read = statusRead();
      let answered = false;
      void read.then(
        () => (answered = true),
        () => undefined,
      );
      for (let step = 0; step < 5 && !answered; step++) {
        await page.clock.runFor(POLL_MS);
        await Promise.race([read.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000))]);
      }
      await read;
    };
    await nextRead();
    await nextRead();

    let reads = 0;
    page.on('request', (r) => {
      if (r.url().endsWith('/api/v1/sync/status')) reads++;
    });
    await setHidden(true);
    await page.clock.runFor(10 * POLL_MS);
    await Promise.all([statusRead(), setHidden(false)]);
    expect(reads).toBe(1);
    expect(errors).toEqual([]);
  });
});

describe('what the window says when something else answers for the hub, or the hub refuses a scan', () => {
  let hub: RunningApp;
  let desk: RunningApp;
  let middle: FakeHub;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    [hub, desk] = await Promise.all([startHub(), startApp()]);
    middle = await fakeHub(hub.url.replace(/\/$/, ''));
    browser = await launchChromium();
    ({ page, errors } = await openPage(browser, desk.url));
  });

  afterAll(async () => {
    await browser?.close();
    await middle?.close();
    await desk?.close();
    await hub?.close();
  });

  it('explains a firewall page, keeps the scan waiting, counts a scan the hub refused for good, and sends it again on request', async () => {
    const key = await (await hubOffice(hub.url)).newKey('Main Street');
    await createFirstAccount(page, 'owner@elm-road-tires.test');
    await page.getByTestId('file-input').setInputFiles(tirePhotos()[0]!);
    await waitForResults(page, 1);

    middle.mode = 'waf'; // link probes pass, uploads get a firewall's 403 page
    await page.getByRole('link', { name: 'Settings' }).click();
    const panel = page.getByRole('region', { name: "Sync with the chain's hub" });
    await panel.getByLabel('Hub address').fill(middle.url);
    await panel.getByLabel('Hub API key').fill(key);
    await panel.getByRole('button', { name: 'Link', exact: true }).click();
    await panel.getByTestId('sync-error').getByText('Something other than the hub answered').waitFor();
    await expect(panel.getByTestId('sync-pending').textContent()).resolves.toBe('1 scan');
    await expect(panel.getByTestId('sync-skipped').count()).resolves.toBe(0);

    middle.mode = 'refuseScan';
    await page.getByRole('button', { name: 'Sync now' }).click();
    await panel
      .getByTestId('sync-skipped')
      .filter({ hasText: /^1 change\. Once the cause is fixed/ })
      .waitFor();
    await panel.getByTestId('sync-error').getByText('The hub refused one scan for good').waitFor();
    await expect(panel.getByTestId('sync-pending').textContent()).resolves.toBe('0 scans');

    // the cause fixed on the hub: sent again without typing the key
    middle.mode = 'forward';
    await panel.getByRole('button', { name: 'send them again' }).click();
    await panel.getByText('The refused changes are being sent again.').waitFor();
    await expect(panel.getByTestId('sync-skipped').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Sync now' }).click();
    const onHub = async () => {
      const res = await fetch(new URL('api/v1/sync/scans', hub.url), { headers: { 'x-api-key': key } });
      return ((await res.json()) as { data: { items: unknown[] } }).data.items.length;
    };
    await vi.waitFor(async () => expect(await onHub()).toBe(1), { timeout: 15_000 });
    expect(errors).toEqual([]);
  });
});
