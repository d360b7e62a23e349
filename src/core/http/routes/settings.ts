/**
 * GET/PUT /settings: the desk's own preferences in <dataDir>/settings.json, for the
 * signed-in user at this computer only (a LAN caller or an API key cannot reconfigure
 * the server). Server settings apply at the next start; `restartRequired` says so.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SettingInForce, SettingsData as WireSettings, SettingsPatch as SettingsChange } from '../../../shared/api.js';
import { isLoopback, type Config, type FileSettings, type OriginKey } from '../../config.js';
import { AppError } from '../../errors.js';
import { readSettingsForRequest, updateSettingsFile } from '../../settings-file.js';
import { SettingsData, SettingsPatch, replies } from '../schemas.js';

/** One server setting: in force, where from, as saved, and whether the saved one can apply. */
function inForce<T extends number | boolean | string>(running: Config, key: OriginKey, value: T, saved: T | undefined): SettingInForce<T> {
  const origin = running.origins?.[key];
  const differs = saved !== undefined && saved !== running[key];
  const overridden = differs && (origin?.source === 'env' || origin?.source === 'flag');
  return {
    inForce: value,
    source: origin?.source ?? 'default',
    setBy: origin?.setBy ?? null,
    saved: saved ?? null,
    overridden,
    restartRequired: differs && !overridden,
  };
}

/**
 * `listeningPort`: the port the server listens on (a configured 0 picks one), shown as the port in
 * force. The top-level port and lanAccess stay the saved values (the form's); `server` says what
 * runs and why, so a value the environment or a flag sets is never "restart required".
 */
export function toSettingsData(file: FileSettings, running: Config, listeningPort: number = running.port): WireSettings {
  const server = {
    port: inForce(running, 'port', listeningPort, file.port),
    lanAccess: inForce(running, 'lanAccess', running.lanAccess, file.lanAccess),
    host: inForce(running, 'host', running.host, file.host),
  };
  return {
    port: file.port ?? running.port,
    lanAccess: file.lanAccess ?? running.lanAccess,
    keepApiRunningInTray: file.keepApiRunningInTray ?? false,
    units: file.ui?.units ?? 'mm',
    legalMinimum: file.ui?.legalMinimum ?? '1.6mm',
    shopName: file.ui?.shopName ?? '',
    restartRequired: server.port.restartRequired || server.lanAccess.restartRequired,
    server,
  };
}

/** The port this server listens on, or the configured one before it listens (tests with inject). */
export function listeningPort(server: { address(): unknown }, configured: number): number {
  const address = server.address();
  return typeof address === 'object' && address !== null && typeof (address as { port?: unknown }).port === 'number'
    ? (address as { port: number }).port
    : configured;
}

/**
 * Ports Chromium will not load a page from (net/base/port_util.cc, kRestrictedPorts): a desk on one
 * starts its server but its window fails with ERR_UNSAFE_PORT, so Settings refuses them.
 */
export const BROWSER_BLOCKED_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137,
  139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Keys this route does not know (sync, allowedHosts, ...) are kept as they are. */
export function applyPatch(file: FileSettings, patch: SettingsChange): FileSettings {
  const { units, legalMinimum, shopName, ...server } = patch;
  const next: FileSettings = { ...file, ...server };
  if (patch.lanAccess === false) next.host = '127.0.0.1';
  if (patch.lanAccess === true && (!file.host || isLoopback(file.host))) next.host = '0.0.0.0';
  const ui = { ...file.ui };
  if (units !== undefined) ui.units = units;
  if (legalMinimum !== undefined) ui.legalMinimum = legalMinimum;
  if (shopName !== undefined) ui.shopName = shopName.trim();
  if (Object.keys(ui).length > 0) next.ui = ui;
  return next;
}

export const settingsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app.core;
  const tags = ['settings'];

  app.get(
    '/settings',
    {
      config: { auth: 'desk' },
      schema: { tags, summary: 'Desk settings (signed in, this computer only)', response: replies(SettingsData) },
    },
    async () => ({
      success: true as const,
      data: toSettingsData(readSettingsForRequest(config.dataDir), config, listeningPort(app.server, config.port)),
    }),
  );

  app.put(
    '/settings',
    {
      config: { auth: 'desk' },
      schema: { tags, summary: 'Change desk settings', body: SettingsPatch, response: replies(SettingsData) },
    },
    async (request) => {
      const { port } = request.body;
      if (port !== undefined && BROWSER_BLOCKED_PORTS.has(port)) {
        throw new AppError('VALIDATION_ERROR', `Port ${port} is one browsers refuse to open (the app's window is one): choose another, such as 8787 or 8080`);
      }
      const saved = await updateSettingsFile(config.dataDir, (file) => applyPatch(file, request.body));
      return { success: true as const, data: toSettingsData(saved, config, listeningPort(app.server, config.port)) };
    },
  );
};
