/** Which photo gives up its corner to one moved there (src/renderer/src/lib/queueItems.ts cornerHolder). */
import { expect, it } from 'vitest';
import type { WirePosition } from '../../src/shared/api';
import { ApiError } from '../../src/renderer/src/api/client';
import { cornerHolder, type QueueItem } from '../../src/renderer/src/lib/queueItems';

const photo = (id: number, position: WirePosition | '', visit = 1, error: unknown = null) =>
  ({ id, visit, position, error, status: 'done' }) as unknown as QueueItem;

it('is the newest photo of the same vehicle on that corner that a retry could still mend', () => {
  const moved = photo(1, 'FL');
  const older = photo(2, 'FR');
  const newer = photo(3, 'FR');
  const refused = photo(4, 'FR', 1, new ApiError('NO_TIRE_DETECTED', 'no tire', 422));
  const otherCar = photo(5, 'FR', 2);
  const all = [moved, older, newer, refused, otherCar];
  expect(cornerHolder(all, moved, 'FR')).toBe(newer);
  expect(cornerHolder(all, moved, 'RR')).toBeUndefined();
  expect(cornerHolder(all, moved, '')).toBeUndefined();
  // never the moved photo itself, nor an older one it stands in front of
  expect(cornerHolder(all, newer, 'FR')).toBeUndefined();
});
