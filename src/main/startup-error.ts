/** What the user reads when the core cannot start: a dialog, since there is no window yet. */
import path from 'node:path';
import { ConfigError } from '../core/config.js';

export interface StartupFailure {
  title: string;
  message: string;
  detail: string;
}

export function describeStartupFailure(error: unknown, where: { host: string; port: number; dataDir: string }): StartupFailure {
  const settingsFile = path.join(where.dataDir, 'settings.json');
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE') {
    return {
      title: 'TireWear cannot start',
      message: `Port ${where.port} on ${where.host} is already in use.`,
      detail:
        'Another TireWear window, `npm run serve`, or another program is using it. ' +
        `Close that program, or give TireWear another port: set "port" (for example 8788) in ${settingsFile}, ` +
        'or start TireWear with the environment variable TIREWEAR_PORT=8788. ' +
        'POS software calling the API must then use the new port too.',
    };
  }
  // a file's EACCES (macOS: a data folder on a disk or in a place this app may not write) names its path
  const fileError = typeof (error as { path?: unknown } | null)?.path === 'string';
  if ((code === 'EACCES' && !fileError) || code === 'EADDRNOTAVAIL') {
    return {
      title: 'TireWear cannot start',
      message: `TireWear may not listen on ${where.host}:${where.port} (${code}).`,
      detail:
        `Choose a port from 1024 to 65535 and a local address in ${settingsFile}, or set TIREWEAR_PORT / TIREWEAR_HOST.` +
        (code === 'EACCES'
          ? ' On Windows a port can also be reserved by Hyper-V, WSL or Docker: `netsh int ipv4 show excludedportrange protocol=tcp` lists the reserved ranges; pick a port outside them.'
          : ''),
    };
  }
  if (error instanceof ConfigError) {
    return {
      title: 'TireWear settings are invalid',
      message: error.message,
      detail: `Fix or delete ${settingsFile} (TireWear then starts with default settings), or the TIREWEAR_* environment variable named above.`,
    };
  }
  return {
    title: 'TireWear cannot start',
    message: error instanceof Error ? error.message : String(error),
    detail:
      (fileError && (code === 'EACCES' || code === 'EPERM')
        ? 'TireWear may not write that file or folder: check its permissions (on macOS also System Settings → Privacy & Security → Files and Folders). '
        : '') + `Data folder: ${where.dataDir}. If this keeps happening, send this message to your TireWear supplier.`,
  };
}
