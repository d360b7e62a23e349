/**
 * /sync: both ends of desktop → hub sync.
 *
 * Hub side (a hub API key): PUT /sync/scans/:scanId takes one scan as multipart, the
 * `scan` JSON field plus its `image` file the first time, and merges it idempotently;
 * GET /sync/scans lists the hub account's scans, every shop of the chain, each naming the
 * shop (hub API key) it came from, and GET /sync/shops lists those shops for a filter.
 *
 * Desk side (signed in, this computer): the link to a hub, the status line, "sync now",
 * and the chain's scans read through this computer so the hub key never reaches the window.
 */
import fastifyMultipart from '@fastify/multipart';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { updateSettingsFile } from '../../settings-file.js';
import { blankIsAbsent } from './scans.js';
import { AppError } from '../../errors.js';
import { DESK_TIME_HEADER } from '../../sync/hub-client.js';
import { deskMark, HUB_DESK_SEQ_HEADER, markingHandled, readDeskPosition } from '../../sync/desk-marks.js';
import { onHubClock, receiveSyncedScan } from '../../sync/receive.js';
import { createSyncService } from '../../sync/service.js';
import { listChainScans, listChainShops } from '../../sync/shops.js';
import { parseSyncScan, scanRefusal, type SyncScan } from '../../sync/wire.js';
import { accountCaller } from '../auth.js';
import { admission, uploaderOf } from '../upload-admission.js';
import { guardForm } from '../form-guard.js';
import { multipartError } from '../errors.js';
import { MAX_IMAGE_BYTES } from '../plugins/multipart.js';
import {
  ChainPageQuery,
  envelopeRef,
  HubImageQuery,
  HubScanList,
  HubShopList,
  LinkBody,
  ScanParams,
  SyncStatus,
  WireScan,
  ok,
  rawReplies,
  replies,
} from '../schemas.js';
import { toWireScan } from '../wire.js';

const DESK_SEQ = Type.String({
  description: 'Sent when the request named its desktop (X-Desk-Id, X-Desk-Seq): the highest change of that desktop this shop key had handled before',
});
/** The push's answers, with the headers a desktop reads (OpenAPI only: the serializer ignores them). */
const pushReplies = {
  ...replies(WireScan),
  200: { ...ok(WireScan), headers: { [HUB_DESK_SEQ_HEADER]: DESK_SEQ } },
  '4xx': envelopeRef({
    headers: {
      [HUB_DESK_SEQ_HEADER]: DESK_SEQ,
      'X-TireWear-Scan-Refused': Type.String({ description: '"1" when the refusal is about the scan itself: sending it again cannot succeed' }),
    },
  }),
};

const UPLOAD_LIMITS = { fileSize: MAX_IMAGE_BYTES, files: 1, fields: 1, fieldSize: 64 * 1024, parts: 2, headerPairs: 20 };

/** The sync routes need the whole store and the image store, which a full Core has. */
async function readUpload(request: FastifyRequest): Promise<{ scan: SyncScan; image: Buffer | null }> {
  if (!/^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '')) {
    throw new AppError('VALIDATION_ERROR', 'Send the scan as multipart/form-data: the field "scan" and the file "image"');
  }
  let scan: SyncScan | null = null;
  let image: Buffer | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'image') throw new AppError('VALIDATION_ERROR', `Unexpected file "${part.fieldname}"`);
        image = await part.toBuffer();
      } else if (part.fieldname === 'scan') {
        if (part.valueTruncated) throw new AppError('VALIDATION_ERROR', 'The field "scan" is too long');
        scan = parseSyncScan(String(part.value));
      } else {
        throw new AppError('VALIDATION_ERROR', `Unknown field "${part.fieldname}"; send "scan" and "image"`);
      }
    }
  } catch (error) {
    const refused = multipartError(error);
    // The photo is over the limit: a refusal of this scan, which the desktop skips rather than retries.
    if (refused.code === 'FILE_TOO_LARGE') throw scanRefusal(refused.code, refused.message, error);
    throw refused;
  }
  if (!scan) throw new AppError('VALIDATION_ERROR', 'The field "scan" is required');
  return { scan, image };
}

export const syncRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config, clock, logger } = app.core;
  const { store, images } = app.core;
  const tags = ['sync'];

  const sync = createSyncService({
    link: config.sync,
    store,
    images,
    clock,
    logger,
    async saveLink(link) {
      await updateSettingsFile(config.dataDir, ({ sync: _previous, ...rest }) => (link ? { ...rest, sync: link } : rest));
    },
  });
  // Shutdown must not wait on the hub: "sync now" and the background pass stop as soon as it begins.
  app.addHook('preClose', () => sync.stop());
  app.addHook('onClose', () => sync.close());

  await app.register(fastifyMultipart, {
    limits: UPLOAD_LIMITS,
    throwFileSizeLimit: true,
    isPartAFile: (field, contentType, fileName) => field === 'image' || fileName !== undefined || contentType === 'application/octet-stream',
  });

  const admitPush = admission({
    concurrency: config.analysisConcurrency,
    queueLimit: config.analysisQueueLimit,
    hub: config.databaseUrl !== null,
  });

  /** The clock offset last logged per shop key (minutes). */
  const skewWarned = new Map<string, number>();

  app.put(
    '/sync/scans/:scanId',
    {
      config: { auth: 'account' },
      // The form is read and checked by hand while it streams; the schema documents it.
      validatorCompiler: () => (value: unknown) => ({ value }),
      schema: {
        tags,
        summary: 'Hub: store or merge one scan pushed by a linked desktop (idempotent)',
        description:
          'A desktop names itself and the change it sends (X-Desk-Id, X-Desk-Seq, both or neither); the answer then carries ' +
          'X-Hub-Desk-Seq, the highest change of that desktop this shop key had handled before, so a desktop finds out when a ' +
          'restored hub lost changes it had acknowledged (X-Desk-Id: 8-64 of A-Z a-z 0-9 - _; X-Desk-Seq: a whole number from 1; ' +
          'malformed: 400, not a refusal about the scan). X-Desk-Time moves the reading times of a desktop whose clock is off. ' +
          'Needs the X-API-Key of a hub account (a session is refused). Too many pushes at once: 503 SERVER_BUSY with Retry-After, ' +
          'before the body is read. A refusal about the scan itself carries X-TireWear-Scan-Refused: 1 (sending it again cannot succeed).',
        consumes: ['multipart/form-data'],
        params: ScanParams,
        body: Type.Object({
          scan: Type.String({ description: 'JSON: the scan with measurementMm, measuredAt, deletedAt' }),
          image: Type.Optional(Type.String({ format: 'binary', description: 'Needed the first time the hub sees the scan' })),
        }),
        response: pushReplies,
      },
    },
    async (request, reply) => {
      const caller = accountCaller(request);
      if (caller.via !== 'key' || caller.apiKeyId === null) throw new AppError('FORBIDDEN', 'Sync uploads need the X-API-Key of a hub account');
      const apiKeyId = caller.apiKeyId;
      // the hub's time as the upload begins, as the desk's X-Desk-Time is: a slow upload's duration is no clock error
      const arrivedAt = clock.now();
      // which desk and change this is: the answer says how far the hub had got with this desk (desk-marks.ts)
      const position = readDeskPosition(request.headers);
      // pushes held at once are bounded as analyze uploads are (SERVER_BUSY before the body is
      // read, a quarter of them per address): a flood of 10 MiB pushes cannot fill the hub's memory
      const release = admitPush(request.ip, uploaderOf(caller));
      try {
        if (position) reply.header(HUB_DESK_SEQ_HEADER, String(await deskMark(store.meta, apiKeyId, position.deskId)));
        const stored = await markingHandled(store.meta, apiKeyId, position, async () => {
          const guard = guardForm(request, app.parseGraceMs, UPLOAD_LIMITS.headerPairs);
          const upload = await Promise.race([readUpload(request), guard.failure]).finally(guard.stop);
          if (upload.scan.scanId !== request.params.scanId) {
            throw scanRefusal('VALIDATION_ERROR', 'scan.scanId does not match the scan id in the path');
          }
          const deskTime = request.headers[DESK_TIME_HEADER.toLowerCase()];
          const { scan, skewMs } = onHubClock(upload.scan, typeof deskTime === 'string' ? deskTime : undefined, arrivedAt);
          const skewMinutes = skewMs / 60_000; // whole minutes (onHubClock)
          if (scan !== upload.scan && skewWarned.get(apiKeyId) !== skewMinutes) {
            // once per shop and offset, not once per upload of a replay
            skewWarned.set(apiKeyId, skewMinutes);
            request.log.warn({ apiKeyId, skewMinutes }, "a shop's clock is off the hub's: its reading times are moved onto the hub's clock");
          }
          return receiveSyncedScan(
            { store, images, decode: (task) => app.core.queue.runBackground(task) },
            { accountId: caller.account.id, apiKeyId },
            scan,
            upload.image,
          );
        });
        return { success: true as const, data: toWireScan(stored) };
      } finally {
        release();
      }
    },
  );

  app.get(
    '/sync/scans',
    {
      config: { auth: 'account' },
      preValidation: blankIsAbsent,
      schema: {
        tags,
        summary: "Hub: the account's scans from every linked shop (or one, by apiKeyId), newest first, each with its shop",
        querystring: ChainPageQuery,
        response: replies(HubScanList),
      },
    },
    async (request) => {
      const { cursor, limit, apiKeyId } = request.query;
      const page = await listChainScans(store, accountCaller(request).account.id, {
        limit: limit ?? 50,
        ...(cursor ? { cursor } : {}),
        ...(apiKeyId ? { apiKeyId } : {}),
      });
      const items = page.items.map(({ scan, shop }) => ({ ...toWireScan(scan), shop }));
      return { success: true as const, data: { items, nextCursor: page.nextCursor } };
    },
  );

  app.get(
    '/sync/shops',
    {
      config: { auth: 'account' },
      schema: { tags, summary: "Hub: the account's shops (its API keys, deleted ones flagged), by name", response: replies(HubShopList) },
    },
    async (request) => ({
      success: true as const,
      data: { items: await listChainShops(store, accountCaller(request).account.id) },
    }),
  );

  const desk = { auth: 'desk' as const };
  /**
   * A desk's link to a hub, on a hub: a hub does not push its database (every account's scans) on
   * to another server. Refused, so that no one can point it at one (HUB.md §1).
   */
  const deskOnly = async (): Promise<void> => {
    if (app.core.config.databaseUrl !== null) {
      throw new AppError('FORBIDDEN', "This server is a hub: it does not link to another hub (a shop's desktop links to it; HUB.md)");
    }
  };

  app.get(
    '/sync/status',
    { config: desk, preHandler: deskOnly, schema: { tags, summary: 'Desk: hub link, last sync, pending changes, last error', response: replies(SyncStatus) } },
    async () => ({ success: true as const, data: await sync.status() }),
  );

  app.put(
    '/sync/link',
    { config: desk, preHandler: deskOnly, schema: { tags, summary: 'Desk: link this computer to a hub', body: LinkBody, response: replies(SyncStatus) } },
    async (request) => ({ success: true as const, data: await sync.link(request.body) }),
  );

  app.post(
    '/sync/resend',
    {
      config: desk,
      preHandler: deskOnly,
      schema: {
        tags,
        summary: 'Desk: send the changes the hub refused again (as linking again with the same hub and key, without the key)',
        response: replies(SyncStatus),
      },
    },
    async () => ({ success: true as const, data: await sync.resendSkipped() }),
  );

  app.delete(
    '/sync/link',
    { config: desk, preHandler: deskOnly, schema: { tags, summary: 'Desk: unlink from the hub (local scans stay)', response: replies(SyncStatus) } },
    async () => ({ success: true as const, data: await sync.unlink() }),
  );

  app.post(
    '/sync/run',
    {
      config: desk,
      preHandler: deskOnly,
      schema: {
        tags,
        summary: 'Desk: push pending changes now; answers when done, after 15 s at most (the push goes on), or when the server stops',
        response: replies(SyncStatus),
      },
    },
    async () => ({ success: true as const, data: await sync.runNow() }),
  );

  app.get(
    '/sync/hub-scans',
    {
      config: desk,
      preHandler: deskOnly,
      preValidation: blankIsAbsent,
      schema: { tags, summary: "Desk: the chain's scans, read from the hub", querystring: ChainPageQuery, response: replies(HubScanList) },
    },
    async (request) => {
      const { cursor, limit, apiKeyId } = request.query;
      return { success: true as const, data: await sync.hubScans({ cursor: cursor ?? null, limit, apiKeyId }) };
    },
  );

  app.get(
    '/sync/hub-shops',
    { config: desk, preHandler: deskOnly, schema: { tags, summary: "Desk: the chain's shops, read from the hub", response: replies(HubShopList) } },
    async () => ({ success: true as const, data: { items: await sync.hubShops() } }),
  );

  app.get(
    '/sync/hub-scans/:scanId/image',
    {
      config: desk,
      preHandler: deskOnly,
      schema: {
        tags,
        summary: "Desk: an image of one of the chain's scans, read from the hub",
        params: ScanParams,
        querystring: HubImageQuery,
        // the types of the image only: a refusal is the JSON error envelope
        response: rawReplies('The image bytes (JPEG, PNG or WebP)', ['image/jpeg', 'image/png', 'image/webp']),
      },
    },
    async (request, reply) => {
      // hubImage passes JPEG, PNG and WebP only (else 503): nothing the hub sends runs on this origin.
      const image = await sync.hubImage(request.params.scanId, request.query.variant ?? 'original');
      return reply.type(image.mime).header('x-content-type-options', 'nosniff').header('content-disposition', 'inline').send(image.data);
    },
  );
};
