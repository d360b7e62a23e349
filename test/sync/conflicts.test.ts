/**
 * Conflict rules between a desktop and its hub: scans are immutable, the gauge reading is
 * last-writer-wins by the time it was taken, and a deletion wins over any edit.
 */
import { afterEach, expect, it } from 'vitest';
import { createKey, expectError, signIn } from '../http/helpers.js';
import { onHubClock } from '../../src/core/sync/receive.js';
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
  const { key, cookie: office } = await hubAccount(hub);
  const { cookie } = await signIn(desk.app);
  await call(desk, cookie, 'PUT', '/api/v1/sync/link', { hubUrl: hub.url, hubApiKey: key });
  const onHub = (method: 'PUT' | 'DELETE' | 'GET', url: string, payload?: object) =>
    hub.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
  const sync = async () => {
    const status = (await call(desk, cookie, 'POST', '/api/v1/sync/run')).json().data;
    expect(status).toMatchObject({ pending: 0, lastError: null });
  };
  return { hub, desk, key, cookie, office, onHub, sync };
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

it("puts a desk's reading times on the hub's clock when the desk's clock is off, so a re-send cannot undo a later office correction", async () => {
  const { hub, desk, cookie, office, onHub, sync } = await linkedPair();
  desk.clock.advance(60 * MINUTE); // the shop PC runs an hour fast
  const { scanId } = await analyze(desk, cookie);
  await call(desk, cookie, 'PUT', `/api/v1/scans/${scanId}/measurement`, { measurementMm: 4.0 });
  await sync();
  const stored = (await onHub('GET', `/api/v1/scans/${scanId}`)).json().data;
  expect(stored.measurementMm).toBe(4.0);
  expect(Math.abs(Date.parse(stored.measuredAt) - hub.clock.now().getTime())).toBeLessThan(MINUTE); // the hub's time, not an hour ahead

  // half an hour later (on both clocks) the office corrects the reading on the hub
  hub.clock.advance(30 * MINUTE);
  desk.clock.advance(30 * MINUTE);
  await onHub('PUT', `/api/v1/scans/${scanId}/measurement`, { measurementMm: 2.5 });
  // the desk sends its history again (a new key for the same hub): its older reading must not win
  // (a rotated key: a new one, the old one revoked, as docs/HUB.md says)
  const key2 = await createKey(hub.app, office, 'Shop desktop, new key');
  const keys = (await call(hub, office, 'GET', '/api/v1/keys')).json().data.items as Array<{ id: string; name: string }>;
  await call(hub, office, 'DELETE', `/api/v1/keys/${keys.find((k) => k.name === 'Shop desktop')!.id}`);
  await call(desk, cookie, 'PUT', '/api/v1/sync/link', { hubUrl: hub.url, hubApiKey: key2 });
  await sync();
  expect((await hubScans(hub, key2))[0]).toMatchObject({ scanId, measurementMm: 2.5 });
});

it('onHubClock: within two minutes, or without the desk time, the times are kept as sent', () => {
  const wire = { measuredAt: '2026-11-21T12:00:00.000Z', deletedAt: null } as Parameters<typeof onHubClock>[0];
  const hubNow = new Date('2026-11-21T12:00:00Z');
  expect(onHubClock(wire, undefined, hubNow).scan).toBe(wire);
  expect(onHubClock(wire, 'yesterday', hubNow).scan).toBe(wire);
  expect(onHubClock(wire, '2026-11-21T12:01:59Z', hubNow).scan).toBe(wire);
  const fast = onHubClock(wire, '2026-11-21T13:00:00Z', hubNow);
  expect(fast).toEqual({ scan: { measuredAt: '2026-11-21T11:00:00.000Z', deletedAt: null }, skewMs: -60 * MINUTE });
  // whole minutes: the network's jitter does not make each re-send a slightly different reading
  expect(onHubClock(wire, '2026-11-21T13:00:00.400Z', hubNow).scan).toEqual(fast.scan);
  expect(onHubClock(wire, '2026-11-21T12:59:59.700Z', hubNow).scan).toEqual(fast.scan);
  // no time, or an offset of years: a broken header, ignored (before, a far date made a 500)
  for (const broken of ['+275760-09-13T00:00:00.000Z', '1970-01-01T00:00:00Z', '2026-11-21T13:00:00+01:00']) {
    expect(onHubClock(wire, broken, hubNow).scan, broken).toBe(wire);
  }
});

it('onHubClock: a correction’s time and its history are moved onto the hub’s clock too', () => {
  const wire = {
    measuredAt: null,
    deletedAt: null,
    editedAt: '2026-11-21T12:30:00.000Z',
    changes: [{ at: '2026-11-21T12:30:00.000Z', field: 'vehicle', from: null, to: 'KA-TW-204', via: 'session' }],
  } as Parameters<typeof onHubClock>[0];
  const hubNow = new Date('2026-11-21T12:00:00Z');
  expect(onHubClock(wire, '2026-11-21T13:00:00Z', hubNow).scan).toEqual({
    measuredAt: null,
    deletedAt: null,
    editedAt: '2026-11-21T11:30:00.000Z',
    changes: [{ at: '2026-11-21T11:30:00.000Z', field: 'vehicle', from: null, to: 'KA-TW-204', via: 'session' }],
  });
  // a desk of an earlier version sends neither: none is added
  const old = { measuredAt: null, deletedAt: null } as Parameters<typeof onHubClock>[0];
  expect(onHubClock(old, '2026-11-21T13:00:00Z', hubNow).scan).toEqual({ measuredAt: null, deletedAt: null });
});
