import { expect, test } from 'vitest';
import { STORAGE_TROUBLE_SHOWN_MS, StorageTrouble } from '../../src/core/http/storage-trouble.js';

test('a storage failure is shown for a minute, then forgotten; a busy database is never trouble', () => {
  let now = 1_000_000;
  const trouble = new StorageTrouble(() => now);
  expect(trouble.recent()).toBeNull();
  trouble.record('The database is busy; try again shortly');
  expect(trouble.recent()).toBeNull();
  trouble.record('The disk holding the database is full; free space on it, then try again (nothing was saved)');
  now += STORAGE_TROUBLE_SHOWN_MS;
  expect(trouble.recent()).toMatch(/disk holding the database is full/);
  now += 1;
  expect(trouble.recent()).toBeNull();
});
