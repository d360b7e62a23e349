/// <reference types="electron-vite/node" />
/**
 * Electron lifecycle only: start the same core as `npm run serve` in this process, show it
 * in one locked-down window, keep it in the tray if the shop wants the API up, and close it
 * cleanly on quit. The decisions live in the small modules beside this file.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { app, BrowserWindow, dialog, ipcMain, Menu, nativeImage, powerMonitor, shell, Tray, type WebContents } from 'electron';
import trayIconPath from '../../build/tray.png?asset';
import trayTemplatePath from '../../build/trayTemplate.png?asset';
import trayTemplate2xPath from '../../build/trayTemplate@2x.png?asset';
import windowIconPath from '../../build/icons/512x512.png?asset';
import type { Config } from '../core/config.js';
import { createLogger, type Logger } from '../core/logger.js';
import { pageSizeForCountry, registerBridgeHandlers } from './bridge-handlers.js';
import { desktopBaseConfig, devUserDataPath, keepApiRunningInTray, loadDesktopConfig, type DesktopPaths } from './desktop-config.js';
import { prepareLogFile, rotateLogWhileRunning } from './log-file.js';
import { closeCoreBeforeQuit, leaveGuard, QUIT_DEADLINE_MS, quitOnSystemShutdown, trayMenu, windowCloseAction, type Shutdown } from './lifecycle.js';
import { isSafeExternalUrl, originOf } from './navigation.js';
import { guardEveryWebContents, secureSession } from './session-guards.js';
import { describeStartupFailure } from './startup-error.js';
import { applicationMenuTemplate, lanWindowOrigin, localServerUrl, mainWindowOptions, rendererUrl } from './window-options.js';
import { loadWatched, logProcessErrors } from './window-watch.js';

const preloadPath = fileURLToPath(new URL('../preload/index.cjs', import.meta.url));

let mainWindow: BrowserWindow | null = null;
let tray: Tray | null = null;
/** Set once the core listens: what a failure later in the start must close before exiting. */
let stopCore: (() => Promise<void>) | null = null;

async function openExternal(url: string): Promise<void> {
  if (isSafeExternalUrl(url)) await shell.openExternal(url);
}

function showWindow(): void {
  if (!mainWindow) return;
  if (mainWindow.isMinimized()) mainWindow.restore();
  mainWindow.show();
  mainWindow.focus();
}

/** The macOS menu bar takes a 16 pt template image (black and clear, tinted by macOS); the others the colour icon. */
function trayImage(): Electron.NativeImage {
  if (process.platform !== 'darwin') return nativeImage.createFromPath(trayIconPath);
  const image = nativeImage.createFromPath(trayTemplatePath);
  image.addRepresentation({ scaleFactor: 2, buffer: readFileSync(trayTemplate2xPath) });
  image.setTemplateImage(true);
  return image;
}

function showTray(apiUrl: string): void {
  if (tray) return;
  tray = new Tray(trayImage());
  tray.setToolTip(`TireWear: API at ${apiUrl}`);
  tray.setContextMenu(Menu.buildFromTemplate(trayMenu({ apiUrl, showWindow, quit: () => app.quit() })));
  tray.on('click', showWindow);
}

/** Development logs to the terminal; the packaged app to a file in the data folder. */
async function desktopLogger(config: Config, isPackaged: boolean): Promise<Logger> {
  if (!isPackaged) return createLogger({ level: config.logLevel });
  const dest = await prepareLogFile(config.dataDir);
  const destination = pino.destination({ dest, sync: true });
  // a desk kept in the tray for weeks: the size is checked while it runs too
  rotateLogWhileRunning(dest, destination);
  return createLogger({ level: config.logLevel, destination });
}

async function startCore(paths: DesktopPaths) {
  let config: Config = desktopBaseConfig(paths);
  let startLogger: Logger | null = null;
  try {
    config = loadDesktopConfig(process.env, paths);
    const logger = await desktopLogger(config, paths.isPackaged);
    startLogger = logger;
    if (paths.isPackaged) {
      logProcessErrors(process, logger, (error) => {
        const message = error instanceof Error ? error.message : String(error);
        dialog.showErrorBox('TireWear stopped', `${message}\n\nDetails are in ${config.dataDir}/logs/tirewear.log. TireWear will close; start it again.`);
        app.quit();
      });
    }
    // Imported here, not at the top: a native module that fails to load (sharp, onnxruntime, an
    // antivirus holding a DLL) then reaches the start-up dialog and the log like any other failure.
    const { startServer } = await import('../core/server.js');
    const server = await startServer(config, { logger });
    stopCore = () => server.close();
    return { config, logger, server };
  } catch (error) {
    const failure = describeStartupFailure(error, config);
    // the log is where DESKTOP.md sends support: a start that failed is in it too (once it could open)
    startLogger?.error({ err: error }, `start failed: ${failure.title}`);
    await dialog.showMessageBox({ type: 'error', title: failure.title, message: failure.message, detail: failure.detail });
    return null;
  }
}

/** Asks before photos the window has still to send are thrown away by closing it or quitting. */
const leaving = leaveGuard(async (waiting) => {
  const photos = waiting === 1 ? '1 photo is' : `${waiting} photos are`;
  const options = {
    type: 'warning' as const,
    title: 'TireWear',
    message: `${photos} still waiting to be analysed`,
    detail: 'They are kept nowhere else (a webcam shot only in this window): if TireWear closes now, take them again later.',
    buttons: ['Stay', 'Close anyway'],
    defaultId: 0,
    cancelId: 0,
  };
  // not parented to a hidden window (a quit from the tray): the question would not show
  const owner = mainWindow && mainWindow.isVisible() ? mainWindow : null;
  const { response } = owner ? await dialog.showMessageBox(owner, options) : await dialog.showMessageBox(options);
  return response === 1;
});

function createWindow(url: string, config: Config, shutdown: Shutdown, apiUrl: string, logger: Logger): void {
  const window = new BrowserWindow(
    mainWindowOptions({
      preloadPath,
      iconPath: windowIconPath,
      platform: process.platform,
      appVersion: app.getVersion(),
      isPackaged: app.isPackaged,
    }),
  );
  window.once('ready-to-show', () => window.show());
  window.on('close', (event) => {
    const action = windowCloseAction({
      quitting: shutdown.isQuitting(),
      keepApiRunningInTray: keepApiRunningInTray(config.dataDir),
    });
    if (action === 'hide-to-tray') {
      event.preventDefault();
      window.hide();
      showTray(apiUrl);
      return;
    }
    // closing the window quits (window-all-closed): ask first while photos wait to be sent
    if (!shutdown.isQuitting() && !leaving.mayLeaveNow()) {
      event.preventDefault();
      void leaving.confirm().then((ok) => {
        if (ok && !window.isDestroyed()) window.close();
      });
    }
  });
  // a page that reloads (a crash recovered, window-watch.ts) starts with an empty queue
  window.webContents.on('did-navigate', () => leaving.setWaiting(0));
  window.webContents.on('render-process-gone', () => leaving.setWaiting(0));
  window.on('closed', () => {
    mainWindow = null;
  });
  // Windows ends the session without a before-quit: start the same bounded close when it asks
  // (query-session-end, where the end can still be delayed), and at the latest at session-end
  const onSessionEnd = quitOnSystemShutdown(app, () => leaving.systemEnding());
  window.on('query-session-end', onSessionEnd);
  window.on('session-end', () => onSessionEnd());
  mainWindow = window;
  loadWatched(window, url, {
    logger,
    active: () => !shutdown.isQuitting(),
    // not parented to the window: it may be hidden in the tray
    askRetry: async (message) => {
      const { response } = await dialog.showMessageBox({
        type: 'error',
        title: 'TireWear',
        message,
        detail: `The log is in ${config.dataDir}/logs.`,
        buttons: ['Try again', 'Quit'],
        defaultId: 0,
        cancelId: 1,
      });
      if (response === 1) app.quit();
      return response === 0;
    },
  });
}

function desktopPaths(): DesktopPaths {
  return {
    appPath: app.getAppPath(),
    userDataPath: app.getPath('userData'),
    localAppDataPath: process.platform === 'win32' ? process.env.LOCALAPPDATA : undefined,
    resourcesPath: process.resourcesPath,
    isPackaged: app.isPackaged,
  };
}

/**
 * A desk bound to one of its LAN addresses loads its window there (localServerUrl): that origin is
 * made a secure one for Chromium, or the webcam and the clipboard are not offered (lanWindowOrigin).
 * Only read before the app is ready. A configuration that does not load is left to startCore's report.
 */
function treatLanWindowAsSecure(): void {
  if (!app.isPackaged && process.env.ELECTRON_RENDERER_URL) return; // the dev server's page
  let origin: string | null = null;
  try {
    const config = loadDesktopConfig(process.env, desktopPaths());
    origin = lanWindowOrigin(config.host, config.port);
  } catch {
    return;
  }
  if (origin) app.commandLine.appendSwitch('unsafely-treat-insecure-origin-as-secure', origin);
}

async function run(): Promise<void> {
  await app.whenReady();
  const menu = applicationMenuTemplate(process.platform);
  Menu.setApplicationMenu(menu ? Menu.buildFromTemplate(menu) : null);
  const started = await startCore(desktopPaths());
  if (!started) {
    app.exit(1);
    return;
  }
  const { config, logger, server } = started;
  const apiUrl = localServerUrl(server.url);
  const windowUrl = rendererUrl(apiUrl, process.env, app.isPackaged);
  const appOrigin = originOf(windowUrl) ?? '';
  const shutdown = closeCoreBeforeQuit(
    app,
    () => server.close(),
    (error) => logger.error({ err: error }, 'closing the core failed'),
    {
      // the core answers 503 while it closes: nothing to click meanwhile
      onClosing: () => mainWindow?.hide(),
      confirmQuit: { now: () => leaving.mayLeaveNow(), ask: () => leaving.confirm() },
    },
  );
  // macOS and Linux: the OS shutting down or restarting waits while the core closes
  powerMonitor.on(
    'shutdown',
    quitOnSystemShutdown(app, () => leaving.systemEnding()),
  );

  secureSession(appOrigin, originOf(apiUrl) ?? '');
  guardEveryWebContents(app, appOrigin);

  registerBridgeHandlers<WebContents>(ipcMain, {
    appOrigin,
    dataDir: config.dataDir,
    documentsDir: app.getPath('documents'),
    defaultPageSize: pageSizeForCountry(app.getLocaleCountryCode()),
    openPath: (target) => shell.openPath(target),
    openExternal,
    chooseSavePath: async (sender, defaultPath) => {
      const owner = BrowserWindow.fromWebContents(sender);
      const options = { title: 'Save the scan report as PDF', defaultPath, filters: [{ name: 'PDF', extensions: ['pdf'] }] };
      const result = owner ? await dialog.showSaveDialog(owner, options) : await dialog.showSaveDialog(options);
      return result.canceled || !result.filePath ? null : result.filePath;
    },
    writeFile: (target, data) => writeFile(target, data),
    setPendingWork: (count) => leaving.setWaiting(count),
  });

  app.on('window-all-closed', () => app.quit());
  app.on('activate', () => (mainWindow ? showWindow() : createWindow(windowUrl, config, shutdown, apiUrl, logger)));
  createWindow(windowUrl, config, shutdown, apiUrl, logger);
}

// `npm run dev` and `npm run start` keep their data apart from an installed TireWear's
if (!app.isPackaged) app.setPath('userData', devUserDataPath(app.getPath('appData')));

if (app.requestSingleInstanceLock()) {
  app.setAppUserModelId('com.tirewear.desktop');
  treatLanWindowAsSecure();
  app.on('second-instance', showWindow);
  run().catch(async (error: unknown) => {
    dialog.showErrorBox('TireWear stopped', error instanceof Error ? error.message : String(error));
    // the same bound as a quit: a core that does not close does not keep the process alive
    await Promise.race([stopCore?.().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, QUIT_DEADLINE_MS).unref())]);
    app.exit(1);
  });
} else {
  console.error('TireWear is already running: its window has been brought to the front.');
  app.quit();
}
