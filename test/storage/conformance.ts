/**
 * The storage conformance suite: every Store implementation runs it (sqlite.test.ts here,
 * the PostgreSQL store in hub mode). Each test gets a fresh, empty store from `open`.
 */
import { afterEach, beforeEach, describe } from 'vitest';
import type { Store } from '../../src/core/storage/store.js';
import { accountConformance } from './conformance/accounts.js';
import { licenseConformance } from './conformance/licenses.js';
import { scanConformance } from './conformance/scans.js';
import { syncConformance } from './conformance/sync.js';
import { usageConformance } from './conformance/usage.js';

export type OpenStore = () => Promise<{ store: Store; cleanup(): Promise<void> }>;

export function runStoreConformance(name: string, open: OpenStore): void {
  describe(`Store conformance: ${name}`, () => {
    let current: { store: Store; cleanup(): Promise<void> } | null = null;
    beforeEach(async () => {
      current = await open();
    });
    afterEach(async () => {
      await current?.cleanup();
      current = null;
    });
    const store = (): Store => {
      if (!current) throw new Error('store used outside a test');
      return current.store;
    };
    accountConformance(store);
    usageConformance(store);
    scanConformance(store);
    syncConformance(store);
    licenseConformance(store);
  });
}
