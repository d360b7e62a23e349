/**
 * /sync: both ends of desktop → hub sync, on one instance (the push form's parser is registered
 * once for both, as it always was).
 *
 * Hub side (a hub API key; sync-hub.ts): the pushes of linked desktops and the chain's scans and
 * shops. Desk side (signed in, this computer; sync-desk.ts): the link to a hub, the status line,
 * "sync now", and the chain's scans read through this computer so the hub key never reaches the
 * window.
 */
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { deskSync, deskSyncRoutes } from './sync-desk.js';
import { hubSyncRoutes, PUSH_LIMITS } from './sync-hub.js';

export const syncRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const sync = deskSync(app);
  await app.register(fastifyMultipart, {
    limits: PUSH_LIMITS,
    throwFileSizeLimit: true,
    isPartAFile: (field, contentType, fileName) => field === 'image' || fileName !== undefined || contentType === 'application/octet-stream',
  });
  hubSyncRoutes(app);
  deskSyncRoutes(app, sync);
};
