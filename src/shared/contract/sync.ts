/**
 * Desk → hub sync: the scan as a desk pushes it (PUT /sync/scans/:id, the `scan` field), the
 * chain's scans and shops as a hub lists them, and the desk's link and status.
 */
import { Type, type Static } from '@sinclair/typebox';
import { SCAN_CHANGES_KEPT, SCAN_CHANGE_FIELDS, SCAN_CHANGE_VIAS, TIRE_POSITIONS, WEAR_CLASSES, literals, nullable } from './common.js';
import { MAX_MEASUREMENT_MM, VEHICLE_MAX } from './limits.js';
import { PRELIMINARY_REASONS, WireResult } from './analyze.js';
import { ScanAdditions, WireScanBase } from './scans.js';

/**
 * A shop of a chain, as its hub knows it: the hub API key the shop's desktop pushes with, named by
 * the chain's owner. `deleted` once the key was deleted (revoked) on the hub; the name stays the
 * one it had. `name` is null only when the hub no longer has the key at all.
 */
export const WireShop = Type.Object({ apiKeyId: Type.String(), name: nullable(Type.String()), deleted: Type.Boolean() });
export type WireShop = Static<typeof WireShop>;

// A desk shows its hub's scans as the hub answers them: a hub of an earlier version sends none of
// issue 42's fields, so they are optional here (the serializer would refuse the page otherwise).
/** A scan of the chain: `shop` is the key it came through, null for scans made in a signed-in session on the hub. */
export const HubScan = Type.Composite([WireScanBase, Type.Partial(ScanAdditions), Type.Object({ shop: nullable(WireShop) })]);
export type HubScan = Static<typeof HubScan>;

/** GET /sync/scans?apiKeyId=&cursor=&limit= (hub), GET /sync/hub-scans (desk) → data */
export const HubScanList = Type.Object({ items: Type.Array(HubScan), nextCursor: nullable(Type.String()) });
export type HubScanList = Static<typeof HubScanList>;

/** GET /sync/shops (hub), GET /sync/hub-shops (desk) → data: every key of the hub account, by name */
export const HubShopList = Type.Object({ items: Type.Array(WireShop) });
export type HubShopList = Static<typeof HubShopList>;

/** GET /sync/status → data (desktop side) */
export const SyncStatus = Type.Object({
  linked: Type.Boolean(),
  hubUrl: nullable(Type.String()),
  lastSyncAt: nullable(Type.String()),
  pending: Type.Integer(),
  lastError: nullable(Type.String()),
  skipped: Type.Integer({
    description: 'Changes the hub refused for good (about the scan itself) since the link; linking again with the same hub and key sends them again',
  }),
});
export type SyncStatus = Static<typeof SyncStatus>;

/** PUT /sync/link body. */
export const LinkBody = Type.Object(
  { hubUrl: Type.String({ minLength: 1, maxLength: 2048 }), hubApiKey: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);
export type LinkBody = Static<typeof LinkBody>;

/** PUT /sync/scans/{scanId} body (multipart, read by hand while it streams; this documents it): the scan and, the first time, its photo. */
export const SyncPushForm = Type.Object({
  scan: Type.String({ description: 'JSON: the scan with measurementMm, measuredAt, deletedAt' }),
  image: Type.Optional(Type.String({ format: 'binary', description: 'Needed the first time the hub sees the scan' })),
});

/** Checked as a date by the hub (src/core/sync/wire.ts): TypeBox's Value has no built-in date-time format. */
const WireDate = Type.String({ minLength: 10, maxLength: 40 });

/**
 * The scan as a desktop pushes it to its hub: everything the hub cannot recompute (the result, when
 * it was taken, the gauge reading, the deletion), with dates as ISO strings. Local ids (account, API
 * key, image keys) stay on the desktop: the hub files the scan under the account of the hub key that
 * pushed it. A request, so strict where responses are loose: a wear or position of today's lists only.
 */
export const SyncScanSchema = Type.Object({
  scanId: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$' }),
  createdAt: WireDate,
  vehicle: nullable(Type.String({ maxLength: VEHICLE_MAX })),
  position: nullable(literals(TIRE_POSITIONS)),
  // the result as analyze answers it (WireResult, without verbose=1's extras), bounded
  result: Type.Object(
    {
      ...Type.Omit(WireResult, ['overlays', 'points']).properties,
      wear: literals(WEAR_CLASSES),
      confidence: Type.Number({ minimum: 0, maximum: 1 }),
      estimatedDepthMm: Type.Number({ minimum: 0 }),
      treadHealthIndex: Type.Integer({ minimum: 0, maximum: 100 }),
      modelAlignment: Type.Integer({ minimum: 0, maximum: 100 }),
      twiConsensusCount: Type.Integer({ minimum: 0 }),
      preliminaryReasons: Type.Optional(Type.Array(literals(PRELIMINARY_REASONS), { maxItems: PRELIMINARY_REASONS.length })),
      processingTimeMs: Type.Integer({ minimum: 0 }),
      modelVersion: Type.String({ maxLength: 64 }),
      disclaimer: Type.String({ maxLength: 1000 }),
      grooves: Type.Optional(Type.Array(Type.Object({ index: Type.Integer(), depthMm: Type.Number() }), { maxItems: 16 })),
    },
    { additionalProperties: true },
  ),
  image: Type.Object({
    mime: Type.Union([Type.Literal('image/jpeg'), Type.Literal('image/png'), Type.Literal('image/webp')]),
    width: Type.Integer({ minimum: 1 }),
    height: Type.Integer({ minimum: 1 }),
    bytes: Type.Integer({ minimum: 1 }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  }),
  // the same bound as PUT /measurement and PATCH (docs/API.md §9, item 9)
  measurementMm: nullable(Type.Number({ minimum: 0, maximum: MAX_MEASUREMENT_MM })),
  measuredAt: nullable(WireDate),
  deletedAt: nullable(WireDate),
  // Corrections (issue 42). Optional: a desk of an earlier version sends neither, and a hub of an
  // earlier version ignores both (its vehicle and position stay as first pushed).
  editedAt: Type.Optional(nullable(WireDate)),
  changes: Type.Optional(
    Type.Array(
      Type.Object({
        at: WireDate,
        field: literals(SCAN_CHANGE_FIELDS),
        from: nullable(Type.Union([Type.String({ maxLength: 64 }), Type.Number()])),
        to: nullable(Type.Union([Type.String({ maxLength: 64 }), Type.Number()])),
        via: literals(SCAN_CHANGE_VIAS),
      }),
      { maxItems: SCAN_CHANGES_KEPT },
    ),
  ),
});
export type SyncScan = Static<typeof SyncScanSchema>;
