/** Accounts and the cookie session: register, login (sets auth-token), logout (clears it). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sessionCookieOptions } from '../auth.js';
import { Credentials, Empty, NewAccount, WireAccount, replies } from '../schemas.js';
import { SESSION_COOKIE } from '../security.js';
import { toWireAccount } from '../wire.js';

export const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { auth } = app.core.services;
  const { clock } = app.core;

  app.post(
    '/auth/register',
    {
      schema: {
        tags: ['account'],
        summary: 'Create an account',
        description:
          '403 FORBIDDEN once the first account exists on a server that takes only it (TIREWEAR_REGISTRATION=first). ' +
          "From another computer of a desk's LAN every /auth route is 403 whatever key is sent: use an API key there.",
        body: NewAccount,
        response: replies(WireAccount, 201),
      },
    },
    async (request, reply) => {
      const account = await auth.register(request.body.email, request.body.password, request.ip);
      return reply.code(201).send({ success: true, data: toWireAccount(account) });
    },
  );

  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['account'],
        summary: 'Sign in; sets the auth-token cookie',
        body: Credentials,
        response: replies(WireAccount),
      },
    },
    async (request, reply) => {
      const session = await auth.login(request.body.email, request.body.password, request.ip);
      const maxAgeS = Math.max(0, Math.floor((session.expiresAt.getTime() - clock.now().getTime()) / 1000));
      void reply.setCookie(SESSION_COOKIE, session.token, sessionCookieOptions(request, maxAgeS));
      return { success: true as const, data: toWireAccount(session.account) };
    },
  );

  app.post(
    '/auth/logout',
    { schema: { tags: ['account'], summary: 'End the session and clear the cookie', response: replies(Empty) } },
    async (request, reply) => {
      const token = request.cookies[SESSION_COOKIE];
      if (token !== undefined) await auth.logout(token);
      void reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(request));
      return { success: true as const, data: {} };
    },
  );
};
