/** GET /account: plan, allowance used and left, pack credit, reset time, redeemed licenses. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountCaller } from '../auth.js';
import { AccountData, replies } from '../schemas.js';
import { toAccountData } from '../wire.js';

export const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { accounts } = app.core.services;

  app.get(
    '/account',
    {
      config: { auth: 'account' },
      schema: { tags: ['account'], summary: 'Plan and usage of the signed-in account', response: replies(AccountData) },
    },
    async (request) => {
      const summary = await accounts.summary(accountCaller(request).account.id);
      return { success: true as const, data: toAccountData(summary) };
    },
  );
};
