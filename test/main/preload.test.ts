import { beforeEach, describe, expect, it, vi } from 'vitest';
import { APP_VERSION_ARG, CHANNELS } from '../../src/preload/channels.js';

const electron = vi.hoisted(() => ({
  exposed: new Map<string, unknown>(),
  invoke: vi.fn(async (..._args: unknown[]) => undefined as unknown),
}));

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => electron.exposed.set(key, api) },
  ipcRenderer: { invoke: electron.invoke },
}));

beforeEach(async () => {
  vi.resetModules();
  electron.exposed.clear();
  electron.invoke.mockClear();
  process.argv.push(`${APP_VERSION_ARG}1.2.3`);
  await import('../../src/preload/index.js');
  process.argv.pop();
});

function exposedBridge(): TireWear.Bridge {
  return electron.exposed.get('tirewear') as TireWear.Bridge;
}

describe('preload bridge', () => {
  it('exposes window.tirewear and nothing else', () => {
    expect([...electron.exposed.keys()]).toEqual(['tirewear']);
    expect(Object.keys(exposedBridge()).sort()).toEqual(['appVersion', 'openDataFolder', 'openExternal', 'printToPDF']);
  });

  it('knows the app version', () => {
    expect(exposedBridge().appVersion).toBe('1.2.3');
  });

  it('forwards each call to its IPC channel, arguments untouched for main to validate', async () => {
    const bridge = exposedBridge();
    await bridge.openDataFolder();
    await bridge.openExternal('https://example.com/');
    await bridge.printToPDF({ fileName: 'report.pdf', landscape: true });
    expect(electron.invoke.mock.calls).toEqual([
      [CHANNELS.openDataFolder],
      [CHANNELS.openExternal, 'https://example.com/'],
      [CHANNELS.printToPdf, { fileName: 'report.pdf', landscape: true }],
    ]);
  });
});
