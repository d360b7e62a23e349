/**
 * Writes of <dataDir>/settings.json. Several routes change parts of it (desk settings,
 * the hub link), so every change is a read-modify-write queued per data dir: two saves
 * at the same instant cannot drop each other's keys.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, readSettingsFile, type FileSettings } from './config.js';
import { AppError } from './errors.js';
import { diskRefusal, writeAtomically } from './storage/files.js';

const queues = new Map<string, Promise<unknown>>();

/** Names of the temporary files below: what a save cut short by a crash leaves in the data dir. */
export const SETTINGS_TEMP_PATTERN = /^settings\.json\.[0-9a-f]{12}\.tmp$/;

/**
 * A request's view of a settings.json the server cannot read or write: 503 saying what to do
 * (the path and the parser's words stay in the log, through `cause`), never a bare 500.
 */
function settingsError(error: unknown): unknown {
  if (error instanceof ConfigError) {
    return new AppError(
      'STORAGE_UNAVAILABLE',
      'settings.json in the data folder is damaged or not valid; correct it, or delete it to go back to the defaults, then restart TireWear',
      { cause: error },
    );
  }
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const refusal = diskRefusal(code);
  if (refusal === 'full')
    return new AppError('STORAGE_UNAVAILABLE', 'The settings could not be saved: the disk is full; free space on it and save again', { cause: error });
  if (code === 'EBUSY') {
    return new AppError(
      'STORAGE_UNAVAILABLE',
      'The settings could not be saved: another program (an antivirus scan, a backup) holds settings.json; save again in a moment',
      { cause: error },
    );
  }
  if (refusal === 'not-writable' || code === 'EIO') {
    return new AppError('STORAGE_UNAVAILABLE', 'The settings could not be saved: the data folder cannot be written; save again once it can', { cause: error });
  }
  return error;
}

/** settings.json for a request: its ConfigError (damaged since the start) is a 503 saying what to do. */
export function readSettingsForRequest(dataDir: string): FileSettings {
  try {
    return readSettingsFile(dataDir);
  } catch (error) {
    throw settingsError(error);
  }
}

/** Atomically (writeAtomically): a crash leaves the old file or the new one, never half of either. */
async function writeSettingsFile(dataDir: string, settings: FileSettings): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const target = path.join(dataDir, 'settings.json');
  await writeAtomically(target, `${target}.${randomBytes(6).toString('hex')}.tmp`, `${JSON.stringify(settings, null, 2)}\n`, 0o600);
}

/** Apply `change` to the current file and save the result; resolves to what was saved. */
export function updateSettingsFile(dataDir: string, change: (current: FileSettings) => FileSettings): Promise<FileSettings> {
  const previous = queues.get(dataDir) ?? Promise.resolve();
  const update = previous.then(async () => {
    const next = change(readSettingsForRequest(dataDir));
    await writeSettingsFile(dataDir, next).catch((error: unknown) => {
      throw settingsError(error);
    });
    return next;
  });
  const settled = update.catch(() => undefined);
  queues.set(dataDir, settled);
  void settled.then(() => {
    if (queues.get(dataDir) === settled) queues.delete(dataDir);
  });
  return update;
}
