/** The service and the desk's own screens: /health, /settings, /connection. */
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { looseEnum, nullable } from './common.js';
import { SHOP_NAME_MAX } from './limits.js';

/** GET /health → data */
export const HealthData = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  modelVersion: nullable(Type.String()),
  storage: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
  uptimeS: Type.Integer(),
  problem: Type.Optional(Type.String({ description: 'When degraded: why (the database does not answer, or a storage failure of the last minute)' })),
});
export type HealthData = Static<typeof HealthData>;

/** A server setting as the running server has it. */
const settingInForce = <T extends TSchema>(value: T) =>
  Type.Object({
    inForce: value,
    source: Type.Union([Type.Literal('default'), Type.Literal('file'), Type.Literal('env'), Type.Literal('flag')], {
      description: 'Where the value in force comes from: the default, settings.json, an environment variable or a command-line flag',
    }),
    setBy: nullable(Type.String({ description: 'The variable or flag (TIREWEAR_PORT, --port) when source is env or flag' })),
    saved: nullable(value),
    overridden: Type.Boolean({ description: 'The saved value differs and cannot apply: the environment or a flag sets this one' }),
    restartRequired: Type.Boolean({ description: 'The saved value differs and applies at the next start' }),
  });
export type SettingInForce<T> = Static<ReturnType<typeof settingInForce<TUnsafe<T>>>>;

const Units = Type.Union([Type.Literal('mm'), Type.Literal('32nds')]);
const LegalMinimum = Type.Union([Type.Literal('1.6mm'), Type.Literal('2/32in')]);

/**
 * GET /settings, PUT /settings (cookie session from loopback only) → data.
 * port / lanAccess / host take effect at the next start (restartRequired tells).
 */
export const SettingsData = Type.Object({
  port: Type.Integer({ description: 'As saved in settings.json, else in force' }),
  lanAccess: Type.Boolean({ description: 'As saved in settings.json, else in force' }),
  keepApiRunningInTray: Type.Boolean(),
  units: Units,
  legalMinimum: LegalMinimum,
  shopName: Type.String(),
  restartRequired: Type.Boolean({ description: 'A saved server setting applies at the next start (never one the environment or a flag overrides)' }),
  server: Type.Object({
    port: settingInForce(Type.Integer()),
    lanAccess: settingInForce(Type.Boolean()),
    host: settingInForce(Type.String()),
  }),
});
export type SettingsData = Static<typeof SettingsData>;

/** PUT /settings body: any of the saved settings. */
export const SettingsPatch = Type.Object(
  {
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
    lanAccess: Type.Optional(Type.Boolean()),
    keepApiRunningInTray: Type.Optional(Type.Boolean()),
    units: Type.Optional(Units),
    legalMinimum: Type.Optional(LegalMinimum),
    shopName: Type.Optional(Type.String({ maxLength: SHOP_NAME_MAX })),
  },
  { additionalProperties: false },
);
export type SettingsPatch = Static<typeof SettingsPatch>;

/** GET /connection → data: where a POS can reach this server. */
export const ConnectionInfo = Type.Object({
  port: Type.Integer({ description: 'The port listened on' }),
  lanAccess: Type.Boolean({ description: 'LAN access in force' }),
  hostname: nullable(Type.String({ description: "This computer's name, with LAN access only" })),
  addresses: Type.Array(
    Type.Object({
      address: Type.String(),
      family: nullable(Type.Union([Type.Literal(4), Type.Literal(6)])),
      kind: looseEnum(['loopback', 'lan', 'name'] as const),
      url: Type.String({ description: 'The base URL a POS uses, e.g. http://192.168.1.20:8787' }),
    }),
    { description: 'Loopback first; with LAN access the LAN addresses (IPv4, then IPv6) and the name' },
  ),
});
export type ConnectionInfo = Static<typeof ConnectionInfo>;
