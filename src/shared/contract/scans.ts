/** The stored scans: GET /scans, /scans/:id, /vehicles, and the corrections (PATCH, PUT /measurement). */
import { Type, type Static } from '@sinclair/typebox';
import { WireResult, WireWearSchema } from './analyze.js';
import { IsoDate, SCAN_CHANGE_FIELDS, SCAN_CHANGE_VIAS, TIRE_POSITIONS, looseEnum, nullable, type TirePosition } from './common.js';
import { MAX_MEASUREMENT_MM, VEHICLE_MAX } from './limits.js';

export const WireScanBase = Type.Object({
  scanId: Type.String(),
  createdAt: IsoDate,
  vehicle: nullable(Type.String()),
  position: nullable(looseEnum<TirePosition>(null)),
  /** The analysis of the photo, as made (a gauge reading does not change it). */
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

/** One correction of a scan (PATCH /scans/:id, PUT /scans/:id/measurement), in WireScan.changes. */
export const ScanChange = Type.Object({
  at: IsoDate,
  field: looseEnum(SCAN_CHANGE_FIELDS),
  from: nullable(Type.Union([Type.String(), Type.Number()])),
  to: nullable(Type.Union([Type.String(), Type.Number()])),
  via: looseEnum(SCAN_CHANGE_VIAS, {
    description: 'How it was made: signed in, through an API key, by the holder of an anonymous scan, or merged from a shop (hub)',
  }),
});
export type ScanChange = Static<typeof ScanChange>;

/**
 * The depth the scan stands for: the gauge reading where there is one (it was measured), else the
 * photo's estimate. Colour, advice and 32nds of a report follow this, the estimate is shown beside it.
 */
export const DepthOfRecord = Type.Object(
  {
    source: looseEnum(['gauge', 'estimate'] as const),
    /** wearForDepth(depthOfRecordMm) (src/shared/units.ts). */
    wear: WireWearSchema,
    depth32nds: Type.Number({ description: 'depthOfRecordMm in whole 32nds of an inch, within its wear band' }),
    /** docs/API.md §2's index of depthOfRecordMm. */
    treadHealthIndex: Type.Integer(),
  },
  { description: 'Wear band, 32nds and index of depthOfRecordMm: what a report colours and advises by' },
);
export type DepthOfRecord = Static<typeof DepthOfRecord>;

/** What issue 42 added to a scan: computed from the record (the plate key, the depth of record) or its corrections. */
export const ScanAdditions = Type.Object({
  vehicleKey: nullable(
    Type.String({ description: 'The plate key: the vehicle in NFKC, letters and digits only, upper case ("KA TW 204" → "KATW204"); null without one' }),
  ),
  depthOfRecordMm: Type.Number({ description: 'The gauge reading (measurementMm) where there is one, else result.estimatedDepthMm' }),
  isPreliminary: Type.Boolean({ description: 'false once a gauge reading exists, else result.isPreliminary' }),
  ofRecord: DepthOfRecord,
  changes: Type.Array(ScanChange, { description: 'Corrections (PATCH, PUT /measurement), oldest first; the newest 50 are kept' }),
});

/** GET /scans/:scanId → data, and items of GET /scans */
export const WireScan = Type.Composite([WireScanBase, ScanAdditions]);
export type WireScan = Static<typeof WireScan>;

/** GET /scans?vehicle=&vehicleKey=&hasVehicle=&wear=&from=&to=&cursor=&limit= → data */
export const ScanList = Type.Object({ items: Type.Array(WireScan), nextCursor: nullable(Type.String()) });
export type ScanList = Static<typeof ScanList>;

/** A vehicle of GET /vehicles: its scans grouped by plate key. */
export const VehicleGroup = Type.Object({
  vehicleKey: nullable(Type.String({ description: 'null: the scans without a vehicle (or with one of no letter or digit)' })),
  vehicle: nullable(Type.String({ description: 'As typed on its newest scan' })),
  scanCount: Type.Integer(),
  lastScanAt: IsoDate,
  firstScanAt: IsoDate,
  scans: Type.Array(WireScan, { description: 'Its newest scans (at most scansPerVehicle), newest first' }),
});
export type VehicleGroup = Static<typeof VehicleGroup>;

/** GET /vehicles?vehicle=&wear=&date=&from=&to=&cursor=&limit=&scansPerVehicle= → data */
export const VehicleList = Type.Object({ items: Type.Array(VehicleGroup), nextCursor: nullable(Type.String()) });
export type VehicleList = Static<typeof VehicleList>;

const GAUGE_READING = `The gauge reading: a JSON number of mm from 0 to ${MAX_MEASUREMENT_MM} with at most 2 decimals, or null to clear it`;
const GaugeReading = (description: string) => Type.Union([Type.Number({ minimum: 0, maximum: MAX_MEASUREMENT_MM }), Type.Null()], { description });

/** PUT /scans/:scanId/measurement body. */
export const MeasurementBody = Type.Object({ measurementMm: GaugeReading(`${GAUGE_READING} (and its time)`) }, { additionalProperties: false });
export type MeasurementBody = Static<typeof MeasurementBody>;

/** PATCH /scans/:scanId body: at least one field; null (or "") clears vehicle and position. */
export const PatchBody = Type.Object(
  {
    vehicle: Type.Optional(
      Type.Union([Type.String({ maxLength: VEHICLE_MAX }), Type.Null()], {
        description: `As on analyze: at most ${VEHICLE_MAX} printable characters, trimmed; "" or null clears it`,
      }),
    ),
    position: Type.Optional(
      Type.Union([Type.Unsafe<TirePosition | Lowercase<TirePosition> | ''>(Type.String({ enum: [...TIRE_POSITIONS, ''] })), Type.Null()], {
        description: 'FL, FR, RL, RR or SPARE in any case; "" or null clears it',
      }),
    ),
    measurementMm: Type.Optional(GaugeReading(GAUGE_READING)),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ScanPatchBody = Static<typeof PatchBody>;
