/** POST /analyze, POST /analyze/check and GET /scans/:id/overlays: the forms and headers they take, and what the models tell from a photo. */
import { Type, type Static } from '@sinclair/typebox';
import { TIRE_POSITIONS, WEAR_CLASSES, literals, looseEnum, nullable } from './common.js';
import { VEHICLE_MAX } from './limits.js';

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

/** The wear band as written into a result (loose: a stored scan may hold an older value, common.ts). */
export const WireWearSchema = looseEnum(WEAR_CLASSES);

/**
 * Why a result is preliminary (docs/API.md §2): the readings disagree (modelAlignment under 70),
 * the tread is barely visible, the photo is unlike those the shipped wear reading learned from, or
 * unlike the shop's own photos its reader learned from (a calibration with a reader of its own).
 */
export const PRELIMINARY_REASONS = ['models_disagree', 'tread_barely_visible', 'unlike_training_photos', 'unlike_shop_photos'] as const;
export type PreliminaryReason = (typeof PRELIMINARY_REASONS)[number];

// Loose where stored scans may hold older values (a hub keeps what desks sent): `wear` is a string
// with `enum` (looseEnum), and depth32nds stays a number (an integer type would truncate a stored
// 7.6 to 7 silently).
export const WireResult = Type.Object({
  wear: WireWearSchema,
  confidence: Type.Number(),
  estimatedDepthMm: Type.Number(),
  depthRangeMm: Type.Object({ min: Type.Number(), max: Type.Number() }),
  treadHealthIndex: Type.Integer(),
  isPreliminary: Type.Boolean(),
  preliminaryReasons: Type.Optional(
    Type.Array(looseEnum(PRELIMINARY_REASONS), {
      description:
        'Why isPreliminary is true, in this order (empty when it is false); absent in scans stored before 2026-11-29 and from models without a reason to give',
    }),
  ),
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
  /** verbose=1 only */
  overlays: Type.Optional(Overlays),
  /** verbose=1 only */
  points: Type.Optional(Points),
});
export type WireResult = Static<typeof WireResult>;
/** What the models tell from one photo (the core's Analysis): a result without what the service adds. */
export type WireAnalysis = Omit<WireResult, 'processingTimeMs' | 'disclaimer' | 'overlays' | 'points'>;

/** POST /analyze body (multipart): the photo and three optional fields (read by hand while it streams; this documents it). */
export const AnalyzeForm = Type.Object({
  image: Type.String({ format: 'binary', description: 'JPEG, PNG or WebP, at most 10 MiB' }),
  verbose: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1')], { description: '"1" adds overlays and points' })),
  vehicle: Type.Optional(Type.String({ maxLength: VEHICLE_MAX })),
  position: Type.Optional(literals(TIRE_POSITIONS)),
});

/** POST /analyze headers: the optional Idempotency-Key (parsed once by the route's onRequest hook, IdempotencyKey.parse). */
export const AnalyzeHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]+$',
      description:
        'Makes a retry safe: visible ASCII, no spaces (e.g. the repair order and wheel); the same key within 24 h gets the stored answer, charged once',
    }),
  ),
});

/** POST /analyze → data */
export const AnalyzeData = Type.Object({ scanId: Type.String(), result: WireResult });
export type AnalyzeData = Static<typeof AnalyzeData>;

/** GET /scans/{scanId}/overlays: analyze's verbose=1 extras of a stored scan, made again from its photo (free; nothing stored). */
export const ScanOverlays = Type.Object({ overlays: Overlays, points: Points });
export type ScanOverlays = Static<typeof ScanOverlays>;

/** POST /analyze/check body (multipart): the frame. */
export const CaptureCheckForm = Type.Object({
  image: Type.String({ format: 'binary', description: 'JPEG, PNG or WebP, at most 10 MiB, short side at least 256 px' }),
});

const Probability = Type.Number({ minimum: 0, maximum: 1 });

/** POST /analyze/check → data: is this frame worth a scan? Nothing stored, nothing charged, no depth. */
export const CaptureCheck = Type.Object({
  scene: looseEnum(['tread', 'tread_not_visible', 'no_tire', 'unknown'] as const, {
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
  problems: Type.Array(looseEnum(['no_tire', 'tread_not_visible', 'blurred', 'too_dark', 'too_bright'] as const)),
  width: Type.Integer(),
  height: Type.Integer(),
});
export type CaptureCheck = Static<typeof CaptureCheck>;
