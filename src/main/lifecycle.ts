/**
 * When the app really ends. Closing the window either ends it or, for shops whose POS calls
 * the API, only hides it to the tray; quitting always closes the server and the database first.
 */
export interface QuittableApp {
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
  quit(): void;
}

export interface Shutdown {
  /** True from the first quit request on: windows then close for real instead of hiding. */
  isQuitting(): boolean;
}

/**
 * Electron does not wait for async work in before-quit, so the first quit is held back until
 * `close()` settles (database checkpointed, port released) and then repeated.
 */
export function closeCoreBeforeQuit(app: QuittableApp, close: () => Promise<void>, onError: (error: unknown) => void): Shutdown {
  let state: 'running' | 'closing' | 'closed' = 'running';
  app.on('before-quit', (event) => {
    if (state === 'closed') return;
    event.preventDefault();
    if (state === 'closing') return;
    state = 'closing';
    close()
      .catch(onError)
      .finally(() => {
        state = 'closed';
        app.quit();
      });
  });
  return { isQuitting: () => state !== 'running' };
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
