/**
 * The anonymous demo in a real browser: a webcam capture (Chromium's fake camera playing
 * a tire video), a picked and a pasted photo, an unreadable file explained in plain words, and the
 * 3-a-day limit met with what to do about it.
 */
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveScreenshot } from './support/files.js';
import { waitForResults } from './support/results.js';
import { startWebcamSession, type WebcamSession } from './support/webcam.js';

/** Ctrl+V of a copied image: a paste event carrying the file, as the clipboard delivers it. */
async function pastePhoto(page: Page, photo: string): Promise<void> {
  const b64 = (await readFile(photo)).toString('base64');
  await page.evaluate((data) => {
    // Runs in the page; the Node typings of this file have no DOM.
    const g = globalThis as unknown as {
      DataTransfer: new () => { items: { add(file: File): void } };
      ClipboardEvent: new (type: string, init: { clipboardData: unknown; bubbles: boolean }) => Event;
      document: { body: { dispatchEvent(event: Event): boolean } };
    };
    const transfer = new g.DataTransfer();
    transfer.items.add(new File([Uint8Array.from(atob(data), (c) => c.charCodeAt(0))], 'image.png', { type: 'image/jpeg' }));
    g.document.body.dispatchEvent(new g.ClipboardEvent('paste', { clipboardData: transfer, bubbles: true }));
  }, b64);
}

describe('anonymous demo in the browser', () => {
  let page: Page;
  let errors: string[];
  let session: WebcamSession | undefined;
  let photos: string[];

  beforeAll(async () => {
    session = await startWebcamSession();
    ({ page, errors, photos } = session);
  });

  afterAll(() => session?.close());

  it('continues without an account', async () => {
    await page.getByRole('button', { name: 'Continue without an account' }).click();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
    await expect(page.locator('.who').textContent()).resolves.toBe('Demo (no account)');
  });

  it('captures a photo from the webcam, retakes it and analyzes it', async () => {
    await page.getByRole('button', { name: 'Use webcam' }).click();
    const camera = page.getByRole('region', { name: 'Camera capture' });
    await camera.getByLabel('Camera').locator('option').first().waitFor({ state: 'attached' });
    await page.waitForFunction(() => {
      // Runs in the page; the Node typings of this file have no DOM.
      const { document } = globalThis as unknown as { document: { querySelector(s: string): { videoWidth: number } | null } };
      return document.querySelector('.camera video')?.videoWidth === 640;
    });
    // Capture is offered once the live check has seen the tread sharp and lit
    const capture = camera.getByRole('button', { name: 'Capture' });
    await expect.poll(() => capture.getAttribute('aria-disabled')).toBeNull();
    await capture.click();
    await camera.getByRole('img', { name: 'Captured photo' }).waitFor();
    await camera.getByRole('button', { name: 'Retake' }).click();
    await expect.poll(() => capture.getAttribute('aria-disabled')).toBeNull();
    // the live view: the frame to fill and the check's answer
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await saveScreenshot(page, 'webcam');
    await capture.click();
    await camera.getByRole('button', { name: 'Analyze photo' }).click();
    await waitForResults(page, 1);
    const card = page.locator('article.result-card').first();
    await expect(card.locator('.badge').getAttribute('data-wear')).resolves.toMatch(/^(new|good|medium|worn|critical)$/);
    await expect(card.getByRole('img', { name: /^Photo of/ }).getAttribute('src')).resolves.toMatch(/^blob:/);
    await page.getByRole('button', { name: 'Hide camera' }).click();
  });

  it('explains a file that is not a photo, or too big, and charges nothing', async () => {
    await page.getByTestId('file-input').setInputFiles({ name: 'notes.jpg', mimeType: 'image/jpeg', buffer: Buffer.from('not a photo at all') });
    const failed = page.locator('article.queue-failed');
    await failed.waitFor();
    await expect(failed.textContent()).resolves.toContain('That file is not a photo we can read');
    await expect(failed.textContent()).resolves.toContain('UNSUPPORTED_MEDIA_TYPE');
    await failed.getByRole('button', { name: 'Remove' }).click();

    await page.getByTestId('file-input').setInputFiles({ name: 'huge.jpg', mimeType: 'image/jpeg', buffer: Buffer.alloc(11 * 1024 * 1024) });
    await failed.waitFor();
    await expect(failed.textContent()).resolves.toContain('huge.jpg is 11.0 MB; photos can be at most 10 MB.');
    await failed.getByRole('button', { name: 'Remove' }).click();
    await failed.waitFor({ state: 'detached' });
  });

  it('meets the daily limit after three scans and says what to do', async () => {
    // Keyboard only: focus the drop zone, Enter opens the file picker.
    const chooser = page.waitForEvent('filechooser');
    await page.getByTestId('drop-zone').focus();
    await page.keyboard.press('Enter');
    await (await chooser).setFiles(photos[1 % photos.length]!);
    await pastePhoto(page, photos[2 % photos.length]!);
    await waitForResults(page, 3);
    await expect(page.locator('.allowance').textContent()).resolves.toMatch(/^0 of 3 scans left today/);

    await page.getByTestId('file-input').setInputFiles(photos[0]!);
    const limit = page.locator('.message-limit');
    await limit.waitFor();
    await expect(limit.textContent()).resolves.toContain('Scan limit reached.');
    await expect(limit.textContent()).resolves.toContain('RATE_LIMIT_EXCEEDED');
    await expect(limit.getByRole('link', { name: 'Create a free shop account' }).isVisible()).resolves.toBe(true);
    await expect(limit.textContent()).resolves.toMatch(/renews on/);
    await expect(page.locator('article.result-card').count()).resolves.toBe(3);
    expect(errors).toEqual([]);
  });
});
