import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { startApp, type RunningApp } from './app.js';
import { launchChromium, openPage } from './browser.js';
import { tirePhotos } from './files.js';
import { writeY4mFromImage } from './y4m.js';

export interface WebcamSession {
  photos: string[];
  app: RunningApp;
  browser: Browser;
  page: Page;
  /** Errors the page logged (console and uncaught). */
  errors: string[];
  close(): Promise<void>;
}

/**
 * The app, and Chromium whose fake camera plays the first tire photo, with one page open on the
 * app: the set-up of the demo and counter tests. Whatever started is stopped if a later step fails.
 */
export async function startWebcamSession(): Promise<WebcamSession> {
  const photos = tirePhotos();
  const videoDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-webcam-'));
  let app: RunningApp | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await app?.close();
    await rm(videoDir, { recursive: true, force: true });
  };
  try {
    const video = path.join(videoDir, 'tire.y4m');
    await writeY4mFromImage(photos[0]!, video);
    app = await startApp();
    browser = await launchChromium(video);
    const { page, errors } = await openPage(browser, app.url);
    return { photos, app, browser, page, errors, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Call inside a describe: one webcam session for its tests, started before them (dialogs accepted,
 * as a person at the counter confirms them), handed to `onStart`, and closed after them.
 */
export function webcamSessionForSuite(onStart: (session: WebcamSession) => void): void {
  let session: WebcamSession | undefined;
  beforeAll(async () => {
    session = await startWebcamSession();
    session.page.on('dialog', (dialog) => void dialog.accept());
    onStart(session);
  });
  afterAll(() => session?.close());
}
