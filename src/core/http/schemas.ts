/**
 * TypeBox schemas of the wire shapes in src/shared/api.ts. The same objects validate
 * requests, serialize responses (unknown properties are dropped, so nothing internal
 * leaks) and feed the OpenAPI document.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_STATUS } from '../errors.js';

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const IsoDate = Type.String({ format: 'date-time' });

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.String({
        enum: Object.keys(ERROR_STATUS),
        description: 'What went wrong, for a program to act on (docs/API.md §3 lists when each is answered)',
      }),
      message: Type.String({ description: 'What went wrong and what to do, for a person to read' }),
    }),
  },
  { $id: 'ErrorEnvelope' },
);

export const WearSchema = Type.Union([Type.Literal('new'), Type.Literal('good'), Type.Literal('medium'), Type.Literal('worn'), Type.Literal('critical')]);

/** verbose=1's extras (analyze) and GET /scans/{scanId}/overlays: named PNG data URLs, and located points. */
const Overlays = Type.Record(Type.String(), Type.String(), {
  description: "Named PNG data URLs (depthHeatmap, mask) the size of the analysed frame, with the photo's aspect ratio: stretch them onto it",
});
const Points = Type.Array(
  Type.Object(
    {
      kind: Type.String({ description: '"twi" (a wear bar) or "groove" (a main groove)' }),
      x: Type.Number({ description: "pixels in the uploaded image's upright coordinates" }),
      y: Type.Number(),
      confirmed: Type.Optional(Type.Boolean({ description: 'a TWI bar counted in twiConsensusCount' })),
    },
    { additionalProperties: true },
  ),
);

// Response types stay loose where stored scans may hold older values (a hub keeps what desks sent):
// `enum` on a string documents the values without the serializer refusing one (an anyOf of
// literals would answer the whole list 500), and depth32nds stays a number (an integer type
// would truncate a stored 7.6 to 7 silently).
export const WireResult = Type.Object({
  wear: Type.String({ enum: ['new', 'good', 'medium', 'worn', 'critical'] }),
  confidence: Type.Number(),
  estimatedDepthMm: Type.Number(),
  depthRangeMm: Type.Object({ min: Type.Number(), max: Type.Number() }),
  treadHealthIndex: Type.Integer(),
  isPreliminary: Type.Boolean(),
  modelAlignment: Type.Integer(),
  twiConsensusCount: Type.Integer(),
  processingTimeMs: Type.Integer(),
  modelVersion: Type.String(),
  disclaimer: Type.String(),
  depth32nds: Type.Number({ description: 'estimatedDepthMm in whole 32nds of an inch, within the wear band (a whole number)' }),
  grooves: Type.Optional(
    Type.Array(Type.Object({ index: Type.Integer(), depthMm: Type.Number() }), {
      description: 'Per-groove depths: only in scans stored before 2026-11-24; no longer produced (no skill measured, models/README.md).',
    }),
  ),
  overlays: Type.Optional(Overlays),
  points: Type.Optional(Points),
});

export const AnalyzeData = Type.Object({ scanId: Type.String(), result: WireResult });

/** GET /scans/{scanId}/overlays: analyze's verbose=1 extras of a stored scan, made again from its photo. */
export const ScanOverlays = Type.Object({ overlays: Overlays, points: Points });

const WireScanBase = Type.Object({
  scanId: Type.String(),
  createdAt: IsoDate,
  vehicle: nullable(Type.String()),
  position: nullable(Type.String()),
  result: WireResult,
  image: Type.Object({
    width: Type.Integer(),
    height: Type.Integer(),
    mime: Type.String(),
    url: Type.String(),
    thumbnailUrl: Type.String(),
  }),
  measurementMm: nullable(Type.Number()),
  measuredAt: nullable(IsoDate),
});

export const ScanChange = Type.Object({
  at: IsoDate,
  field: Type.String({ enum: ['vehicle', 'position', 'measurementMm'] }),
  from: nullable(Type.Union([Type.String(), Type.Number()])),
  to: nullable(Type.Union([Type.String(), Type.Number()])),
  via: Type.String({
    enum: ['session', 'key', 'anonymous', 'sync'],
    description: 'How it was made: signed in, through an API key, by the holder of an anonymous scan, or merged from a shop (hub)',
  }),
});

/** What issue 42 added to a scan: computed from the record (the plate key, the depth of record) or its corrections. */
const ScanAdditions = Type.Object({
  vehicleKey: nullable(
    Type.String({ description: 'The plate key: the vehicle in NFKC, letters and digits only, upper case ("KA TW 204" → "KATW204"); null without one' }),
  ),
  depthOfRecordMm: Type.Number({ description: 'The gauge reading (measurementMm) where there is one, else result.estimatedDepthMm' }),
  isPreliminary: Type.Boolean({ description: 'false once a gauge reading exists, else result.isPreliminary' }),
  ofRecord: Type.Object(
    {
      source: Type.String({ enum: ['gauge', 'estimate'] }),
      wear: Type.String({ enum: ['new', 'good', 'medium', 'worn', 'critical'] }),
      depth32nds: Type.Number({ description: 'depthOfRecordMm in whole 32nds of an inch, within its wear band' }),
      treadHealthIndex: Type.Integer(),
    },
    { description: 'Wear band, 32nds and index of depthOfRecordMm: what a report colours and advises by' },
  ),
  changes: Type.Array(ScanChange, { description: 'Corrections (PATCH, PUT /measurement), oldest first; the newest 50 are kept' }),
});

export const WireScan = Type.Composite([WireScanBase, ScanAdditions]);

export const ScanList = Type.Object({ items: Type.Array(WireScan), nextCursor: nullable(Type.String()) });

export const VehicleGroup = Type.Object({
  vehicleKey: nullable(Type.String({ description: 'null: the scans without a vehicle (or with one of no letter or digit)' })),
  vehicle: nullable(Type.String({ description: 'As typed on its newest scan' })),
  scanCount: Type.Integer(),
  lastScanAt: IsoDate,
  firstScanAt: IsoDate,
  scans: Type.Array(WireScan, { description: 'Its newest scans (at most scansPerVehicle), newest first' }),
});

export const VehicleList = Type.Object({ items: Type.Array(VehicleGroup), nextCursor: nullable(Type.String()) });

const Probability = Type.Number({ minimum: 0, maximum: 1 });

export const CaptureCheck = Type.Object({
  scene: Type.String({
    enum: ['tread', 'tread_not_visible', 'no_tire', 'unknown'],
    description: "The models' scene reader; unknown when the models in use have none",
  }),
  probabilities: nullable(Type.Object({ tread: Probability, treadNotVisible: Probability, noTire: Probability })),
  sharpness: Type.Object(
    { value: Type.Number(), minimum: Type.Number(), ok: Type.Boolean() },
    { description: 'Variance of the Laplacian of the grey frame (at most 640 px on the long side)' },
  ),
  brightness: Type.Object(
    { value: Type.Number(), minimum: Type.Number(), maximum: Type.Number(), ok: Type.Boolean() },
    { description: 'Mean luma of the frame, 0-255' },
  ),
  ok: Type.Boolean({ description: 'Tread in view (or unknown), sharp and lit' }),
  problems: Type.Array(Type.String({ enum: ['no_tire', 'tread_not_visible', 'blurred', 'too_dark', 'too_bright'] })),
  width: Type.Integer(),
  height: Type.Integer(),
});

export const WireShop = Type.Object({ apiKeyId: Type.String(), name: nullable(Type.String()), deleted: Type.Boolean() });

// A desk shows its hub's scans as the hub answers them: a hub of an earlier version sends none of
// issue 42's fields, so they are optional here (the serializer would refuse the page otherwise).
export const HubScan = Type.Composite([WireScanBase, Type.Partial(ScanAdditions), Type.Object({ shop: nullable(WireShop) })]);

export const HubScanList = Type.Object({ items: Type.Array(HubScan), nextCursor: nullable(Type.String()) });

export const HubShopList = Type.Object({ items: Type.Array(WireShop) });

export const WireAccount = Type.Object({ id: Type.String(), email: Type.String(), createdAt: IsoDate });

export const WireLicense = Type.Object({
  codeId: Type.String(),
  kind: Type.Union([Type.Literal('pack'), Type.Literal('pro')]),
  scans: nullable(Type.Integer()),
  expiresAt: nullable(IsoDate),
  redeemedAt: IsoDate,
});

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

export const WireApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  createdAt: IsoDate,
  lastUsedAt: nullable(IsoDate),
  revokedAt: nullable(IsoDate),
});

export const CreatedApiKey = Type.Composite([WireApiKey, Type.Object({ key: Type.String() })]);

export const RedeemData = Type.Object({ license: WireLicense, account: AccountData });

export const HealthData = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  modelVersion: nullable(Type.String()),
  storage: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
  uptimeS: Type.Integer(),
  problem: Type.Optional(Type.String({ description: 'When degraded: why (the database does not answer, or a storage failure of the last minute)' })),
});

const SettingInForce = <T extends TSchema>(value: T) =>
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

export const SettingsData = Type.Object({
  port: Type.Integer({ description: 'As saved in settings.json, else in force' }),
  lanAccess: Type.Boolean({ description: 'As saved in settings.json, else in force' }),
  keepApiRunningInTray: Type.Boolean(),
  units: Type.Union([Type.Literal('mm'), Type.Literal('32nds')]),
  legalMinimum: Type.Union([Type.Literal('1.6mm'), Type.Literal('2/32in')]),
  shopName: Type.String(),
  restartRequired: Type.Boolean({ description: 'A saved server setting applies at the next start (never one the environment or a flag overrides)' }),
  server: Type.Object({
    port: SettingInForce(Type.Integer()),
    lanAccess: SettingInForce(Type.Boolean()),
    host: SettingInForce(Type.String()),
  }),
});

export const ConnectionInfo = Type.Object({
  port: Type.Integer({ description: 'The port listened on' }),
  lanAccess: Type.Boolean({ description: 'LAN access in force' }),
  hostname: nullable(Type.String({ description: "This computer's name, with LAN access only" })),
  addresses: Type.Array(
    Type.Object({
      address: Type.String(),
      family: nullable(Type.Union([Type.Literal(4), Type.Literal(6)])),
      kind: Type.String({ enum: ['loopback', 'lan', 'name'] }),
      url: Type.String({ description: 'The base URL a POS uses, e.g. http://192.168.1.20:8787' }),
    }),
    { description: 'Loopback first; with LAN access the LAN addresses (IPv4, then IPv6) and the name' },
  ),
});

export const Empty = Type.Object({});

/** `{ success: true, data }` */
export const ok = <T extends TSchema>(data: T) => Type.Object({ success: Type.Literal(true), data });

/**
 * Marks a response header's schema as sent on every answer of its status: plugins/swagger.ts turns
 * it into the Header Object's `required: true` (OpenAPI's "always sent"), which @fastify/swagger
 * does not write itself.
 */
export const ALWAYS_SENT = 'x-always-sent';

const RETRY_AFTER = Type.String({ description: 'Seconds to wait: on 429 until the window resets, on 503 and 409 a short back-off' });

/** Every route's failures: the envelope; a 429 (sign-in and registration limits) and a 503 carry Retry-After. */
const errors = {
  '4xx': Type.Ref(ErrorEnvelope, { headers: { 'Retry-After': RETRY_AFTER } }),
  '5xx': Type.Ref(ErrorEnvelope, { headers: { 'Retry-After': RETRY_AFTER } }),
};

const rateLimitHeader = (description: string, always: boolean) => Type.String({ description, ...(always ? { [ALWAYS_SENT]: true } : {}) });
/** On every 200 of analyze; on a refusal, once the caller is known (not a 401 or a Host/Origin 403). */
const rateLimitHeaders = (always: boolean) => ({
  'X-RateLimit-Limit': rateLimitHeader(
    "The window's allowance: 3 a UTC day anonymous, 10 a month free (plus the pack credit left), or unlimited (pro)",
    always,
  ),
  'X-RateLimit-Remaining': rateLimitHeader('Scans left in the window (plus pack credit), or unlimited; scans being analysed count as spent', always),
  'X-RateLimit-Reset': rateLimitHeader('Unix seconds at the end of the window', always),
});

/**
 * analyze's responses with the headers a POS reads (OpenAPI only: the serializer ignores them).
 * A refusal made before the caller is known (401, a 403 of the Host or Origin check) has no X-RateLimit-*.
 */
export function analyzeReplies<T extends TSchema>(data: T) {
  return {
    200: {
      ...ok(data),
      headers: {
        ...rateLimitHeaders(true),
        'Idempotent-Replayed': Type.String({ description: '"true" when this is the stored answer of an earlier request with the same Idempotency-Key' }),
      },
    },
    '4xx': Type.Ref(ErrorEnvelope, { headers: { ...rateLimitHeaders(false), 'Retry-After': RETRY_AFTER } }),
    '5xx': Type.Ref(ErrorEnvelope, { headers: { ...rateLimitHeaders(false), 'Retry-After': RETRY_AFTER } }),
  };
}

/** Response schemas of a route: its success status, and the error envelope for every failure. */
export function replies<T extends TSchema, S extends number = 200>(data: T, status?: S) {
  return { [status ?? 200]: ok(data), ...errors } as Record<S, ReturnType<typeof ok<T>>> & typeof errors;
}

/**
 * For a route whose success body is a JSON document of its own rather than the envelope (the
 * OpenAPI document): an open object, so the serializer passes every property through as sent.
 */
export function documentReplies(description: string) {
  return {
    200: {
      description,
      content: { 'application/json': { schema: Type.Unsafe<object>({ type: 'object', additionalProperties: true }) } },
    },
    ...errors,
  };
}

const RawBody = Type.Unsafe<Buffer | string>({ type: 'string', format: 'binary' });

/**
 * For routes whose success body is not JSON (images, CSV): sent as-is, described for OpenAPI
 * under its own content types, so the error envelopes stay application/json.
 */
export function rawReplies(description: string, contentTypes?: string[]) {
  if (!contentTypes) return { 200: Type.Unsafe<Buffer | string>({ type: 'string', description }), ...errors };
  return {
    200: { description, content: Object.fromEntries(contentTypes.map((type) => [type, { schema: RawBody }])) },
    ...errors,
  };
}
