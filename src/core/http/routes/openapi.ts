/** GET /openapi.json: the document @fastify/swagger builds from every route's schemas. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { documentReplies } from '../schemas.js';

export const openapiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/openapi.json',
    { schema: { tags: ['service'], summary: 'This OpenAPI document', response: documentReplies('The OpenAPI 3.0 document') } },
    async () => app.swagger(),
  );
};
