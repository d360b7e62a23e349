/** The main window's options: Electron's secure defaults, spelled out so a refactor cannot drop one. */
import { isIP } from 'node:net';
import type { BrowserWindowConstructorOptions } from 'electron';
import { isLoopbackAddress } from '../core/http/security.js';
import { APP_VERSION_ARG } from '../preload/channels.js';

export interface WindowSetup {
  preloadPath: string;
  iconPath: string;
  platform: NodeJS.Platform;
  appVersion: string;
  isPackaged: boolean;
}

export function mainWindowOptions(setup: WindowSetup): BrowserWindowConstructorOptions {
  return {
    width: 1280,
    height: 860,
    minWidth: 900,
    minHeight: 600,
    title: 'TireWear',
    show: false,
    autoHideMenuBar: true,
    // Windows and macOS take the icon from the executable; Linux needs it on the window.
    ...(setup.platform === 'linux' ? { icon: setup.iconPath } : {}),
    webPreferences: {
      preload: setup.preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      devTools: !setup.isPackaged,
      additionalArguments: [`${APP_VERSION_ARG}${setup.appVersion}`],
    },
  };
}

/**
 * In `npm run dev` electron-vite serves the renderer with hot reload and proxies /api to the
 * core (see electron.vite.config.ts); otherwise the window shows what the core itself serves.
 */
export function rendererUrl(serverUrl: string, env: Record<string, string | undefined>, isPackaged: boolean): string {
  const devUrl = env.ELECTRON_RENDERER_URL;
  return !isPackaged && devUrl ? devUrl : serverUrl;
}

/**
 * Where the window finds the core. A server bound to every interface (LAN access) is still
 * reached over loopback, which its Host allow-list always accepts; one bound to a single LAN
 * address is reached there, and counts the window as this computer (security.ts isThisComputer).
 */
export function localServerUrl(serverUrl: string): string {
  const url = new URL(serverUrl);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = '[::1]';
  return new URL('/', url).href;
}

/**
 * The origin the window will load from when it is not loopback: a desk bound to one of its own
 * LAN addresses (`localServerUrl`). Chromium offers the webcam and the clipboard to secure origins
 * only, and plain http on a LAN address is not one; the window's traffic to its own address never
 * leaves this computer, so main names this origin in `unsafely-treat-insecure-origin-as-secure`
 * (a switch read before the app is ready, hence from the configured host and port). null for
 * loopback, every-interface binds (the window then loads over loopback), a host name, and port 0
 * (not known yet).
 */
export function lanWindowOrigin(host: string, port: number): string | null {
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) return null;
  const bare = host.trim().replace(/^\[(.*)\]$/, '$1');
  // an address only: the window loads the address the server listens on (a name would be resolved
  // to one), and a name spoofed on the LAN (mDNS) must not be treated as secure
  if (isIP(bare) === 0) return null;
  let url: URL;
  try {
    url = new URL(localServerUrl(`http://${bare.includes(':') ? `[${bare}]` : bare}:${port}`));
  } catch {
    return null;
  }
  const name = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // `::ffff:127.0.0.1` comes back from URL as `::ffff:7f00:1`
  if (name === 'localhost' || isLoopbackAddress(name) || isLoopbackAddress(bare) || /^::ffff:7f[0-9a-f]{2}:/.test(name)) return null;
  return url.origin;
}

/**
 * The application menu. Windows and Linux get none: the app has its own navigation, and
 * Electron's default offers Reload (which throws away a half-scanned queue) and links to
 * electronjs.org. A Mac app needs one for Quit, Hide and copy and paste (API keys, license
 * codes): the app, Edit and Window menus, no View or Help.
 */
export function applicationMenuTemplate(platform: NodeJS.Platform): Array<{ role: 'appMenu' | 'editMenu' | 'windowMenu' }> | null {
  return platform === 'darwin' ? [{ role: 'appMenu' }, { role: 'editMenu' }, { role: 'windowMenu' }] : null;
}

export type EditRole = 'cut' | 'copy' | 'paste' | 'selectAll';

/**
 * The right-click menu: Electron gives none, and clerks paste license codes and copy API keys.
 * Cut and paste in editable fields, copy wherever text is selected (or in a field); nothing elsewhere.
 */
export function contextMenuTemplate(params: {
  isEditable: boolean;
  selectionText: string;
  editFlags: { canCut: boolean; canCopy: boolean; canPaste: boolean; canSelectAll: boolean };
}): Array<{ role: EditRole; enabled: boolean }> {
  const { isEditable, selectionText, editFlags } = params;
  if (isEditable) {
    return [
      { role: 'cut', enabled: editFlags.canCut },
      { role: 'copy', enabled: editFlags.canCopy },
      { role: 'paste', enabled: editFlags.canPaste },
      { role: 'selectAll', enabled: editFlags.canSelectAll },
    ];
  }
  return selectionText.trim() ? [{ role: 'copy', enabled: true }] : [];
}
