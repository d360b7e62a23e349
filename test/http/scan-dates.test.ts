/**
 * The edges of a day and of a vehicle filter, as a POS asking for "today's" scans or one car's
 * meets them: the last millisecond of a day is in it, the first of the next is not, and a padded
 * vehicle is the vehicle.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
let owner: { cookie: string };
const at: Record<string, string> = {};

beforeAll(async () => {
  t = await httpTest();
  owner = await signIn(t.app);
  for (const [name, when, vehicle] of [
    ['lastOfDay', '2026-11-21T23:59:59.999Z', 'VW Golf'],
    ['firstOfNext', '2026-11-22T00:00:00.000Z', 'Ford Transit'],
  ] as const) {
    t.clock.set(when);
    const upload = imageForm(await makeJpeg({ width: 320, height: 256 }), { vehicle });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, ...owner } });
    expect(res.statusCode).toBe(200);
    at[name] = res.json().data.scanId;
  }
});
afterAll(() => t.cleanup());

const ids = async (query: string) =>
  ((await t.app.inject({ url: `/api/v1/scans?${query}`, headers: owner })).json().data.items as Array<{ scanId: string }>).map((s) => s.scanId);

it("a day holds its last millisecond and not the next day's first, as date= and as from/to", async () => {
  expect(await ids('date=2026-11-21')).toEqual([at.lastOfDay]);
  expect(await ids('date=2026-11-22')).toEqual([at.firstOfNext]);
  expect(await ids('from=2026-11-21&to=2026-11-21')).toEqual([at.lastOfDay]);
  expect(await ids('to=2026-11-21T23:59:59.999Z')).toEqual([at.lastOfDay]);
  const csv = (await t.app.inject({ url: '/api/v1/scans/export?date=2026-11-21', headers: owner })).body;
  expect(csv).toContain(at.lastOfDay);
  expect(csv).not.toContain(at.firstOfNext);
});

it('a vehicle filter with spaces around it finds the vehicle', async () => {
  expect(await ids('vehicle=%20%20golf%20')).toEqual([at.lastOfDay]);
  expect(await ids('vehicle=transit')).toEqual([at.firstOfNext]);
});
