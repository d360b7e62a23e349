/**
 * Desktop → hub sync end to end: real listening hub, desktops driving their own API,
 * pushes through the outbox over HTTP.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/core/config.js';
import { HUB_REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../src/core/http/app.js';
import { analyze, call, deskSync, hubAccount, hubScans, removeNode, startNode, type Node } from './nodes.js';
import { createKey, expectError, signIn } from '../http/helpers.js';
import { freshSchema, TEST_DATABASE_URL, type TestSchema } from '../hub/pg.js';

let nodes: Node[] = [];
let schemas: TestSchema[] = [];
afterEach(async () => {
  await Promise.all(nodes.map(removeNode));
  await Promise.all(schemas.map((schema) => schema.drop()));
  nodes = [];
  schemas = [];
});

/** Where the hub keeps its data: SQLite always, PostgreSQL too when a test database is configured. */
const HUB_STORES: Array<[string, boolean]> = [['SQLite', false], ...(TEST_DATABASE_URL ? [['PostgreSQL', true] as [string, boolean]] : [])];

async function hubConfig(postgres: boolean) {
  if (!postgres) return {};
  const schema = await freshSchema();
  schemas.push(schema);
  return { databaseUrl: schema.url };
}

async function node(options: Parameters<typeof startNode>[0] = {}): Promise<Node> {
  const started = await startNode(options);
  nodes.push(started);
  return started;
}

/** A hub with an account, and a desktop signed in and linked to it. */
async function linkedPair(hubOptions: { config?: Partial<Config> } = {}) {
  const hub = await node(hubOptions);
  const { key } = await hubAccount(hub);
  const desk = await node();
  const { cookie } = await signIn(desk.app);
  const linked = await call(desk, cookie, 'PUT', '/api/v1/sync/link', { hubUrl: hub.url, hubApiKey: key });
  expect(linked.json().data).toMatchObject({ linked: true, hubUrl: hub.url, pending: 0, lastError: null });
  return { hub, key, desk, cookie };
}

async function syncNow(desk: Node, cookie: string) {
  const res = await call(desk, cookie, 'POST', '/api/v1/sync/run');
  expect(res.statusCode).toBe(200);
  return res.json().data as { pending: number; lastError: string | null; lastSyncAt: string | null };
}

describe('linking a desktop to a hub', () => {
  it('validates the link, keeps it in settings.json and never shows the key back', async () => {
    const { hub, key, desk, cookie } = await linkedPair();
    const settings = JSON.parse(readFileSync(path.join(desk.dataDir, 'settings.json'), 'utf8'));
    expect(settings.sync).toEqual({ hubUrl: hub.url, hubApiKey: key });
    const status = await call(desk, cookie, 'GET', '/api/v1/sync/status');
    expect(JSON.stringify(status.json())).not.toContain(key);

    expectError(await call(desk, cookie, 'PUT', '/api/v1/sync/link', { hubUrl: 'ftp://hub', hubApiKey: key }), 400, 'VALIDATION_ERROR');
    expectError(await call(desk, cookie, 'PUT', '/api/v1/sync/link', { hubUrl: hub.url, hubApiKey: 'tw_short' }), 400, 'VALIDATION_ERROR');

    const unlinked = await call(desk, cookie, 'DELETE', '/api/v1/sync/link');
    expect(unlinked.json().data).toMatchObject({ linked: false, hubUrl: null });
    expect(JSON.parse(readFileSync(path.join(desk.dataDir, 'settings.json'), 'utf8')).sync).toBeUndefined();
  });

  it('says at once when the hub refuses the key, and keeps the link', async () => {
    const hub = await node();
    const desk = await node();
    const { cookie } = await signIn(desk.app);
    const res = await call(desk, cookie, 'PUT', '/api/v1/sync/link', { hubUrl: hub.url, hubApiKey: `tw_${'A'.repeat(32)}` });
    expect(res.json().data).toMatchObject({ linked: true });
    expect(res.json().data.lastError).toMatch(/401 INVALID_API_KEY/);
  });

  it('is for the signed-in user at this computer only', async () => {
    const desk = await node();
    expectError(await desk.app.inject({ method: 'GET', url: '/api/v1/sync/status' }), 401, 'INVALID_SESSION');
    const { cookie } = await signIn(desk.app);
    const fromLan = await desk.app.inject({
      method: 'GET',
      url: '/api/v1/sync/status',
      headers: { cookie },
      remoteAddress: '192.168.1.20',
    });
    expectError(fromLan, 403, 'FORBIDDEN');
  });

  it('tells an unlinked desktop to link first', async () => {
    const desk = await node();
    const { cookie } = await signIn(desk.app);
    expect((await call(desk, cookie, 'GET', '/api/v1/sync/status')).json().data).toEqual({
      linked: false,
      hubUrl: null,
      lastSyncAt: null,
      pending: 0,
      lastError: null,
      skipped: 0,
    });
    expect(expectError(await call(desk, cookie, 'POST', '/api/v1/sync/run'), 400, 'VALIDATION_ERROR')).toMatch(/not linked/);
    expect(expectError(await call(desk, cookie, 'POST', '/api/v1/sync/resend'), 400, 'VALIDATION_ERROR')).toMatch(/not linked/);
    expectError(await call(desk, cookie, 'GET', '/api/v1/sync/hub-scans'), 400, 'VALIDATION_ERROR');
  });
});

describe.each(HUB_STORES)('pushing the outbox to a hub on %s', (_name, postgres) => {
  it('pushes corrections (PATCH /scans/:id): the hub takes the later vehicle and position, with their history', async () => {
    const { hub, key, desk, cookie } = await linkedPair({ config: await hubConfig(postgres) });
    const a = await analyze(desk, cookie);
    await syncNow(desk, cookie);
    desk.clock.advance(60_000);
    const patched = await call(desk, cookie, 'PATCH', `/api/v1/scans/${a.scanId}`, { vehicle: 'KA-TW-204', position: 'FL', measurementMm: 3.2 });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await call(desk, cookie, 'GET', '/api/v1/sync/status')).json().data.pending).toBe(1);
    expect(await syncNow(desk, cookie)).toMatchObject({ pending: 0, lastError: null });

    const onHub = (await hubScans(hub, key)).find((s) => s.scanId === a.scanId) as unknown as Record<string, unknown>;
    expect(onHub).toMatchObject({
      vehicle: 'KA-TW-204',
      vehicleKey: 'KATW204',
      position: 'FL',
      measurementMm: 3.2,
      isPreliminary: false,
      changes: [
        { field: 'vehicle', from: null, to: 'KA-TW-204', via: 'sync' },
        { field: 'position', from: null, to: 'FL', via: 'sync' },
        { field: 'measurementMm', from: null, to: 3.2, via: 'sync' },
      ],
    });
    // the chain finds it however the plate is typed
    const found = await hub.app.inject({ method: 'GET', url: '/api/v1/scans?vehicle=ka%20tw%20204', headers: { 'x-api-key': key } });
    expect(found.json().data.items.map((s: { scanId: string }) => s.scanId)).toEqual([a.scanId]);
    // and the desk reads the chain's copy with it
    const chain = await call(desk, cookie, 'GET', '/api/v1/sync/hub-scans');
    expect(chain.json().data.items.find((s: { scanId: string }) => s.scanId === a.scanId)).toMatchObject({ vehicle: 'KA-TW-204', position: 'FL' });

    // a later correction wins again; one sent twice changes nothing more
    desk.clock.advance(60_000);
    await call(desk, cookie, 'PATCH', `/api/v1/scans/${a.scanId}`, { position: 'FR' });
    await syncNow(desk, cookie);
    await call(desk, cookie, 'POST', '/api/v1/sync/resend');
    await syncNow(desk, cookie);
    const again = (await hubScans(hub, key)).find((s) => s.scanId === a.scanId) as unknown as { position: string; changes: unknown[] };
    expect(again.position).toBe('FR');
    expect(again.changes).toHaveLength(4);
  });

  it('pushes scans, gauge readings and deletions; the hub holds each scan once', async () => {
    const { hub, key, desk, cookie } = await linkedPair({ config: await hubConfig(postgres) });
    // a hub (on PostgreSQL) lets a slow shop line take minutes over a photo; a desk keeps its minute
    expect(hub.app.server.requestTimeout).toBe(postgres ? HUB_REQUEST_TIMEOUT_MS : REQUEST_TIMEOUT_MS);
    expect(desk.app.server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    const a = await analyze(desk, cookie);
    const b = await analyze(desk, cookie);
    const c = await analyze(desk, cookie);
    desk.clock.advance(60_000);
    await call(desk, cookie, 'PUT', `/api/v1/scans/${a.scanId}/measurement`, { measurementMm: 4.2 });
    await call(desk, cookie, 'DELETE', `/api/v1/scans/${b.scanId}`);
    expect((await call(desk, cookie, 'GET', '/api/v1/sync/status')).json().data.pending).toBe(3);

    const status = await syncNow(desk, cookie);
    expect(status).toMatchObject({ pending: 0, lastError: null });
    expect(status.lastSyncAt).not.toBeNull();

    const onHub = await hubScans(hub, key);
    expect(onHub.map((s) => s.scanId).sort()).toEqual([a.scanId, c.scanId].sort());
    expect(onHub.find((s) => s.scanId === a.scanId)?.measurementMm).toBe(4.2);
    const image = await hub.app.inject({ method: 'GET', url: `/api/v1/scans/${c.scanId}/image`, headers: { 'x-api-key': key } });
    expect(image.rawPayload.equals(c.image)).toBe(true);
    expectError(await hub.app.inject({ method: 'GET', url: `/api/v1/scans/${b.scanId}`, headers: { 'x-api-key': key } }), 404, 'NOT_FOUND');

    await syncNow(desk, cookie);
    expect(await hubScans(hub, key)).toHaveLength(2);
  });

  it('loses nothing while the hub is down and duplicates nothing after it returns', async () => {
    const config = await hubConfig(postgres);
    const { hub, key, desk, cookie } = await linkedPair({ config });
    const first = [await analyze(desk, cookie), await analyze(desk, cookie)];
    await syncNow(desk, cookie);

    await hub.server.close();
    const later = [await analyze(desk, cookie), await analyze(desk, cookie), await analyze(desk, cookie)];
    desk.clock.advance(60_000);
    await call(desk, cookie, 'PUT', `/api/v1/scans/${first[0]!.scanId}/measurement`, { measurementMm: 3.1 });
    const down = await syncNow(desk, cookie);
    expect(down.pending).toBe(4);
    expect(down.lastError).toMatch(/unreachable/i);

    const back = await startNode({ dataDir: hub.dataDir, port: hub.port, config });
    nodes[0] = back;
    const up = await syncNow(desk, cookie);
    expect(up).toMatchObject({ pending: 0, lastError: null });
    const onHub = await hubScans(back, key);
    expect(onHub.map((s) => s.scanId).sort()).toEqual([...first, ...later].map((s) => s.scanId).sort());
    expect(onHub.find((s) => s.scanId === first[0]!.scanId)?.measurementMm).toBe(3.1);
  });

  it('keeps the link and the outbox across a desktop restart', async () => {
    const config = await hubConfig(postgres);
    const { hub, key, desk, cookie } = await linkedPair({ config });
    await hub.server.close();
    await analyze(desk, cookie);
    await analyze(desk, cookie);
    await desk.server.close();

    const again = await startNode({ dataDir: desk.dataDir });
    nodes[1] = again;
    const { cookie: fresh } = await signIn(again.app);
    expect((await call(again, fresh, 'GET', '/api/v1/sync/status')).json().data).toMatchObject({ linked: true, pending: 2 });
    const back = await startNode({ dataDir: hub.dataDir, port: hub.port, config });
    nodes[0] = back;
    expect(await syncNow(again, fresh)).toMatchObject({ pending: 0 });
    expect(await hubScans(back, key)).toHaveLength(2);
  });
});

describe("the chain's scans", () => {
  it('shows every shop’s scans, images read through the desktop', async () => {
    const { hub, key, desk, cookie } = await linkedPair();
    const other = await node();
    const { cookie: otherCookie } = await signIn(other.app);
    await call(other, otherCookie, 'PUT', '/api/v1/sync/link', { hubUrl: hub.url, hubApiKey: key });
    const mine = await analyze(desk, cookie);
    const theirs = await analyze(other, otherCookie);
    await syncNow(desk, cookie);
    await syncNow(other, otherCookie);

    const chain = (await call(desk, cookie, 'GET', '/api/v1/sync/hub-scans')).json().data;
    expect(chain.items.map((s: { scanId: string }) => s.scanId).sort()).toEqual([mine.scanId, theirs.scanId].sort());
    const item = chain.items.find((s: { scanId: string }) => s.scanId === theirs.scanId);
    expect(item.image.url).toBe(`/api/v1/sync/hub-scans/${theirs.scanId}/image`);
    const image = await call(desk, cookie, 'GET', item.image.url);
    expect(image.statusCode).toBe(200);
    expect(image.rawPayload.equals(theirs.image)).toBe(true);
  });

  it('answers 503 with the reason when the hub cannot be reached', async () => {
    const { hub, desk, cookie } = await linkedPair();
    await hub.server.close();
    const message = expectError(await call(desk, cookie, 'GET', '/api/v1/sync/hub-scans'), 503, 'STORAGE_UNAVAILABLE');
    expect(message).toMatch(/unreachable/i);
  });
});

describe('a new key for a hub this desktop pushed to before', () => {
  /** Counts the desk's PUTs to the hub and the photos they carry. */
  function counting() {
    const stats = { puts: 0, photos: 0 };
    const fetchLike = async (url: string, init: RequestInit) => {
      if (init.method === 'PUT') {
        stats.puts++;
        if ((init.body as FormData).get('image')) stats.photos++;
      }
      return fetch(url, init);
    };
    return { stats, fetchLike };
  }

  it('sends the scans the hub already has without their photos (a rotated key), and new ones with theirs', async () => {
    const hub = await node();
    const { cookie: office } = await signIn(hub.app);
    const desk = await node();
    const { cookie } = await signIn(desk.app);
    for (let i = 0; i < 3; i++) await analyze(desk, cookie);
    const key1 = await createKey(hub.app, office, 'Main St');
    const first = counting();
    const before = deskSync(desk, { hubUrl: hub.url, hubApiKey: key1 }, { fetch: first.fetchLike });
    expect((await before.pusher!.runOnce()).error).toBeNull();
    await before.close();
    expect(first.stats).toEqual({ puts: 3, photos: 3 });

    // the key is rotated as docs/HUB.md says: a new one, the old one revoked
    const key2 = await createKey(hub.app, office, 'Main St (new key)');
    const keys = (await call(hub, office, 'GET', '/api/v1/keys')).json().data.items as Array<{ id: string; name: string }>;
    await call(hub, office, 'DELETE', `/api/v1/keys/${keys.find((k) => k.name === 'Main St')!.id}`);
    const fresh = await analyze(desk, cookie);
    const second = counting();
    const after = deskSync(desk, { hubUrl: hub.url, hubApiKey: key2 }, { fetch: second.fetchLike });
    expect((await after.pusher!.runOnce()).error).toBeNull();
    expect(await after.status()).toMatchObject({ pending: 0, skipped: 0, lastError: null });
    await after.close();
    // three without a photo (the hub has them), the new scan with its photo
    expect(second.stats).toEqual({ puts: 4, photos: 1 });
    const onHub = await hubScans(hub, key2);
    expect(onHub).toHaveLength(4);
    const image = await hub.app.inject({ method: 'GET', url: `/api/v1/scans/${fresh.scanId}/image`, headers: { 'x-api-key': key2 } });
    expect(image.rawPayload.equals(fresh.image)).toBe(true);
  });
});
