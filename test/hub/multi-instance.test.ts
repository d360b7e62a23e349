/**
 * Hub mode as deployed: two server processes on one PostgreSQL database and one images
 * directory, as behind a load balancer. Metering stays exact across them, and sessions,
 * keys and scans made through one work through the other.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { imageForm, PASSWORD } from '../http/helpers.js';
import { makeTestLicenseKeys } from '../support/licenses.js';
import { spawnInstance, type Instance } from './instances.js';
import { freshSchema, TEST_DATABASE_URL, type TestSchema } from './pg.js';

describe.skipIf(!TEST_DATABASE_URL)('two hub instances on one PostgreSQL database', () => {
  let schema: TestSchema;
  let root: string;
  let a: Instance;
  let b: Instance;
  let jpeg: Buffer;

  beforeAll(async () => {
    schema = await freshSchema();
    root = await mkdtemp(path.join(os.tmpdir(), 'tirewear-hub-'));
    const env = (name: string) => ({
      TIREWEAR_DATABASE_URL: schema.url,
      TIREWEAR_DATA_DIR: path.join(root, name),
      TIREWEAR_IMAGES_DIR: path.join(root, 'shared-images'),
      TIREWEAR_LICENSE_PUBLIC_KEY: makeTestLicenseKeys().publicKeyPem,
    });
    // Started together, so both run the migrations at once.
    [a, b] = await Promise.all([spawnInstance(env('a')), spawnInstance(env('b'))]);
    jpeg = await makeJpeg({ width: 320, height: 256 });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await schema?.drop();
    await rm(root, { recursive: true, force: true });
  });

  const post = (instance: Instance, url: string, body: object, headers: Record<string, string> = {}) =>
    fetch(`${instance.url}${url}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...headers },
    });

  async function account(on: Instance): Promise<{ cookie: string; key: string }> {
    const email = `chain-${Math.random().toString(36).slice(2)}@example.com`;
    expect((await post(on, '/api/v1/auth/register', { email, password: PASSWORD })).status).toBe(201);
    const login = await post(on, '/api/v1/auth/login', { email, password: PASSWORD });
    const cookie = /auth-token=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
    const created = await post(on, '/api/v1/keys', { name: 'POS' }, { cookie });
    return { cookie, key: ((await created.json()) as { data: { key: string } }).data.key };
  }

  function analyze(on: Instance, headers: Record<string, string> = {}): Promise<Response> {
    const upload = imageForm(jpeg);
    return fetch(`${on.url}/api/v1/analyze`, {
      method: 'POST',
      body: new Uint8Array(upload.payload),
      headers: { ...upload.headers, ...headers },
    });
  }

  it('charges exactly the allowance left when requests race across instances', async () => {
    const { key, cookie } = await account(a);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => analyze(i % 2 ? a : b, { 'x-api-key': key })));
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429]);
    const summary = await fetch(`${b.url}/api/v1/account`, { headers: { cookie } });
    expect(((await summary.json()) as { data: { allowance: { used: number } } }).data.allowance).toMatchObject({
      used: 10,
      remaining: 0,
    });
  });

  it('meters anonymous callers by IP across instances', async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => analyze(i % 2 ? a : b)));
    expect(answers.filter((res) => res.status === 200)).toHaveLength(3);
  });

  it('honours sessions, keys and scans made through the other instance', async () => {
    const { cookie, key } = await account(a);
    expect((await fetch(`${b.url}/api/v1/account`, { headers: { cookie } })).status).toBe(200);

    const made = await analyze(b, { 'x-api-key': key });
    const { scanId } = ((await made.json()) as { data: { scanId: string } }).data;
    const scan = await fetch(`${a.url}/api/v1/scans/${scanId}`, { headers: { cookie } });
    expect(scan.status).toBe(200);
    const image = await fetch(`${a.url}/api/v1/scans/${scanId}/image`, { headers: { 'x-api-key': key } });
    expect(Buffer.from(await image.arrayBuffer()).equals(jpeg)).toBe(true);

    expect((await post(b, '/api/v1/auth/logout', {}, { cookie })).status).toBe(200);
    expect((await fetch(`${a.url}/api/v1/account`, { headers: { cookie } })).status).toBe(401);
  });
});
