/**
 * The scan history, read: the lists (GET /scans, /vehicles), the CSV export, one scan, its image
 * and its overlays. Account scans are visible only to their account; an anonymous scan only by its
 * unguessable id (the service enforces both). Lists and the CSV export need an account: an
 * anonymous caller has no history to list. The changes (DELETE, PATCH, PUT /measurement) are in
 * scan-edits.ts; the query strings are read by ../query-params.ts.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ScanQuery } from '../../services/ports.js';
import { OVERLAYS_PER_MINUTE } from '../../services/scans.js';
import { accountCaller, anyCaller } from '../auth.js';
import { blankIsAbsent, toFilter } from '../query-params.js';
import {
  ExportQuery,
  ImageQuery,
  ListQuery,
  ScanList,
  ScanOverlays,
  ScanParams,
  VehicleList,
  VehiclesQuery,
  WireScan,
  imageReplies,
  rawReplies,
  replies,
} from '../schemas.js';
import { toWireScan, toWireVehicleGroup } from '../wire.js';

export const scanRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { scans } = app.core.services;
  const { clock } = app.core;
  const tags = ['scans'];
  /** The lists and the export: an account's, their query strings read as ../query-params.ts says. */
  const listing = { config: { auth: 'account' as const }, preValidation: blankIsAbsent };

  app.get(
    '/scans',
    {
      ...listing,
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
      ...listing,
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
      ...listing,
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
        response: imageReplies('The image bytes'),
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
};
