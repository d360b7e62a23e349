/** Accounts, sign-in, plans and licenses, API keys: /auth, /account, /licenses, /keys. */
import { Type, type Static } from '@sinclair/typebox';
import { IsoDate, nullable } from './common.js';
import { KEY_NAME_MAX } from './limits.js';

/** POST /auth/login body. */
export const Credentials = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});
export type Credentials = Static<typeof Credentials>;

/** POST /auth/register body: as a sign-in, with a password of at least 8 characters. */
export const NewAccount = Type.Object({
  email: Credentials.properties.email,
  password: Type.String({ minLength: 8, maxLength: 1024 }),
});
export type NewAccount = Static<typeof NewAccount>;

/** POST /auth/register, POST /auth/login → data; GET /account → data.account */
export const WireAccount = Type.Object({ id: Type.String(), email: Type.String(), createdAt: IsoDate });
export type WireAccount = Static<typeof WireAccount>;

export const WireLicense = Type.Object({
  codeId: Type.String(),
  kind: Type.Union([Type.Literal('pack'), Type.Literal('pro')]),
  scans: nullable(Type.Integer()),
  expiresAt: nullable(IsoDate),
  redeemedAt: IsoDate,
});
export type WireLicense = Static<typeof WireLicense>;

/** GET /account → data */
export const AccountData = Type.Object({
  account: WireAccount,
  plan: Type.Union([Type.Literal('free'), Type.Literal('pro')]),
  proExpiresAt: nullable(IsoDate),
  allowance: Type.Object({
    limit: nullable(Type.Integer()),
    used: Type.Integer(),
    remaining: nullable(Type.Integer()),
    resetAt: IsoDate,
  }),
  packCredit: Type.Integer(),
  licenses: Type.Array(WireLicense),
});
export type AccountData = Static<typeof AccountData>;

/** POST /licenses body. */
export const RedeemBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 4096 }) });
export type RedeemBody = Static<typeof RedeemBody>;
/** POST /licenses { code } → data */
export const RedeemData = Type.Object({ license: WireLicense, account: AccountData });
export type RedeemData = Static<typeof RedeemData>;

/** GET /keys → data.items; POST /keys → data (with `key` shown once) */
export const WireApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  createdAt: IsoDate,
  lastUsedAt: nullable(IsoDate),
  revokedAt: nullable(IsoDate),
});
export type WireApiKey = Static<typeof WireApiKey>;

export const CreatedApiKey = Type.Composite([WireApiKey, Type.Object({ key: Type.String() })]);
export type CreatedApiKey = Static<typeof CreatedApiKey>;

/** GET /keys → data */
export const ApiKeyList = Type.Object({ items: Type.Array(WireApiKey) });
export type ApiKeyList = Static<typeof ApiKeyList>;
/** POST /keys body. */
export const NewKeyBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: KEY_NAME_MAX }) });
export type NewKeyBody = Static<typeof NewKeyBody>;
/** DELETE /keys/{id}: the key's id. */
export const KeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });
