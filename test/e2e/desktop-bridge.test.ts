/**
 * The counter UI inside the desktop window, in Chromium: `window.tirewear` is what the preload
 * gives the page (src/preload/index.ts), answers and all ({ ok, value } / { ok: false, code,
 * message }: Electron's IPC and context bridge keep no error code). A stand-in installed before
 * the page's scripts plays the preload; the server is the real one. Checks that the renderer reads
 * those answers: the version, a saved PDF's path, a data folder that did not open, and the count of
 * photos still to send that main asks about before closing.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from './support/app.js';
import { launchChromium, openPage } from './support/browser.js';
import { tirePhotos } from './support/files.js';
import { waitForResults } from './support/results.js';

const DATA_FOLDER = 'C:\\Users\\shop\\AppData\\Roaming\\TireWear\\data';

/** The preload's bridge as the page sees it, recording each call in window.bridgeCalls. */
const FAKE_PRELOAD = `
  window.bridgeCalls = [];
  window.tirewear = Object.freeze({
    appVersion: '9.9.9-desktop',
    openDataFolder: async () => {
      window.bridgeCalls.push(['openDataFolder']);
      return { ok: false, code: 'NOT_FOUND', message: ${JSON.stringify(`Could not open the data folder ${DATA_FOLDER}: no application is associated with it`)} };
    },
    printToPDF: async (request) => {
      window.bridgeCalls.push(['printToPDF', request]);
      return { ok: true, value: { saved: true, path: 'C:\\\\Users\\\\shop\\\\Documents\\\\' + request.fileName } };
    },
    openExternal: async (url) => {
      window.bridgeCalls.push(['openExternal', url]);
      return { ok: true, value: undefined };
    },
    setPendingWork: async (count) => {
      window.bridgeCalls.push(['setPendingWork', count]);
      return { ok: true, value: undefined };
    },
  });
`;

describe('the counter UI in the desktop window (preload stand-in)', () => {
  let app: RunningApp;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  const calls = () => page.evaluate(() => (globalThis as unknown as { bridgeCalls: unknown[] }).bridgeCalls);

  beforeAll(async () => {
    app = await startApp();
    browser = await launchChromium();
    ({ page, errors } = await openPage(browser, app.url, FAKE_PRELOAD));
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('says when the data folder did not open, naming it, and shows the desktop version', async () => {
    await page.getByLabel('Email').fill('owner@desk.test');
    await page.getByLabel(/^Password/).fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Open data folder' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'The data folder did not open.' });
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toContain(DATA_FOLDER);
    const opened = (await calls()).filter((call) => (call as unknown[])[0] === 'openDataFolder');
    expect(opened).toEqual([['openDataFolder']]);
    await expect(page.getByText('9.9.9-desktop').count()).resolves.toBeGreaterThan(0);
  });

  it('saves the customer report as a PDF and says where', async () => {
    await page.getByRole('link', { name: 'Scan' }).click();
    await page.getByRole('textbox', { name: 'Vehicle / plate' }).fill('DESK-1');
    await page.getByTestId('file-input').setInputFiles(tirePhotos()[0]!);
    await waitForResults(page, 1);
    await page.getByRole('button', { name: 'Customer report' }).click();
    await page.getByTestId('report').waitFor();
    await page.getByRole('button', { name: 'Save as PDF' }).click();
    const status = page.getByRole('status').filter({ hasText: 'PDF saved to' });
    await status.waitFor();
    await expect(status.textContent()).resolves.toMatch(/PDF saved to C:\\Users\\shop\\Documents\\tire-report-DESK-1-\d{4}-\d{2}-\d{2}\.pdf$/);
    const printed = (await calls()).filter((call) => (call as unknown[])[0] === 'printToPDF');
    expect(printed).toHaveLength(1);
    // the photo was reported waiting while it was sent, and done once analysed: main asks before
    // closing only in between
    const pending = (await calls()).filter((call) => (call as unknown[])[0] === 'setPendingWork');
    // (the page's first count, 0, went when the scan page first showed: main may hold a crashed page's)
    expect(pending).toEqual([
      ['setPendingWork', 0],
      ['setPendingWork', 1],
      ['setPendingWork', 0],
    ]);
    expect(errors).toEqual([]);
  });
});
