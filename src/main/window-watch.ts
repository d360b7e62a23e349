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
  once(event: 'show', listener: () => void): unknown;
  loadURL(url: string): Promise<void>;
}

export interface WatchOptions {
  logger: Pick<Logger, 'error' | 'warn'>;
  /** Asks whether to try loading again; resolves true for "Try again". Never parented to a hidden window. */
  askRetry(message: string): Promise<boolean>;
  /** False while the app quits: nothing is reloaded, shown or asked then. */
  active?: () => boolean;
  setTimer?: (run: () => void, ms: number) => unknown;
  now?: () => number;
  /** The first paint normally comes within a second; after this long the window is shown anyway. */
  showAfterMs?: number;
}

/** Chromium's net::ERR_ABORTED: a navigation replaced by another, not a failure. */
const ERR_ABORTED = -3;
/** A page that crashes again at once is not reloaded forever: this many reloads a minute, then the user is asked. */
const RELOADS_PER_MINUTE = 3;

/** Loads `url` into `window` and watches it (above). */
export function loadWatched(window: WatchedWindow, url: string, options: WatchOptions): void {
  const { logger, askRetry, active = () => true, setTimer = setTimeout, now = Date.now, showAfterMs = 5000 } = options;
  let everShown = false;
  window.once('show', () => (everShown = true));
  /** Shown by us only before its first showing: a window the user hid to the tray stays hidden. */
  const showFirstTime = () => {
    if (!everShown && active() && !window.isDestroyed() && !window.isVisible()) window.show();
  };
  let asking = false;
  /** One question at a time; "Try again" runs `retry`. */
  const ask = (message: string, retry: () => void) => {
    if (asking || !active()) return;
    asking = true;
    void askRetry(message)
      .then((again) => {
        if (again && active() && !window.isDestroyed()) retry();
      })
      .finally(() => (asking = false));
  };
  let reloads: number[] = [];
  const reload = () => window.webContents.reload();
  window.webContents.on('render-process-gone', (_event, details) => {
    logger.error({ reason: details.reason, exitCode: details.exitCode }, "the window's page stopped");
    if (details.reason === 'clean-exit' || window.isDestroyed() || !active()) return;
    reloads = reloads.filter((at) => now() - at < 60_000);
    if (reloads.length < RELOADS_PER_MINUTE) {
      reloads.push(now());
      reload();
      return;
    }
    ask(`TireWear's window stopped ${RELOADS_PER_MINUTE + 1} times within a minute (${details.reason}).`, () => {
      reloads = [];
      reload();
    });
  });
  window.webContents.on('did-fail-load', (_event, errorCode, errorDescription, validatedUrl, isMainFrame) => {
    if (!isMainFrame || errorCode === ERR_ABORTED) return;
    logger.error({ errorCode, errorDescription, url: validatedUrl }, 'the window could not load TireWear');
    showFirstTime();
    ask(`TireWear's window could not load ${validatedUrl} (${errorDescription}).`, () => void load());
  });
  const load = () => window.loadURL(url).catch((error: unknown) => logger.warn({ err: error, url }, 'loading the window failed'));
  setTimer(showFirstTime, showAfterMs);
  void load();
}

/**
 * Errors no code awaited, in an installed app: logged; the first uncaught one also tells the user
 * and quits cleanly (the core closes as on any quit), since the process is then in an unknown
 * state. Later ones, while it quits, are only logged: one dialog, not one per error.
 */
export function logProcessErrors(
  proc: { on(event: 'uncaughtException' | 'unhandledRejection', listener: (error: unknown) => void): unknown },
  logger: Pick<Logger, 'error' | 'fatal'>,
  onFatal: (error: unknown) => void,
): void {
  let fatal = false;
  proc.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught error in the main process');
    if (fatal) return;
    fatal = true;
    onFatal(error);
  });
  proc.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection in the main process'));
}
