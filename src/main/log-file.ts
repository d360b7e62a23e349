/**
 * A packaged app has no console, so the core logs to <dataDir>/logs/tirewear.log, where
 * "Open data folder" leads a shop to it. One previous file is kept; no log grows without end.
 */
import { mkdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';

export const LOG_FILE_MAX_BYTES = 10 * 1024 * 1024;

export async function prepareLogFile(dataDir: string, maxBytes = LOG_FILE_MAX_BYTES): Promise<string> {
  const dir = path.join(dataDir, 'logs');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'tirewear.log');
  const size = await stat(file).then(
    (info) => info.size,
    () => 0,
  );
  if (size > maxBytes) await rename(file, path.join(dir, 'tirewear.previous.log'));
  return file;
}
