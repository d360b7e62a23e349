import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { loadWatched, logProcessErrors, type WatchedWindow } from '../../src/main/window-watch.js';

class Contents extends EventEmitter {
  reload = vi.fn();
}

class Window extends EventEmitter implements WatchedWindow {
  readonly webContents = new Contents();
  visible = false;
  destroyed = false;
  loads: string[] = [];
  failNextLoad = false;
  isVisible = () => this.visible;
  isDestroyed = () => this.destroyed;
  show = () => {
    this.visible = true;
    this.emit('show');
  };
  hide = () => void (this.visible = false);
  async loadURL(url: string): Promise<void> {
    this.loads.push(url);
    if (this.failNextLoad) {
      this.failNextLoad = false;
      throw new Error('ERR_CONNECTION_REFUSED (-102) loading ' + url);
    }
  }
}

const URL_ = 'http://127.0.0.1:8787/';
const logger = () => ({ error: vi.fn(), warn: vi.fn(), fatal: vi.fn() });

describe('the watched window', () => {
  it('reloads a page that crashed, not one that exited cleanly, and logs both', () => {
    const window = new Window();
    const log = logger();
    loadWatched(window, URL_, { logger: log, askRetry: async () => false, setTimer: () => undefined });
    window.webContents.emit('render-process-gone', {}, { reason: 'oom', exitCode: 9 });
    expect(window.webContents.reload).toHaveBeenCalledTimes(1);
    window.webContents.emit('render-process-gone', {}, { reason: 'clean-exit' });
    expect(window.webContents.reload).toHaveBeenCalledTimes(1);
    expect(log.error).toHaveBeenCalledTimes(2);
  });

  it('a page that fails to load is logged, shown, and loaded again when the user asks; a rejected load is no unhandled rejection', async () => {
    const window = new Window();
    window.failNextLoad = true;
    const log = logger();
    const askRetry = vi.fn(async () => true);
    loadWatched(window, URL_, { logger: log, askRetry, setTimer: () => undefined });
    await vi.waitFor(() => expect(log.warn).toHaveBeenCalled());
    window.webContents.emit('did-fail-load', {}, -102, 'ERR_CONNECTION_REFUSED', URL_, true);
    expect(window.visible).toBe(true);
    expect(askRetry).toHaveBeenCalledWith(expect.stringContaining('ERR_CONNECTION_REFUSED'));
    await vi.waitFor(() => expect(window.loads).toEqual([URL_, URL_]));
    // a replaced navigation or a sub-frame is no failure
    window.webContents.emit('did-fail-load', {}, -3, 'ERR_ABORTED', URL_, true);
    window.webContents.emit('did-fail-load', {}, -102, 'ERR_CONNECTION_REFUSED', 'http://x/', false);
    expect(askRetry).toHaveBeenCalledTimes(1);
  });

  it('shows a window whose first paint never came, after the wait', () => {
    const window = new Window();
    let later: (() => void) | null = null;
    loadWatched(window, URL_, { logger: logger(), askRetry: async () => false, setTimer: (run, ms) => void (ms === 5000 && (later = run)) });
    expect(window.visible).toBe(false);
    later!();
    expect(window.visible).toBe(true);
  });

  it('never shows again a window the user hid to the tray, nor does anything while the app quits', async () => {
    const window = new Window();
    let later: (() => void) | null = null;
    let quitting = false;
    const askRetry = vi.fn(async () => true);
    loadWatched(window, URL_, { logger: logger(), askRetry, active: () => !quitting, setTimer: (run) => void (later = run) });
    window.show(); // painted
    window.hide(); // to the tray
    later!();
    window.webContents.emit('did-fail-load', {}, -102, 'ERR_CONNECTION_REFUSED', URL_, true);
    expect(window.visible).toBe(false); // asked (a dialog of its own), not shown
    expect(askRetry).toHaveBeenCalledTimes(1);
    quitting = true;
    await vi.waitFor(() => expect(window.loads).toHaveLength(1)); // "Try again" answered after the quit began: no reload
    window.webContents.emit('render-process-gone', {}, { reason: 'crashed' });
    window.webContents.emit('did-fail-load', {}, -102, 'ERR_CONNECTION_REFUSED', URL_, true);
    expect(window.webContents.reload).not.toHaveBeenCalled();
    expect(askRetry).toHaveBeenCalledTimes(1);
  });

  it('a page that crashes again at once is reloaded three times a minute, then the user is asked, once at a time', async () => {
    const window = new Window();
    let clock = 0;
    let answer: (again: boolean) => void = () => undefined;
    const askRetry = vi.fn(() => new Promise<boolean>((resolve) => (answer = resolve)));
    loadWatched(window, URL_, { logger: logger(), askRetry, setTimer: () => undefined, now: () => clock });
    const crash = () => window.webContents.emit('render-process-gone', {}, { reason: 'crashed', exitCode: 1 });
    crash();
    crash();
    crash();
    expect(window.webContents.reload).toHaveBeenCalledTimes(3);
    crash();
    crash(); // while the question is open: no second dialog
    expect(window.webContents.reload).toHaveBeenCalledTimes(3);
    expect(askRetry).toHaveBeenCalledTimes(1);
    answer(true);
    await vi.waitFor(() => expect(window.webContents.reload).toHaveBeenCalledTimes(4));
    clock += 61_000; // a minute later the count starts again
    crash();
    expect(window.webContents.reload).toHaveBeenCalledTimes(5);
  });
});

describe('errors nobody awaited (installed app)', () => {
  it('are logged; an uncaught one also ends the app through onFatal', () => {
    const proc = new EventEmitter();
    const log = logger();
    const onFatal = vi.fn();
    logProcessErrors(proc, log, onFatal);
    proc.emit('unhandledRejection', new Error('a promise nobody awaited'));
    expect(log.error).toHaveBeenCalledWith({ err: expect.objectContaining({ message: 'a promise nobody awaited' }) }, expect.any(String));
    expect(onFatal).not.toHaveBeenCalled();
    const boom = new Error('boom');
    proc.emit('uncaughtException', boom);
    expect(log.fatal).toHaveBeenCalledWith({ err: boom }, expect.any(String));
    expect(onFatal).toHaveBeenCalledWith(boom);
    proc.emit('uncaughtException', new Error('and another while quitting'));
    expect(log.fatal).toHaveBeenCalledTimes(2);
    expect(onFatal).toHaveBeenCalledTimes(1); // one dialog, not one per error
  });
});
