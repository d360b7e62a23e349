/**
 * The scan history's changes: DELETE a scan, PATCH its vehicle, position or gauge reading, PUT its
 * gauge reading. Who may is as for reading it (the service enforces it). The bodies are checked by
 * the scan service's rules (scan-checks.ts), not by Fastify's coercing Ajv.
 */
import { TypeBoxValidatorCompiler, type FastifyPluginAsyncTypebox, type TSchema } from '@fastify/type-provider-typebox';
import type { FastifySchemaCompiler } from 'fastify';
import { AppError } from '../../errors.js';
import { MEASUREMENT_RULE, checkMeasurement, checkPatch } from '../../services/scan-checks.js';
import { anyCaller } from '../auth.js';
import { Empty, MeasurementBody, PatchBody, ScanParams, WireScan, replies } from '../schemas.js';
import { toWireScan } from '../wire.js';

/**
 * A route's validator that leaves its body to `check` instead of Fastify's Ajv, which coerces types
 * (true → 1, "4.2" → 4.2, "" and 0 → null) and would silently write or erase the shop's labelled
 * data: `check` throws the 400 naming the rule, and its value is the body the handler gets. The
 * path parameters are checked by TypeBox against their schemas.
 */
function bodyCheckedBy(check: (body: unknown) => unknown) {
  const compiler: FastifySchemaCompiler<TSchema> = (route) => {
    if (route.httpPart !== 'body') return TypeBoxValidatorCompiler(route);
    return (body: unknown) => {
      try {
        return { value: check(body) };
      } catch (error) {
        return { error: error as Error };
      }
    };
  };
  return (route: Parameters<FastifySchemaCompiler<unknown>>[0]) => compiler({ ...route, schema: route.schema as TSchema });
}

/**
 * PUT /measurement's body must be exactly `{"measurementMm": <JSON number or null>}`, checked by
 * checkMeasurement (range, 2 decimals), so `true`, `""`, `"4.2"` or `[4.2]` are 400 with the
 * allowed values instead of being stored as 1, null or 4.2.
 */
function checkMeasurementBody(body: unknown): { measurementMm: number | null } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('VALIDATION_ERROR', `The body must be a JSON object {"measurementMm": …}; ${MEASUREMENT_RULE}`);
  }
  const unknown = Object.keys(body).find((name) => name !== 'measurementMm');
  if (unknown !== undefined) {
    throw new AppError('VALIDATION_ERROR', `body field ${unknown} is not allowed; send only measurementMm: ${MEASUREMENT_RULE}`);
  }
  if (!('measurementMm' in body)) throw new AppError('VALIDATION_ERROR', `body field measurementMm is required: ${MEASUREMENT_RULE}`);
  return { measurementMm: checkMeasurement(body.measurementMm) };
}

/** PATCH's body is checked by the scan service (checkPatch), as PUT /measurement's is; the handler gets it as sent. */
function checkPatchBody(body: unknown): unknown {
  checkPatch(body);
  return body;
}

export const scanEditRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { scans } = app.core.services;
  const tags = ['scans'];
  /** Signed in or not: the service lets an account change its own scans, and whoever holds an anonymous scan's id that one. */
  const anyone = { config: { auth: 'optional' as const } };

  app.delete(
    '/scans/:scanId',
    {
      ...anyone,
      schema: { tags, summary: 'Delete a scan', params: ScanParams, response: replies(Empty) },
    },
    async (request) => {
      await scans.delete(anyCaller(request), request.params.scanId);
      return { success: true as const, data: {} };
    },
  );

  app.patch(
    '/scans/:scanId',
    {
      ...anyone,
      validatorCompiler: bodyCheckedBy(checkPatchBody),
      schema: {
        tags,
        summary: 'Correct the vehicle, position or gauge reading of a scan (charges nothing)',
        description:
          'The same rules as on creation (vehicle and position as analyze takes them, measurementMm as PUT /measurement); ' +
          "who may is as for DELETE. Each value that changes is recorded in the scan's changes. Nothing is charged.",
        params: ScanParams,
        body: PatchBody,
        response: replies(WireScan),
      },
    },
    async (request) => {
      const scan = await scans.update(anyCaller(request), request.params.scanId, request.body);
      return { success: true as const, data: toWireScan(scan) };
    },
  );

  app.put(
    '/scans/:scanId/measurement',
    {
      ...anyone,
      validatorCompiler: bodyCheckedBy(checkMeasurementBody),
      schema: {
        tags,
        summary: 'Record the tread depth gauge reading (mm) beside the estimate; null clears it',
        params: ScanParams,
        body: MeasurementBody,
        response: replies(WireScan),
      },
    },
    async (request) => {
      const scan = await scans.setMeasurement(anyCaller(request), request.params.scanId, request.body.measurementMm);
      return { success: true as const, data: toWireScan(scan) };
    },
  );
};
