import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CHANNELS } from '../../src/preload/channels.js';
import {
  bridgeFailure,
  pageSizeForCountry,
  registerBridgeHandlers,
  safePdfName,
  type BridgeDeps,
  type InvokeEventLike,
  type IpcMainLike,
  type PdfSource,
} from '../../src/main/bridge-handlers.js';
import { AppError } from '../../src/core/errors.js';

const APP = 'http://127.0.0.1:8787';
const PDF = new TextEncoder().encode('%PDF-1.7 test');

type Listener = (event: InvokeEventLike, ...args: unknown[]) => Promise<unknown>;

function fakeIpc() {
  const handlers = new Map<string, Listener>();
  const ipc: IpcMainLike = { handle: (channel, listener) => void handlers.set(channel, listener) };
  return {
    ipc,
    handlers,
    /** The handler's own answer, checked to cross IPC unchanged (IPC structured-clones it). */
    async invoke(channel: string, event: InvokeEventLike, ...args: unknown[]) {
      const handler = handlers.get(channel);
      if (!handler) throw new Error(`no handler for ${channel}`);
      const answer = await handler(event, ...args);
      expect(structuredClone(answer)).toEqual(answer);
      return answer;
    },
  };
}

function fromApp(url = `${APP}/report`): InvokeEventLike {
  const sender: PdfSource = { printToPDF: vi.fn(async () => PDF) };
  return { sender, senderFrame: { url, parent: null } };
}

let tmp: string;
let deps: BridgeDeps;
let bridge: ReturnType<typeof fakeIpc>;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'tirewear-bridge-'));
  deps = {
    appOrigin: APP,
    dataDir: path.join(tmp, 'data'),
    documentsDir: path.join(tmp, 'Documents'),
    defaultPageSize: 'A4',
    openPath: vi.fn(async () => ''),
    openExternal: vi.fn(async () => {}),
    chooseSavePath: vi.fn(async (_sender, defaultPath: string) => path.join(tmp, path.basename(defaultPath))),
    writeFile: vi.fn(async (target: string, data: Uint8Array) => {
      const { writeFile } = await import('node:fs/promises');
      await writeFile(target, data);
    }),
    setPendingWork: vi.fn(),
  };
  bridge = fakeIpc();
  registerBridgeHandlers(bridge.ipc, deps);
});

afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('bridge handlers', () => {
  it("takes the window's count of photos still to send, a whole number from 0 to 100000 only", async () => {
    expect(await bridge.invoke(CHANNELS.pendingWork, fromApp(), 3)).toEqual({ ok: true, value: undefined });
    expect(deps.setPendingWork).toHaveBeenCalledWith(3);
    for (const bad of [-1, 2.5, '3', null, 100_001, Number.NaN]) {
      expect(await bridge.invoke(CHANNELS.pendingWork, fromApp(), bad)).toMatchObject({ ok: false, code: 'VALIDATION_ERROR' });
    }
    expect(deps.setPendingWork).toHaveBeenCalledTimes(1);
    await expect(bridge.invoke(CHANNELS.pendingWork, fromApp('https://evil.example/'), 1)).rejects.toThrow(/Only the TireWear window/);
  });

  it('answers exactly the channels the preload calls', () => {
    expect([...bridge.handlers.keys()].sort()).toEqual(Object.values(CHANNELS).sort());
  });

  it('refuses callers that are not the app window', async () => {
    const strangers: InvokeEventLike[] = [
      { ...fromApp(), senderFrame: null },
      { ...fromApp(), senderFrame: { url: 'https://example.com/', parent: null } },
      { ...fromApp(), senderFrame: { url: 'http://127.0.0.1:9999/', parent: null } },
      { ...fromApp(), senderFrame: { url: `${APP}/frame`, parent: {} } },
    ];
    for (const event of strangers) {
      for (const channel of Object.values(CHANNELS)) {
        await expect(bridge.invoke(channel, event, 'https://example.com/')).rejects.toMatchObject({ code: 'FORBIDDEN' });
      }
    }
    expect(deps.openPath).not.toHaveBeenCalled();
    expect(deps.openExternal).not.toHaveBeenCalled();
  });

  it('opens the data folder', async () => {
    expect(await bridge.invoke(CHANNELS.openDataFolder, fromApp())).toEqual({ ok: true, value: undefined });
    expect(deps.openPath).toHaveBeenCalledWith(deps.dataDir);
  });

  it('answers the window that the OS could not open the data folder, naming it', async () => {
    deps.openPath = vi.fn(async () => 'Failed to open path');
    expect(await bridge.invoke(CHANNELS.openDataFolder, fromApp())).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      message: `Could not open the data folder ${deps.dataDir}: Failed to open path`,
    });

    deps.openPath = vi.fn(async () => Promise.reject(new Error('spawn xdg-open ENOENT')));
    expect(await bridge.invoke(CHANNELS.openDataFolder, fromApp())).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      message: `Could not open the data folder ${deps.dataDir}: spawn xdg-open ENOENT`,
    });
  });

  it('opens https links only', async () => {
    expect(await bridge.invoke(CHANNELS.openExternal, fromApp(), 'https://example.com/help')).toEqual({ ok: true, value: undefined });
    for (const bad of ['http://example.com/', 'file:///etc/passwd', 'ms-settings:privacy', 42, undefined]) {
      expect(await bridge.invoke(CHANNELS.openExternal, fromApp(), bad)).toEqual({
        ok: false,
        code: 'VALIDATION_ERROR',
        message: 'Only https:// links can be opened',
      });
    }
    expect(deps.openExternal).toHaveBeenCalledTimes(1);
  });

  it('prints the page to a PDF file the user chose', async () => {
    const event = fromApp();
    const result = await bridge.invoke(CHANNELS.printToPdf, event, { fileName: 'tire-report-AB123.pdf', landscape: true });
    const saved = path.join(tmp, 'tire-report-AB123.pdf');
    expect(result).toEqual({ ok: true, value: { saved: true, path: saved } });
    expect(await readFile(saved, 'utf8')).toBe('%PDF-1.7 test');
    expect(event.sender.printToPDF).toHaveBeenCalledWith({ landscape: true, pageSize: 'A4', printBackground: true });
    expect(deps.chooseSavePath).toHaveBeenCalledWith(event.sender, path.join(deps.documentsDir, 'tire-report-AB123.pdf'));
  });

  it('saves nothing when the user cancels the dialog', async () => {
    deps.chooseSavePath = vi.fn(async () => null);
    const result = await bridge.invoke(CHANNELS.printToPdf, fromApp(), { fileName: 'report' });
    expect(result).toEqual({ ok: true, value: { saved: false } });
    expect(deps.writeFile).not.toHaveBeenCalled();
  });

  it('rejects malformed print requests before printing', async () => {
    const event = fromApp();
    for (const bad of [undefined, 'report.pdf', {}, { fileName: '' }, { fileName: 'a', landscape: 'yes' }, { fileName: 'a', pageSize: 'A3' }]) {
      expect(await bridge.invoke(CHANNELS.printToPdf, event, bad)).toMatchObject({ ok: false, code: 'VALIDATION_ERROR' });
    }
    expect(event.sender.printToPDF).not.toHaveBeenCalled();
  });

  it('answers an unexpected failure as INTERNAL_ERROR with its message', async () => {
    deps.writeFile = vi.fn(async () => Promise.reject(new Error("EACCES: permission denied, open 'C:\\report.pdf'")));
    expect(await bridge.invoke(CHANNELS.printToPdf, fromApp(), { fileName: 'report' })).toEqual({
      ok: false,
      code: 'INTERNAL_ERROR',
      message: "EACCES: permission denied, open 'C:\\report.pdf'",
    });
  });
});

describe('bridge failures', () => {
  it('keep an AppError code and make anything else an INTERNAL_ERROR', () => {
    expect(bridgeFailure(new AppError('NOT_FOUND', 'gone'))).toEqual({ ok: false, code: 'NOT_FOUND', message: 'gone' });
    expect(bridgeFailure(new TypeError('x is not a function'))).toEqual({ ok: false, code: 'INTERNAL_ERROR', message: 'x is not a function' });
    expect(bridgeFailure('odd')).toEqual({ ok: false, code: 'INTERNAL_ERROR', message: 'odd' });
    expect(bridgeFailure(new Error(''))).toMatchObject({ ok: false, code: 'INTERNAL_ERROR', message: expect.stringMatching(/\S/) });
  });
});

describe('PDF file names', () => {
  it('keeps the suggestion inside the chosen folder', () => {
    expect(safePdfName('../../etc/passwd')).toBe('-..-etc-passwd.pdf');
    expect(safePdfName('C:\\Windows\\system.ini')).toBe('C-Windows-system.ini.pdf');
    expect(safePdfName('report: "AB 123" <FL>?.PDF')).toBe('report AB 123 FL.PDF');
    expect(safePdfName('...')).toBe('tirewear-scan.pdf');
    expect(safePdfName('x'.repeat(300))).toHaveLength(124);
  });

  it('prints on Letter where shops use it', () => {
    expect(pageSizeForCountry('US')).toBe('Letter');
    expect(pageSizeForCountry('ca')).toBe('Letter');
    expect(pageSizeForCountry('DE')).toBe('A4');
    expect(pageSizeForCountry('')).toBe('A4');
  });
});
