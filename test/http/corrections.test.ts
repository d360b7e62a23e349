/**
 * Issue 42 over HTTP: PATCH /scans/:id (corrections, their history, who may, no charge), the
 * depth of record on the scan, the plate-key search and GET /vehicles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGaugeInput } from '../../src/shared/gauge.js';
import { MM_PER_32ND } from '../../src/shared/units.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { createKey, expectError, httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
let owner: { cookie: string };
let other: { cookie: string };
let key: string;

async function scan(headers: Record<string, string>, fields: Record<string, string> = {}, shade = 100): Promise<string> {
  const upload = imageForm(await makeJpeg({ width: 320, height: 256, shade }), fields);
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, ...headers } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.scanId as string;
}

const patch = (id: string, payload: unknown, headers: Record<string, string> = owner) =>
  t.app.inject({
    method: 'PATCH',
    url: `/api/v1/scans/${id}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

const used = async (headers: Record<string, string>) => (await t.app.inject({ url: '/api/v1/account', headers })).json().data.allowance.used as number;

beforeAll(async () => {
  t = await httpTest();
  owner = await signIn(t.app);
  other = await signIn(t.app);
  key = await createKey(t.app, owner.cookie);
});
afterAll(() => t.cleanup());

describe('PATCH /scans/:scanId', () => {
  it('corrects vehicle, position and gauge reading, records each change, and charges nothing', async () => {
    const id = await scan(owner, { vehicle: 'KA-TW-2O4' });
    const before = await used(owner);
    t.clock.advance(60_000);
    const res = await patch(id, { vehicle: ' KA-TW-204 ', position: 'fl', measurementMm: 3.18 });
    expect(res.statusCode, res.body).toBe(200);
    const at = t.clock.now().toISOString();
    expect(res.json().data).toMatchObject({
      scanId: id,
      vehicle: 'KA-TW-204',
      vehicleKey: 'KATW204',
      position: 'FL',
      measurementMm: 3.18,
      measuredAt: at,
      changes: [
        { at, field: 'vehicle', from: 'KA-TW-2O4', to: 'KA-TW-204', via: 'session' },
        { at, field: 'position', from: null, to: 'FL', via: 'session' },
        { at, field: 'measurementMm', from: null, to: 3.18, via: 'session' },
      ],
    });
    expect((await t.app.inject({ url: `/api/v1/scans/${id}`, headers: owner })).json().data).toEqual(res.json().data);
    expect(await used(owner)).toBe(before);
    // through the shop's API key: the same rules, recorded as made by a key
    const byKey = await patch(id, { position: 'RR' }, { 'x-api-key': key });
    expect(byKey.statusCode).toBe(200);
    expect(byKey.json().data.changes.at(-1)).toMatchObject({ field: 'position', from: 'FL', to: 'RR', via: 'key' });
    // clearing: null or ""
    const cleared = (await patch(id, { vehicle: '', position: null, measurementMm: null })).json().data;
    expect(cleared).toMatchObject({ vehicle: null, vehicleKey: null, position: null, measurementMm: null, measuredAt: null });
    expect(cleared.changes).toHaveLength(7);
    expect(await used(owner)).toBe(before);
  });

  it('a PATCH that changes nothing records nothing; PUT /measurement is recorded too', async () => {
    const id = await scan(owner, { vehicle: 'B-X 1', position: 'FL' });
    const same = await patch(id, { vehicle: 'B-X 1', position: 'FL', measurementMm: null });
    expect(same.statusCode).toBe(200);
    expect(same.json().data.changes).toEqual([]);
    const put = await t.app.inject({ method: 'PUT', url: `/api/v1/scans/${id}/measurement`, headers: owner, payload: { measurementMm: 4.8 } });
    expect(put.json().data.changes).toEqual([{ at: t.clock.now().toISOString(), field: 'measurementMm', from: null, to: 4.8, via: 'session' }]);
    const again = await patch(id, { measurementMm: 4.8 });
    expect(again.json().data.changes).toHaveLength(1);
  });

  it('refuses what creation refuses, with no coercion, naming the field', async () => {
    const id = await scan(owner, { vehicle: 'VW' });
    const cases: Array<[unknown, RegExp]> = [
      [{}, /at least one/],
      [[], /JSON object/],
      [{ vehicle: 5 }, /vehicle must be text/],
      [{ vehicle: true }, /vehicle must be text/],
      [{ vehicle: ['VW'] }, /vehicle must be text/],
      [{ vehicle: 'x'.repeat(65) }, /at most 64/],
      [{ vehicle: 'AB\u0000C' }, /printable/],
      [{ vehicle: 'AB\nC' }, /printable/],
      [{ position: 'XX' }, /FL, FR, RL, RR, SPARE/],
      [{ position: 7 }, /FL, FR, RL, RR, SPARE/],
      [{ measurementMm: '4.2' }, /measurementMm must be a JSON number/],
      [{ measurementMm: true }, /measurementMm must be a JSON number/],
      [{ measurementMm: [4] }, /measurementMm must be a JSON number/],
      [{ measurementMm: 31 }, /measurementMm must be a JSON number/],
      [{ measurementMm: -1 }, /measurementMm must be a JSON number/],
      [{ measurementMm: 4.123 }, /at most 2 decimals/],
      [{ vehicle: 'VW', createdAt: '2020-01-01T00:00:00Z' }, /createdAt cannot be changed/],
      [{ result: { estimatedDepthMm: 9 } }, /result cannot be changed/],
      [{ __proto__: { vehicle: 'x' }, constructor: 1 }, /constructor cannot be changed/],
    ];
    for (const [body, message] of cases) {
      expect(expectError(await patch(id, body), 400, 'VALIDATION_ERROR'), JSON.stringify(body)).toMatch(message);
    }
    expectError(await patch(id, 'null'), 400, 'VALIDATION_ERROR');
    expectError(await patch(id, '"VW"'), 400, 'VALIDATION_ERROR');
    expectError(await patch(id, '{"vehicle":'), 400, 'VALIDATION_ERROR');
    expectError(await patch(id, JSON.stringify({ vehicle: 'y'.repeat(70_000) })), 413, 'FILE_TOO_LARGE');
    const form = await t.app.inject({ method: 'PATCH', url: `/api/v1/scans/${id}`, headers: { ...owner, 'content-type': 'text/plain' }, payload: 'vehicle=x' });
    expectError(form, 415, 'UNSUPPORTED_MEDIA_TYPE');
    // nothing changed by any of them
    const stored = (await t.app.inject({ url: `/api/v1/scans/${id}`, headers: owner })).json().data;
    expect(stored).toMatchObject({ vehicle: 'VW', position: null, measurementMm: null, changes: [] });
  });

  it('keeps hostile text as typed, harmlessly', async () => {
    const id = await scan(owner);
    for (const vehicle of ["'; DROP TABLE scans;--", '<img src=x onerror=alert(1)>', '=HYPERLINK("http://x")', '\u202Eevil', 'Ünïcødé 🚗 KA·TW']) {
      const res = await patch(id, { vehicle });
      expect(res.statusCode, vehicle).toBe(200);
      expect(res.json().data.vehicle).toBe(vehicle);
    }
    expect(
      (await t.app.inject({ url: '/api/v1/scans?vehicle=%C3%BCn%C3%AFc%C3%B8d%C3%A9%20ka-tw', headers: owner }))
        .json()
        .data.items.map((s: { scanId: string }) => s.scanId),
    ).toContain(id);
    const csv = (await t.app.inject({ url: '/api/v1/scans/export', headers: owner })).body;
    expect(csv).toContain('Ünïcødé 🚗 KA·TW');
  });

  it('who may: the owner (session or key), not another account (403), not signed out (401); unknown ids 404', async () => {
    const id = await scan(owner, { vehicle: 'MINE 1' });
    expectError(await patch(id, { vehicle: 'THEIRS' }, other), 403, 'FORBIDDEN');
    expect(expectError(await patch(id, { vehicle: 'THEIRS' }, {}), 401, 'INVALID_SESSION')).not.toMatch(/header/i);
    expectError(await patch(id, { vehicle: 'THEIRS' }, { 'x-api-key': 'tw_nope' }), 401, 'INVALID_API_KEY');
    expectError(await patch('no-such-scan', { vehicle: 'x' }), 404, 'NOT_FOUND');
    expectError(await patch('../../etc/passwd', { vehicle: 'x' }), 404, 'NOT_FOUND');
    expectError(await patch('x'.repeat(129), { vehicle: 'x' }), 404, 'NOT_FOUND');
    expect((await t.app.inject({ url: `/api/v1/scans/${id}`, headers: owner })).json().data.vehicle).toBe('MINE 1');
    // a deleted scan is gone
    await t.app.inject({ method: 'DELETE', url: `/api/v1/scans/${id}`, headers: owner });
    expectError(await patch(id, { vehicle: 'x' }), 404, 'NOT_FOUND');
    // an anonymous scan: whoever holds its id, as for delete and measurement
    const anonymous = await scan({});
    const res = await patch(anonymous, { vehicle: 'WALK-IN 1', position: 'spare' }, {});
    expect(res.json().data).toMatchObject({ vehicle: 'WALK-IN 1', position: 'SPARE', changes: [{ via: 'anonymous' }, { via: 'anonymous' }] });
  });
});

describe('the depth of record', () => {
  it('is the estimate without a gauge reading, and the gauge with one: its band, 32nds and no "preliminary"', async () => {
    // a dark photo: the fake analyzer reads a shallow, preliminary tread
    const id = await scan(owner, {}, 10);
    const before = (await t.app.inject({ url: `/api/v1/scans/${id}`, headers: owner })).json().data;
    expect(before.result.isPreliminary).toBe(true);
    expect(before).toMatchObject({
      depthOfRecordMm: before.result.estimatedDepthMm,
      isPreliminary: true,
      ofRecord: { source: 'estimate', wear: before.result.wear, depth32nds: before.result.depth32nds, treadHealthIndex: before.result.treadHealthIndex },
    });
    // the gauge says 4/32" (typed in 32nds, sent as mm to one decimal: parseGaugeInput)
    const typed = parseGaugeInput('4/32″', '32nds');
    const gauge = typed.ok ? typed.mm : NaN;
    expect(gauge).toBe(Math.round(4 * MM_PER_32ND * 10) / 10);
    const after = (await patch(id, { measurementMm: gauge })).json().data;
    expect(after).toMatchObject({
      depthOfRecordMm: 3.2,
      isPreliminary: false,
      ofRecord: { source: 'gauge', wear: 'medium', depth32nds: 4, treadHealthIndex: 25 },
      // the estimate stays as analysed, shown beside
      result: { isPreliminary: true, estimatedDepthMm: before.result.estimatedDepthMm },
    });
    // in the list, the vehicle view and the CSV alike
    const listed = (await t.app.inject({ url: '/api/v1/scans?limit=100', headers: owner })).json().data.items.find((s: { scanId: string }) => s.scanId === id);
    expect(listed).toMatchObject({ depthOfRecordMm: 3.2, isPreliminary: false });
    const csv = (await t.app.inject({ url: '/api/v1/scans/export', headers: owner })).body.split('\r\n');
    expect(csv[0]).toContain('measurementMm,depthOfRecordMm,isPreliminary,measuredAt');
    expect(csv.find((line) => line.startsWith(id))).toMatch(/,3\.2,3\.2,false,/);
  });

  it("decides the wear filter of the list, the vehicle view and the export: the gauge's band where there is one", async () => {
    const shop = { cookie: (await signIn(t.app)).cookie };
    // two dark photos: the fake analyzer reads both shallow, in one band
    const measured = await scan(shop, { vehicle: 'KA-TW-204' }, 10);
    t.clock.advance(1000); // the newer one first, whatever the ids
    const estimated = await scan(shop, { vehicle: 'KA-TW-205' }, 10);
    const estimate = (await t.app.inject({ url: `/api/v1/scans/${measured}`, headers: shop })).json().data.result.wear as string;
    expect(['worn', 'critical']).toContain(estimate);
    expect((await patch(measured, { measurementMm: 5.6 }, shop)).statusCode).toBe(200);

    const scans = async (wear: string) =>
      (await t.app.inject({ url: `/api/v1/scans?wear=${wear}`, headers: shop })).json().data.items.map((s: { scanId: string }) => s.scanId);
    const vehicles = async (wear: string) =>
      (await t.app.inject({ url: `/api/v1/vehicles?wear=${wear}`, headers: shop })).json().data.items.map((g: { vehicleKey: string }) => g.vehicleKey);
    const exported = async (wear: string) =>
      (await t.app.inject({ url: `/api/v1/scans/export?wear=${wear}`, headers: shop })).body.split('\r\n').slice(1).filter(Boolean);
    expect(await scans('good')).toEqual([measured]);
    expect(await scans(estimate)).toEqual([estimated]);
    expect(await vehicles('GOOD')).toEqual(['KATW204']);
    expect(await vehicles(estimate)).toEqual(['KATW205']);
    const [row, ...rest] = await exported('good');
    expect(rest).toEqual([]);
    // the export's wear column stays the estimate's; the reading and the depth of record beside it
    expect(row).toMatch(new RegExp(`^${measured},.*,${estimate},.*,5\\.6,5\\.6,false,`));
    // cleared: the estimate decides again
    expect((await patch(measured, { measurementMm: null }, shop)).statusCode).toBe(200);
    expect(await scans('good')).toEqual([]);
    expect(await scans(estimate)).toEqual([estimated, measured]);
  });
});

describe('finding a vehicle', () => {
  let fresh: HttpTest;
  let shop: { cookie: string };
  const scanOn = async (fields: Record<string, string>) => {
    const upload = imageForm(await makeJpeg({ width: 320, height: 256 }), fields);
    const res = await fresh.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, ...shop } });
    fresh.clock.advance(60_000);
    return res.json().data.scanId as string;
  };
  const ids = (items: Array<{ scanId: string }>) => items.map((s) => s.scanId);
  let a: string, b: string, c: string, d: string;

  beforeAll(async () => {
    fresh = await httpTest();
    shop = await signIn(fresh.app);
    await fresh.app.inject({ method: 'POST', url: '/api/v1/licenses', headers: shop, payload: { code: fresh.issueCode({ kind: 'pack', scans: 20 }) } });
    a = await scanOn({ vehicle: 'KA-TW-204', position: 'FL' });
    b = await scanOn({ vehicle: 'B PO 77' });
    c = await scanOn({ vehicle: 'ka tw 204', position: 'FR' });
    d = await scanOn({});
  });
  afterAll(() => fresh.cleanup());

  it('GET /scans?vehicle= matches whatever the spaces, dashes or case', async () => {
    for (const q of ['KA%20TW%20204', 'ka-tw-204', 'KATW204', 'tw204']) {
      expect(ids((await fresh.app.inject({ url: `/api/v1/scans?vehicle=${q}`, headers: shop })).json().data.items), q).toEqual([c, a]);
    }
    expect(ids((await fresh.app.inject({ url: '/api/v1/scans?vehicleKey=ka-tw-204', headers: shop })).json().data.items)).toEqual([c, a]);
    expect(ids((await fresh.app.inject({ url: '/api/v1/scans?vehicleKey=KATW20', headers: shop })).json().data.items)).toEqual([]);
    expect(ids((await fresh.app.inject({ url: '/api/v1/scans?hasVehicle=false', headers: shop })).json().data.items)).toEqual([d]);
    expect(ids((await fresh.app.inject({ url: '/api/v1/scans?hasVehicle=TRUE', headers: shop })).json().data.items)).toEqual([c, b, a]);
    const csv = (await fresh.app.inject({ url: '/api/v1/scans/export?vehicleKey=KATW204', headers: shop })).body.split('\r\n');
    expect(csv).toHaveLength(4);
  });

  it('refuses contradictory or malformed vehicle filters', async () => {
    const get = (q: string) => fresh.app.inject({ url: `/api/v1/scans?${q}`, headers: shop });
    expect(expectError(await get('vehicle=a&vehicleKey=b'), 400, 'VALIDATION_ERROR')).toMatch(/not both/);
    expect(expectError(await get('vehicleKey=---'), 400, 'VALIDATION_ERROR')).toMatch(/hasVehicle=false/);
    expect(expectError(await get('vehicleKey=a%00b'), 400, 'VALIDATION_ERROR')).toMatch(/control/);
    expect(expectError(await get('hasVehicle=maybe'), 400, 'VALIDATION_ERROR')).toMatch(/hasVehicle/);
    expect(expectError(await get(`vehicleKey=${'A'.repeat(65)}`), 400, 'VALIDATION_ERROR')).toMatch(/vehicleKey/);
  });

  it('GET /vehicles groups scans by vehicle, newest visit first, with their newest scans', async () => {
    const res = await fresh.app.inject({ url: '/api/v1/vehicles', headers: shop });
    expect(res.statusCode, res.body).toBe(200);
    const { items, nextCursor } = res.json().data;
    expect(nextCursor).toBeNull();
    expect(items.map((g: { vehicleKey: string | null; vehicle: string | null; scanCount: number }) => [g.vehicleKey, g.vehicle, g.scanCount])).toEqual([
      [null, null, 1],
      ['KATW204', 'ka tw 204', 2],
      ['BPO77', 'B PO 77', 1],
    ]);
    expect(ids(items[1].scans)).toEqual([c, a]);
    expect(items[1].scans[0]).toMatchObject({ position: 'FR', vehicleKey: 'KATW204', ofRecord: { source: 'estimate' } });
    // paged, and searched
    const first = (await fresh.app.inject({ url: '/api/v1/vehicles?limit=2&scansPerVehicle=1', headers: shop })).json().data;
    expect(first.items).toHaveLength(2);
    expect(first.items[1].scans).toHaveLength(1);
    const next = (await fresh.app.inject({ url: `/api/v1/vehicles?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`, headers: shop })).json().data;
    expect(next.items.map((g: { vehicleKey: string }) => g.vehicleKey)).toEqual(['BPO77']);
    const searched = (await fresh.app.inject({ url: '/api/v1/vehicles?vehicle=Ka%20Tw', headers: shop })).json().data;
    expect(searched.items.map((g: { vehicleKey: string }) => g.vehicleKey)).toEqual(['KATW204']);
    // a correction moves a scan to its vehicle
    await fresh.app.inject({ method: 'PATCH', url: `/api/v1/scans/${d}`, headers: shop, payload: { vehicle: 'B-PO-77', position: 'RL' } });
    const moved = (await fresh.app.inject({ url: '/api/v1/vehicles', headers: shop })).json().data.items;
    expect(moved.map((g: { vehicleKey: string; scanCount: number }) => [g.vehicleKey, g.scanCount])).toEqual([
      ['BPO77', 2],
      ['KATW204', 2],
    ]);
  });

  it('GET /vehicles: 401 signed out, 400 for bad parameters, only the account’s own', async () => {
    expectError(await fresh.app.inject({ url: '/api/v1/vehicles' }), 401, 'INVALID_SESSION');
    for (const q of ['limit=0', 'limit=51', 'scansPerVehicle=0', 'scansPerVehicle=21', 'cursor=!!', 'vehicleKey=X', 'colour=red', 'from=yesterday']) {
      expectError(await fresh.app.inject({ url: `/api/v1/vehicles?${q}`, headers: shop }), 400, 'VALIDATION_ERROR');
    }
    const stranger = await signIn(fresh.app);
    expect((await fresh.app.inject({ url: '/api/v1/vehicles', headers: stranger })).json().data).toEqual({ items: [], nextCursor: null });
  });
});
