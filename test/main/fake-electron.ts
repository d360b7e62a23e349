/**
 * Just enough of the electron module for src/main/index.ts to run under plain Node.
 * Every object records what main did to it; the test reads `fake`.
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { vi } from 'vitest';

class FakeApp extends EventEmitter {
  ended = false;
  exitCode: number | null = null;
  readonly whenReady = () => Promise.resolve();
  readonly isPackaged = false;
  readonly requestSingleInstanceLock = () => true;
  readonly setAppUserModelId = vi.fn();
  readonly getAppPath = () => process.cwd();
  readonly getVersion = () => '0.1.0-test';
  readonly getLocaleCountryCode = () => 'US';
  /** Chromium switches main appended (name → value), as `app.commandLine` takes them before ready. */
  readonly switches = new Map<string, string>();
  readonly commandLine = { appendSwitch: (name: string, value = '') => void this.switches.set(name, value) };
  /** Folders main moved with setPath (development keeps its user data apart). */
  readonly paths = new Map<string, string>();
  constructor(private readonly root: string) {
    super();
  }

  getPath(name: string): string {
    return this.paths.get(name) ?? (name === 'userData' ? this.root : path.join(this.root, name));
  }

  setPath(name: string, value: string): void {
    this.paths.set(name, value);
  }

  /** Like Electron: before-quit listeners may hold the quit back with preventDefault. */
  quit(): void {
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) this.ended = true;
  }

  exit(code: number): void {
    this.exitCode = code;
  }

  /** Quit, then wait until main has finished closing the core and quit for real. */
  async requestQuit(): Promise<void> {
    this.quit();
    await vi.waitFor(() => {
      if (!this.ended) throw new Error('still closing');
    });
  }
}

class FakeWebContents extends EventEmitter {
  readonly reload = vi.fn();
  windowOpenHandler: ((details: { url: string }) => unknown) | null = null;
  setWindowOpenHandler(handler: (details: { url: string }) => unknown): void {
    this.windowOpenHandler = handler;
  }
}

export function createFakeElectron(userDataPath: string) {
  const app = new FakeApp(userDataPath);
  const fake = {
    app,
    windows: [] as FakeWindow[],
    trays: [] as unknown[],
    messageBoxes: [] as Array<Record<string, unknown>>,
    openedExternally: [] as string[],
    ipcHandlers: new Map<string, (event: unknown, ...args: unknown[]) => Promise<unknown>>(),
    requestHandler: null as null | ((...args: unknown[]) => void),
    /** What main set as the application menu (undefined: never set, Electron's default shows). */
    applicationMenu: undefined as unknown,
    powerMonitor: new EventEmitter(),
    /** What the session's permission handler answers for a request from `url`. */
    permissionRequest(permission: string, url: string, mediaTypes?: string[]): boolean {
      let granted: boolean | undefined;
      fake.requestHandler?.({}, permission, (answer: boolean) => (granted = answer), { requestingUrl: url, mediaTypes });
      return granted === true;
    },
  };

  class FakeWindow extends EventEmitter {
    loadedUrl: string | undefined;
    visible = false;
    focused = false;
    readonly webContents = new FakeWebContents();
    constructor(readonly options: { webPreferences?: Record<string, unknown> }) {
      super();
      fake.windows.push(this);
      app.emit('web-contents-created', {}, this.webContents);
    }
    static fromWebContents(): null {
      return null;
    }
    async loadURL(url: string): Promise<void> {
      this.loadedUrl = url;
    }
    show(): void {
      this.visible = true;
      this.emit('show');
    }
    hide(): void {
      this.visible = false;
    }
    focus(): void {
      this.focused = true;
    }
    isMinimized(): boolean {
      return false;
    }
    isVisible(): boolean {
      return this.visible;
    }
    isDestroyed(): boolean {
      return false;
    }
    restore(): void {}
  }

  class FakeTray {
    constructor() {
      fake.trays.push(this);
    }
    setToolTip(): void {}
    setContextMenu(): void {}
    on(): void {}
  }

  const electron = {
    app,
    BrowserWindow: FakeWindow,
    Tray: FakeTray,
    Menu: {
      buildFromTemplate: (template: unknown) => template,
      setApplicationMenu: (menu: unknown) => void (fake.applicationMenu = menu),
    },
    powerMonitor: fake.powerMonitor,
    nativeImage: { createFromPath: (file: string) => ({ file }) },
    dialog: {
      showMessageBox: async (options: Record<string, unknown>) => {
        fake.messageBoxes.push(options);
        return { response: 0 };
      },
      showErrorBox: (title: string, content: string) => fake.messageBoxes.push({ title, content }),
      showSaveDialog: async () => ({ canceled: true }),
    },
    ipcMain: {
      handle: (channel: string, listener: (event: unknown, ...args: unknown[]) => Promise<unknown>) => fake.ipcHandlers.set(channel, listener),
    },
    session: {
      defaultSession: {
        setPermissionRequestHandler: (handler: (...args: unknown[]) => void) => (fake.requestHandler = handler),
        setPermissionCheckHandler: vi.fn(),
        webRequest: { onHeadersReceived: vi.fn() },
      },
    },
    shell: {
      openExternal: async (url: string) => void fake.openedExternally.push(url),
      openPath: async () => '',
    },
  };
  return { ...electron, default: electron, fake };
}

export type FakeElectron = ReturnType<typeof createFakeElectron>['fake'];
