/** The id this computer names itself by to every hub (desk-marks.ts). */
import { randomId } from '../../services/support/ids.js';
import type { Store } from '../../storage/store.js';

/** Meta key of this computer's desk id. */
export const META_DESK_ID = 'sync.deskId';

/** This computer's desk id, made the first time it is needed. A copied data folder takes it along. */
export async function deskIdOf(meta: Pick<Store, 'meta'>['meta']): Promise<string> {
  const existing = await meta.get(META_DESK_ID);
  if (existing) return existing;
  const id = randomId();
  await meta.set(META_DESK_ID, id);
  return id;
}
