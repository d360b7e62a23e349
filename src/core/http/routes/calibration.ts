/**
 * /calibration: the shop calibration from the Settings screen (services/calibration.ts). Desk only
 * (signed in at this computer): the models serve every caller of this server, so neither an API
 * key nor a LAN caller changes them.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountCaller } from '../auth.js';
import { replies } from '../schemas.js';

const Figures = Type.Object({ mae: Type.Number(), within1mm: Type.Number(), coverage: Type.Number(), wearAccuracy: Type.Number() });
const Correction = Type.Object({ intercept: Type.Number(), slope: Type.Number(), intervalScale: Type.Number() });
const Fit = Type.Object({
  tires: Type.Integer(),
  correction: Correction,
  depthApplied: Type.Boolean(),
  intervalApplied: Type.Boolean(),
  before: Figures,
  after: Figures,
  reasons: Type.Array(Type.String()),
});
const Running = Type.Object({
  state: Type.Literal('running'),
  startedAt: Type.String(),
  done: Type.Integer(),
  total: Type.Integer(),
});
const Finished = Type.Object({
  state: Type.Union([Type.Literal('applied'), Type.Literal('unchanged'), Type.Literal('failed')]),
  startedAt: Type.String(),
  finishedAt: Type.String(),
  message: Type.String(),
  fit: Type.Union([Fit, Type.Null()]),
  skipped: Type.Record(Type.String(), Type.Integer()),
});
const CalibrationStatus = Type.Object({
  modelVersion: Type.String({ description: 'The model version analyses answer with now' }),
  active: Type.Union([
    Type.Object({
      version: Type.String(),
      base: Type.String(),
      created: Type.String(),
      tires: Type.Integer(),
      correction: Correction,
      crossValidated: Type.Object({ before: Figures, after: Figures }),
    }),
    Type.Null(),
  ]),
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
  blockedBy: Type.Union([Type.String(), Type.Null()]),
  canRevert: Type.Boolean({ description: 'The models in use were chosen by settings.json: DELETE goes back to the shipped ones' }),
  job: Type.Union([Running, Finished, Type.Null()]),
});

export const calibrationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { calibration } = app.core;
  const tags = ['calibration'];
  const desk = { auth: 'desk' as const };

  app.get(
    '/calibration',
    { config: desk, schema: { tags, summary: 'Desk: the models in use, measured scans, the last calibration job', response: replies(CalibrationStatus) } },
    async (request) => ({ success: true as const, data: await calibration.status(accountCaller(request).account.id) }),
  );

  app.post(
    '/calibration',
    {
      config: desk,
      schema: {
        tags,
        summary: "Desk: calibrate the shipped models on this account's gauge-read scans (runs in the background; poll GET)",
        body: Type.Object({}, { additionalProperties: false, description: 'An empty JSON object: the job takes no options' }),
        response: replies(CalibrationStatus, 202),
      },
    },
    async (request, reply) => {
      const status = await calibration.start(accountCaller(request).account.id);
      return reply.code(202).send({ success: true as const, data: status });
    },
  );

  app.delete(
    '/calibration',
    { config: desk, schema: { tags, summary: 'Desk: back to the models as shipped (calibration folders are kept)', response: replies(CalibrationStatus) } },
    async (request) => ({ success: true as const, data: await calibration.revert(accountCaller(request).account.id) }),
  );
};
