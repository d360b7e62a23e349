/** Debian's Chromium driven by playwright-core (no downloaded browsers), with a fake webcam. */
import { chromium, type Browser, type Page } from 'playwright-core';

export async function launchChromium(fakeVideoPath?: string): Promise<Browser> {
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
  ];
  if (fakeVideoPath) args.push(`--use-file-for-fake-video-capture=${fakeVideoPath}`);
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args });
}

/**
 * A page at the README's screenshot size that fails the test on any uncaught page error.
 * `initScript` runs in the page before its own scripts (a stand-in for the desktop's preload).
 */
export async function openPage(browser: Browser, url: string, initScript?: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US', timezoneId: 'UTC' });
  if (initScript) await context.addInitScript(initScript);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(url);
  return { page, errors };
}
