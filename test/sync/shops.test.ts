/**
 * Which shop each of a chain's scans came from: the hub names the API key that pushed
 * it (GET /sync/scans, GET /sync/shops, ?apiKeyId= for one shop), and a linked desktop
 * reads the same through /sync/hub-scans and /sync/hub-shops.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomId as randomKeyId, sha256Hex } from '../../src/core/services/support/ids.js';
import { listChainScans } from '../../src/core/sync/shops.js';
import { toSyncScan } from '../../src/core/sync/wire.js';
import type { HubScan, WireShop } from '../../src/shared/api.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { createKey, expectError, form, signIn } from '../http/helpers.js';
import { freshSchema, TEST_DATABASE_URL, type TestSchema } from '../hub/pg.js';
import { makeScan, randomId } from '../support/store.js';
import { analyze, call, removeNode, startNode, type Node } from './nodes.js';

/** Where the hub keeps its data: SQLite always, PostgreSQL too when a test database is configured. */
const HUB_STORES: Array<[string, boolean]> = [['SQLite', false], ...(TEST_DATABASE_URL ? [['PostgreSQL', true] as [string, boolean]] : [])];

describe.each(HUB_STORES)('shop names on a hub (%s)', (_name, postgres) => {
  let hub: Node;
  let schema: TestSchema | null = null;
  let office: string;
  let jpeg: Buffer;
  const shops: Record<'main' | 'elm', { key: string; id: string }> = {} as never;
  const pushed: Record<'main' | 'elm', string[]> = { main: [], elm: [] };
  let madeOnHub: string;

  async function push(shop: 'main' | 'elm', minute: number): Promise<void> {
    const record = makeScan({ id: randomId(), source: 'session', vehicle: `${shop}-${minute}`, createdAt: new Date(Date.UTC(2026, 10, 1, 8, minute)) });
    const scan = toSyncScan({ ...record, image: { ...record.image, sha256: sha256Hex(jpeg), bytes: jpeg.length } });
    const body = form([
      { name: 'scan', value: JSON.stringify(scan) },
      { name: 'image', data: jpeg },
    ]);
    const res = await hub.app.inject({
      method: 'PUT',
      url: `/api/v1/sync/scans/${scan.scanId}`,
      payload: body.payload,
      headers: { ...body.headers, 'x-api-key': shops[shop].key },
    });
    expect(res.statusCode).toBe(200);
    pushed[shop].push(scan.scanId);
  }

  const list = (query = '', auth: Record<string, string> = { cookie: office }) =>
    hub.app.inject({ method: 'GET', url: `/api/v1/sync/scans${query}`, headers: auth });

  beforeAll(async () => {
    if (postgres) schema = await freshSchema();
    hub = await startNode(schema ? { config: { databaseUrl: schema.url } } : {});
    ({ cookie: office } = await signIn(hub.app));
    jpeg = await makeJpeg({ width: 320, height: 256 });
    const keys = async (name: string) => {
      const key = await createKey(hub.app, office, name);
      const listed = await call(hub, office, 'GET', '/api/v1/keys');
      return { key, id: (listed.json().data.items as Array<{ id: string; name: string }>).find((k) => k.name === name)!.id };
    };
    shops.main = await keys('Main St');
    shops.elm = await keys('Elm Road');
    // Interleaved in time, so one shop's page is never just a slice of the whole list.
    for (let minute = 0; minute < 6; minute++) await push(minute % 3 === 0 ? 'elm' : 'main', minute);
    madeOnHub = (await analyze(hub, office)).scanId;
  });

  afterAll(async () => {
    await removeNode(hub);
    await schema?.drop();
  });

  it('names the shop of every pushed scan, for any key of the account and the signed-in office', async () => {
    const callers: Array<Record<string, string>> = [{ cookie: office }, { 'x-api-key': shops.elm.key }];
    for (const auth of callers) {
      const res = await list('?limit=100', auth);
      expect(res.statusCode).toBe(200);
      const shopOf = new Map((res.json().data.items as HubScan[]).map((scan) => [scan.scanId, scan.shop]));
      expect(shopOf.size).toBe(7);
      for (const id of pushed.main) expect(shopOf.get(id)).toEqual({ apiKeyId: shops.main.id, name: 'Main St', deleted: false });
      for (const id of pushed.elm) expect(shopOf.get(id)).toEqual({ apiKeyId: shops.elm.id, name: 'Elm Road', deleted: false });
      // Made in a signed-in session on the hub itself: no key, no shop.
      expect(shopOf.get(madeOnHub)).toBeNull();
    }
  });

  it('lists one shop with ?apiKeyId=, paging by cursor within it', async () => {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(`?apiKeyId=${shops.main.id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode).toBe(200);
      const data = res.json().data as { items: HubScan[]; nextCursor: string | null };
      expect(data.items.every((scan) => scan.shop?.name === 'Main St')).toBe(true);
      ids.push(...data.items.map((scan) => scan.scanId));
      cursor = data.nextCursor;
      pages += 1;
    } while (cursor);
    expect(ids).toEqual([...pushed.main].reverse());
    expect(pages).toBe(2);
    const elm = await list(`?apiKeyId=${shops.elm.id}`);
    expect((elm.json().data.items as HubScan[]).map((scan) => scan.scanId)).toEqual([...pushed.elm].reverse());
  });

  it('refuses a malformed shop id (400) and one that is not a key of this account (404)', async () => {
    expect(expectError(await list('?apiKeyId=not-a-key-id'), 400, 'VALIDATION_ERROR')).toMatch(/apiKeyId/);
    expectError(await list(`?apiKeyId=${randomKeyId()}`), 404, 'NOT_FOUND');
    const other = await signIn(hub.app);
    await createKey(hub.app, other.cookie, 'Elsewhere');
    const otherId = (await call(hub, other.cookie, 'GET', '/api/v1/keys')).json().data.items[0].id as string;
    expectError(await list(`?apiKeyId=${otherId}`), 404, 'NOT_FOUND');
    // The other account sees neither this chain's scans nor its shops.
    expectError(await list(`?apiKeyId=${shops.main.id}`, { cookie: other.cookie }), 404, 'NOT_FOUND');
  });

  it('describes the filter and the shop in the OpenAPI document', async () => {
    const doc = (await hub.app.inject({ url: '/api/v1/openapi.json' })).json();
    expect(doc.openapi).toMatch(/^3\./);
    const operation = doc.paths['/api/v1/sync/scans'].get;
    const filter = operation.parameters.find((p: { name: string }) => p.name === 'apiKeyId');
    expect(filter).toMatchObject({ in: 'query', required: false, schema: { type: 'string', pattern: '^[0-9a-f]{32}$' } });
    const item = operation.responses['200'].content['application/json'].schema.properties.data.properties.items.items;
    expect(item.required).toEqual(expect.arrayContaining(['scanId', 'shop']));
    expect(JSON.stringify(item.properties.shop)).toMatch(/"apiKeyId".*"name".*"deleted"/);
    expect(doc.paths['/api/v1/sync/shops'].get).toBeDefined();
    expect(doc.paths['/api/v1/sync/hub-shops'].get).toBeDefined();
  });

  // Last: it revokes a key the other tests push and list with.
  it("a shop's key reads another shop's scan but may not change or delete it; that shop and the signed-in office may", async () => {
    const scanId = pushed.main[0]!;
    const elm = { 'x-api-key': shops.elm.key };
    expect((await hub.app.inject({ url: `/api/v1/scans/${scanId}`, headers: elm })).statusCode).toBe(200);
    const edit = (headers: Record<string, string>, measurementMm: number) =>
      hub.app.inject({ method: 'PUT', url: `/api/v1/scans/${scanId}/measurement`, payload: { measurementMm }, headers });
    expect(expectError(await edit(elm, 2.5), 403, 'FORBIDDEN')).toMatch(/another shop of this hub account \("Main St"\)/);
    expectError(await hub.app.inject({ method: 'DELETE', url: `/api/v1/scans/${scanId}`, headers: elm }), 403, 'FORBIDDEN');
    // a correction (issue 42) is a change like any other: the other shop may not, the office may
    const correct = (headers: Record<string, string>, vehicle: string) =>
      hub.app.inject({ method: 'PATCH', url: `/api/v1/scans/${scanId}`, payload: { vehicle }, headers });
    expect(expectError(await correct(elm, 'ELM 1'), 403, 'FORBIDDEN')).toMatch(/another shop of this hub account \("Main St"\)/);
    expect((await correct({ cookie: office }, 'OFFICE 1')).json().data).toMatchObject({ vehicle: 'OFFICE 1', changes: [{ field: 'vehicle', via: 'session' }] });
    expect((await edit({ 'x-api-key': shops.main.key }, 3.5)).json().data.measurementMm).toBe(3.5);
    expect((await edit({ cookie: office }, 3.25)).json().data.measurementMm).toBe(3.25);
    expect((await hub.app.inject({ url: `/api/v1/scans/${scanId}`, headers: elm })).json().data.measurementMm).toBe(3.25);
  });

  it('keeps the name of a deleted key, flagged, and still lists and filters its scans', async () => {
    expect((await call(hub, office, 'DELETE', `/api/v1/keys/${shops.elm.id}`)).statusCode).toBe(200);
    const res = await list('?limit=100', { 'x-api-key': shops.main.key });
    const elm = (res.json().data.items as HubScan[]).filter((scan) => pushed.elm.includes(scan.scanId));
    expect(elm).toHaveLength(pushed.elm.length);
    for (const scan of elm) expect(scan.shop).toEqual({ apiKeyId: shops.elm.id, name: 'Elm Road', deleted: true });
    expect((await list(`?apiKeyId=${shops.elm.id}`)).json().data.items).toHaveLength(pushed.elm.length);

    const listed = await call(hub, office, 'GET', '/api/v1/sync/shops');
    expect(listed.json().data.items as WireShop[]).toEqual([
      { apiKeyId: shops.elm.id, name: 'Elm Road', deleted: true },
      { apiKeyId: shops.main.id, name: 'Main St', deleted: false },
    ]);
  });
});

describe('shop names on a linked desktop', () => {
  let hub: Node;
  let desk: Node;
  let office: string;
  let deskCookie: string;
  let mainId: string;

  beforeAll(async () => {
    [hub, desk] = await Promise.all([startNode(), startNode()]);
    ({ cookie: office } = await signIn(hub.app));
    const key = await createKey(hub.app, office, 'Main St');
    await createKey(hub.app, office, 'Elm Road');
    mainId = (await call(hub, office, 'GET', '/api/v1/keys')).json().data.items.find((k: { name: string }) => k.name === 'Main St').id;
    ({ cookie: deskCookie } = await signIn(desk.app));
    expect((await call(desk, deskCookie, 'PUT', '/api/v1/sync/link', { hubUrl: hub.url, hubApiKey: key })).statusCode).toBe(200);
  });

  afterAll(async () => {
    await removeNode(desk);
    await removeNode(hub);
  });

  it("shows the shop of each of the chain's scans, lists the shops and filters by one", async () => {
    const mine = await analyze(desk, deskCookie);
    expect((await call(desk, deskCookie, 'POST', '/api/v1/sync/run')).json().data.pending).toBe(0);
    const onHub = (await analyze(hub, office)).scanId;

    const all = await call(desk, deskCookie, 'GET', '/api/v1/sync/hub-scans');
    const shopOf = new Map((all.json().data.items as HubScan[]).map((scan) => [scan.scanId, scan.shop]));
    expect(shopOf.get(mine.scanId)).toEqual({ apiKeyId: mainId, name: 'Main St', deleted: false });
    expect(shopOf.get(onHub)).toBeNull();
    // The desktop's own history is not the chain's: no shop there.
    const own = await call(desk, deskCookie, 'GET', '/api/v1/scans');
    expect(own.json().data.items[0]).not.toHaveProperty('shop');

    const shops = await call(desk, deskCookie, 'GET', '/api/v1/sync/hub-shops');
    expect((shops.json().data.items as WireShop[]).map((shop) => shop.name)).toEqual(['Elm Road', 'Main St']);

    const filtered = await call(desk, deskCookie, 'GET', `/api/v1/sync/hub-scans?apiKeyId=${mainId}`);
    expect((filtered.json().data.items as HubScan[]).map((scan) => scan.scanId)).toEqual([mine.scanId]);
    expect(expectError(await call(desk, deskCookie, 'GET', `/api/v1/sync/hub-scans?apiKeyId=${randomKeyId()}`), 404, 'NOT_FOUND')).toMatch(/no such shop/);
    expectError(await call(desk, deskCookie, 'GET', '/api/v1/sync/hub-scans?apiKeyId=x'), 400, 'VALIDATION_ERROR');
  });

  it('offers no shops when the hub cannot list them, and says so when it is down', async () => {
    // A hub from before shop names: it has no /sync/shops, so it answers 404 as for any unknown route.
    const old = createServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: false, error: { code: 'NOT_FOUND', message: 'Route not found' } }));
    });
    await new Promise<void>((resolve) => old.listen(0, '127.0.0.1', resolve));
    const hubUrl = `http://127.0.0.1:${(old.address() as AddressInfo).port}`;
    try {
      const key = `tw_${'A'.repeat(32)}`;
      expect((await call(desk, deskCookie, 'PUT', '/api/v1/sync/link', { hubUrl, hubApiKey: key })).statusCode).toBe(200);
      expect((await call(desk, deskCookie, 'GET', '/api/v1/sync/hub-shops')).json().data.items).toEqual([]);
    } finally {
      await new Promise((resolve) => old.close(resolve));
    }
    expectError(await call(desk, deskCookie, 'GET', '/api/v1/sync/hub-shops'), 503, 'STORAGE_UNAVAILABLE');
  });
});

describe('a chain scan whose gauge reading was cleared', () => {
  it('shows no reading time, though the store keeps it for the last-writer-wins merge', async () => {
    const cleared = makeScan({ id: randomId(), measurementMm: null, measuredAt: new Date(Date.UTC(2026, 10, 2)) });
    const measured = makeScan({ id: randomId(), measurementMm: 4.2, measuredAt: new Date(Date.UTC(2026, 10, 3)) });
    const store = {
      scans: { list: async () => ({ items: [cleared, measured], nextCursor: null }) },
      apiKeys: { findByIds: async () => [] },
    };
    const page = await listChainScans(store as never, 'acct', { limit: 10 });
    expect(page.items.map((item) => [item.scan.measurementMm, item.scan.measuredAt])).toEqual([
      [null, null],
      [4.2, new Date(Date.UTC(2026, 10, 3))],
    ]);
  });
});
