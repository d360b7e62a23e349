/**
 * What keeps the window useful when something goes wrong under it: a crashed page is reloaded, a
 * page that fails to load says so and offers to try again, a window whose first paint never comes
 * is shown anyway, and errors nobody awaited reach the log in the data folder (the one file
 * DESKTOP.md sends support to) instead of a console nobody sees.
 */
import type { Logger } from '../core/logger.js';

export interface WatchedContents {
  on(event: 'render-process-gone', listener: (event: unknown, details: { reason: string; exitCode?: number }) => void): unknown;
  on(
    event: 'did-fail-load',
    listener: (event: unknown, errorCode: number, errorDescription: string, validatedUrl: string, isMainFrame: boolean) => void,
  ): unknown;
  reload(): void;
}

export interface WatchedWindow {
  webContents: WatchedContents;
  isVisible(): boolean;
  isDestroyed(): boolean;
  show(): void;
  loadURL(url: string): Promise<void>;
}

export interface WatchOptions {
  logger: Pick<Logger, 'error' | 'warn'>;
  /** Asks whether to try loading again; resolves true for "Try again". */
  askRetry(message: string): Promise<boolean>;
  setTimer?: (run: () => void, ms: number) => unknown;
  /** The first paint normally comes within a second; after this long the window is shown anyway. */
  showAfterMs?: number;
}

/** Chromium's net::ERR_ABORTED: a navigation replaced by another, not a failure. */
const ERR_ABORTED = -3;

/** Loads `url` into `window` and watches it (above). */
export function loadWatched(window: WatchedWindow, url: string, options: WatchOptions): void {
  const { logger, askRetry, setTimer = setTimeout, showAfterMs = 5000 } = options;
  const showNow = () => {
    if (!window.isDestroyed() && !window.isVisible()) window.show();
  };
  window.webContents.on('render-process-gone', (_event, details) => {
    logger.error({ reason: details.reason, exitCode: details.exitCode }, 'the window\'s page stopped');
    if (details.reason !== 'clean-exit' && !window.isDestroyed()) window.webContents.reload();
  });
  window.webContents.on('did-fail-load', (_event, errorCode, errorDescription, validatedUrl, isMainFrame) => {
    if (!isMainFrame || errorCode === ERR_ABORTED) return;
    logger.error({ errorCode, errorDescription, url: validatedUrl }, 'the window could not load TireWear');
    showNow();
    void askRetry(`TireWear's window could not load ${validatedUrl} (${errorDescription}).`).then((retry) => {
      if (retry && !window.isDestroyed()) load();
    });
  });
  const load = () => window.loadURL(url).catch((error: unknown) => logger.warn({ err: error, url }, 'loading the window failed'));
  setTimer(showNow, showAfterMs);
  void load();
}

/**
 * Errors no code awaited, in an installed app: logged; an uncaught one also tells the user and
 * quits cleanly (the core closes as on any quit), since the process is then in an unknown state.
 */
export function logProcessErrors(
  proc: { on(event: 'uncaughtException' | 'unhandledRejection', listener: (error: unknown) => void): unknown },
  logger: Pick<Logger, 'error' | 'fatal'>,
  onFatal: (error: unknown) => void,
): void {
  proc.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught error in the main process');
    onFatal(error);
  });
  proc.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection in the main process'));
}
