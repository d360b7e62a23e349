/**
 * The bridge the preload exposes as `window.tirewear`: only what HTTP cannot do.
 * Everything else (scans, account, settings) goes to the core over the HTTP API.
 * `window.tirewear` is absent when the UI runs in a plain browser against `npm run serve`,
 * so the renderer must fall back (window.print(), no data folder button).
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

  interface Bridge {
    readonly appVersion: string;
    /** Opens the folder holding the database, images and settings.json in the OS file manager. */
    openDataFolder(): Promise<void>;
    /** Prints the current page to PDF and asks where to save it; `saved: false` when the user cancels. */
    printToPDF(request: PrintToPdfRequest): Promise<PrintToPdfResult>;
    /** Opens an https:// URL in the default browser; other schemes are refused. */
    openExternal(url: string): Promise<void>;
  }
}

interface Window {
  readonly tirewear?: TireWear.Bridge;
}
