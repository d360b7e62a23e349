/** IPC channel names and the argument carrying the app version, shared by main and preload. */
export const CHANNELS = {
  openDataFolder: 'tirewear:open-data-folder',
  printToPdf: 'tirewear:print-to-pdf',
  openExternal: 'tirewear:open-external',
  pendingWork: 'tirewear:pending-work',
} as const;

/** A sandboxed preload cannot read package.json; main passes the version on its command line. */
export const APP_VERSION_ARG = '--tirewear-app-version=';

export function appVersionFromArgv(argv: readonly string[]): string {
  const arg = argv.find((a) => a.startsWith(APP_VERSION_ARG));
  return arg ? arg.slice(APP_VERSION_ARG.length) : '';
}
