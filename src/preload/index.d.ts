/**
 * The bridge the preload exposes as `window.tirewear`: only what HTTP cannot do.
 * Everything else (scans, account, settings) goes to the core over the HTTP API.
 * `window.tirewear` is absent when the UI runs in a plain browser against `npm run serve`,
 * so the renderer must fall back (window.print(), no data folder button).
 *
 * Failures cross two boundaries that keep only an Error's message: ipcRenderer.invoke (main to
 * preload) and the contextBridge (preload to page). So nothing on the way throws: main answers
 * every call from the app's window with an Outcome, the preload hands the page an Outcome too,
 * and the page's clientBridge (src/preload/bridge-outcome.ts, used by the renderer's
 * lib/bridge.ts) turns a failure into a thrown BridgeError that keeps its `code`.
 */
declare namespace TireWear {
  interface PrintToPdfRequest {
    /** Suggested file name for the save dialog; folders and unsafe characters are stripped. */
    fileName: string;
    landscape?: boolean;
    /** Defaults to Letter in the Americas' Letter countries, A4 elsewhere (from the OS locale). */
    pageSize?: 'A4' | 'Letter';
  }

  type PrintToPdfResult = { saved: true; path: string } | { saved: false };

  /**
   * Why a call failed. `code` is one of the core's error codes: VALIDATION_ERROR (bad
   * arguments), NOT_FOUND (the OS could not open the data folder; the message names it), or
   * INTERNAL_ERROR (anything unexpected, message as the OS or Electron gave it; also a call main
   * refused outright, such as one from a frame that is not the app's, which rejects and so keeps
   * only its message).
   */
  interface BridgeFailure {
    ok: false;
    code: string;
    message: string;
  }

  /** What every channel answers: plain data, which survives both boundaries intact. */
  type Outcome<T> = { ok: true; value: T } | BridgeFailure;

  /** What the renderer uses (via lib/bridge.ts): failures reject with a BridgeError carrying `code`. */
  interface Bridge {
    readonly appVersion: string;
    /** Opens the folder holding the database, images and settings.json in the OS file manager. */
    openDataFolder(): Promise<void>;
    /** Prints the current page to PDF and asks where to save it; `saved: false` when the user cancels. */
    printToPDF(request: PrintToPdfRequest): Promise<PrintToPdfResult>;
    /** Opens an https:// URL in the default browser; other schemes are refused. */
    openExternal(url: string): Promise<void>;
    /** How many photos the window has still to send: closing or quitting asks first while any are. */
    setPendingWork(count: number): Promise<void>;
  }

  /** What the preload puts on `window.tirewear`: Bridge, with each result wrapped in an Outcome. */
  interface ExposedBridge {
    readonly appVersion: string;
    openDataFolder(): Promise<Outcome<void>>;
    printToPDF(request: PrintToPdfRequest): Promise<Outcome<PrintToPdfResult>>;
    openExternal(url: string): Promise<Outcome<void>>;
    setPendingWork(count: number): Promise<Outcome<void>>;
  }
}

interface Window {
  readonly tirewear?: TireWear.ExposedBridge;
}
