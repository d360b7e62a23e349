/** GET, POST, DELETE /calibration: the shop calibration of the Settings screen. */
import { Type, type Static } from '@sinclair/typebox';
import { looseEnum, nullable } from './common.js';

/** Cross-validated figures of a shop calibration (each photo read with a correction fitted without it). */
export const CalibrationFigures = Type.Object({ mae: Type.Number(), within1mm: Type.Number(), coverage: Type.Number(), wearAccuracy: Type.Number() });
export type CalibrationFigures = Static<typeof CalibrationFigures>;

/** The fit over all tires: gauge ≈ intercept + slope × estimate, the 80 % interval × intervalScale. */
const Correction = Type.Object({ intercept: Type.Number(), slope: Type.Number(), intervalScale: Type.Number() });

/** What a calibration fitted and what cross-validation measured; the correction is written only where depthApplied / intervalApplied say. */
export const CalibrationFit = Type.Object({
  tires: Type.Integer(),
  correction: Correction,
  depthApplied: Type.Boolean(),
  intervalApplied: Type.Boolean(),
  readerApplied: Type.Boolean({
    description:
      "A reader of the shop's own (the depth read from the models' features, fitted on the gauge readings) replaces the correction: `after` is its figures",
  }),
  before: CalibrationFigures,
  after: CalibrationFigures,
  reasons: Type.Array(Type.String()),
});
export type CalibrationFit = Static<typeof CalibrationFit>;

const Running = Type.Object({
  state: Type.Literal('running'),
  startedAt: Type.String(),
  /** reading: the photos read again (done of total); fitting: the fit and its cross-validation (a reader of 1 500 readings takes about 20 s); writing: the calibrated models written, checked and loaded. */
  phase: looseEnum(['reading', 'fitting', 'writing'] as const),
  done: Type.Integer(),
  total: Type.Integer(),
});
const Finished = Type.Object({
  state: Type.Union([Type.Literal('applied'), Type.Literal('unchanged'), Type.Literal('failed')]),
  startedAt: Type.String(),
  finishedAt: Type.String(),
  message: Type.String(),
  /** Present once the photos were read and a fit made. */
  fit: nullable(CalibrationFit),
  /** Photos that could not be read (removed, or no tire found), by error code. */
  skipped: Type.Record(Type.String(), Type.Integer()),
});

/** GET /calibration → data: the models in use and the Settings screen's calibration job. */
export const CalibrationStatus = Type.Object({
  modelVersion: Type.String({ description: 'The model version analyses answer with now' }),
  /** The shop calibration in use, or null for the models as they came with the app. */
  active: nullable(
    Type.Object({
      version: Type.String(),
      base: Type.String(),
      created: Type.String(),
      tires: Type.Integer(),
      correction: Correction,
      reader: Type.Boolean({ description: "A reader of the shop's own reads the depth (the correction is then the identity)" }),
      crossValidated: Type.Object({ before: CalibrationFigures, after: CalibrationFigures }),
    }),
  ),
  measuredScans: Type.Integer({ description: "This account's scans with a gauge reading" }),
  byModel: Type.Array(
    Type.Object({
      modelVersion: Type.String(),
      scans: Type.Integer(),
      mae: Type.Number(),
      within1mm: Type.Number(),
      wearAccuracy: Type.Number(),
    }),
    { description: "Each model version's stored estimates of those scans against the gauge, most scans first" },
  ),
  minimumScans: Type.Integer(),
  /** Why a calibration cannot start here whatever the readings, or null. */
  blockedBy: nullable(Type.String()),
  canRevert: Type.Boolean({ description: 'The models in use were chosen by settings.json: DELETE goes back to the shipped ones' }),
  /** The last calibration started since the server started, or null. */
  job: Type.Union([Running, Finished, Type.Null()]),
});
export type CalibrationStatus = Static<typeof CalibrationStatus>;

/** POST /calibration body. */
export const StartCalibrationBody = Type.Object({}, { additionalProperties: false, description: 'An empty JSON object: the job takes no options' });
