import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { expectError, httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
let owner: { cookie: string };
let other: { cookie: string };
const ids: string[] = [];

async function scan(headers: Record<string, string>, fields: Record<string, string> = {}, shade = 100): Promise<string> {
  const upload = imageForm(await makeJpeg({ width: 320, height: 256, shade }), fields);
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, ...headers } });
  expect(res.statusCode).toBe(200);
  return res.json().data.scanId as string;
}

beforeAll(async () => {
  t = await httpTest();
  owner = await signIn(t.app);
  other = await signIn(t.app);
  ids.push(await scan(owner, { vehicle: 'VW Golf', position: 'FL' }, 60));
  t.clock.advance(60_000);
  ids.push(await scan(owner, { vehicle: 'Ford Transit' }, 120));
  t.clock.advance(60_000);
  ids.push(await scan(owner, { vehicle: 'VW Polo' }, 200));
});
afterAll(() => t.cleanup());

describe('GET /scans', () => {
  it('lists the account scans newest first, with cursor paging', async () => {
    const first = (await t.app.inject({ url: '/api/v1/scans?limit=2', headers: owner })).json().data;
    expect(first.items.map((s: { scanId: string }) => s.scanId)).toEqual([ids[2], ids[1]]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const next = (await t.app.inject({ url: `/api/v1/scans?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`, headers: owner })).json().data;
    expect(next.items.map((s: { scanId: string }) => s.scanId)).toEqual([ids[0]]);
    expect(next.nextCursor).toBeNull();
  });

  it('filters by vehicle and date, and never shows another account its scans', async () => {
    const vw = (await t.app.inject({ url: '/api/v1/scans?vehicle=vw', headers: owner })).json().data.items;
    expect(vw).toHaveLength(2);
    const day = (await t.app.inject({ url: '/api/v1/scans?from=2026-11-21&to=2026-11-21', headers: owner })).json().data.items;
    expect(day).toHaveLength(3);
    const later = (await t.app.inject({ url: '/api/v1/scans?from=2026-11-22', headers: owner })).json().data.items;
    expect(later).toHaveLength(0);
    expect((await t.app.inject({ url: '/api/v1/scans', headers: other })).json().data.items).toEqual([]);
  });

  it('refuses bad filters naming them', async () => {
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?limit=500', headers: owner }), 400, 'VALIDATION_ERROR')).toMatch(/limit/);
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?wear=bald', headers: owner }), 400, 'VALIDATION_ERROR')).toBe(
      'query parameter wear must be one of new, good, medium, worn, critical',
    );
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?from=yesterday', headers: owner }), 400, 'VALIDATION_ERROR')).toMatch(/from/);
    // what PostgreSQL cannot hold is refused on every store, not a 500 on the hub's
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?to=-010000-01-01', headers: owner }), 400, 'VALIDATION_ERROR')).toMatch(/to must/);
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?vehicle=a%00b', headers: owner }), 400, 'VALIDATION_ERROR')).toMatch(/vehicle must not/);
    const cursor = Buffer.from('9999999999999999:abc').toString('base64url');
    expect(expectError(await t.app.inject({ url: `/api/v1/scans?cursor=${cursor}`, headers: owner }), 400, 'VALIDATION_ERROR')).toMatch(/cursor/);
  });

  it('takes a parameter sent empty as one not sent (a POS building the query from blank fields), and wear in any case', async () => {
    const all = (await t.app.inject({ url: '/api/v1/scans', headers: owner })).json().data.items;
    const blank = await t.app.inject({ url: '/api/v1/scans?vehicle=&wear=&date=&from=&to=&cursor=&limit=&_=', headers: owner });
    expect(blank.statusCode).toBe(200);
    expect(blank.json().data.items).toEqual(all);
    const csv = await t.app.inject({ url: '/api/v1/scans/export?vehicle=&wear=&date=&from=&to=', headers: owner });
    expect(csv.statusCode).toBe(200);
    expect(csv.body).toBe((await t.app.inject({ url: '/api/v1/scans/export', headers: owner })).body);
    const wear = all[0].result.wear as string;
    const lower = (await t.app.inject({ url: `/api/v1/scans?wear=${wear}`, headers: owner })).json().data.items;
    expect(lower.length).toBeGreaterThan(0);
    expect(lower.length).toBeLessThanOrEqual(all.length);
    expect((await t.app.inject({ url: `/api/v1/scans?wear=${wear.toUpperCase()}`, headers: owner })).json().data.items).toEqual(lower);
    // a blank value is no licence for a bad one
    expectError(await t.app.inject({ url: '/api/v1/scans?limit=0', headers: owner }), 400, 'VALIDATION_ERROR');
    expectError(await t.app.inject({ url: '/api/v1/scans?wear=%20', headers: owner }), 400, 'VALIDATION_ERROR');
  });

  it('exports for Excel on request: a byte-order mark, and with excel-semicolon semicolons and decimal commas', async () => {
    const plain = await t.app.inject({ url: '/api/v1/scans/export', headers: owner });
    const excel = await t.app.inject({ url: '/api/v1/scans/export?format=excel', headers: owner });
    expect(excel.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(excel.rawPayload.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(excel.body).toBe(`\uFEFF${plain.body}`);
    expect((await t.app.inject({ url: '/api/v1/scans/export?format=csv', headers: owner })).body).toBe(plain.body);
    expect((await t.app.inject({ url: '/api/v1/scans/export?format=Excel', headers: owner })).body).toBe(excel.body);
    const semicolon = await t.app.inject({ url: '/api/v1/scans/export?format=excel-semicolon', headers: owner });
    expect(semicolon.body.slice(1).split('\r\n')[0]).toBe(plain.body.split('\r\n')[0]!.replaceAll(',', ';'));
    const bad = expectError(await t.app.inject({ url: '/api/v1/scans/export?format=xlsx', headers: owner }), 400, 'VALIDATION_ERROR');
    expect(bad).toMatch(/format/);
    expect(bad).toMatch(/csv.*excel.*excel-semicolon/);
  });

  it('answers a trailing slash after /scans with 404 NOT_FOUND saying so, not a complaint about the id', async () => {
    expect(expectError(await t.app.inject({ url: '/api/v1/scans/?limit=1', headers: owner }), 404, 'NOT_FOUND')).toMatch(/trailing slash/);
    expectError(await t.app.inject({ method: 'DELETE', url: '/api/v1/scans/', headers: owner }), 404, 'NOT_FOUND');
    // whichever validator the route has (the measurement's is its own)
    const measurement = await t.app.inject({ method: 'PUT', url: '/api/v1/scans//measurement', headers: owner, payload: { measurementMm: 4 } });
    expect(expectError(measurement, 404, 'NOT_FOUND')).toMatch(/empty id/);
    expectError(await t.app.inject({ url: '/api/v1/scans//image', headers: owner }), 404, 'NOT_FOUND');
    expectError(await t.app.inject({ method: 'DELETE', url: '/api/v1/keys/', headers: owner }), 404, 'NOT_FOUND');
  });

  it('refuses a parameter it does not know by name, so a misspelt filter never lists or exports every scan', async () => {
    for (const url of ['/api/v1/scans?vehical=vw', '/api/v1/scans/export?vehical=vw', '/api/v1/scans?vehicle=vw&Wear=worn']) {
      const message = expectError(await t.app.inject({ url, headers: owner }), 400, 'VALIDATION_ERROR');
      expect(message).toMatch(/^query parameter (vehical|Wear) is not accepted here/);
    }
    // the known ones still coerce and filter as before
    expect((await t.app.inject({ url: '/api/v1/scans?vehicle=vw&limit=1', headers: owner })).json().data.items).toHaveLength(1);
    // a cache-buster as jQuery's cache: false adds it is taken and ignored; an image URL takes any (nothing there widens)
    expect((await t.app.inject({ url: '/api/v1/scans?vehicle=vw&_=1732190000000', headers: owner })).json().data.items).toHaveLength(2);
    expect((await t.app.inject({ url: '/api/v1/scans/export?_=1', headers: owner })).statusCode).toBe(200);
    const image = await t.app.inject({ url: `/api/v1/scans/${ids[0]}/image?variant=thumbnail&_=1&v=2`, headers: owner });
    expect(image.headers['content-type']).toBe('image/jpeg');
  });

  it('date=YYYY-MM-DD is one whole UTC day, on the list and the export; with from or to, or as a time, it is refused', async () => {
    const day = (await t.app.inject({ url: '/api/v1/scans?date=2026-11-21', headers: owner })).json().data.items;
    expect(day).toHaveLength(3);
    expect((await t.app.inject({ url: '/api/v1/scans?date=2026-11-20', headers: owner })).json().data.items).toHaveLength(0);
    const csv = (await t.app.inject({ url: '/api/v1/scans/export?date=2026-11-22', headers: owner })).body;
    expect(csv.trim().split('\n')).toHaveLength(1); // the header row alone
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?date=2026-11-21&from=2026-11-01', headers: owner }), 400, 'VALIDATION_ERROR')).toMatch(
      /either date/,
    );
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?date=2026-11-21T10:00', headers: owner }), 400, 'VALIDATION_ERROR')).toBe(
      'query parameter date must be one whole UTC day, YYYY-MM-DD such as 2026-11-24; for times send from and to',
    );
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?date=2026-02-30', headers: owner }), 400, 'VALIDATION_ERROR')).toContain(
      'query parameter date',
    );
  });

  it.each([
    ['an impossible day', 'from', '2026-02-31'],
    ['February 29 of a common year', 'from', '2026-02-29'],
    ['month 13', 'to', '2026-13-01'],
    ['a bare number', 'to', '1'],
    ['a year alone', 'to', '2026'],
    ['an English date', 'from', 'Nov 30 2026'],
    ['an RFC 2822 date', 'from', 'Sat, 21 Nov 2026 10:00:00 GMT'],
    ['hour 24', 'from', '2026-11-21T24:00:00Z'],
    ['minute 60', 'from', '2026-11-21T10:60Z'],
    ['a time without minutes', 'from', '2026-11-21T10Z'],
    ['an offset beyond 23:59', 'from', '2026-11-21T10:00+24:00'],
    ['an unencoded + offset (a space)', 'from', '2026-11-21T10:00 01:00'],
    ['a day without zero padding', 'to', '2026-11-1'],
  ])('refuses %s as a date filter (400 naming the parameter and the format)', async (_what, name, value) => {
    for (const path of ['/api/v1/scans', '/api/v1/scans/export']) {
      const res = await t.app.inject({ url: `${path}?${name}=${encodeURIComponent(value)}`, headers: owner });
      const message = expectError(res, 400, 'VALIDATION_ERROR');
      expect(message).toContain(`query parameter ${name}`);
      expect(message).toContain('YYYY-MM-DD');
    }
  });

  it('takes whole UTC days, ISO 8601 times with an offset, and reads a time without one as UTC', async () => {
    // The three scans were made at 2026-11-21T12:00, 12:01 and 12:02 UTC (the test clock).
    const count = async (query: string) => {
      const res = await t.app.inject({ url: `/api/v1/scans?${query}`, headers: owner });
      expect(res.statusCode).toBe(200);
      return (res.json().data.items as unknown[]).length;
    };
    const scans = (await t.app.inject({ url: '/api/v1/scans', headers: owner })).json().data.items as Array<{ createdAt: string }>;
    expect(scans.map((s) => s.createdAt)).toEqual(['2026-11-21T12:02:00.000Z', '2026-11-21T12:01:00.000Z', '2026-11-21T12:00:00.000Z']);
    expect(await count('to=2026-11-21')).toBe(3);
    expect(await count('to=2026-11-20')).toBe(0);
    expect(await count('from=2024-02-29&to=2026-11-21')).toBe(3);
    expect(await count(`from=${encodeURIComponent('2026-11-21T12:01:00Z')}`)).toBe(2);
    expect(await count(`to=${encodeURIComponent('2026-11-21T12:01:00.000Z')}`)).toBe(2);
    expect(await count(`to=${encodeURIComponent('2026-11-21T12:00:59.999Z')}`)).toBe(1);
    // Without an offset the time is UTC, whatever the server's own zone.
    expect(await count('from=2026-11-21T12:01')).toBe(2);
    expect(await count('from=2026-11-21t12:01:00.5')).toBe(1);
    // 13:01 in UTC+01:00 is 12:01 UTC; 07:01 in UTC-05 likewise.
    expect(await count(`from=${encodeURIComponent('2026-11-21T13:01+01:00')}`)).toBe(2);
    expect(await count(`from=${encodeURIComponent('2026-11-21T07:01:00-0500')}`)).toBe(2);
  });
});

describe('one scan', () => {
  it('GET /scans/:scanId gives the stored result and image links', async () => {
    const res = await t.app.inject({ url: `/api/v1/scans/${ids[0]}`, headers: owner });
    expect(res.json().data).toMatchObject({
      scanId: ids[0],
      vehicle: 'VW Golf',
      position: 'FL',
      measurementMm: null,
      image: {
        width: 320,
        height: 256,
        mime: 'image/jpeg',
        url: `/api/v1/scans/${ids[0]}/image`,
        thumbnailUrl: `/api/v1/scans/${ids[0]}/image?variant=thumbnail`,
      },
    });
  });

  it('another account gets 403, an unknown id 404', async () => {
    expectError(await t.app.inject({ url: `/api/v1/scans/${ids[0]}`, headers: other }), 403, 'FORBIDDEN');
    expectError(await t.app.inject({ url: `/api/v1/scans/${ids[0]}/image`, headers: other }), 403, 'FORBIDDEN');
    // no credentials at all: not "another account" (it may be the owner without its key) but a request to sign in,
    // in words a staff screen may show (no HTTP header named: issue 42)
    const message = expectError(await t.app.inject({ url: `/api/v1/scans/${ids[0]}` }), 401, 'INVALID_SESSION');
    expect(message).toMatch(/sign in.*API key/);
    expect(message).not.toMatch(/X-API-Key|header/i);
    expectError(await t.app.inject({ url: `/api/v1/scans/${ids[0]}/image` }), 401, 'INVALID_SESSION');
    expectError(await t.app.inject({ url: '/api/v1/scans/0123456789abcdef0123456789abcdef', headers: owner }), 404, 'NOT_FOUND');
  });

  it('an anonymous scan is readable by its id alone', async () => {
    const id = await scan({}, {}, 150);
    expect((await t.app.inject({ url: `/api/v1/scans/${id}` })).statusCode).toBe(200);
  });

  it('serves the image and a JPEG thumbnail as bytes', async () => {
    const original = await t.app.inject({ url: `/api/v1/scans/${ids[1]}/image`, headers: owner });
    expect(original.statusCode).toBe(200);
    expect(original.headers['content-type']).toBe('image/jpeg');
    expect((await sharp(original.rawPayload).metadata()).width).toBe(320);
    const thumb = await t.app.inject({ url: `/api/v1/scans/${ids[1]}/image?variant=thumbnail`, headers: owner });
    expect(thumb.headers['content-type']).toBe('image/jpeg');
    expect(thumb.rawPayload.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expectError(await t.app.inject({ url: `/api/v1/scans/${ids[1]}/image?variant=huge`, headers: owner }), 400, 'VALIDATION_ERROR');
  });

  it('PUT /measurement keeps the gauge reading, null clears it, nonsense is 400', async () => {
    const url = `/api/v1/scans/${ids[1]}/measurement`;
    const put = (payload: unknown) => t.app.inject({ method: 'PUT', url, headers: owner, payload: payload as object });
    const res = await put({ measurementMm: 4.25 });
    expect(res.json().data).toMatchObject({ measurementMm: 4.25, measuredAt: expect.any(String) });
    expect((await put({ measurementMm: null })).json().data.measurementMm).toBeNull();
    expect(expectError(await put({ measurementMm: -1 }), 400, 'VALIDATION_ERROR')).toMatch(/measurementMm/);
    expectError(await put({ measurementMm: 'deep' }), 400, 'VALIDATION_ERROR');
    expectError(await put({}), 400, 'VALIDATION_ERROR');
    expectError(await t.app.inject({ method: 'PUT', url, headers: other, payload: { measurementMm: 3 } }), 403, 'FORBIDDEN');
  });

  describe('PUT /measurement takes only a JSON number of mm (0 to 30, 2 decimals) or null', () => {
    const url = () => `/api/v1/scans/${ids[2]}/measurement`;
    const put = (body: string) => t.app.inject({ method: 'PUT', url: url(), headers: { ...owner, 'content-type': 'application/json' }, payload: body });
    const reading = async () => (await t.app.inject({ url: `/api/v1/scans/${ids[2]}`, headers: owner })).json().data;

    it.each([
      ['true', 'true'],
      ['false', 'false'],
      ['an empty string', '""'],
      ['a numeric string', '"4.2"'],
      ['a string with a unit', '"4.2 mm"'],
      ['an array', '[4.2]'],
      ['an empty array', '[]'],
      ['an object', '{"mm": 4.2}'],
      ['below 0', '-1'],
      ['just below 0', '-0.01'],
      ['over 30', '100'],
      ['just over 30', '30.01'],
      ['3 decimals', '4.255'],
    ])('refuses %s without touching the stored reading', async (_what, value) => {
      expect((await put('{"measurementMm": 5.5}')).statusCode).toBe(200);
      const message = expectError(await put(`{"measurementMm": ${value}}`), 400, 'VALIDATION_ERROR');
      expect(message).toContain('measurementMm');
      expect(message).toMatch(/number/);
      expect(message).toMatch(/0 to 30/);
      expect(message).toMatch(/2 decimals/);
      expect(message).toMatch(/null/);
      expect(await reading()).toMatchObject({ measurementMm: 5.5 });
    });

    it.each([
      ['no field', '{}'],
      ['an unknown field beside it', '{"measurementMm": 4, "measuredAt": "2026-11-21T10:00:00Z"}'],
      ['an array body', '[{"measurementMm": 4}]'],
      ['a bare number', '4.2'],
      ['null', 'null'],
    ])('refuses a body with %s, naming what is allowed', async (_what, body) => {
      const message = expectError(await put(body), 400, 'VALIDATION_ERROR');
      expect(message).toContain('measurementMm');
    });

    it.each([
      ['0 (a bald tire, not a clear)', '0', 0],
      ['30', '30', 30],
      ['30.0', '30.0', 30],
      ['0.01', '0.01', 0.01],
      ['29.99', '29.99', 29.99],
      ['4.35 (not a binary fraction)', '4.35', 4.35],
      ['an exponent', '4.2e0', 4.2],
    ])('accepts %s mm', async (_what, raw, value) => {
      const res = await put(`{"measurementMm": ${raw}}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({ measurementMm: value, measuredAt: expect.any(String) });
    });

    it('null clears the reading and its time, in the scan and in the CSV export', async () => {
      expect((await put('{"measurementMm": 6.25}')).json().data).toMatchObject({ measurementMm: 6.25, measuredAt: expect.any(String) });
      const cleared = await put('{"measurementMm": null}');
      expect(cleared.statusCode).toBe(200);
      expect(cleared.json().data).toMatchObject({ measurementMm: null, measuredAt: null });
      expect(await reading()).toMatchObject({ measurementMm: null, measuredAt: null });
      const listed = (await t.app.inject({ url: '/api/v1/scans', headers: owner })).json().data.items as Array<Record<string, unknown>>;
      expect(listed.find((s) => s.scanId === ids[2])).toMatchObject({ measurementMm: null, measuredAt: null });
      const csv = (await t.app.inject({ url: '/api/v1/scans/export', headers: owner })).body.split('\r\n');
      const header = csv[0]!.split(',');
      const row = csv.find((line) => line.startsWith(`${ids[2]},`))!.split(',');
      expect(row[header.indexOf('measurementMm')]).toBe('');
      expect(row[header.indexOf('measuredAt')]).toBe('');
    });
  });

  it('GET /scans/export is a CSV attachment with estimate and measurement', async () => {
    await t.app.inject({ method: 'PUT', url: `/api/v1/scans/${ids[0]}/measurement`, headers: owner, payload: { measurementMm: 6.5 } });
    const res = await t.app.inject({ url: '/api/v1/scans/export', headers: owner });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="tirewear-scans-2026-11-21\.csv"$/);
    expect(res.body).toContain(ids[0]);
    expect(res.body).toContain('6.5');
    expectError(await t.app.inject({ url: '/api/v1/scans/export' }), 401, 'INVALID_SESSION');
  });

  it('DELETE removes the scan and its image', async () => {
    const id = await scan(owner, {}, 90);
    expectError(await t.app.inject({ method: 'DELETE', url: `/api/v1/scans/${id}`, headers: other }), 403, 'FORBIDDEN');
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/scans/${id}`, headers: owner })).json()).toEqual({ success: true, data: {} });
    expectError(await t.app.inject({ url: `/api/v1/scans/${id}`, headers: owner }), 404, 'NOT_FOUND');
    expectError(await t.app.inject({ url: `/api/v1/scans/${id}/image`, headers: owner }), 404, 'NOT_FOUND');
  });
});
