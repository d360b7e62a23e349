/**
 * /sync, the hub side (a hub API key): PUT /sync/scans/:scanId takes one scan as multipart, the
 * `scan` JSON field plus its `image` file the first time, and merges it idempotently;
 * GET /sync/scans lists the hub account's scans, every shop of the chain, each naming the
 * shop (hub API key) it came from, and GET /sync/shops lists those shops for a filter.
 */
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { DEFAULT_CHAIN_PAGE, MAX_IMAGE_BYTES } from '../../../shared/contract/limits.js';
import { AppError } from '../../errors.js';
import { DESK_TIME_HEADER } from '../../sync/hub-client.js';
import { deskMark, HUB_DESK_SEQ_HEADER, markingHandled, readDeskPosition } from '../../sync/desk-marks.js';
import { onHubClock, receiveSyncedScan, type ReceiveDeps, type SyncOwner } from '../../sync/receive.js';
import { listChainScans, listChainShops } from '../../sync/shops.js';
import { parseSyncScan, scanRefusal, type SyncScan } from '../../sync/wire.js';
import { accountCaller } from '../auth.js';
import { multipartError } from '../errors.js';
import { guardForm } from '../form-guard.js';
import { blankIsAbsent } from '../query-params.js';
import { ChainPageQuery, envelopeRef, HubScanList, HubShopList, ScanParams, SyncPushForm, WireScan, ok, replies } from '../schemas.js';
import type { RouteApp } from '../types.js';
import { admission, uploaderOf } from '../upload-admission.js';
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

/** busboy's limits of a push: one photo, the one `scan` field. */
export const PUSH_LIMITS = { fileSize: MAX_IMAGE_BYTES, files: 1, fields: 1, fieldSize: 64 * 1024, parts: 2, headerPairs: 20 };

/** The form of a push, read while it streams: the field "scan" (checked by parseSyncScan) and the file "image". */
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

/** Says when a shop's clock is off the hub's: once per shop key and offset (minutes), not once per upload of a replay. */
function skewWarner(): (log: FastifyBaseLogger, apiKeyId: string, skewMinutes: number) => void {
  const warned = new Map<string, number>();
  return (log, apiKeyId, skewMinutes) => {
    if (warned.get(apiKeyId) === skewMinutes) return;
    warned.set(apiKeyId, skewMinutes);
    log.warn({ apiKeyId, skewMinutes }, "a shop's clock is off the hub's: its reading times are moved onto the hub's clock");
  };
}

const PUSH_DESCRIPTION =
  'A desktop names itself and the change it sends (X-Desk-Id, X-Desk-Seq, both or neither); the answer then carries ' +
  'X-Hub-Desk-Seq, the highest change of that desktop this shop key had handled before, so a desktop finds out when a ' +
  'restored hub lost changes it had acknowledged (X-Desk-Id: 8-64 of A-Z a-z 0-9 - _; X-Desk-Seq: a whole number from 1; ' +
  'malformed: 400, not a refusal about the scan). X-Desk-Time moves the reading times of a desktop whose clock is off. ' +
  'Needs the X-API-Key of a hub account (a session is refused). Too many pushes at once: 503 SERVER_BUSY with Retry-After, ' +
  'before the body is read. A refusal about the scan itself carries X-TireWear-Scan-Refused: 1 (sending it again cannot succeed).';

/** PUT /sync/scans/:scanId, GET /sync/scans and GET /sync/shops, on the instance that registered the push form's parser. */
export function hubSyncRoutes(app: RouteApp): void {
  const { config, clock, store, images } = app.core;
  const tags = ['sync'];
  // pushes held at once are bounded as analyze uploads are (SERVER_BUSY before the body is
  // read, a quarter of them per address): a flood of 10 MiB pushes cannot fill the hub's memory
  const admitPush = admission({
    concurrency: config.analysisConcurrency,
    queueLimit: config.analysisQueueLimit,
    hub: config.databaseUrl !== null,
  });
  const warnSkew = skewWarner();

  /** One push's form read and checked, its times moved onto the hub's clock, and merged. */
  async function receive(request: FastifyRequest, pathScanId: string, owner: SyncOwner & { apiKeyId: string }, arrivedAt: Date) {
    const guard = guardForm(request, app.parseGraceMs, PUSH_LIMITS.headerPairs);
    const upload = await Promise.race([readUpload(request), guard.failure]).finally(guard.stop);
    if (upload.scan.scanId !== pathScanId) {
      throw scanRefusal('VALIDATION_ERROR', 'scan.scanId does not match the scan id in the path');
    }
    const deskTime = request.headers[DESK_TIME_HEADER.toLowerCase()];
    const { scan, skewMs } = onHubClock(upload.scan, typeof deskTime === 'string' ? deskTime : undefined, arrivedAt);
    if (scan !== upload.scan) warnSkew(request.log, owner.apiKeyId, skewMs / 60_000); // whole minutes (onHubClock)
    const deps: ReceiveDeps = { store, images, decode: (task) => app.core.queue.runBackground(task) };
    return receiveSyncedScan(deps, owner, scan, upload.image);
  }

  app.put(
    '/sync/scans/:scanId',
    {
      config: { auth: 'account' },
      // The form is read and checked by hand while it streams; the schema documents it.
      validatorCompiler: () => (value: unknown) => ({ value }),
      schema: {
        tags,
        summary: 'Hub: store or merge one scan pushed by a linked desktop (idempotent)',
        description: PUSH_DESCRIPTION,
        consumes: ['multipart/form-data'],
        params: ScanParams,
        body: SyncPushForm,
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
      const release = admitPush(request.ip, uploaderOf(caller));
      try {
        if (position) reply.header(HUB_DESK_SEQ_HEADER, String(await deskMark(store.meta, apiKeyId, position.deskId)));
        const stored = await markingHandled(store.meta, apiKeyId, position, () =>
          receive(request, request.params.scanId, { accountId: caller.account.id, apiKeyId }, arrivedAt),
        );
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
        limit: limit ?? DEFAULT_CHAIN_PAGE,
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
}
