/**
 * GET/PUT /settings: the desk's own preferences in <dataDir>/settings.json, for the
 * signed-in user at this computer only (a LAN caller or an API key cannot reconfigure
 * the server). Server settings apply at the next start; `restartRequired` says so.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox';
import type { SettingsData as WireSettings } from '../../../shared/api.js';
import { isLoopback, readSettingsFile, type Config, type FileSettings } from '../../config.js';
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

/** Write-to-temp, flush, rename: a crash leaves the old file or the new one, never half of either. */
export async function writeSettingsFile(dataDir: string, settings: FileSettings): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const target = path.join(dataDir, 'settings.json');
  const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(settings, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, target).catch(async (error: unknown) => {
    await rm(temp, { force: true });
    throw error;
  });
}

export const settingsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app.core;
  const tags = ['settings'];
  let writing: Promise<unknown> = Promise.resolve();

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
      // One read-modify-write at a time, so two quick saves cannot drop each other's keys.
      const update = writing.then(async () => {
        const next = applyPatch(readSettingsFile(config.dataDir), request.body);
        await writeSettingsFile(config.dataDir, next);
        return next;
      });
      writing = update.catch(() => undefined);
      return { success: true as const, data: toSettingsData(await update, config) };
    },
  );
};
