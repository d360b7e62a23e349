/** Waits for the scan queue to settle, failing with the card's own words when a photo failed. */
import type { Page } from 'playwright-core';

export async function waitForResults(page: Page, count: number): Promise<void> {
  const settled = page.locator('article.result-card, article.queue-failed');
  await settled.nth(count - 1).waitFor({ timeout: 90_000 });
  const failed = page.locator('article.queue-failed');
  if ((await failed.count()) > 0) {
    throw new Error(`analysis failed in the browser: ${(await failed.first().textContent()) ?? ''}`);
  }
}
