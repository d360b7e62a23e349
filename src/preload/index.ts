/// <reference path="./index.d.ts" />
/**
 * Sandboxed preload (built as CommonJS): exposes `window.tirewear` and nothing else.
 * Each method forwards to one IPC channel; main validates the arguments and the caller's origin.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { appVersionFromArgv, CHANNELS } from './channels.js';

const bridge = {
  appVersion: appVersionFromArgv(process.argv),
  openDataFolder: () => ipcRenderer.invoke(CHANNELS.openDataFolder),
  printToPDF: (request) => ipcRenderer.invoke(CHANNELS.printToPdf, request),
  openExternal: (url) => ipcRenderer.invoke(CHANNELS.openExternal, url),
} satisfies TireWear.Bridge;

contextBridge.exposeInMainWorld('tirewear', bridge);
