/**
 * What the desktop makes of the hub's answers, and of what answers in its place: only a
 * refusal the hub makes about the scan itself skips that scan (counted, and sent again when
 * the shop links again); a proxy's or firewall's page, the hub's Host check, or a 200 from
 * something that is not the hub are retried and explained on the status line.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHubClient, HubError, type FetchLike } from '../../src/core/sync/hub-client.js';
import type { SyncService } from '../../src/core/sync/service.js';
import { toSyncScan } from '../../src/core/sync/wire.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { createKey, expectError, signIn } from '../http/helpers.js';
import { makeScan, randomId } from '../support/store.js';
import { fakeHub, type FakeHub } from './fake-hub.js';
import { analyze, call, hubAccount, hubScans, removeNode, deskSync, startNode, type Node } from './nodes.js';

let nodes: Node[] = [];
let fakes: FakeHub[] = [];
let services: SyncService[] = [];
afterEach(async () => {
  await Promise.all(services.map((service) => service.close()));
  await Promise.all(fakes.map((fake) => fake.close()));
  await Promise.all(nodes.map(removeNode));
  nodes = [];
  fakes = [];
  services = [];
});

async function node(): Promise<Node> {
  const started = await startNode();
  nodes.push(started);
  return started;
}

/** A hub with an account key, a desktop with `scans` scans, and a switchable stand-in in front of the hub. */
async function setup(scans: number) {
  const hub = await node();
  const { cookie: office, key } = await hubAccount(hub);
  const desk = await node();
  const { cookie } = await signIn(desk.app);
  const made = [];
  for (let i = 0; i < scans; i++) made.push(await analyze(desk, cookie));
  const fake = await fakeHub(hub.url);
  fakes.push(fake);
  return { hub, office, key, desk, cookie, made, fake };
}

/** The desktop's sync, each pass driven by the test, closed after it. */
function service(desk: Node, link: { hubUrl: string; hubApiKey: string }, options: { runWaitMs?: number } = {}): SyncService {
  const created = deskSync(desk, link, options);
  services.push(created);
  return created;
}

describe('refusals that are not about the scan', () => {
  it("retries a firewall's 403 page and a proxy's 413, skips nothing, and sends everything once they are gone", async () => {
    const { hub, key, desk, fake } = await setup(3);
    const sync = service(desk, { hubUrl: fake.url, hubApiKey: key });

    fake.mode = 'waf';
    const waf = await sync.pusher!.runOnce();
    expect(waf.pushed).toBe(0);
    expect(waf.error).toMatch(/^Hub answered 403 Forbidden, not with TireWear's reply: a proxy, firewall or network rule/);
    expect(await sync.status()).toMatchObject({ pending: 3, skipped: 0, lastError: waf.error });

    fake.mode = 'proxy413';
    const tooLarge = await sync.pusher!.runOnce();
    expect(tooLarge.error).toMatch(/^Hub answered 413 .*client_max_body_size 11m/);
    expect(await sync.status()).toMatchObject({ pending: 3, skipped: 0 });

    fake.mode = 'forward';
    expect(await sync.pusher!.runOnce()).toEqual({ pushed: 3, error: null });
    expect(await sync.status()).toMatchObject({ pending: 0, skipped: 0, lastError: null });
    expect(await hubScans(hub, key)).toHaveLength(3);
  });

  it("retries the hub's own Host refusal and names the host to allow", async () => {
    const { hub, key, desk, fake } = await setup(2);
    const sync = service(desk, { hubUrl: fake.url, hubApiKey: key });

    fake.mode = 'wrongHost';
    const refused = await sync.pusher!.runOnce();
    expect(refused.error).toMatch(/^Hub answered 403 FORBIDDEN: Unknown Host header.*TIREWEAR_ALLOWED_HOSTS must include 127\.0\.0\.1/);
    expect(await sync.status()).toMatchObject({ pending: 2, skipped: 0 });

    fake.mode = 'forward';
    expect(await sync.pusher!.runOnce()).toEqual({ pushed: 2, error: null });
    expect(await hubScans(hub, key)).toHaveLength(2);
  });

  it('does not take a 200 from something other than the hub as stored', async () => {
    const { hub, key, desk, fake } = await setup(3);
    const sync = service(desk, { hubUrl: fake.url, hubApiKey: key });

    fake.mode = 'portal';
    const portal = await sync.pusher!.runOnce();
    expect(portal).toEqual({ pushed: 0, error: "Hub answered 200 but not with TireWear's reply; check the hub address" });
    expect(await sync.status()).toMatchObject({ pending: 3, skipped: 0, lastSyncAt: null });

    fake.mode = 'forward';
    expect(await sync.pusher!.runOnce()).toEqual({ pushed: 3, error: null });
    expect(await hubScans(hub, key)).toHaveLength(3);
  });
});

describe('refusals about the scan', () => {
  it('skips a scan whose photo the hub refuses, counts it, and sends it again when linked again', async () => {
    const { hub, key, desk, made, fake } = await setup(3);
    const link = { hubUrl: fake.url, hubApiKey: key };
    const sync = service(desk, link);
    const bad = (await desk.server.core.store.scans.get(made[1]!.scanId))!;
    const original = await desk.server.core.images.get(bad.image.originalKey);
    await desk.server.core.images.put(bad.image.originalKey, await makeJpeg({ width: 320, height: 256, shade: 17 }));

    expect(await sync.pusher!.runOnce()).toEqual({ pushed: 2, error: null });
    const status = await sync.status();
    expect(status).toMatchObject({ pending: 0, skipped: 1 });
    expect(status.lastError).toBe(`Scan ${bad.id} was not synced: Hub answered 400 VALIDATION_ERROR: The image does not match scan.image.sha256`);
    // A pass that pushes nothing new leaves the count and the note alone.
    expect(await sync.pusher!.runOnce()).toEqual({ pushed: 0, error: null });
    expect(await sync.status()).toMatchObject({ skipped: 1, lastError: status.lastError });

    // Fixed on this computer; linking again with the same hub and key sends the skipped scan again.
    await desk.server.core.images.put(bad.image.originalKey, original);
    const relinked = await sync.link(link);
    expect(relinked).toMatchObject({ linked: true, skipped: 0, lastError: null, pending: 2 });
    const uploads = fake.uploads;
    expect(await sync.pusher!.runOnce()).toEqual({ pushed: 2, error: null });
    // The skipped scan: without its photo (the hub asks for it), then with it; the next one, which
    // the hub already has, without its photo only.
    expect(fake.uploads - uploads).toBe(3);
    expect(await sync.status()).toMatchObject({ pending: 0, skipped: 0, lastError: null });
    expect((await hubScans(hub, key)).map((s) => s.scanId).sort()).toEqual(made.map((s) => s.scanId).sort());
  });

  it('sends the refused changes again on request, without the key typed again (Settings: "send them again")', async () => {
    const { hub, key, desk, made, fake } = await setup(2);
    const sync = service(desk, { hubUrl: fake.url, hubApiKey: key });
    fake.mode = 'refuseScan';
    expect(await sync.pusher!.runOnce()).toMatchObject({ pushed: 0 });
    expect(await sync.status()).toMatchObject({ pending: 0, skipped: 2 });
    fake.mode = 'forward'; // the cause fixed on the hub
    expect(await sync.resendSkipped()).toMatchObject({ linked: true, skipped: 0, pending: 2, lastError: null });
    expect(await sync.pusher!.runOnce()).toEqual({ pushed: 2, error: null });
    expect((await hubScans(hub, key)).map((s) => s.scanId).sort()).toEqual(made.map((s) => s.scanId).sort());
    // nothing refused: nothing to send again, and the same answer
    expect(await sync.resendSkipped()).toMatchObject({ linked: true, skipped: 0, pending: 0 });
    await sync.unlink();
    await expect(sync.resendSkipped()).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('refuses a scan id another shop of the account pushed first; the pushing desktop skips and counts it', async () => {
    const hub = await node();
    const { cookie: office } = await signIn(hub.app);
    const main = await createKey(hub.app, office, 'Main Street');
    const elm = await createKey(hub.app, office, 'Elm Road');
    const desk = await node();
    const { cookie } = await signIn(desk.app);
    const { scanId } = await analyze(desk, cookie);
    const first = service(desk, { hubUrl: hub.url, hubApiKey: main });
    expect(await first.pusher!.runOnce()).toEqual({ pushed: 1, error: null });

    // A second shop PC with a copy of this history (the same store here), linked with its own key.
    desk.clock.advance(60_000);
    await call(desk, cookie, 'PUT', `/api/v1/scans/${scanId}/measurement`, { measurementMm: 9.9 });
    const copy = service(desk, { hubUrl: hub.url, hubApiKey: elm });
    expect(await copy.pusher!.runOnce()).toEqual({ pushed: 0, error: null });
    const status = await copy.status();
    expect(status).toMatchObject({ pending: 0, skipped: 1 });
    expect(status.lastError).toMatch(
      new RegExp(`^Scan ${scanId} was not synced: Hub answered 403 FORBIDDEN: This scan id belongs to another shop of this hub account \\("Main Street"\\)`),
    );
    const onHub = await hub.app.inject({ method: 'GET', url: `/api/v1/sync/scans`, headers: { cookie: office } });
    expect(onHub.json().data.items).toEqual([expect.objectContaining({ scanId, measurementMm: null, shop: expect.objectContaining({ name: 'Main Street' }) })]);

    await call(desk, cookie, 'DELETE', `/api/v1/scans/${scanId}`);
    expect(await copy.pusher!.runOnce()).toEqual({ pushed: 0, error: null });
    expect((await copy.status()).skipped).toBe(2);
    expect(await hubScans(hub, main)).toHaveLength(1);

    // The shop that pushed it first still may.
    expect(await first.pusher!.runOnce()).toEqual({ pushed: 1, error: null });
    expect(await hubScans(hub, main)).toHaveLength(0);
  });
});

describe('the status line while a backlog drains', () => {
  it('clears the last error at the first acknowledgement, not at the end of the pass', async () => {
    const { key, desk, fake } = await setup(4);
    const sync = service(desk, { hubUrl: fake.url, hubApiKey: key });
    fake.mode = 'waf';
    expect((await sync.pusher!.runOnce()).error).toMatch(/^Hub answered 403/);

    fake.mode = 'forward';
    fake.holdAfter = 1;
    const held = fake.nextHeld();
    const pass = sync.pusher!.runOnce();
    await held;
    const status = await sync.status();
    expect(status).toMatchObject({ pending: 3, lastError: null });
    expect(status.lastSyncAt).not.toBeNull();
    // Closing cuts the held upload short; that is no failure of the hub.
    await sync.close();
    expect(await pass).toEqual({ pushed: 1, error: null });
  });
});

describe("'Sync now' and shutdown", () => {
  it('answers with the status so far after a bounded time while the hub hangs', async () => {
    const { key, desk, fake } = await setup(3);
    fake.mode = 'hold';
    const sync = service(desk, { hubUrl: fake.url, hubApiKey: key }, { runWaitMs: 300 });
    const held = fake.nextHeld();
    const started = Date.now();
    const status = await sync.runNow();
    expect(Date.now() - started).toBeLessThan(3_000);
    await held;
    expect(status).toMatchObject({ linked: true, pending: 3 });
    expect(fake.uploads).toBe(1);
  });

  it('stops a pass as soon as the server shuts down, answering "sync now" with the status so far', async () => {
    const { key, desk, cookie, fake } = await setup(3);
    fake.mode = 'hold';
    const held = fake.nextHeld();
    const linked = await call(desk, cookie, 'PUT', '/api/v1/sync/link', { hubUrl: fake.url, hubApiKey: key });
    expect(linked.json().data).toMatchObject({ linked: true, lastError: null });
    await held;

    const run = fetch(`${desk.url}/api/v1/sync/run`, { method: 'POST', headers: { cookie } });
    // Shut down only once "sync now" is in the server's hands (connected, then routed).
    const connections = () => new Promise<number>((resolve) => desk.app.server.getConnections((_error, count) => resolve(count)));
    while ((await connections()) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await desk.server.close();
    // Without stopping the pass, the close waits for the shutdown grace (10 s) and then some.
    expect(Date.now() - started).toBeLessThan(3_000);
    const answer = await run;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { data: unknown }).data).toMatchObject({ linked: true, pending: 3 });
    expect(fake.uploads).toBe(1);
  });
});

describe("the chain's scans through a desktop", () => {
  it('explains a link to something that is not a hub instead of a parse error or a 500', async () => {
    const { key, desk, cookie, fake } = await setup(0);
    fake.mode = 'portal';
    const linked = await call(desk, cookie, 'PUT', '/api/v1/sync/link', { hubUrl: fake.url, hubApiKey: key });
    expect(linked.json().data).toMatchObject({
      linked: true,
      lastError: "Hub answered 200 but not with TireWear's reply; check the hub address",
    });
    for (const url of ['/api/v1/sync/hub-scans', '/api/v1/sync/hub-shops', `/api/v1/sync/hub-scans/${randomId()}/image`]) {
      const message = expectError(await call(desk, cookie, 'GET', url), 503, 'STORAGE_UNAVAILABLE');
      expect(message).toMatch(
        /^The hub could not be read: Hub answered 200 (but not with TireWear's reply|with text\/html instead of a JPEG, PNG or WebP image)/,
      );
    }
  });

  it('passes on JPEG, PNG and WebP images only, never what else the hub sends', async () => {
    const { hub, office, key, desk, cookie, fake } = await setup(0);
    const { scanId, image } = await analyze(hub, office);
    await call(desk, cookie, 'PUT', '/api/v1/sync/link', { hubUrl: fake.url, hubApiKey: key });
    const url = `/api/v1/sync/hub-scans/${scanId}/image`;

    const served = await call(desk, cookie, 'GET', url);
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/jpeg');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.rawPayload.equals(image)).toBe(true);

    fake.mode = 'htmlImage';
    const html = await call(desk, cookie, 'GET', url);
    expect(expectError(html, 503, 'STORAGE_UNAVAILABLE')).toMatch(/text\/html instead of a JPEG, PNG or WebP image/);
    expect(html.headers['content-type']).toMatch(/^application\/json/);
    expect(html.body).not.toContain('<script>');
  });
});

describe('the hub client', () => {
  const scan = (() => {
    const record = makeScan({ id: randomId(), source: 'session' });
    return toSyncScan(record);
  })();
  const answering =
    (status: number, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }): FetchLike =>
    async () =>
      new Response(body, { status, headers });
  const client = (fetchLike: FetchLike) => createHubClient({ hubUrl: 'https://hub.example.com', hubApiKey: `tw_${'a'.repeat(32)}`, fetch: fetchLike });
  const refusal = async (promise: Promise<unknown>): Promise<HubError> => {
    const error = await promise.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(HubError);
    return error as HubError;
  };
  const envelope = (code: string, message: string) => JSON.stringify({ success: false, error: { code, message } });

  it("names the desk and change with an upload and reads the hub's mark; an older hub's answer or a garbled mark is no mark", async () => {
    const ok = JSON.stringify({ success: true, data: { scanId: scan.scanId } });
    let sent: Headers | null = null;
    const marked =
      (mark: string | null): FetchLike =>
      async (_url, init) => {
        sent = new Headers(init.headers);
        return new Response(ok, { status: 200, headers: { 'content-type': 'application/json', ...(mark === null ? {} : { 'x-hub-desk-seq': mark }) } });
      };
    const position = { deskId: 'a1b2c3d4e5f6', seq: 42 };
    await expect(client(marked('41')).pushScan(scan, null, position)).resolves.toEqual({ outcome: 'stored', hubSeq: 41 });
    expect(sent!.get('x-desk-id')).toBe('a1b2c3d4e5f6');
    expect(sent!.get('x-desk-seq')).toBe('42');
    await expect(client(marked('0')).pushScan(scan, null, position)).resolves.toEqual({ outcome: 'stored', hubSeq: 0 });
    for (const garbled of [null, '', '-1', '4.5', 'many', '99999999999999999']) {
      await expect(client(marked(garbled)).pushScan(scan, null, position)).resolves.toEqual({ outcome: 'stored', hubSeq: null });
    }
    // without a position nothing is named and no mark is read
    await expect(client(marked('41')).pushScan(scan, null)).resolves.toEqual({ outcome: 'stored', hubSeq: null });
    expect(sent!.has('x-desk-id')).toBe(false);
  });

  it('never follows a redirect: the key and the photo stay here, and the redirect is named', async () => {
    const seen: Array<string | undefined> = [];
    const elsewhere = http.createServer((request, response) => {
      seen.push(request.headers['x-api-key'] as string | undefined);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: true, data: { scanId: scan.scanId, items: [] } }));
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/portal/login?next=1`;
    const redirecting = http.createServer((request, response) => {
      request.resume();
      response.writeHead(307, { location: target });
      response.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const hub = createHubClient({ hubUrl: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`, hubApiKey: `tw_${'a'.repeat(32)}` });
      const image = { data: await makeJpeg({ width: 320, height: 256 }), mime: 'image/jpeg' };
      for (const attempt of [() => hub.pushScan(scan, image), () => hub.listShops()]) {
        const error = await refusal(attempt());
        expect(error.status).toBe(307);
        expect(error.refusesScan).toBe(false); // retried, not skipped
        expect(error.message).toContain(`a redirect to ${target.replace('?next=1', '')}`);
        expect(error.message).toContain('link with its new address');
      }
      expect(seen).toEqual([]);
    } finally {
      await new Promise((resolve) => redirecting.close(resolve));
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });

  it('takes only an acknowledgement of the same scan id as stored', async () => {
    await expect(client(answering(200, JSON.stringify({ success: true, data: { scanId: scan.scanId } }))).pushScan(scan, null)).resolves.toEqual({
      outcome: 'stored',
      hubSeq: null,
    });
    for (const body of [JSON.stringify({ success: true, data: { scanId: 'another' } }), '{"ok":true}', '', 'null']) {
      const error = await refusal(client(answering(200, body)).pushScan(scan, null));
      expect(error.message).toBe("Hub answered 200 but not with TireWear's reply; check the hub address");
      expect(error.refusesScan).toBe(false);
    }
  });

  it('tells a refusal about the scan from everything else by the envelope, not the status', async () => {
    const about = async (status: number, body: string, headers?: Record<string, string>) =>
      (await refusal(client(answering(status, body, headers)).pushScan(scan, null))).refusesScan;
    // Marked by the hub.
    expect(await about(403, envelope('FORBIDDEN', 'anything'), { 'content-type': 'application/json', 'x-tirewear-scan-refused': '1' })).toBe(true);
    // A hub from before the mark.
    expect(await about(422, envelope('IMAGE_UNREADABLE', 'The image could not be decoded'))).toBe(true);
    expect(await about(400, envelope('VALIDATION_ERROR', 'scan.result.wear: Expected union value'))).toBe(true);
    expect(await about(403, envelope('FORBIDDEN', 'This scan id belongs to another account'))).toBe(true);
    // Not about the scan.
    expect(await about(403, envelope('FORBIDDEN', 'Unknown Host header; open the app through localhost or 127.0.0.1'))).toBe(false);
    expect(await about(400, envelope('VALIDATION_ERROR', 'The request ended before its body was complete'))).toBe(false);
    expect(await about(413, '<html>413 Request Entity Too Large</html>', { 'content-type': 'text/html' })).toBe(false);
    expect(await about(400, '<html>Bad Request</html>', { 'content-type': 'text/html' })).toBe(false);
    expect(await about(415, envelope('UNSUPPORTED_MEDIA_TYPE', 'x').replace('"success":false', '"success":"no"'))).toBe(false);
  });
});

describe('how long an upload may take', () => {
  it('grows with the photo, so a slow shop line (256 kbit/s) can still send a 10 MiB one', async () => {
    const { uploadTimeoutMs, UPLOAD_TIMEOUT_MS } = await import('../../src/core/sync/hub-client.js');
    expect(uploadTimeoutMs(0)).toBe(UPLOAD_TIMEOUT_MS);
    const tenMiB = 10 * 1024 * 1024;
    expect(uploadTimeoutMs(tenMiB)).toBe(UPLOAD_TIMEOUT_MS + 320_000); // 10 MiB at 32 KiB/s: 320 s
    expect(uploadTimeoutMs(tenMiB)).toBeGreaterThan(((tenMiB * 8) / 256_000) * 1000); // 328 s of sending at 256 kbit/s
  });
});

it('a hub gives a whole upload longer than the desktop waits for a 10 MiB photo; a desk keeps its minute', async () => {
  const { uploadTimeoutMs } = await import('../../src/core/sync/hub-client.js');
  const { HUB_REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS } = await import('../../src/core/http/app.js');
  const { MAX_IMAGE_BYTES } = await import('../../src/shared/contract/limits.js');
  expect(uploadTimeoutMs(MAX_IMAGE_BYTES + 64 * 1024)).toBeLessThan(HUB_REQUEST_TIMEOUT_MS);
  expect(REQUEST_TIMEOUT_MS).toBe(60_000);
});
