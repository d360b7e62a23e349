/**
 * The OpenAPI document is generated from the TypeBox schemas that validate requests,
 * so it cannot drift from what the server accepts. Served by routes/openapi.ts.
 */
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

export async function registerSwagger(app: FastifyInstance, version: string): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'TireWear API',
        version,
        description:
          'Tread depth from a tire photo. Every response is an envelope: {"success": true, "data"} or ' +
          '{"success": false, "error": {"code", "message"}}. When both X-API-Key and the auth-token cookie ' +
          'are sent, the key decides who is calling.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          session: { type: 'apiKey', in: 'cookie', name: 'auth-token' },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
}
