/**
 * /calibration: the shop calibration from the Settings screen (services/calibration.ts). Desk only
 * (signed in at this computer): the models serve every caller of this server, so neither an API
 * key nor a LAN caller changes them.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountCaller } from '../auth.js';
import { CalibrationStatus, StartCalibrationBody, replies } from '../schemas.js';

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
        body: StartCalibrationBody,
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
