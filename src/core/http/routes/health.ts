/** GET /health: liveness for the desktop shell, a POS and a load balancer. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HealthData, replies } from '../schemas.js';

export interface HealthOptions {
  version: string;
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { version }) => {
  const { store, analyzer, clock } = app.core;
  const startedAt = clock.now().getTime();

  app.get('/health', { schema: { tags: ['service'], summary: 'Service status', response: replies(HealthData) } }, async () => {
    const storageOk = await store.ping().then(
      () => true,
      () => false,
    );
    const problem = storageOk ? app.storageTrouble.recent() : 'The database does not answer';
    return {
      success: true as const,
      data: {
        status: problem === null ? ('ok' as const) : ('degraded' as const),
        ...(problem === null ? {} : { problem }),
        version,
        modelVersion: analyzer.modelVersion || null,
        storage: store.kind,
        uptimeS: Math.max(0, Math.floor((clock.now().getTime() - startedAt) / 1000)),
      },
    };
  });
};
