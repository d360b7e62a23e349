/** POST /licenses: redeem a signed scan-pack or pro code (TWL1.<payload>.<signature>). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountCaller } from '../auth.js';
import { RedeemBody, RedeemData, replies } from '../schemas.js';
import { toAccountData, toWireLicense } from '../wire.js';

export const licenseRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { licenses, accounts } = app.core.services;

  app.post(
    '/licenses',
    {
      config: { auth: 'account' },
      schema: {
        tags: ['account'],
        summary: 'Redeem a license code',
        body: RedeemBody,
        response: replies(RedeemData),
      },
    },
    async (request) => {
      const accountId = accountCaller(request).account.id;
      const { license } = await licenses.redeem(accountId, request.body.code.trim());
      const summary = await accounts.summary(accountId);
      return { success: true as const, data: { license: toWireLicense(license), account: toAccountData(summary) } };
    },
  );
};
