/**
 * /sync, the desk side (signed in, this computer): the link to a hub, the status line, "sync now",
 * and the chain's scans read through this computer so the hub key never reaches the window.
 * Refused on a hub (deskOnly).
 */
import { updateSettingsFile } from '../../settings-file.js';
import { AppError } from '../../errors.js';
import { createSyncService } from '../../sync/service.js';
import { blankIsAbsent } from '../query-params.js';
import { ChainPageQuery, HubImageQuery, HubScanList, HubShopList, LinkBody, ScanParams, SyncStatus, imageReplies, replies } from '../schemas.js';
import type { RouteApp } from '../types.js';

type SyncService = ReturnType<typeof createSyncService>;

/** This desk's sync service, stopped and closed with the server. */
export function deskSync(app: RouteApp): SyncService {
  const { config, store, images, clock, logger } = app.core;
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
  return sync;
}

const answer = <T>(data: T) => ({ success: true as const, data });

/** GET/PUT/DELETE /sync/link, /sync/status, /sync/resend, /sync/run and the hub's scans, shops and images read through this desk. */
export function deskSyncRoutes(app: RouteApp, sync: SyncService): void {
  const tags = ['sync'];
  /**
   * A desk's link to a hub, on a hub: a hub does not push its database (every account's scans) on
   * to another server. Refused, so that no one can point it at one (HUB.md §1).
   */
  const deskOnly = async (): Promise<void> => {
    if (app.core.config.databaseUrl !== null) {
      throw new AppError('FORBIDDEN', "This server is a hub: it does not link to another hub (a shop's desktop links to it; HUB.md)");
    }
  };
  const desk = { config: { auth: 'desk' as const }, preHandler: deskOnly };
  const status = (summary: string) => ({ tags, summary, response: replies(SyncStatus) });

  app.get('/sync/status', { ...desk, schema: status('Desk: hub link, last sync, pending changes, last error') }, async () => answer(await sync.status()));

  app.put(
    '/sync/link',
    { ...desk, schema: { tags, summary: 'Desk: link this computer to a hub', body: LinkBody, response: replies(SyncStatus) } },
    async (request) => answer(await sync.link(request.body)),
  );

  app.post(
    '/sync/resend',
    { ...desk, schema: status('Desk: send the changes the hub refused again (as linking again with the same hub and key, without the key)') },
    async () => answer(await sync.resendSkipped()),
  );

  app.delete('/sync/link', { ...desk, schema: status('Desk: unlink from the hub (local scans stay)') }, async () => answer(await sync.unlink()));

  app.post(
    '/sync/run',
    { ...desk, schema: status('Desk: push pending changes now; answers when done, after 15 s at most (the push goes on), or when the server stops') },
    async () => answer(await sync.runNow()),
  );

  app.get(
    '/sync/hub-scans',
    {
      ...desk,
      preValidation: blankIsAbsent,
      schema: { tags, summary: "Desk: the chain's scans, read from the hub", querystring: ChainPageQuery, response: replies(HubScanList) },
    },
    async (request) => {
      const { cursor, limit, apiKeyId } = request.query;
      return answer(await sync.hubScans({ cursor: cursor ?? null, limit, apiKeyId }));
    },
  );

  app.get('/sync/hub-shops', { ...desk, schema: { tags, summary: "Desk: the chain's shops, read from the hub", response: replies(HubShopList) } }, async () =>
    answer({ items: await sync.hubShops() }),
  );

  app.get(
    '/sync/hub-scans/:scanId/image',
    {
      ...desk,
      schema: {
        tags,
        summary: "Desk: an image of one of the chain's scans, read from the hub",
        params: ScanParams,
        querystring: HubImageQuery,
        response: imageReplies('The image bytes (JPEG, PNG or WebP)'),
      },
    },
    async (request, reply) => {
      // hubImage passes JPEG, PNG and WebP only (else 503): nothing the hub sends runs on this origin.
      const image = await sync.hubImage(request.params.scanId, request.query.variant ?? 'original');
      return reply.type(image.mime).header('x-content-type-options', 'nosniff').header('content-disposition', 'inline').send(image.data);
    },
  );
}
