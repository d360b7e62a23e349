/**
 * The scan history. Account scans are visible only to their account; an anonymous scan
 * only by its unguessable id (the service enforces both). Lists and the CSV export need
 * an account: an anonymous caller has no history to list.
 */
import { TypeBoxValidatorCompiler, type FastifyPluginAsyncTypebox, type TSchema } from '@fastify/type-provider-typebox';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { AppError } from '../../errors.js';
import type { ScanQuery } from '../../services/ports.js';
import { MEASUREMENT_RULE, checkMeasurement, checkPatch } from '../../services/scan-checks.js';
import { OVERLAYS_PER_MINUTE } from '../../services/scans.js';
import { accountCaller, anyCaller } from '../auth.js';
import {
  Empty,
  ExportQuery,
  ImageQuery,
  ListQuery,
  MeasurementBody,
  PatchBody,
  ScanList,
  ScanOverlays,
  ScanParams,
  VehicleList,
  VehiclesQuery,
  WireScan,
  rawReplies,
  replies,
} from '../schemas.js';
import { toWireScan, toWireVehicleGroup } from '../wire.js';

/**
 * Validation for PUT /measurement without type coercion: the body must be exactly
 * `{"measurementMm": <JSON number or null>}`, checked by checkMeasurement (range, 2 decimals),
 * so `true`, `""`, `"4.2"` or `[4.2]` are 400 with the allowed values instead of being stored
 * as 1, null or 4.2. The path parameter is checked by TypeBox against its schema.
 */
const measurementValidator: FastifySchemaCompiler<TSchema> = (route) => {
  if (route.httpPart !== 'body') return TypeBoxValidatorCompiler(route);
  return (body: unknown) => {
    try {
      return { value: checkMeasurementBody(body) };
    } catch (error) {
      return { error: error as Error };
    }
  };
};

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

/** PATCH's body is checked by the scan service (checkPatch), without Ajv's coercion, as PUT /measurement's is. */
const patchValidator: FastifySchemaCompiler<TSchema> = (route) => {
  if (route.httpPart !== 'body') return TypeBoxValidatorCompiler(route);
  return (body: unknown) => {
    try {
      checkPatch(body);
      return { value: body };
    } catch (error) {
      return { error: error as Error };
    }
  };
};

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD`, or that with `THH:MM[:SS[.fraction]]` and an optional `Z` / `±HH[:]MM` / `±HH` offset. */
const DATE_PARAM = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

/**
 * A `from`/`to` filter: `YYYY-MM-DD` (a real calendar date; the whole UTC day, so `from` is its
 * first and `to` its last millisecond) or an ISO 8601 date-time. A date-time without an offset
 * is UTC, never the server's own zone (a shop PC's zone is no business of the POS asking).
 * Anything else (impossible dates, `1`, `Nov 30 2026`: what Date.parse would guess at) is 400.
 */
export function parseDateParam(name: string, raw: string | undefined, endOfDay: boolean): Date | undefined {
  if (raw === undefined || raw === '') return undefined;
  const invalid = (hint = '') =>
    new AppError(
      'VALIDATION_ERROR',
      `query parameter ${name} must be a date YYYY-MM-DD (a whole UTC day) or an ISO 8601 date-time such as ` +
        `2026-11-24T08:00:00Z or 2026-11-24T09:00+01:00 (without an offset the time is UTC)${hint}`,
    );
  const match = DATE_PARAM.exec(raw);
  if (!match) {
    // An unencoded `+` in a query string arrives as a space.
    throw invalid(/\d \d{2}(?::?\d{2})?$/.test(raw) ? '; send a + in the offset as %2B' : '');
  }
  const [, y, mo, d, h, mi, s, fraction, , sign, offH, offM] = match; // group 8 (`Z`) means UTC, as no offset does
  const [year, month, day] = [Number(y), Number(mo), Number(d)];
  const [hour, minute, second] = [Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0)];
  const offsetMinutes = sign === undefined ? 0 : Number(offH) * 60 + Number(offM ?? 0);
  const dayStart = Date.UTC(year, month - 1, day);
  const real = new Date(dayStart);
  if (
    real.getUTCFullYear() !== year ||
    real.getUTCMonth() !== month - 1 ||
    real.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    Number(offM ?? 0) > 59 ||
    Number(offH ?? 0) > 23
  ) {
    throw invalid();
  }
  if (h === undefined) return new Date(endOfDay ? dayStart + DAY_MS - 1 : dayStart);
  const ms = fraction === undefined ? 0 : Number(fraction.padEnd(3, '0').slice(0, 3));
  const local = dayStart + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
  return new Date(local - (sign === '-' ? -1 : 1) * offsetMinutes * 60_000);
}

/**
 * Before validation: a parameter sent empty (`wear=&limit=`, as a POS builds the query from
 * optional form fields for "show all") is one not sent, and `wear` (and the export's `format`)
 * is read in any case, as `position` is on analyze.
 */
export async function blankIsAbsent(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown>;
  for (const [name, value] of Object.entries(query)) if (value === '') delete query[name];
  if (typeof query.wear === 'string') query.wear = query.wear.toLowerCase();
  if (typeof query.format === 'string') query.format = query.format.toLowerCase();
  if (typeof query.hasVehicle === 'string') query.hasVehicle = query.hasVehicle.toLowerCase();
}

function toFilter(query: {
  vehicle?: string;
  vehicleKey?: string;
  hasVehicle?: 'true' | 'false';
  wear?: ScanQuery['wear'];
  date?: string;
  from?: string;
  to?: string;
}): ScanQuery {
  const filter: ScanQuery = {};
  if (query.vehicle) filter.vehicle = query.vehicle;
  if (query.vehicleKey) filter.vehicleKey = query.vehicleKey;
  if (query.hasVehicle) filter.hasVehicle = query.hasVehicle === 'true';
  if (query.wear) filter.wear = query.wear;
  if (query.date && (query.from || query.to)) throw new AppError('VALIDATION_ERROR', 'Send either date (one day) or from / to (a range), not both');
  if (query.date && !/^\d{4}-\d{2}-\d{2}$/.test(query.date)) {
    throw new AppError('VALIDATION_ERROR', 'query parameter date must be one whole UTC day, YYYY-MM-DD such as 2026-11-24; for times send from and to');
  }
  const from = parseDateParam(query.date ? 'date' : 'from', query.date || query.from, false);
  const to = parseDateParam(query.date ? 'date' : 'to', query.date || query.to, true);
  if (from) filter.from = from;
  if (to) filter.to = to;
  return filter;
}

export const scanRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { scans } = app.core.services;
  const { clock } = app.core;
  const tags = ['scans'];

  app.get(
    '/scans',
    {
      config: { auth: 'account' },
      preValidation: blankIsAbsent,
      schema: { tags, summary: 'Scans of the account, newest first', querystring: ListQuery, response: replies(ScanList) },
    },
    async (request) => {
      const { cursor, limit, _: _cacheBuster, ...filter } = request.query;
      const query: ScanQuery = toFilter(filter);
      if (limit !== undefined) query.limit = limit;
      if (cursor) query.cursor = cursor;
      const page = await scans.list(accountCaller(request), query);
      return { success: true as const, data: { items: page.items.map(toWireScan), nextCursor: page.nextCursor } };
    },
  );

  app.get(
    '/vehicles',
    {
      config: { auth: 'account' },
      preValidation: blankIsAbsent,
      schema: {
        tags,
        summary: 'Scans of the account grouped by vehicle (plate key), newest visit first',
        description:
          'The filters apply to the scans before grouping. Each vehicle comes with its newest scans; all of one vehicle are ' +
          'GET /scans?vehicleKey=<key> (the group without a vehicle: GET /scans?hasVehicle=false).',
        querystring: VehiclesQuery,
        response: replies(VehicleList),
      },
    },
    async (request) => {
      const { cursor, limit, scansPerVehicle, _: _cacheBuster, ...filter } = request.query;
      const page = await scans.vehicles(accountCaller(request), {
        ...toFilter(filter),
        ...(cursor ? { cursor } : {}),
        ...(limit === undefined ? {} : { limit }),
        ...(scansPerVehicle === undefined ? {} : { scansPerVehicle }),
      });
      return { success: true as const, data: { items: page.items.map(toWireVehicleGroup), nextCursor: page.nextCursor } };
    },
  );

  app.get(
    '/scans/export',
    {
      config: { auth: 'account' },
      preValidation: blankIsAbsent,
      schema: {
        tags,
        summary: 'CSV of the scans with estimate and gauge measurement',
        querystring: ExportQuery,
        response: rawReplies('CSV, one row per scan', ['text/csv']),
      },
    },
    async (request, reply) => {
      const csv = await scans.exportCsv(accountCaller(request), toFilter(request.query), request.query.format);
      const day = clock.now().toISOString().slice(0, 10);
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="tirewear-scans-${day}.csv"`).send(csv);
    },
  );

  app.get(
    '/scans/:scanId',
    {
      config: { auth: 'optional' },
      schema: { tags, summary: 'One scan', params: ScanParams, response: replies(WireScan) },
    },
    async (request) => {
      const scan = await scans.get(anyCaller(request), request.params.scanId);
      return { success: true as const, data: toWireScan(scan) };
    },
  );

  app.get(
    '/scans/:scanId/image',
    {
      config: { auth: 'optional' },
      schema: {
        tags,
        summary: 'The uploaded image, or its thumbnail',
        params: ScanParams,
        // other parameters (an image cache-buster such as ?v=2) are left alone: nothing here widens
        querystring: ImageQuery,
        response: rawReplies('The image bytes', ['image/jpeg', 'image/png', 'image/webp']),
      },
    },
    async (request, reply) => {
      const variant = request.query.variant ?? 'original';
      const image = await scans.image(anyCaller(request), request.params.scanId, variant);
      return reply.type(image.mime).send(image.data);
    },
  );

  app.get(
    '/scans/:scanId/overlays',
    {
      config: { auth: 'optional' },
      schema: {
        tags,
        summary: "A stored scan's overlays and points, made again from its photo (free: nothing stored or charged)",
        description:
          "What verbose=1 adds to an analyze answer (overlays: depthHeatmap and mask; points in the photo's pixels), for a scan " +
          'stored without them: its stored photo is analysed again by the models in use, which may be newer than the ones ' +
          'that made its result (result.modelVersion); the result is not changed. Who may is as for GET /scans/{scanId}. ' +
          '404 NOT_FOUND when the scan or its photo is gone; 422 NO_TIRE_DETECTED / TREAD_NOT_VISIBLE when the models in use ' +
          `cannot read the stored photo. At most ${OVERLAYS_PER_MINUTE} a minute per account (or client address without one): ` +
          'beyond, 429 TOO_MANY_ATTEMPTS with Retry-After. The allowance is not touched (no X-RateLimit-* headers).',
        params: ScanParams,
        response: replies(ScanOverlays),
      },
    },
    async (request) => {
      const extras = await scans.overlays(anyCaller(request), request.params.scanId);
      return { success: true as const, data: extras };
    },
  );

  app.delete(
    '/scans/:scanId',
    {
      config: { auth: 'optional' },
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
      config: { auth: 'optional' },
      validatorCompiler: (route) => patchValidator({ ...route, schema: route.schema as unknown as TSchema }),
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
      config: { auth: 'optional' },
      // Not Fastify's Ajv: it coerces types (true → 1, "4.2" → 4.2, "" and 0 → null), which
      // would silently write or erase the shop's labelled data. See measurementValidator.
      validatorCompiler: (route) => measurementValidator({ ...route, schema: route.schema as unknown as TSchema }),
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
