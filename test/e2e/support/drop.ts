/** Files dropped on the Scan page's drop zone, as Explorer or Finder would deliver them. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';

export interface DroppedFile {
  name: string;
  mimeType: string;
  buffer: Buffer;
}

export async function photoFile(file: string, name = path.basename(file)): Promise<DroppedFile> {
  return { name, mimeType: 'image/jpeg', buffer: await readFile(file) };
}

export async function dropFiles(page: Page, files: DroppedFile[]): Promise<void> {
  const payload = files.map((f) => ({ name: f.name, type: f.mimeType, b64: f.buffer.toString('base64') }));
  const dataTransfer = await page.evaluateHandle((list) => {
    // Runs in the page; the Node typings of this file have no DOM.
    const { DataTransfer } = globalThis as unknown as { DataTransfer: new () => { items: { add(file: File): void } } };
    const transfer = new DataTransfer();
    for (const f of list) transfer.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name, { type: f.type }));
    return transfer;
  }, payload);
  await page.getByTestId('drop-zone').dispatchEvent('drop', { dataTransfer });
}

/** localStorage of the page. */
export function storageItem(page: Page, key: string): Promise<string | null> {
  // Runs in the page; the Node typings of this file have no DOM.
  return page.evaluate((k) => (globalThis as unknown as { localStorage: { getItem(k: string): string | null } }).localStorage.getItem(k), key);
}

/** What has the keyboard focus: its tag, text and accessible label, for focus assertions. */
export function focused(page: Page): Promise<{ tag: string; text: string; label: string | null; testId: string | null }> {
  return page.evaluate(() => {
    // Runs in the page; the Node typings of this file have no DOM.
    interface El {
      tagName: string;
      textContent: string | null;
      getAttribute(name: string): string | null;
    }
    const el = (globalThis as unknown as { document: { activeElement: El | null } }).document.activeElement;
    return {
      tag: el?.tagName ?? '',
      text: (el?.textContent ?? '').trim(),
      label: el?.getAttribute('aria-label') ?? null,
      testId: el?.getAttribute('data-testid') ?? null,
    };
  });
}
