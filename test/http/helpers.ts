/** Shorthands for HTTP tests: an app on a real test core, forms, sign-in, keys. */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Config } from '../../src/core/config.js';
import type { Store } from '../../src/core/storage/store.js';
import { buildServer } from '../../src/core/http/app.js';
import { testCore, type TestCore } from '../support/core.js';

export interface HttpTest extends TestCore {
  app: FastifyInstance;
}

/** A server on a fresh core (temp SQLite, ManualClock, FakeAnalyzer); call cleanup() after. */
export async function httpTest(options: { config?: Partial<Config>; store?: Store } = {}): Promise<HttpTest> {
  const t = await testCore(options);
  const app = await buildServer(t.core, { logger: false });
  return {
    ...t,
    app,
    async cleanup() {
      await app.close();
      await t.cleanup();
    },
  };
}

export type Part = { name: string; value: string } | { name: string; data: Buffer; filename?: string | null; contentType?: string };

const BOUNDARY = '----tirewear-test-boundary';

/** A multipart/form-data body built by hand, so tests can also build broken ones. */
export function form(parts: Part[], { close = true } = {}): { payload: Buffer; headers: Record<string, string> } {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    } else {
      const filename = part.filename === null ? '' : `; filename="${part.filename ?? 'tire.jpg'}"`;
      chunks.push(
        Buffer.from(
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"${filename}\r\n` + `Content-Type: ${part.contentType ?? 'image/jpeg'}\r\n\r\n`,
        ),
        part.data,
        Buffer.from('\r\n'),
      );
    }
  }
  if (close) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } };
}

export function imageForm(image: Buffer, fields: Record<string, string> = {}) {
  return form([...Object.entries(fields).map(([name, value]) => ({ name, value })), { name: 'image', data: image }]);
}

let counter = 0;
export const PASSWORD = 'correct horse battery';

/** Register and sign in a fresh account; returns the Cookie header to send. */
export async function signIn(app: FastifyInstance, email = `shop${++counter}-${Date.now()}@example.com`) {
  await app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password: PASSWORD } });
  const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: PASSWORD } });
  expect(login.statusCode).toBe(200);
  const token = login.cookies.find((c) => c.name === 'auth-token')!.value;
  return { email, cookie: `auth-token=${token}` };
}

export async function createKey(app: FastifyInstance, cookie: string, name = 'POS'): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/keys', headers: { cookie }, payload: { name } });
  expect(res.statusCode).toBe(201);
  return res.json().data.key as string;
}

/** Asserts the error envelope and returns the message. */
export function expectError(res: LightMyRequestResponse, status: number, code: string): string {
  expect({ status: res.statusCode, body: res.json() }).toMatchObject({ status, body: { success: false, error: { code } } });
  const body = res.json<{ error: { message: string } }>();
  expect(Object.keys(res.json<object>()).sort()).toEqual(['error', 'success']);
  return body.error.message;
}
