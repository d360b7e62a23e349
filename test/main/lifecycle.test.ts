import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { closeCoreBeforeQuit, leaveGuard, quitOnSystemShutdown, trayMenu, windowCloseAction, type QuittableApp } from '../../src/main/lifecycle.js';

/** Electron's quit loop: quit() emits before-quit and only ends the app if nobody prevented it. */
class FakeApp extends EventEmitter implements QuittableApp {
  ended = false;
  exitCode: number | null = null;
  exit(code: number): void {
    this.exitCode = code;
    this.ended = true;
  }
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

describe('photos the window has still to send', () => {
  it('quitting asks first while any wait, closing nothing meanwhile; "Stay" keeps all, "Close anyway" quits once', async () => {
    const app = new FakeApp();
    const answers: Array<ReturnType<typeof deferred>> = [];
    const ask = vi.fn((_waiting: number) => {
      const answer = deferred();
      answers.push(answer);
      return answer.promise.then(() => answers.length > 1); // the first question is answered "Stay"
    });
    const leaving = leaveGuard(ask);
    const close = vi.fn(async () => undefined);
    const onClosing = vi.fn();
    const shutdown = closeCoreBeforeQuit(app, close, vi.fn(), {
      onClosing,
      confirmQuit: { now: () => leaving.mayLeaveNow(), ask: () => leaving.confirm() },
    });
    leaving.setWaiting(3);

    app.quit();
    app.quit(); // a second quit while the question is open asks nothing more
    expect(ask).toHaveBeenCalledTimes(1);
    expect(ask).toHaveBeenLastCalledWith(3);
    expect(onClosing).not.toHaveBeenCalled();
    answers[0]!.resolve(); // "Stay"
    await new Promise((resolve) => setTimeout(resolve, 0)); // the answer is taken
    expect(shutdown.isQuitting()).toBe(false);
    expect(close).not.toHaveBeenCalled();
    expect(app.ended).toBe(false);

    app.quit();
    expect(ask).toHaveBeenCalledTimes(2);
    answers[1]!.resolve(); // "Close anyway": the app quits by itself
    await vi.waitFor(() => expect(app.ended).toBe(true));
    expect(close).toHaveBeenCalledTimes(1);
    expect(onClosing).toHaveBeenCalledTimes(1);
    expect(ask).toHaveBeenCalledTimes(2);
  });

  it('asks nothing with nothing waiting, again once the queue emptied and filled, and never while the system shuts down', async () => {
    let answer = true;
    const ask = vi.fn(async () => answer);
    const leaving = leaveGuard(ask);
    expect(leaving.mayLeaveNow()).toBe(true);
    leaving.setWaiting(2);
    expect(leaving.mayLeaveNow()).toBe(false);
    await expect(leaving.confirm()).resolves.toBe(true);
    expect(leaving.mayLeaveNow()).toBe(true); // answered: not asked twice
    leaving.setWaiting(0);
    leaving.setWaiting(1);
    expect(leaving.mayLeaveNow()).toBe(false);
    answer = false;
    await expect(leaving.confirm()).resolves.toBe(false);
    expect(leaving.mayLeaveNow()).toBe(false);

    const app = new FakeApp();
    closeCoreBeforeQuit(app, async () => undefined, vi.fn(), { confirmQuit: { now: () => leaving.mayLeaveNow(), ask: () => leaving.confirm() } });
    quitOnSystemShutdown(app, () => leaving.systemEnding())();
    expect(ask).toHaveBeenCalledTimes(2); // no question while the system shuts down
    await vi.waitFor(() => expect(app.ended).toBe(true));
  });
});

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

  it('hides the windows at once, and ends the app after the deadline when the close hangs', () => {
    const app = new FakeApp();
    const onError = vi.fn();
    const onClosing = vi.fn();
    let deadline: (() => void) | null = null;
    const setTimer = vi.fn((run: () => void) => {
      deadline = run;
      return {};
    });
    closeCoreBeforeQuit(app, () => new Promise<void>(() => undefined), onError, { onClosing, setTimer, deadlineMs: 15_000 });
    app.quit();
    expect(onClosing).toHaveBeenCalledTimes(1);
    expect(setTimer).toHaveBeenCalledWith(expect.any(Function), 15_000);
    app.quit(); // a second Quit while closing: held, nothing new
    expect(onClosing).toHaveBeenCalledTimes(1);
    expect(app.ended).toBe(false);
    deadline!();
    expect(app.exitCode).toBe(0);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringMatching(/longer than 15 s/) }));
  });

  it('a close that finishes in time quits normally; the deadline then does nothing', async () => {
    const app = new FakeApp();
    let deadline: (() => void) | null = null;
    closeCoreBeforeQuit(app, async () => undefined, vi.fn(), { setTimer: (run) => ((deadline = run), {}) });
    app.quit();
    await vi.waitFor(() => expect(app.ended).toBe(true));
    deadline!();
    expect(app.exitCode).toBeNull();
  });

  it('the OS shutting down starts the same close and delays the OS meanwhile', async () => {
    const app = new FakeApp();
    const close = vi.fn(async () => undefined);
    closeCoreBeforeQuit(app, close, vi.fn(), { setTimer: () => ({}) });
    const event = { preventDefault: vi.fn() };
    quitOnSystemShutdown(app)(event);
    expect(event.preventDefault).toHaveBeenCalled();
    expect(close).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => expect(app.ended).toBe(true));
    quitOnSystemShutdown(app)(); // Windows' session-end: too late to delay, no event passed
  });

  it('a failure hiding the window does not stop the close', async () => {
    const app = new FakeApp();
    const onError = vi.fn();
    const close = vi.fn(async () => undefined);
    closeCoreBeforeQuit(app, close, onError, {
      setTimer: () => ({}),
      onClosing: () => {
        throw new Error('window already destroyed');
      },
    });
    app.quit();
    expect(close).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => expect(app.ended).toBe(true));
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'window already destroyed' }));
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
