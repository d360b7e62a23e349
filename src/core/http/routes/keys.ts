/** API keys for POS software. Managed with the cookie session only: a key cannot mint or revoke keys. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountCaller } from '../auth.js';
import { ApiKeyList, CreatedApiKey, Empty, KeyParams, NewKeyBody, replies } from '../schemas.js';
import { toWireApiKey } from '../wire.js';

export const keyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { apiKeys } = app.core.services;
  const tags = ['keys'];

  app.post(
    '/keys',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        summary: 'Create an API key; the secret `key` is shown only in this response',
        body: NewKeyBody,
        response: replies(CreatedApiKey, 201),
      },
    },
    async (request, reply) => {
      const created = await apiKeys.create(accountCaller(request).account.id, request.body.name.trim());
      return reply.code(201).send({ success: true, data: { ...toWireApiKey(created.record), key: created.key } });
    },
  );

  app.get(
    '/keys',
    {
      config: { auth: 'session' },
      schema: { tags, summary: 'List API keys (without secrets)', response: replies(ApiKeyList) },
    },
    async (request) => {
      const records = await apiKeys.list(accountCaller(request).account.id);
      return { success: true as const, data: { items: records.map(toWireApiKey) } };
    },
  );

  app.delete(
    '/keys/:id',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        summary: 'Revoke an API key',
        params: KeyParams,
        response: replies(Empty),
      },
    },
    async (request) => {
      await apiKeys.revoke(accountCaller(request).account.id, request.params.id);
      return { success: true as const, data: {} };
    },
  );
};
