/// <reference path="./index.d.ts" />
/**
 * Sandboxed preload (built as CommonJS): exposes `window.tirewear` and nothing else.
 * Each method forwards to one IPC channel; main validates the arguments and the caller's origin.
 * Each resolves to an Outcome and never rejects: an Error crossing invoke or the contextBridge
 * keeps only its message, while a plain { ok: false, code, message } arrives whole.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { invokeFailure, readOutcome } from './bridge-outcome.js';
import { appVersionFromArgv, CHANNELS } from './channels.js';

async function call<T>(channel: string, ...args: unknown[]): Promise<TireWear.Outcome<T>> {
  try {
    return readOutcome<T>(await ipcRenderer.invoke(channel, ...args));
  } catch (error) {
    return invokeFailure(error);
  }
}

const bridge = {
  appVersion: appVersionFromArgv(process.argv),
  openDataFolder: () => call<void>(CHANNELS.openDataFolder),
  printToPDF: (request) => call<TireWear.PrintToPdfResult>(CHANNELS.printToPdf, request),
  openExternal: (url) => call<void>(CHANNELS.openExternal, url),
  setPendingWork: (count) => call<void>(CHANNELS.pendingWork, count),
} satisfies TireWear.ExposedBridge;

contextBridge.exposeInMainWorld('tirewear', bridge);
