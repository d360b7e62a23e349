/**
 * GET/PUT /settings: the desk's own preferences in <dataDir>/settings.json, for the
 * signed-in user at this computer only (a LAN caller or an API key cannot reconfigure
 * the server). Server settings apply at the next start; `restartRequired` says so.
 */
import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox';
import type { SettingsData as WireSettings } from '../../../shared/api.js';
import { isLoopback, readSettingsFile, type Config, type FileSettings } from '../../config.js';
import { updateSettingsFile } from '../../settings-file.js';
import { SettingsData, replies } from '../schemas.js';

const SettingsPatch = Type.Object(
  {
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
    lanAccess: Type.Optional(Type.Boolean()),
    keepApiRunningInTray: Type.Optional(Type.Boolean()),
    units: Type.Optional(Type.Union([Type.Literal('mm'), Type.Literal('32nds')])),
    legalMinimum: Type.Optional(Type.Union([Type.Literal('1.6mm'), Type.Literal('2/32in')])),
    shopName: Type.Optional(Type.String({ maxLength: 80 })),
  },
  { additionalProperties: false },
);

export function toSettingsData(file: FileSettings, running: Config): WireSettings {
  const port = file.port ?? running.port;
  const lanAccess = file.lanAccess ?? running.lanAccess;
  return {
    port,
    lanAccess,
    keepApiRunningInTray: file.keepApiRunningInTray ?? false,
    units: file.ui?.units ?? 'mm',
    legalMinimum: file.ui?.legalMinimum ?? '1.6mm',
    shopName: file.ui?.shopName ?? '',
    restartRequired: port !== running.port || lanAccess !== running.lanAccess,
  };
}

/** Keys this route does not know (sync, allowedHosts, ...) are kept as they are. */
export function applyPatch(file: FileSettings, patch: Static<typeof SettingsPatch>): FileSettings {
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
    async () => ({ success: true as const, data: toSettingsData(readSettingsFile(config.dataDir), config) }),
  );

  app.put(
    '/settings',
    {
      config: { auth: 'desk' },
      schema: { tags, summary: 'Change desk settings', body: SettingsPatch, response: replies(SettingsData) },
    },
    async (request) => {
      const saved = await updateSettingsFile(config.dataDir, (file) => applyPatch(file, request.body));
      return { success: true as const, data: toSettingsData(saved, config) };
    },
  );
};
