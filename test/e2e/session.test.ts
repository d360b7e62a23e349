/**
 * Sessions at the counter in a real browser: a demo user who registers keeps the photos and
 * the plate on screen and is never put back into the demo; a session that ends (cookie gone
 * while the window is open, or after a restart) asks to sign in again instead of making
 * anonymous scans outside the history, holding the queue meanwhile; the allowance line
 * follows the account (a redeemed pack shows at once); the Account page says what a scan
 * pack and Pro are and where their codes come from.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from './support/app.js';
import { launchChromium, openPage } from './support/browser.js';
import { dropFiles, photoFile, storageItem } from './support/drop.js';
import { tirePhotos } from './support/files.js';

const EMAIL = 'owner@lost-and-found.test';
const PASSWORD = 'correct horse battery';

describe('sessions at the counter in the browser', () => {
  let app: RunningApp;
  let browser: Browser;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let photos: string[];

  const results = () => page.locator('article.result-card');
  const historyCount = async () => {
    const res = await page.request.get(new URL('api/v1/scans', app.url).toString());
    expect(res.status()).toBe(200);
    return ((await res.json()) as { data: { items: unknown[] } }).data.items.length;
  };
  const signIn = async () => {
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };

  beforeAll(async () => {
    photos = tirePhotos();
    app = await startApp();
    browser = await launchChromium();
    ({ page, errors } = await openPage(browser, app.url));
    context = page.context();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('shows the demo allowance after a reload, before any scan', async () => {
    await page.getByRole('button', { name: 'Continue without an account' }).click();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
    await expect.soft(page.locator('.allowance').textContent({ timeout: 5000 })).resolves.toBe('Demo without an account: 3 scans a day.');
  });

  it('asks a demo user to sign in for the history, in plain words', async () => {
    await page.getByRole('link', { name: 'History' }).click();
    // waits for the history page itself: the scan page's heading is the first one visible until it opens
    await page.getByRole('heading', { name: 'Sign in to see the history' }).waitFor();
    await expect.soft(page.locator('main h2').filter({ visible: true }).first().textContent()).resolves.toBe('Sign in to see the history');
    await expect.soft(page.locator('main').textContent()).resolves.toContain('The scan history is kept for a shop account.');
    await page.getByRole('link', { name: 'Scan' }).click();
  });

  it('keeps the photos, the results and the plate when a demo user at the limit registers', async () => {
    await page.getByRole('textbox', { name: 'Vehicle / plate' }).fill('LOST-1');
    await dropFiles(page, await Promise.all([0, 1, 2, 3].map((i) => photoFile(photos[i]!, `tire-${i}.jpg`))));
    await page.locator('.message-limit').waitFor({ timeout: 90_000 });
    await expect(results().count()).resolves.toBe(3);
    await expect(page.locator('.allowance').textContent()).resolves.toMatch(/^0 of 3 scans left today \(demo\)/);

    await page.locator('.message-limit').getByRole('link', { name: 'Create a free shop account' }).click();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();

    // straight back to the counter, with everything still there
    await page.locator('.who').filter({ hasText: EMAIL }).waitFor();
    // the signed-in name can show a moment before the counter's route is back (seen once under load)
    await page.waitForURL((url) => url.hash === '#/scan', { timeout: 10_000, waitUntil: 'commit' }).catch(() => undefined);
    expect.soft(new URL(page.url()).hash).toBe('#/scan');
    await expect.soft(storageItem(page, 'tirewear.demo')).resolves.toBeNull();
    await page.getByRole('link', { name: 'Scan' }).click();
    await expect(page.getByRole('textbox', { name: 'Vehicle / plate' }).inputValue()).resolves.toBe('LOST-1');
    await expect(results().count()).resolves.toBe(3);
    const waiting = page.locator('article.queue-failed');
    await expect(waiting.count()).resolves.toBe(1);
    await expect(waiting.textContent()).resolves.toContain('You are signed in now: press Try again');

    // "Try again" on the photo that waited: now a scan of the shop
    await waiting.getByRole('button', { name: 'Try again' }).click();
    await results().nth(3).waitFor({ timeout: 90_000 });
    // the fourth photo of the batch, on the fourth corner
    await expect(results().first().locator('h3').textContent()).resolves.toBe('LOST-1 · Rear right');
    await expect(historyCount()).resolves.toBe(1);
  });

  it('shows the same allowance as the Account page, and a redeemed pack at once', async () => {
    const allowance = page.locator('.allowance');
    await allowance.filter({ hasText: /^9 of 10 free scans left this month \(renews / }).waitFor();

    await page.getByRole('link', { name: 'Account' }).click();
    const help = page.getByRole('region', { name: 'Scan packs and Pro' });
    await expect(help.textContent()).resolves.toContain('A scan pack adds 100 scans that never expire');
    await expect(help.textContent()).resolves.toContain('Pro gives unlimited scans until its end date');
    await expect(help.textContent()).resolves.toContain('Ask your TireWear supplier (whoever supplied TireWear to your shop)');

    await page.getByLabel(/License code/).fill(app.issueCode({ kind: 'pro', expiresAt: '2020-01-01T00:00:00.000Z' }));
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByText('This pro license expired on 2020-01-01.', { exact: true }).waitFor();

    await page.getByLabel(/License code/).fill(app.issueCode({ kind: 'pack', scans: 100 }));
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByText('Scan pack added: 100 scans.').waitFor();
    await page.getByRole('link', { name: 'Scan' }).click();
    // the pack scans are not said to renew: only the month's free scans do
    await expect(allowance.textContent()).resolves.toMatch(/^9 of 10 free scans left this month \(renews [^)]+\) · 100 pack scans left \(they never expire\)$/);
  });

  it('holds a photo and asks to sign in again when the session is gone while the window is open', async () => {
    await context.clearCookies();
    await page.getByRole('textbox', { name: 'Vehicle / plate' }).fill('KEPT-2');
    await dropFiles(page, [await photoFile(photos[1]!, 'kept.jpg')]);
    await page.getByRole('heading', { name: 'Please sign in again' }).waitFor();
    await expect(page.locator('.who').textContent()).resolves.toBe('');
    // the held photo is in this page only: leaving it asks first ("Leave site?"), and staying keeps it
    const asked = new Promise<string>((resolve) => {
      page.once('dialog', (dialog) => {
        resolve(dialog.type());
        void dialog.dismiss();
      });
    });
    await page.close({ runBeforeUnload: true });
    await expect(asked).resolves.toBe('beforeunload');
    expect(page.isClosed()).toBe(false);

    await signIn();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
    await results().nth(4).waitFor({ timeout: 90_000 });
    await expect(results().first().locator('h3').textContent()).resolves.toBe('KEPT-2 · Front left');
    // into the shop's history, not an anonymous scan
    await expect(historyCount()).resolves.toBe(2);
    expect(errors).toEqual([]);
  });

  it('holds the queue when the server no longer knows the session (INVALID_SESSION), then carries on after sign-in', async () => {
    await context.addCookies([{ name: 'auth-token', value: 'not-a-session-any-more', url: app.url }]);
    await dropFiles(page, [await photoFile(photos[2]!, 'held.jpg')]);
    await page.getByRole('heading', { name: 'Please sign in again' }).waitFor();
    await signIn();
    await results().nth(5).waitFor({ timeout: 90_000 });
    await expect(results().count()).resolves.toBe(6);
    await expect(historyCount()).resolves.toBe(3);
  });

  it('opens on "Sign in" after the session ended, never the demo, even if the demo was once chosen', async () => {
    await context.clearCookies();
    await page.reload();
    await page.getByRole('heading', { name: 'Please sign in again' }).waitFor();
    await expect(page.locator('.who').textContent()).resolves.not.toContain('Demo');
    await expect(page.getByRole('button', { name: 'Continue without an account' }).count()).resolves.toBe(0);

    // an older install that still carries the demo flag: signing in clears it
    await page.evaluate(() => (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem('tirewear.demo', '1'));
    await signIn();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
    await expect(storageItem(page, 'tirewear.demo')).resolves.toBeNull();
    await expect(page.locator('.who').textContent()).resolves.toBe(EMAIL);
    expect(errors).toEqual([]);
  });
});
