/** The first-run screen of a fresh data dir: the shop account made, the counter's Scan page open. */
import type { Page } from 'playwright-core';

export async function createFirstAccount(page: Page, email: string, password = 'correct horse battery'): Promise<void> {
  await page.getByRole('heading', { name: 'Welcome to TireWear' }).waitFor();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Scan tires' }).waitFor();
}
