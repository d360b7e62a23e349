/// <reference path="../preload/index.d.ts" />
/**
 * The main-process side of `window.tirewear`. Every handler first checks that the call
 * comes from the app's own top frame, then validates its arguments: the renderer is
 * treated like any other untrusted client.
 *
 * ipcRenderer.invoke passes on only the message of an error a handler throws, so the app's
 * window gets every failure as an answer instead: { ok: false, code, message } (TireWear.Outcome).
 * A caller that is not the app's window is still refused with a thrown FORBIDDEN: it gets no
 * structured answer, and our preload does not run in such frames anyway.
 */
import path from 'node:path';
import { AppError, isAppError } from '../core/errors.js';
import { CHANNELS } from '../preload/channels.js';
import { isSafeExternalUrl, originOf } from './navigation.js';

export interface PdfSource {
  printToPDF(options: { landscape: boolean; pageSize: 'A4' | 'Letter'; printBackground: boolean }): Promise<Uint8Array>;
}

export interface InvokeEventLike<Sender = PdfSource> {
  sender: Sender;
  senderFrame: { url: string; parent: unknown } | null;
}

/** ipcMain as far as this module uses it; Electron's ipcMain fits, tests pass a Map-backed fake. */
export interface IpcMainLike<Sender = PdfSource> {
  handle(channel: string, listener: (event: InvokeEventLike<Sender>, ...args: unknown[]) => Promise<unknown>): void;
}

export interface BridgeDeps<Sender = PdfSource> {
  appOrigin: string;
  dataDir: string;
  documentsDir: string;
  defaultPageSize: 'A4' | 'Letter';
  /** shell.openPath: resolves to an error text, '' on success. */
  openPath(target: string): Promise<string>;
  openExternal(url: string): Promise<void>;
  /** Save dialog attached to the sender's window; null when cancelled. */
  chooseSavePath(sender: Sender, defaultPath: string): Promise<string | null>;
  writeFile(target: string, data: Uint8Array): Promise<void>;
  /** The window's count of photos still to send (leaveGuard.setWaiting). */
  setPendingWork(count: number): void;
}

function assertAppFrame(event: InvokeEventLike<unknown>, appOrigin: string): void {
  const frame = event.senderFrame;
  if (!frame || frame.parent || originOf(frame.url) !== appOrigin) {
    throw new AppError('FORBIDDEN', 'Only the TireWear window may use this function');
  }
}

/** Keeps a file name a file name: no folders, no characters Windows or macOS refuse. */
export function safePdfName(raw: string): string {
  const base = raw
    .replace(/[\\/]/g, '-')
    // eslint-disable-next-line no-control-regex -- control characters are what this removes
    .replace(/[<>:"|?*\u0000-\u001f\u007f]/g, '')
    .replace(/^[.\s]+|[.\s]+$/g, '')
    .slice(0, 120);
  const name = base || 'tirewear-scan';
  return /\.pdf$/i.test(name) ? name : `${name}.pdf`;
}

export function parsePrintRequest(raw: unknown, defaultPageSize: 'A4' | 'Letter'): Required<TireWear.PrintToPdfRequest> {
  if (typeof raw !== 'object' || raw === null) throw new AppError('VALIDATION_ERROR', 'printToPDF needs { fileName }');
  const { fileName, landscape, pageSize } = raw as Record<string, unknown>;
  if (typeof fileName !== 'string' || fileName.length === 0 || fileName.length > 255) {
    throw new AppError('VALIDATION_ERROR', 'fileName must be a text of 1 to 255 characters');
  }
  if (landscape !== undefined && typeof landscape !== 'boolean') {
    throw new AppError('VALIDATION_ERROR', 'landscape must be true or false');
  }
  if (pageSize !== undefined && pageSize !== 'A4' && pageSize !== 'Letter') {
    throw new AppError('VALIDATION_ERROR', 'pageSize must be "A4" or "Letter"');
  }
  return { fileName: safePdfName(fileName), landscape: landscape ?? false, pageSize: pageSize ?? defaultPageSize };
}

/** A failure as the app's window receives it; anything but an AppError is an INTERNAL_ERROR. */
export function bridgeFailure(error: unknown): TireWear.BridgeFailure {
  if (isAppError(error)) return { ok: false, code: error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { ok: false, code: 'INTERNAL_ERROR', message: message || 'Something went wrong inside TireWear' };
}

/** Registers `run` on `channel`: strangers are refused by a throw, the app's window always gets an Outcome. */
function answer<Sender, T>(
  ipc: IpcMainLike<Sender>,
  channel: string,
  appOrigin: string,
  run: (event: InvokeEventLike<Sender>, ...args: unknown[]) => Promise<T>,
): void {
  ipc.handle(channel, async (event, ...args): Promise<TireWear.Outcome<T>> => {
    assertAppFrame(event, appOrigin);
    try {
      return { ok: true, value: await run(event, ...args) };
    } catch (error) {
      return bridgeFailure(error);
    }
  });
}

export function registerBridgeHandlers<Sender extends PdfSource>(ipc: IpcMainLike<Sender>, deps: BridgeDeps<Sender>): void {
  answer(ipc, CHANNELS.openDataFolder, deps.appOrigin, async (): Promise<void> => {
    // shell.openPath reports by resolving to an error text; a rejection is treated the same way.
    const failure = await deps
      .openPath(deps.dataDir)
      .catch((error: unknown) => String(error instanceof Error ? error.message : error) || 'no file manager answered');
    if (failure) throw new AppError('NOT_FOUND', `Could not open the data folder ${deps.dataDir}: ${failure}`);
  });

  answer(ipc, CHANNELS.openExternal, deps.appOrigin, async (_event, url): Promise<void> => {
    if (!isSafeExternalUrl(url)) throw new AppError('VALIDATION_ERROR', 'Only https:// links can be opened');
    await deps.openExternal(url);
  });

  answer(ipc, CHANNELS.pendingWork, deps.appOrigin, async (_event, count): Promise<void> => {
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0 || count > 100_000) {
      throw new AppError('VALIDATION_ERROR', 'setPendingWork needs a whole number from 0 to 100000');
    }
    deps.setPendingWork(count);
  });

  answer(ipc, CHANNELS.printToPdf, deps.appOrigin, async (event, raw): Promise<TireWear.PrintToPdfResult> => {
    const request = parsePrintRequest(raw, deps.defaultPageSize);
    const pdf = await event.sender.printToPDF({
      landscape: request.landscape,
      pageSize: request.pageSize,
      printBackground: true,
    });
    const target = await deps.chooseSavePath(event.sender, path.join(deps.documentsDir, request.fileName));
    if (!target) return { saved: false };
    await deps.writeFile(target, pdf);
    return { saved: true, path: target };
  });
}

/** Countries that print on US Letter; everyone else uses A4. */
const LETTER_COUNTRIES = new Set(['US', 'CA', 'MX', 'PH', 'CL', 'CO', 'VE', 'GT', 'CR', 'PR', 'DO', 'PA', 'SV', 'NI', 'HN']);

export function pageSizeForCountry(countryCode: string): 'A4' | 'Letter' {
  return LETTER_COUNTRIES.has(countryCode.toUpperCase()) ? 'Letter' : 'A4';
}
