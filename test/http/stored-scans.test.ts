/**
 * Scans stored by an older version, or pushed to a hub by one, may hold values today's analysis
 * never writes: the response schema documents today's values without refusing or altering those.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ScanRecord } from '../../src/core/types.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { makeScan } from '../support/store.js';
import { httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
let owner: { cookie: string };
beforeAll(async () => {
  t = await httpTest();
  owner = await signIn(t.app);
});
afterAll(() => t.cleanup());

it("lists a stored scan whose wear is not one of today's five and whose 32nds are not whole, as stored", async () => {
  const upload = imageForm(await makeJpeg({ width: 320, height: 256 }));
  const made = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, ...owner } });
  const today = (await t.core.store.scans.get(made.json().data.scanId))!;
  const old = makeScan({ accountId: today.accountId, source: today.source });
  const odd = { ...old, result: { ...old.result, wear: 'bald' as ScanRecord['result']['wear'], depth32nds: 7.6 } };
  await t.core.store.scans.commit({ scan: odd, reservation: null, idempotency: null });

  const list = await t.app.inject({ url: '/api/v1/scans', headers: owner });
  expect(list.statusCode).toBe(200);
  const listed = (list.json().data.items as Array<{ scanId: string; result: { wear: string; depth32nds: number } }>).find((s) => s.scanId === odd.id)!;
  expect(listed.result).toMatchObject({ wear: 'bald', depth32nds: 7.6 });
  expect((await t.app.inject({ url: `/api/v1/scans/${odd.id}`, headers: owner })).json().data.result.depth32nds).toBe(7.6);
});
