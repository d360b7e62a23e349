/**
 * Writes of <dataDir>/settings.json. Several routes change parts of it (desk settings,
 * the hub link), so every change is a read-modify-write queued per data dir: two saves
 * at the same instant cannot drop each other's keys.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { readSettingsFile, type FileSettings } from './config.js';

const queues = new Map<string, Promise<unknown>>();

/** Names of the temporary files below: what a save cut short by a crash leaves in the data dir. */
export const SETTINGS_TEMP_PATTERN = /^settings\.json\.[0-9a-f]{12}\.tmp$/;

/** Write-to-temp, flush, rename: a crash leaves the old file or the new one, never half of either. */
async function writeSettingsFile(dataDir: string, settings: FileSettings): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const target = path.join(dataDir, 'settings.json');
  const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(settings, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, target).catch(async (error: unknown) => {
    await rm(temp, { force: true });
    throw error;
  });
}

/** Apply `change` to the current file and save the result; resolves to what was saved. */
export function updateSettingsFile(
  dataDir: string,
  change: (current: FileSettings) => FileSettings,
): Promise<FileSettings> {
  const previous = queues.get(dataDir) ?? Promise.resolve();
  const update = previous.then(async () => {
    const next = change(readSettingsFile(dataDir));
    await writeSettingsFile(dataDir, next);
    return next;
  });
  const settled = update.catch(() => undefined);
  queues.set(dataDir, settled);
  void settled.then(() => {
    if (queues.get(dataDir) === settled) queues.delete(dataDir);
  });
  return update;
}
