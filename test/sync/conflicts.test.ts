/**
 * Conflict rules between a desktop and its hub: scans are immutable, the gauge reading is
 * last-writer-wins by the time it was taken, and a deletion wins over any edit.
 */
import { afterEach, expect, it } from 'vitest';
import { expectError, signIn } from '../http/helpers.js';
import { analyze, call, hubAccount, hubScans, removeNode, startNode, type Node } from './nodes.js';

let nodes: Node[] = [];
afterEach(async () => {
  await Promise.all(nodes.map(removeNode));
  nodes = [];
});

async function linkedPair() {
  const hub = await startNode();
  const desk = await startNode();
  nodes.push(hub, desk);
  const { key } = await hubAccount(hub);
  const { cookie } = await signIn(desk.app);
  await call(desk, cookie, 'PUT', '/api/v1/sync/link', { hubUrl: hub.url, hubApiKey: key });
  const onHub = (method: 'PUT' | 'DELETE' | 'GET', url: string, payload?: object) =>
    hub.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
  const sync = async () => {
    const status = (await call(desk, cookie, 'POST', '/api/v1/sync/run')).json().data;
    expect(status).toMatchObject({ pending: 0, lastError: null });
  };
  return { hub, desk, key, cookie, onHub, sync };
}

const MINUTE = 60_000;

it('keeps the later gauge reading, whichever side took it', async () => {
  const { hub, desk, key, cookie, onHub, sync } = await linkedPair();
  const { scanId } = await analyze(desk, cookie);
  await sync();

  desk.clock.advance(1 * MINUTE);
  await call(desk, cookie, 'PUT', `/api/v1/scans/${scanId}/measurement`, { measurementMm: 5.0 });
  hub.clock.advance(2 * MINUTE);
  await onHub('PUT', `/api/v1/scans/${scanId}/measurement`, { measurementMm: 4.0 });
  await sync();
  expect((await hubScans(hub, key))[0]).toMatchObject({ scanId, measurementMm: 4.0 });

  desk.clock.advance(2 * MINUTE);
  await call(desk, cookie, 'PUT', `/api/v1/scans/${scanId}/measurement`, { measurementMm: 6.0 });
  await sync();
  expect((await hubScans(hub, key))[0]).toMatchObject({ scanId, measurementMm: 6.0 });
});

it('lets a deletion on the hub win over a later edit on the desktop', async () => {
  const { desk, cookie, onHub, sync } = await linkedPair();
  const { scanId } = await analyze(desk, cookie);
  await sync();
  await onHub('DELETE', `/api/v1/scans/${scanId}`);

  desk.clock.advance(10 * MINUTE);
  await call(desk, cookie, 'PUT', `/api/v1/scans/${scanId}/measurement`, { measurementMm: 7.0 });
  await sync();
  expectError(await onHub('GET', `/api/v1/scans/${scanId}`), 404, 'NOT_FOUND');
});

it('lets a deletion on the desktop win over a later edit on the hub', async () => {
  const { hub, desk, key, cookie, onHub, sync } = await linkedPair();
  const { scanId } = await analyze(desk, cookie);
  await sync();
  hub.clock.advance(30 * MINUTE);
  await onHub('PUT', `/api/v1/scans/${scanId}/measurement`, { measurementMm: 3.3 });

  await call(desk, cookie, 'DELETE', `/api/v1/scans/${scanId}`);
  await sync();
  expect(await hubScans(hub, key)).toEqual([]);
});
