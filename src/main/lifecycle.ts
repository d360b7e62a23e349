/**
 * When the app really ends. Closing the window either ends it or, for shops whose POS calls
 * the API, only hides it to the tray; quitting always closes the server and the database first.
 */
export interface QuittableApp {
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
  quit(): void;
  /** Ends the app at once, without before-quit. */
  exit(code: number): void;
}

export interface Shutdown {
  /** True from the first quit request on: windows then close for real instead of hiding. */
  isQuitting(): boolean;
}

export interface QuitOptions {
  /** Called once, when the close starts: hide the windows (the core answers 503 meanwhile). */
  onClosing?: () => void;
  /** Asked before the close starts (leaveGuard): "Stay" keeps the app running, untouched; "Close anyway" quits. */
  confirmQuit?: QuitConfirmation;
  /** A close still running after this long ends the app anyway (committed data is safe: WAL). */
  deadlineMs?: number;
  setTimer?: (run: () => void, ms: number) => { unref?(): void };
}

/** Longer than the HTTP server's 10 s grace for requests in flight, plus the database's close. */
export const QUIT_DEADLINE_MS = 15_000;

/**
 * Electron does not wait for async work in before-quit, so the first quit is held back until
 * `close()` settles (database checkpointed, port released) and then repeated. The windows hide at
 * once, and a close that hangs cannot keep the app alive: after the deadline it exits anyway.
 */
export function closeCoreBeforeQuit(app: QuittableApp, close: () => Promise<void>, onError: (error: unknown) => void, options: QuitOptions = {}): Shutdown {
  const { deadlineMs = QUIT_DEADLINE_MS, setTimer = setTimeout } = options;
  let state: 'running' | 'closing' | 'closed' = 'running';
  app.on('before-quit', (event) => {
    if (state === 'closed') return;
    event.preventDefault();
    if (state === 'closing') return;
    const confirm = options.confirmQuit;
    if (confirm && !confirm.now()) {
      // nothing closes while the question is open; quitting again once it is answered "Close anyway"
      void confirm.ask().then(
        (ok) => {
          if (ok) app.quit();
        },
        (error: unknown) => onError(error),
      );
      return;
    }
    state = 'closing';
    try {
      options.onClosing?.();
    } catch (error) {
      onError(error); // hiding the window failed: the close goes on regardless
    }
    setTimer(() => {
      if (state === 'closed') return;
      onError(new Error(`closing the core took longer than ${deadlineMs / 1000} s; exiting anyway`));
      state = 'closed';
      app.exit(0);
    }, deadlineMs).unref?.();
    close()
      .catch(onError)
      .finally(() => {
        if (state === 'closed') return; // the deadline came first
        state = 'closed';
        app.quit();
      });
  });
  return { isQuitting: () => state !== 'running' };
}

/**
 * The OS is shutting down, restarting or logging off (powerMonitor 'shutdown' on macOS and Linux,
 * a window's 'query-session-end' and then 'session-end' on Windows, where no before-quit comes):
 * start the same bounded close. Preventing the default of 'shutdown' (macOS, Linux) and of
 * 'query-session-end' (Windows) asks the OS to wait while the app quits as soon as it can;
 * 'session-end' comes too late for that and carries no event here.
 */
export function quitOnSystemShutdown(app: Pick<QuittableApp, 'quit'>, onEnding: () => void = () => undefined): (event?: { preventDefault(): void }) => void {
  return (event) => {
    event?.preventDefault();
    onEnding(); // the system ends the session: nobody is asked anything
    app.quit();
  };
}

/**
 * Photos the window has still to send (queued, waiting for a sign-in, being sent or analysed) live
 * only in its memory (a webcam shot nowhere else): closing the window or quitting asks first, once.
 * `ask(waiting)` shows the question without blocking the main process (the core runs in it: the
 * POS keeps being answered meanwhile) and resolves whether to go on. The system ending the session
 * is never held up by it.
 */
export function leaveGuard(ask: (waiting: number) => Promise<boolean>) {
  let waiting = 0;
  let confirmed = false;
  let systemEnding = false;
  let asking: Promise<boolean> | null = null;
  return {
    /** What the window reports (the bridge's setPendingWork); a question answered stays answered until the queue empties. */
    setWaiting(count: number): void {
      waiting = count;
      if (count === 0) confirmed = false;
    },
    systemEnding(): void {
      systemEnding = true;
    },
    /** True when the window may close or the app quit now, without a question. */
    mayLeaveNow(): boolean {
      return waiting === 0 || confirmed || systemEnding;
    },
    /** Asks (one question at a time, however many closes and quits wait on it); resolves whether to go on. */
    confirm(): Promise<boolean> {
      asking ??= ask(waiting).then(
        (ok) => {
          confirmed = ok;
          asking = null;
          return ok;
        },
        (error: unknown) => {
          asking = null;
          throw error;
        },
      );
      return asking;
    },
  };
}

export interface QuitConfirmation {
  /** True when quitting may start now. */
  now(): boolean;
  /** Asks; resolves whether to quit after all. */
  ask(): Promise<boolean>;
}

export type CloseAction = 'hide-to-tray' | 'close';

export function windowCloseAction(options: { quitting: boolean; keepApiRunningInTray: boolean }): CloseAction {
  return !options.quitting && options.keepApiRunningInTray ? 'hide-to-tray' : 'close';
}

export interface TrayMenuItem {
  label?: string;
  type?: 'separator';
  enabled?: boolean;
  click?: () => void;
}

export function trayMenu(options: { apiUrl: string; showWindow: () => void; quit: () => void }): TrayMenuItem[] {
  return [
    { label: 'Open TireWear', click: options.showWindow },
    { label: `API running at ${options.apiUrl}`, enabled: false },
    { type: 'separator' },
    { label: 'Quit TireWear (stops the API)', click: options.quit },
  ];
}
