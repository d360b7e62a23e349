/**
 * The real main process (src/main/index.ts) and the real core, with Electron replaced by a
 * fake: this machine has no Electron binary, so this is the closest thing to launching the app.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CHANNELS } from '../../src/preload/channels.js';
import { APP_CSP } from '../../src/main/security.js';
import { createFakeElectron, type FakeElectron } from './fake-electron.js';

vi.mock('../../src/core/server.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/core/server.js')>();
  const { FakeAnalyzer } = await import('../support/fake-analyzer.js');
  return {
    ...real,
    startServer: (...[config, overrides, options]: Parameters<typeof real.startServer>) =>
      real.startServer(config, { ...overrides, analyzer: new FakeAnalyzer() }, options),
  };
});

let tmp: string;
const savedEnv = { ...process.env };

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'tirewear-main-'));
  vi.resetModules();
});

afterEach(async () => {
  process.env = { ...savedEnv };
  await rm(tmp, { recursive: true, force: true });
});

async function launch(env: Record<string, string>): Promise<FakeElectron> {
  const { ELECTRON_RENDERER_URL: _devServer, ...inherited } = savedEnv;
  process.env = { ...inherited, TIREWEAR_LOG_LEVEL: 'silent', ...env };
  const electron = createFakeElectron(tmp);
  vi.doMock('electron', () => electron);
  await import('../../src/main/index.js');
  return electron.fake;
}

describe('main process', () => {
  it('starts the core on loopback, opens the locked-down window on it, and closes the core on quit', async () => {
    const fake = await launch({ TIREWEAR_PORT: '0' });
    await vi.waitFor(() => expect(fake.windows[0]?.loadedUrl).toBeDefined(), { timeout: 10_000 });
    const window = fake.windows[0]!;
    const url = window.loadedUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(window.options.webPreferences).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false });
    expect(window.options.webPreferences?.preload).toMatch(/preload[\\/]index\.cjs$/);

    expect(fake.app.switches.size).toBe(0); // loopback is a secure origin already
    const health = await fetch(`${url}api/v1/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get('content-security-policy')).toBe(APP_CSP);

    expect([...fake.ipcHandlers.keys()].sort()).toEqual(Object.values(CHANNELS).sort());
    const stranger = { sender: {}, senderFrame: { url: 'https://example.com/', parent: null } };
    await expect(fake.ipcHandlers.get(CHANNELS.openDataFolder)!(stranger)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(fake.permissionRequest('geolocation', url)).toBe(false);
    expect(fake.permissionRequest('media', url, ['video'])).toBe(true);

    const away = { url: 'https://example.com/', preventDefault: vi.fn() };
    window.webContents.emit('will-navigate', away);
    expect(away.preventDefault).toHaveBeenCalled();
    expect(fake.openedExternally).toEqual(['https://example.com/']);

    fake.app.emit('second-instance');
    expect(window.focused).toBe(true);

    // from source: user data apart from an installed TireWear's; no Electron menu (Linux here)
    expect(fake.app.getPath('userData')).toBe(path.join(tmp, 'appData', 'TireWear-dev'));
    expect(fake.applicationMenu).toBeNull();
    expect(fake.powerMonitor.listenerCount('shutdown')).toBe(1);
    expect(window.listenerCount('session-end')).toBe(1);
    expect(window.listenerCount('query-session-end')).toBe(1);
    // the crash watch (window-watch.ts) and the pending-photos count's reset (leaveGuard)
    expect(window.webContents.listenerCount('render-process-gone')).toBe(2);
    expect(window.webContents.listenerCount('did-navigate')).toBe(1);

    await fake.app.requestQuit();
    expect(window.visible).toBe(false); // hidden as soon as the close began
    expect(fake.app.ended).toBe(true);
    await expect(fetch(`${url}api/v1/health`)).rejects.toThrow();
  });

  it('a desk bound to its LAN address opens the window there, made a secure origin for Chromium (webcam, clipboard)', async (context) => {
    const lan = Object.values(os.networkInterfaces())
      .flat()
      .find((info) => info && !info.internal && info.family === 'IPv4');
    if (!lan) return context.skip();
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, lan.address, resolve));
    const port = (holder.address() as net.AddressInfo).port;
    await new Promise((resolve) => holder.close(resolve));
    const fake = await launch({ TIREWEAR_HOST: lan.address, TIREWEAR_PORT: String(port), TIREWEAR_LAN_ACCESS: 'true' });
    await vi.waitFor(() => expect(fake.windows[0]?.loadedUrl).toBeDefined(), { timeout: 10_000 });
    expect(fake.windows[0]!.loadedUrl).toBe(`http://${lan.address}:${port}/`);
    expect(fake.app.switches.get('unsafely-treat-insecure-origin-as-secure')).toBe(`http://${lan.address}:${port}`);
    await fake.app.requestQuit();
  });

  it('keeps the API running from the tray when the shop asked for it', async () => {
    const fake = await launch({ TIREWEAR_PORT: '0' });
    await vi.waitFor(() => expect(fake.windows[0]?.loadedUrl).toBeDefined(), { timeout: 10_000 });
    const window = fake.windows[0]!;
    await writeFile(path.join(fake.app.getPath('userData'), 'data', 'settings.json'), JSON.stringify({ keepApiRunningInTray: true }));

    const close = { preventDefault: vi.fn() };
    window.emit('close', close);
    expect(close.preventDefault).toHaveBeenCalled();
    expect(window.visible).toBe(false);
    expect(fake.trays).toHaveLength(1);
    const health = await fetch(`${window.loadedUrl}api/v1/health`);
    expect(health.status).toBe(200);

    await fake.app.requestQuit();
    expect(fake.app.ended).toBe(true);
  });

  it.each([
    ['macOS/Linux: powerMonitor shutdown', (fake: FakeElectron, event: { preventDefault(): void }) => fake.powerMonitor.emit('shutdown', event)],
    ['Windows: query-session-end', (fake: FakeElectron, event: { preventDefault(): void }) => fake.windows[0]!.emit('query-session-end', event)],
  ])('closes the core when the OS shuts down (%s), asking the OS to wait', async (_name, shutDown) => {
    const fake = await launch({ TIREWEAR_PORT: '0' });
    await vi.waitFor(() => expect(fake.windows[0]?.loadedUrl).toBeDefined(), { timeout: 10_000 });
    const url = fake.windows[0]!.loadedUrl!;
    const event = { preventDefault: vi.fn() };
    shutDown(fake, event);
    expect(event.preventDefault).toHaveBeenCalled();
    await vi.waitFor(() => expect(fake.app.ended).toBe(true), { timeout: 15_000 });
    await expect(fetch(`${url}api/v1/health`)).rejects.toThrow();
  });

  it('explains a taken port in a dialog and opens no window', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const fake = await launch({ TIREWEAR_PORT: String(port) });
      await vi.waitFor(() => expect(fake.app.exitCode).toBe(1), { timeout: 10_000 });
      expect(fake.messageBoxes).toHaveLength(1);
      expect(fake.messageBoxes[0]).toMatchObject({ type: 'error', message: `Port ${port} on 127.0.0.1 is already in use.` });
      expect(fake.windows).toHaveLength(0);
    } finally {
      holder.close();
    }
  });
});
