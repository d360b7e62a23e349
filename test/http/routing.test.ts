import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { expectError, httpTest, imageForm, type HttpTest } from './helpers.js';

let t: HttpTest;
beforeAll(async () => {
  t = await httpTest();
});
afterAll(() => t.cleanup());

describe('unknown routes and methods', () => {
  it('an unknown API route is 404 NOT_FOUND in the envelope', async () => {
    expect(expectError(await t.app.inject({ url: '/api/v1/tyres' }), 404, 'NOT_FOUND')).toMatch(/GET \/api\/v1\/tyres/);
    expectError(await t.app.inject({ method: 'POST', url: '/api/v2/analyze' }), 404, 'NOT_FOUND');
    expectError(await t.app.inject({ method: 'POST', url: '/somewhere' }), 404, 'NOT_FOUND');
  });

  it.each([
    ['GET', '/api/v1/analyze', 'POST'],
    ['DELETE', '/api/v1/health', 'GET, HEAD'],
    ['PATCH', '/api/v1/scans/abc/measurement', 'PUT'],
    ['POST', '/api/v1/scans/abc', 'DELETE, GET, HEAD, PATCH'],
    ['PUT', '/api/v1/keys', 'GET, HEAD, POST'],
    ['GET', '/api/v1/auth/login', 'POST'],
  ])('%s %s is 405 with Allow: %s', async (method, url, allow) => {
    const res = await t.app.inject({ method: method as 'GET', url });
    expect(expectError(res, 405, 'METHOD_NOT_ALLOWED')).toContain(allow);
    expect(res.headers.allow).toBe(allow);
  });

  it('a malformed URL is a 400 in the envelope', async () => {
    expectError(await t.app.inject({ url: '/api/v1/scans/%E0%A4%A' }), 400, 'VALIDATION_ERROR');
  });
});

describe('the renderer at /', () => {
  it('without a built UI, / says how to build it and API routes stay JSON', async () => {
    const res = await t.app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('npm run build');
    expectError(await t.app.inject({ url: '/api/v1/missing' }), 404, 'NOT_FOUND');
  });

  describe('with a built UI', () => {
    let ui: HttpTest;
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-ui-'));
      await mkdir(path.join(dir, 'assets'));
      await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>TireWear UI</title><div id="root"></div>');
      await writeFile(path.join(dir, 'assets', 'app.js'), 'console.log("ui")');
      ui = await httpTest({ config: { rendererDir: dir } });
    });
    afterAll(async () => {
      await ui.cleanup();
      await rm(dir, { recursive: true, force: true });
    });

    it('serves index.html with a strict CSP, and its assets', async () => {
      const page = await ui.app.inject({ url: '/' });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('TireWear UI');
      expect(page.headers['content-security-policy']).toBe(
        "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob: mediastream:; style-src 'self' 'unsafe-inline'; " +
          "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      );
      const asset = await ui.app.inject({ url: '/assets/app.js' });
      expect(asset.statusCode).toBe(200);
      expect(asset.headers['content-type']).toMatch(/javascript/);
    });

    it('falls back to index.html for client routes, not for files or the API', async () => {
      const route = await ui.app.inject({ url: '/history/abc?x=1' });
      expect(route.statusCode).toBe(200);
      expect(route.body).toContain('TireWear UI');
      expectError(await ui.app.inject({ url: '/assets/missing.js' }), 404, 'NOT_FOUND');
      expectError(await ui.app.inject({ url: '/api/v1/history' }), 404, 'NOT_FOUND');
      // the API's base path is the API's too, not a page
      expectError(await ui.app.inject({ url: '/api' }), 404, 'NOT_FOUND');
      expectError(await ui.app.inject({ url: '/API/v2' }), 404, 'NOT_FOUND');
      expectError(await ui.app.inject({ method: 'POST', url: '/history' }), 404, 'NOT_FOUND');
    });
  });
});

describe('GET /api/v1/openapi.json', () => {
  const SPEC_ROUTES = [
    'post /api/v1/analyze',
    'post /api/v1/auth/register',
    'post /api/v1/auth/login',
    'post /api/v1/auth/logout',
    'get /api/v1/account',
    'post /api/v1/keys',
    'get /api/v1/keys',
    'delete /api/v1/keys/{id}',
    'post /api/v1/licenses',
    'get /api/v1/scans',
    'get /api/v1/scans/export',
    'get /api/v1/scans/{scanId}',
    'get /api/v1/scans/{scanId}/image',
    'delete /api/v1/scans/{scanId}',
    'put /api/v1/scans/{scanId}/measurement',
    'get /api/v1/health',
    'get /api/v1/openapi.json',
    'get /api/v1/settings',
    'put /api/v1/settings',
  ];

  it('lists every route of docs/API.md §5 and nothing outside /api/v1', async () => {
    const doc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    expect(doc.openapi).toMatch(/^3\./);
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
      Object.keys(ops).map((method) => `${method} ${p}`),
    );
    expect(operations).toEqual(expect.arrayContaining(SPEC_ROUTES));
    expect(operations.filter((op) => !op.split(' ')[1]!.startsWith('/api/v1/'))).toEqual([]);
  });

  it('documents the analyze form and the envelopes from the validating schemas', async () => {
    const doc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    const analyze = doc.paths['/api/v1/analyze'].post;
    const form = analyze.requestBody.content['multipart/form-data'].schema;
    expect(form.required).toContain('image');
    expect(form.properties.position).toBeDefined();
    expect(JSON.stringify(analyze.responses['200'])).toContain('estimatedDepthMm');
    expect(JSON.stringify(analyze.responses['4XX'] ?? analyze.responses['4xx'])).toMatch(/ErrorEnvelope|code/);
    const register = doc.paths['/api/v1/auth/register'].post;
    expect(register.requestBody.content['application/json'].schema.properties.password.minLength).toBe(8);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ in: 'header', name: 'X-API-Key' });
    expect(doc.paths['/api/v1/keys'].get.security).toEqual([{ session: [] }]);
    expect(doc.paths['/api/v1/analyze'].post.security).toEqual([{}, { apiKey: [] }, { session: [] }]);
  });

  it('documents what a POS reads besides the body: rate-limit and retry headers, the error codes, the wear values', async () => {
    const doc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    const analyze = doc.paths['/api/v1/analyze'].post;
    expect(Object.keys(analyze.responses['200'].headers)).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Idempotent-Replayed']);
    expect(Object.keys(analyze.responses['4XX'].headers)).toContain('Retry-After');
    expect(Object.keys(analyze.responses['5XX'].headers)).toContain('Retry-After');
    const key = analyze.parameters.find((p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key');
    expect(key.schema).toMatchObject({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' });
    const result = doc.paths['/api/v1/analyze'].post.responses['200'].content['application/json'].schema.properties.data.properties.result;
    expect(JSON.stringify(result.properties.wear)).toMatch(/"new".*"good".*"medium".*"worn".*"critical"/);
    expect(result.properties.depth32nds.description).toMatch(/whole 32nds/);
    expect(doc.components.schemas.ErrorEnvelope.properties.error.properties.code.enum).toEqual(
      expect.arrayContaining(['RATE_LIMIT_EXCEEDED', 'NO_TIRE_DETECTED', 'STORAGE_UNAVAILABLE']),
    );
    // the documented headers are not only documented: an answer carries them
    const upload = imageForm(await makeJpeg({ width: 320, height: 256 }));
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', ...upload });
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(res.headers[name]).toBeDefined();
  });
});
