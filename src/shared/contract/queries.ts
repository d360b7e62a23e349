/**
 * The query strings and path parameters of the scan routes (/scans, /vehicles, the export, the
 * image) and of the sync lists. A parameter not named here is refused by name (see app.ts), so a
 * misspelt filter never widens a list or an export.
 */
import { Type, type Static } from '@sinclair/typebox';
import { WearSchema } from './common.js';
import {
  CSV_FORMATS,
  DEFAULT_CHAIN_PAGE,
  DEFAULT_PAGE,
  DEFAULT_SCANS_PER_VEHICLE,
  DEFAULT_VEHICLE_PAGE,
  MAX_PAGE,
  MAX_SCANS_PER_VEHICLE,
  MAX_VEHICLE_PAGE,
  VEHICLE_MAX,
} from './limits.js';

const DATE_FILTER = 'Inclusive: YYYY-MM-DD (a whole UTC day) or an ISO 8601 date-time, e.g. 2026-11-24T08:00:00Z; without an offset the time is UTC';
const Filter = {
  vehicle: Type.Optional(
    Type.String({
      maxLength: VEHICLE_MAX,
      description: 'A part of the vehicle, whatever its spaces, dashes or case ("ka tw 204" finds "KA-TW-204"): matched on the plate key',
    }),
  ),
  wear: Type.Optional(
    Type.Union(WearSchema.anyOf, {
      description:
        "The wear band of the depth of record, as ofRecord.wear: the gauge reading's band where there is one, else the estimate's (result.wear); any case",
    }),
  ),
  date: Type.Optional(
    Type.String({ maxLength: 40, description: 'One whole UTC day, YYYY-MM-DD: the same as from and to both that day (not with from or to)' }),
  ),
  from: Type.Optional(Type.String({ maxLength: 40, description: DATE_FILTER })),
  to: Type.Optional(Type.String({ maxLength: 40, description: DATE_FILTER })),
};
/** jQuery's `cache: false` (and many a POS's own cache-buster) adds `_=<time>`: taken and ignored. */
const CacheBuster = { _: Type.Optional(Type.String({ maxLength: 64, description: 'Ignored: a cache-buster' })) };
/** One vehicle, or the scans without one: for the list and the export, not the grouped view. */
const VehicleFilter = {
  vehicleKey: Type.Optional(
    Type.String({
      maxLength: VEHICLE_MAX,
      description: 'Exactly this vehicle: its plate key, or the plate in any spelling (normalised here); not with vehicle',
    }),
  ),
  hasVehicle: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description: 'false: only scans without a vehicle (or with one of no letter or digit); true: only scans with one',
    }),
  ),
};
/** GET /scans query. */
export const ListQuery = Type.Object(
  {
    ...Filter,
    ...VehicleFilter,
    ...CacheBuster,
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, description: `Page size, default ${DEFAULT_PAGE}` })),
  },
  { additionalProperties: false },
);
/** GET /vehicles query. */
export const VehiclesQuery = Type.Object(
  {
    ...Filter,
    ...CacheBuster,
    cursor: Type.Optional(Type.String({ maxLength: 4096 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_VEHICLE_PAGE, description: `Vehicles per page, default ${DEFAULT_VEHICLE_PAGE}` })),
    scansPerVehicle: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_SCANS_PER_VEHICLE, description: `Newest scans given with each vehicle, default ${DEFAULT_SCANS_PER_VEHICLE}` }),
    ),
  },
  { additionalProperties: false },
);
/** GET /scans/export query. */
export const ExportQuery = Type.Object(
  {
    ...Filter,
    ...VehicleFilter,
    ...CacheBuster,
    format: Type.Optional(
      Type.Union(
        CSV_FORMATS.map((f) => Type.Literal(f)),
        {
          description:
            'csv (default): RFC 4180, comma-separated, for software; excel: the same with a UTF-8 byte-order mark, so Excel on Windows ' +
            'reads accents right; excel-semicolon: that with semicolons and decimal commas, for Excel where the decimal separator is a comma',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ListQuery = Static<typeof ListQuery>;
export type VehiclesQuery = Static<typeof VehiclesQuery>;
export type ExportQuery = Static<typeof ExportQuery>;

/** A scan in the path: /scans/{scanId}, /sync/scans/{scanId}, /sync/hub-scans/{scanId}/image. */
export const ScanParams = Type.Object({ scanId: Type.String({ minLength: 1, maxLength: 128 }) });
const ImageVariant = () => Type.Optional(Type.Union([Type.Literal('original'), Type.Literal('thumbnail')]));
/** GET /scans/{scanId}/image query. */
export const ImageQuery = Type.Object({ variant: ImageVariant() });
/** GET /sync/hub-scans/{scanId}/image query. */
export const HubImageQuery = Type.Object({ variant: ImageVariant() }, { additionalProperties: false });

/** GET /sync/scans (hub), GET /sync/hub-scans (desk): a page of the chain's scans, of one shop or all. */
export const ChainPageQuery = Type.Composite(
  [
    Type.Object(
      {
        cursor: Type.Optional(Type.String({ maxLength: 512 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_CHAIN_PAGE })),
      },
      { additionalProperties: false },
    ),
    Type.Object({
      apiKeyId: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32}$', description: "Only this shop's scans: the id of one of the account's API keys" })),
    }),
  ],
  { additionalProperties: false },
);
export type ChainPageQuery = Static<typeof ChainPageQuery>;
