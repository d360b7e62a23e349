/**
 * A packaged app has no console, so the core logs to <dataDir>/logs/tirewear.log, where
 * "Open data folder" leads a shop to it. One previous file is kept; no log grows without end:
 * the size is checked at start (prepareLogFile) and then periodically while the app runs
 * (rotateLogWhileRunning), because a desk left in the tray for weeks never restarts.
 */
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { renameRetrying } from '../core/storage/files.js';

export const LOG_FILE_MAX_BYTES = 10 * 1024 * 1024;
/** How often a running app checks its log's size; a busy POS writes well under 1 MB in that time. */
export const LOG_CHECK_INTERVAL_MS = 10 * 60 * 1000;

const LOG_NAME = 'tirewear.log';
const PREVIOUS_LOG_NAME = 'tirewear.previous.log';

function previousLogFile(file: string): string {
  return path.join(path.dirname(file), PREVIOUS_LOG_NAME);
}

async function sizeOf(file: string): Promise<number> {
  return stat(file).then(
    (info) => info.size,
    () => 0,
  );
}

/**
 * The log file for this run, in `<dataDir>/logs`, the last run's moved aside first when over the
 * limit. A rotation that fails (on Windows the log or the previous one open in another program: an
 * editor following it, an antivirus scan) keeps appending to the current file: the log must never
 * stop the app from starting. `rename` is for tests.
 */
export async function prepareLogFile(
  dataDir: string,
  maxBytes = LOG_FILE_MAX_BYTES,
  rename: (from: string, to: string) => Promise<void> = renameRetrying,
): Promise<string> {
  const dir = path.join(dataDir, 'logs');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, LOG_NAME);
  if ((await sizeOf(file)) > maxBytes) await rename(file, previousLogFile(file)).catch(() => undefined);
  return file;
}

/** The log's destination as far as rotation needs it: pino.destination's SonicBoom fits. */
export interface ReopenableDestination {
  /** Closes the current file descriptor and opens the destination's file path again. */
  reopen(): void;
}

export interface LogRotation {
  /** Rotates now if the file is over the limit; resolves to whether it did. Never rejects. */
  check(): Promise<boolean>;
  /** Stops the periodic check; later checks do nothing. */
  stop(): void;
}

export interface LogRotationOptions {
  maxBytes?: number;
  intervalMs?: number;
}

/**
 * Keeps a running app's log under the limit: every `intervalMs`, when `file` is over
 * `maxBytes`, it becomes tirewear.previous.log (replacing the older one) and `destination`
 * reopens `file`, so logging continues in a new, empty file. Lines written between the rename
 * and the reopen land at the end of the previous file. A failed check or rotation is ignored
 * (the next check tries again): logging must never take the app down. The timer is unref'd,
 * so it never keeps the process alive.
 */
export function rotateLogWhileRunning(
  file: string,
  destination: ReopenableDestination,
  { maxBytes = LOG_FILE_MAX_BYTES, intervalMs = LOG_CHECK_INTERVAL_MS }: LogRotationOptions = {},
): LogRotation {
  let stopped = false;
  let running: Promise<boolean> | null = null;

  async function rotateIfTooBig(): Promise<boolean> {
    try {
      if ((await sizeOf(file)) <= maxBytes || stopped) return false;
      await renameRetrying(file, previousLogFile(file));
      destination.reopen();
      return true;
    } catch {
      return false;
    }
  }

  function check(): Promise<boolean> {
    if (stopped) return Promise.resolve(false);
    running ??= rotateIfTooBig().finally(() => {
      running = null;
    });
    return running;
  }

  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();

  return {
    check,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
