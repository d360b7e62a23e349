/** Cookie parsing for the auth-token session (signed cookies are not used: the token is the secret). */
import fastifyCookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';

export async function registerCookie(app: FastifyInstance): Promise<void> {
  await app.register(fastifyCookie, { parseOptions: { httpOnly: true, sameSite: 'strict', path: '/' } });
}
