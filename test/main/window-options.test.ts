import { describe, expect, it } from 'vitest';
import { appVersionFromArgv } from '../../src/preload/channels.js';
import {
  applicationMenuTemplate,
  contextMenuTemplate,
  lanWindowOrigin,
  localServerUrl,
  mainWindowOptions,
  rendererUrl,
} from '../../src/main/window-options.js';

const setup = { preloadPath: '/app/out/preload/index.cjs', iconPath: '/app/icon.png', appVersion: '0.1.0', isPackaged: true };

describe('main window options', () => {
  it('isolates the page from Node and Electron', () => {
    const prefs = mainWindowOptions({ ...setup, platform: 'win32' }).webPreferences;
    expect(prefs).toMatchObject({
      preload: setup.preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      devTools: false,
    });
  });

  it('hands the app version to the preload on its command line', () => {
    const args = mainWindowOptions({ ...setup, platform: 'darwin' }).webPreferences?.additionalArguments ?? [];
    expect(appVersionFromArgv(['electron', ...args])).toBe('0.1.0');
  });

  it('sets the window icon on Linux only, and keeps DevTools for development', () => {
    expect(mainWindowOptions({ ...setup, platform: 'linux' }).icon).toBe(setup.iconPath);
    expect(mainWindowOptions({ ...setup, platform: 'win32' }).icon).toBeUndefined();
    expect(mainWindowOptions({ ...setup, platform: 'linux', isPackaged: false }).webPreferences?.devTools).toBe(true);
  });
});

describe('window URL', () => {
  it('shows what the core serves, or the dev server while developing', () => {
    const dev = { ELECTRON_RENDERER_URL: 'http://localhost:5173' };
    expect(rendererUrl('http://127.0.0.1:8787/', {}, false)).toBe('http://127.0.0.1:8787/');
    expect(rendererUrl('http://127.0.0.1:8787/', dev, false)).toBe('http://localhost:5173');
    expect(rendererUrl('http://127.0.0.1:8787/', dev, true)).toBe('http://127.0.0.1:8787/');
  });

  it('reaches a server bound for the LAN over loopback', () => {
    expect(localServerUrl('http://127.0.0.1:8787')).toBe('http://127.0.0.1:8787/');
    expect(localServerUrl('http://0.0.0.0:8787')).toBe('http://127.0.0.1:8787/');
    expect(localServerUrl('http://[::]:8787')).toBe('http://[::1]:8787/');
    expect(localServerUrl('http://192.168.1.20:8787')).toBe('http://192.168.1.20:8787/');
  });

  it('names the LAN origin a window will load from, for Chromium to treat as secure (webcam, clipboard)', () => {
    expect(lanWindowOrigin('192.168.1.20', 8787)).toBe('http://192.168.1.20:8787');
    expect(lanWindowOrigin('fd00::2', 8787)).toBe('http://[fd00::2]:8787');
    expect(lanWindowOrigin('[fd00::2]', 80)).toBe('http://[fd00::2]');
    // a name: the window loads the address it resolves to, and a name spoofed on the LAN is not trusted
    expect(lanWindowOrigin('shop-pc.local', 8787)).toBeNull();
    // loopback, or bound to every interface (loaded over loopback): secure already
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '0.0.0.0', '::', '::ffff:127.0.0.1', '[::]']) {
      expect(lanWindowOrigin(host, 8787), host).toBeNull();
    }
    // a port not known before the start, or nonsense: nothing is treated as secure
    for (const [host, port] of [
      ['192.168.1.20', 0],
      ['192.168.1.20', 70_000],
      ['192.168.1.20', 1.5],
      ['', 8787],
      ['a/b', 8787],
      ['user@192.168.1.20', 8787],
      ['a b', 8787],
    ] as const) {
      expect(lanWindowOrigin(host, port), `${host}:${port}`).toBeNull();
    }
  });
});

describe('application menu', () => {
  it('is none on Windows and Linux; on macOS the app, Edit and Window menus only (no Reload, no Electron help links)', () => {
    expect(applicationMenuTemplate('win32')).toBeNull();
    expect(applicationMenuTemplate('linux')).toBeNull();
    expect(applicationMenuTemplate('darwin')).toEqual([{ role: 'appMenu' }, { role: 'editMenu' }, { role: 'windowMenu' }]);
  });
});

describe('the right-click menu', () => {
  const flags = { canCut: true, canCopy: false, canPaste: true, canSelectAll: true };
  it('offers cut, copy, paste and select all in a field, each as the field allows', () => {
    expect(contextMenuTemplate({ isEditable: true, selectionText: '', editFlags: flags })).toEqual([
      { role: 'cut', enabled: true },
      { role: 'copy', enabled: false },
      { role: 'paste', enabled: true },
      { role: 'selectAll', enabled: true },
    ]);
  });
  it('offers copy over selected text (an API key shown once), and nothing elsewhere', () => {
    expect(contextMenuTemplate({ isEditable: false, selectionText: 'tw_abc', editFlags: flags })).toEqual([{ role: 'copy', enabled: true }]);
    expect(contextMenuTemplate({ isEditable: false, selectionText: '  ', editFlags: flags })).toEqual([]);
  });
});
