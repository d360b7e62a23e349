import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { closeCoreBeforeQuit, trayMenu, windowCloseAction, type QuittableApp } from '../../src/main/lifecycle.js';

/** Electron's quit loop: quit() emits before-quit and only ends the app if nobody prevented it. */
class FakeApp extends EventEmitter implements QuittableApp {
  ended = false;
  quit(): void {
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) this.ended = true;
  }
}

function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('quitting', () => {
  it('closes the core before the app ends', async () => {
    const app = new FakeApp();
    const closing = deferred();
    const close = vi.fn(() => closing.promise);
    const shutdown = closeCoreBeforeQuit(app, close, vi.fn());

    expect(shutdown.isQuitting()).toBe(false);
    app.quit();
    expect(close).toHaveBeenCalledTimes(1);
    expect(app.ended).toBe(false);
    expect(shutdown.isQuitting()).toBe(true);

    app.quit();
    expect(close).toHaveBeenCalledTimes(1);

    closing.resolve();
    await vi.waitFor(() => expect(app.ended).toBe(true));
  });

  it('still ends the app when closing the core fails, and reports why', async () => {
    const app = new FakeApp();
    const onError = vi.fn();
    closeCoreBeforeQuit(app, () => Promise.reject(new Error('disk full')), onError);
    app.quit();
    await vi.waitFor(() => expect(app.ended).toBe(true));
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'disk full' }));
  });
});

describe('closing the window', () => {
  it('hides to the tray only when the shop keeps the API running and nobody is quitting', () => {
    expect(windowCloseAction({ quitting: false, keepApiRunningInTray: true })).toBe('hide-to-tray');
    expect(windowCloseAction({ quitting: false, keepApiRunningInTray: false })).toBe('close');
    expect(windowCloseAction({ quitting: true, keepApiRunningInTray: true })).toBe('close');
  });

  it('offers to reopen the window or quit from the tray', () => {
    const showWindow = vi.fn();
    const quit = vi.fn();
    const menu = trayMenu({ apiUrl: 'http://127.0.0.1:8787/', showWindow, quit });
    expect(menu.map((item) => item.label ?? item.type)).toEqual([
      'Open TireWear',
      'API running at http://127.0.0.1:8787/',
      'separator',
      'Quit TireWear (stops the API)',
    ]);
    menu[0]?.click?.();
    menu[3]?.click?.();
    expect(showWindow).toHaveBeenCalled();
    expect(quit).toHaveBeenCalled();
  });
});
