/**
 * The scan history. Account scans are visible only to their account; an anonymous scan
 * only by its unguessable id (the service enforces both). Lists and the CSV export need
 * an account: an anonymous caller has no history to list.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../errors.js';
import type { ScanQuery } from '../../services/ports.js';
import { MAX_MEASUREMENT_MM, MAX_PAGE } from '../../services/scans.js';
import { accountCaller, anyCaller } from '../auth.js';
import { Empty, ScanList, WearSchema, WireScan, rawReplies, replies } from '../schemas.js';
import { toWireScan } from '../wire.js';

const Filter = {
  vehicle: Type.Optional(Type.String({ maxLength: 64, description: 'Case-insensitive part of the vehicle' })),
  wear: Type.Optional(WearSchema),
  from: Type.Optional(Type.String({ maxLength: 40, description: 'YYYY-MM-DD (UTC day) or ISO 8601 time, inclusive' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'YYYY-MM-DD (UTC day) or ISO 8601 time, inclusive' })),
};
const ListQuery = Type.Object({
  ...Filter,
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, description: 'Page size, default 20' })),
});
const ExportQuery = Type.Object(Filter);
const ScanParams = Type.Object({ scanId: Type.String({ minLength: 1, maxLength: 128 }) });

const DAY_MS = 86_400_000;

function parseDate(name: string, raw: string | undefined, endOfDay: boolean): Date | undefined {
  if (raw === undefined || raw === '') return undefined;
  const dayOnly = /^\d{4}-\d{2}-\d{2}$/.test(raw);
  const time = Date.parse(dayOnly ? `${raw}T00:00:00Z` : raw);
  if (Number.isNaN(time)) {
    throw new AppError('VALIDATION_ERROR', `query parameter ${name} must be a date (YYYY-MM-DD) or an ISO 8601 time`);
  }
  return new Date(dayOnly && endOfDay ? time + DAY_MS - 1 : time);
}

function toFilter(query: { vehicle?: string; wear?: ScanQuery['wear']; from?: string; to?: string }): ScanQuery {
  const filter: ScanQuery = {};
  if (query.vehicle) filter.vehicle = query.vehicle;
  if (query.wear) filter.wear = query.wear;
  const from = parseDate('from', query.from, false);
  const to = parseDate('to', query.to, true);
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
      schema: { tags, summary: 'Scans of the account, newest first', querystring: ListQuery, response: replies(ScanList) },
    },
    async (request) => {
      const { cursor, limit, ...filter } = request.query;
      const query: ScanQuery = toFilter(filter);
      if (limit !== undefined) query.limit = limit;
      if (cursor) query.cursor = cursor;
      const page = await scans.list(accountCaller(request), query);
      return { success: true as const, data: { items: page.items.map(toWireScan), nextCursor: page.nextCursor } };
    },
  );

  app.get(
    '/scans/export',
    {
      config: { auth: 'account' },
      schema: {
        tags,
        summary: 'CSV of the scans with estimate and gauge measurement',
        querystring: ExportQuery,
        response: rawReplies('CSV, one row per scan', ['text/csv']),
      },
    },
    async (request, reply) => {
      const csv = await scans.exportCsv(accountCaller(request), toFilter(request.query));
      const day = clock.now().toISOString().slice(0, 10);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="tirewear-scans-${day}.csv"`)
        .send(csv);
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
        querystring: Type.Object({
          variant: Type.Optional(Type.Union([Type.Literal('original'), Type.Literal('thumbnail')])),
        }),
        response: rawReplies('The image bytes', ['image/jpeg', 'image/png', 'image/webp']),
      },
    },
    async (request, reply) => {
      const variant = request.query.variant ?? 'original';
      const image = await scans.image(anyCaller(request), request.params.scanId, variant);
      return reply.type(image.mime).send(image.data);
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

  app.put(
    '/scans/:scanId/measurement',
    {
      config: { auth: 'optional' },
      schema: {
        tags,
        summary: 'Record the tread depth gauge reading (mm) beside the estimate; null clears it',
        params: ScanParams,
        // Null first: with Fastify's type coercion a number-first union would turn null into 0.
        body: Type.Object({ measurementMm: Type.Union([Type.Null(), Type.Number({ minimum: 0, maximum: MAX_MEASUREMENT_MM })]) }),
        response: replies(WireScan),
      },
    },
    async (request) => {
      const scan = await scans.setMeasurement(anyCaller(request), request.params.scanId, request.body.measurementMm);
      return { success: true as const, data: toWireScan(scan) };
    },
  );
};
