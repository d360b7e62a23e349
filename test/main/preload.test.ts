import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { APP_VERSION_ARG, CHANNELS } from '../../src/preload/channels.js';
import { BridgeError, clientBridge } from '../../src/preload/bridge-outcome.js';
import { registerBridgeHandlers, type InvokeEventLike, type PdfSource } from '../../src/main/bridge-handlers.js';

const electron = vi.hoisted(() => ({
  exposed: new Map<string, unknown>(),
  invoke: vi.fn(async (..._args: unknown[]): Promise<unknown> => ({ ok: true, value: undefined })),
}));

/**
 * The contextBridge as Electron implements it: arguments and results are copied, and an Error
 * (thrown, or rejecting a promise) is rebuilt in the page from its message alone.
 */
function acrossContextBridge(api: Record<string, unknown>): Record<string, unknown> {
  const messageOnly = (error: unknown) => new Error(error instanceof Error ? error.message : String(error));
  return Object.fromEntries(
    Object.entries(api).map(([key, value]) => {
      if (typeof value !== 'function') return [key, structuredClone(value)];
      const proxy = (...args: unknown[]) => {
        let result: unknown;
        try {
          result = value(...structuredClone(args));
        } catch (error) {
          throw messageOnly(error);
        }
        return result instanceof Promise ? result.then(structuredClone, (error) => Promise.reject(messageOnly(error))) : structuredClone(result);
      };
      return [key, proxy];
    }),
  );
}

vi.mock('electron', () => ({
  contextBridge: {
    exposeInMainWorld: (key: string, api: Record<string, unknown>) => electron.exposed.set(key, acrossContextBridge(api)),
  },
  ipcRenderer: { invoke: electron.invoke },
}));

/**
 * ipcRenderer.invoke as Electron delivers it: main's answer is structured-cloned; an error the
 * handler throws arrives as "Error invoking remote method '<channel>': <err.toString()>", code lost.
 */
function invokeLikeElectron(handlers: Map<string, (event: InvokeEventLike, ...args: unknown[]) => Promise<unknown>>, event: InvokeEventLike) {
  return async (...[channel, ...args]: unknown[]): Promise<unknown> => {
    const handler = handlers.get(channel as string);
    try {
      if (!handler) throw new Error(`No handler registered for '${String(channel)}'`);
      return structuredClone(await handler(event, ...structuredClone(args)));
    } catch (error) {
      throw new Error(`Error invoking remote method '${String(channel)}': ${String(error)}`, { cause: error });
    }
  };
}

beforeEach(async () => {
  vi.resetModules();
  electron.exposed.clear();
  electron.invoke.mockReset();
  electron.invoke.mockImplementation(async () => ({ ok: true, value: undefined }));
  process.argv.push(`${APP_VERSION_ARG}1.2.3`);
  await import('../../src/preload/index.js');
  process.argv.pop();
});

function exposedBridge(): TireWear.ExposedBridge {
  return electron.exposed.get('tirewear') as TireWear.ExposedBridge;
}

describe('preload bridge', () => {
  it('exposes window.tirewear and nothing else', () => {
    expect([...electron.exposed.keys()]).toEqual(['tirewear']);
    expect(Object.keys(exposedBridge()).sort()).toEqual(['appVersion', 'openDataFolder', 'openExternal', 'printToPDF', 'setPendingWork']);
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

  it("passes main's answers on as they came", async () => {
    electron.invoke.mockResolvedValueOnce({ ok: true, value: { saved: true, path: '/tmp/r.pdf' } });
    expect(await exposedBridge().printToPDF({ fileName: 'r' })).toEqual({ ok: true, value: { saved: true, path: '/tmp/r.pdf' } });
    electron.invoke.mockResolvedValueOnce({ ok: false, code: 'NOT_FOUND', message: 'Could not open the data folder /d: gone' });
    expect(await exposedBridge().openDataFolder()).toEqual({ ok: false, code: 'NOT_FOUND', message: 'Could not open the data folder /d: gone' });
  });

  it('never rejects: a rejected invoke, as Electron words it, becomes a failure answer', async () => {
    electron.invoke.mockRejectedValueOnce(
      new Error(`Error invoking remote method '${CHANNELS.openDataFolder}': AppError: Only the TireWear window may use this function`),
    );
    expect(await exposedBridge().openDataFolder()).toEqual({
      ok: false,
      code: 'INTERNAL_ERROR',
      message: 'Only the TireWear window may use this function',
    });
    electron.invoke.mockResolvedValueOnce('not an answer');
    expect(await exposedBridge().openExternal('https://example.com/')).toMatchObject({ ok: false, code: 'INTERNAL_ERROR' });
  });
});

describe('the bridge contract from main to the page, as Electron delivers it', () => {
  const APP = 'http://127.0.0.1:8787';
  const handlers = new Map<string, (event: InvokeEventLike, ...args: unknown[]) => Promise<unknown>>();
  const sender: PdfSource = { printToPDF: async () => new TextEncoder().encode('%PDF') };
  const deps = {
    appOrigin: APP,
    dataDir: '\\\\nas\\shop\\TireWear\\data',
    documentsDir: '/home/shop/Documents',
    defaultPageSize: 'A4' as const,
    openPath: vi.fn(async (_target: string) => ''),
    openExternal: vi.fn(async (_url: string) => {}),
    chooseSavePath: async (_sender: PdfSource, defaultPath: string) => defaultPath,
    writeFile: async () => {},
    setPendingWork: () => {},
  };
  registerBridgeHandlers({ handle: (channel, listener) => void handlers.set(channel, listener) }, deps);

  beforeEach(() => {
    deps.openPath.mockClear();
    deps.openExternal.mockClear();
  });

  function pageBridge(frameUrl = `${APP}/#/settings`): TireWear.Bridge {
    electron.invoke.mockImplementation(invokeLikeElectron(handlers, { sender, senderFrame: { url: frameUrl, parent: null } }));
    return clientBridge(exposedBridge());
  }

  it('gives the page a BridgeError that keeps its code and names the data folder', async () => {
    deps.openPath.mockResolvedValueOnce('Failed to open path');
    const failure = await pageBridge()
      .openDataFolder()
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(BridgeError);
    expect(failure).toMatchObject({
      code: 'NOT_FOUND',
      message: `Could not open the data folder ${deps.dataDir}: Failed to open path`,
    });
  });

  it('keeps every refusal and result intact', async () => {
    const page = pageBridge();
    await expect(page.openExternal('http://example.com/')).rejects.toMatchObject({
      name: 'BridgeError',
      code: 'VALIDATION_ERROR',
      message: 'Only https:// links can be opened',
    });
    await expect(page.printToPDF({ fileName: 'a', pageSize: 'A3' } as unknown as TireWear.PrintToPdfRequest)).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    expect(deps.openExternal).not.toHaveBeenCalled();
    await expect(page.openDataFolder()).resolves.toBeUndefined();
    await expect(page.printToPDF({ fileName: 'report' })).resolves.toEqual({ saved: true, path: path.join(deps.documentsDir, 'report.pdf') });
  });

  it('refuses a frame that is not the app with a thrown FORBIDDEN, which reaches the page as words only', async () => {
    await expect(pageBridge('https://example.com/').openDataFolder()).rejects.toMatchObject({
      name: 'BridgeError',
      code: 'INTERNAL_ERROR',
      message: 'Only the TireWear window may use this function',
    });
    expect(deps.openPath).not.toHaveBeenCalled();
  });

  it('turns a call that rejects across the contextBridge into a BridgeError too', async () => {
    const exposed = { ...exposedBridge(), openDataFolder: () => Promise.reject(new Error('Uncaught Error: boom')) };
    await expect(clientBridge(exposed).openDataFolder()).rejects.toMatchObject({ name: 'BridgeError', code: 'INTERNAL_ERROR' });
  });
});
