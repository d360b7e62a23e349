/** Accounts for reliability tests, made through the public API as a shop would. */
import type { FastifyInstance } from 'fastify';

let counter = 0;
export const PASSWORD = 'correct horse battery';

/** A new account signed in; returns its Cookie header. */
export async function signedIn(app: FastifyInstance): Promise<string> {
  const email = `reliability${++counter}-${process.pid}@example.com`;
  await app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password: PASSWORD } });
  const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: PASSWORD } });
  if (login.statusCode !== 200) throw new Error(`login failed: ${login.body}`);
  return `auth-token=${login.cookies.find((c) => c.name === 'auth-token')!.value}`;
}

export async function apiKeyFor(app: FastifyInstance, cookie: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/keys', headers: { cookie }, payload: { name: 'POS' } });
  if (res.statusCode !== 201) throw new Error(`key failed: ${res.body}`);
  return res.json().data.key as string;
}

export async function redeem(app: FastifyInstance, cookie: string, code: string): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/licenses', headers: { cookie }, payload: { code } });
  if (res.statusCode !== 200) throw new Error(`redeem failed: ${res.body}`);
}

/** An API key of a new pro account (unmetered, so a long run never hits 429). */
export async function proApiKey(app: FastifyInstance, proCode: string): Promise<string> {
  const cookie = await signedIn(app);
  await redeem(app, cookie, proCode);
  return apiKeyFor(app, cookie);
}
