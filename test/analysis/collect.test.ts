/**
 * `npm run collect`: the shop's measured scans, fetched over the API into a folder that
 * `npm run eval` reads. A real server on a test core; the photos must come back byte for byte.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadSamples } from '../../src/core/analysis/eval-samples.js';
import { CollectError, collectMeasured } from '../../src/core/cli/collect-measured.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { createKey, httpTest, imageForm, signIn, type HttpTest } from '../http/helpers.js';

let t: HttpTest;
let server: string;
let key: string;
let otherKey: string;
let dir: string;
const photos = new Map<string, Buffer>();

async function scan(apiKey: string, shade: number, vehicle: string): Promise<string> {
  const image = await makeJpeg({ width: 320, height: 256, shade });
  const upload = imageForm(image, { vehicle });
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, 'x-api-key': apiKey } });
  expect(res.statusCode).toBe(200);
  const id = res.json().data.scanId as string;
  photos.set(id, image);
  return id;
}

async function measure(apiKey: string, id: string, mm: number | null): Promise<void> {
  const res = await t.app.inject({ method: 'PUT', url: `/api/v1/scans/${id}/measurement`, headers: { 'x-api-key': apiKey }, payload: { measurementMm: mm } });
  expect(res.statusCode).toBe(200);
}

const ids: string[] = [];
beforeAll(async () => {
  t = await httpTest();
  server = await t.app.listen({ host: '127.0.0.1', port: 0 });
  key = await createKey(t.app, (await signIn(t.app)).cookie);
  otherKey = await createKey(t.app, (await signIn(t.app)).cookie);
  for (const [shade, vehicle] of [
    [60, 'AB-123, "van"'],
    [120, 'CD-456'],
    [200, 'EF-789'],
  ] as const) {
    ids.push(await scan(key, shade, vehicle));
    t.clock.advance(60_000);
  }
  await measure(key, ids[0]!, 2.4);
  await measure(key, ids[2]!, 7.5);
  await measure(otherKey, await scan(otherKey, 90, 'other shop'), 4.0); // never collected with the first key
  dir = await mkdtemp(path.join(tmpdir(), 'tw-collect-'));
});
afterAll(async () => {
  await t.cleanup();
  await rm(dir, { recursive: true, force: true });
});

test('measured scans become labels.csv and the original photos; eval reads the folder', async () => {
  const out = path.join(dir, 'set');
  const report = await collectMeasured({ server, apiKey: key, out });
  expect(report).toEqual({ measured: 2, downloaded: 2, unmeasured: 1, missing: [] });
  expect((await readdir(out)).sort()).toEqual([`${ids[0]}.jpg`, `${ids[2]}.jpg`, 'labels.csv'].sort());
  for (const id of [ids[0]!, ids[2]!]) expect((await readFile(path.join(out, `${id}.jpg`))).equals(photos.get(id)!)).toBe(true);
  const csv = await readFile(path.join(out, 'labels.csv'), 'utf8');
  expect(csv.split('\n')[0]).toBe('file,depthMm,wear,scanId,estimatedDepthMm,modelVersion,measuredAt');
  // oldest first: the order the photos were taken (a shop's reader keeps consecutive photos in one fold)
  expect(
    csv
      .split('\n')
      .slice(1, 3)
      .map((line) => line.split(',')[3]),
  ).toEqual([ids[0], ids[2]]);
  expect(csv).not.toMatch(/AB-123|EF-789|van/); // no plates leave the server
  const loaded = await loadSamples(out);
  expect(loaded.samples.map((s) => [path.basename(s.file), s.depthMm, s.truth]).sort()).toEqual(
    [
      [`${ids[2]}.jpg`, 7.5, 'new'],
      [`${ids[0]}.jpg`, 2.4, 'worn'],
    ].sort(),
  );
  expect(loaded.unlisted).toBe(0);

  // Again later: nothing downloaded twice, a new reading joins, a cleared one leaves the labels.
  await measure(key, ids[1]!, 5.0);
  await measure(key, ids[0]!, null);
  const again = await collectMeasured({ server, apiKey: key, out });
  expect(again).toEqual({ measured: 2, downloaded: 1, unmeasured: 1, missing: [] });
  const after = await loadSamples(out);
  expect(after.samples.map((s) => s.depthMm).sort()).toEqual([5, 7.5]);
  expect(after.unlisted).toBe(1); // the photo of the cleared reading stays, unmeasured
  await measure(key, ids[0]!, 2.4);
});

test('from/to narrow the scans; a photo that cannot be fetched is left out and named', async () => {
  const out = path.join(dir, 'narrow');
  const day = new Date(t.clock.now()).toISOString().slice(0, 10);
  const none = await collectMeasured({ server, apiKey: key, out, from: '2001-01-01', to: '2001-01-02' });
  expect(none).toEqual({ measured: 0, downloaded: 0, unmeasured: 0, missing: [] });
  expect(await readFile(path.join(out, 'labels.csv'), 'utf8')).toBe('file,depthMm,wear,scanId,estimatedDepthMm,modelVersion,measuredAt\n');
  const lines: string[] = [];
  const flaky: typeof fetch = (input, init) =>
    (input as string | URL).toString().includes(`/scans/${ids[2]}/image`)
      ? Promise.resolve(new Response(JSON.stringify({ success: false, error: { code: 'NOT_FOUND', message: 'Scan not found' } }), { status: 404 }))
      : fetch(input, init);
  const report = await collectMeasured({ server, apiKey: key, out, from: day, to: day, fetch: flaky, log: (l) => lines.push(l) });
  expect(report).toMatchObject({ measured: 2, downloaded: 2, missing: [ids[2]] });
  expect(lines.join('\n')).toMatch(new RegExp(`skipped ${ids[2]}: .*NOT_FOUND: Scan not found`));
});

test('a refused key, an unreachable server and a bad URL are CollectErrors with the reason', async () => {
  const out = path.join(dir, 'err');
  await expect(collectMeasured({ server, apiKey: 'tw_nonsense', out })).rejects.toThrow(/answered INVALID_API_KEY/);
  await expect(collectMeasured({ server: 'http://127.0.0.1:1', apiKey: key, out })).rejects.toThrow(/Cannot reach http:\/\/127.0.0.1:1: .*Is TireWear running/);
  await expect(collectMeasured({ server: 'localhost 8787', apiKey: key, out })).rejects.toBeInstanceOf(CollectError);
  const notTireWear: typeof fetch = () => Promise.resolve(new Response('<html>router login</html>', { status: 200, headers: { 'content-type': 'text/html' } }));
  await expect(collectMeasured({ server, apiKey: key, out, fetch: notTireWear })).rejects.toThrow(/did not answer like a TireWear server/);
  await writeFile(path.join(dir, 'a-file'), 'x');
  await expect(collectMeasured({ server, apiKey: key, out: path.join(dir, 'a-file', 'sub') })).rejects.toThrow(/Cannot create/);
});

test('a labels.csv collect did not write is never overwritten; a file it cannot write is named, with no partial file left', async () => {
  const own = path.join(dir, 'hand-made');
  await mkdir(own, { recursive: true });
  await writeFile(path.join(own, 'labels.csv'), 'file,depthMm\nmine.jpg,4.2\n');
  const refused = await collectMeasured({ server, apiKey: key, out: own }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(CollectError);
  expect(refused).toMatchObject({ exitCode: 2, message: expect.stringMatching(/was not written by collect .* move that labels\.csv away/) });
  expect(await readFile(path.join(own, 'labels.csv'), 'utf8')).toBe('file,depthMm\nmine.jpg,4.2\n');
  expect(await readdir(own)).toEqual(['labels.csv']); // nothing fetched

  const blocked = path.join(dir, 'blocked');
  await mkdir(path.join(blocked, 'labels.csv.partial'), { recursive: true }); // a folder where the labels are written first
  const failed = await collectMeasured({ server, apiKey: key, out: blocked }).catch((e: unknown) => e);
  expect(failed).toMatchObject({ exitCode: 1, message: expect.stringMatching(/^Cannot write .*labels\.csv: E/) });
  // its own labels.csv from an earlier run is rewritten as before
  const again = path.join(dir, 'again');
  await collectMeasured({ server, apiKey: key, out: again });
  await collectMeasured({ server, apiKey: key, out: again });
  expect((await readFile(path.join(again, 'labels.csv'), 'utf8')).split('\n')[0]).toBe('file,depthMm,wear,scanId,estimatedDepthMm,modelVersion,measuredAt');
  // its own, saved again by Excel on Windows (a byte-order mark in front, CRLF): still its own
  const labels = path.join(again, 'labels.csv');
  await writeFile(labels, `\uFEFF${(await readFile(labels, 'utf8')).replaceAll('\n', '\r\n')}`);
  await collectMeasured({ server, apiKey: key, out: again });
});

test('npm run collect: key from the environment, usage mistakes exit 2, server failures exit 1', async () => {
  const run = (args: string[], env: Record<string, string | undefined>) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/core/cli/collect.ts', ...args], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { ...process.env, TIREWEAR_API_KEY: undefined, ...env },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
  const out = path.join(dir, 'cli');
  expect(await run([out, '--server', server], {})).toMatchObject({ code: 2, stderr: expect.stringMatching(/set TIREWEAR_API_KEY/) });
  expect(await run(['--server', server], { TIREWEAR_API_KEY: key })).toMatchObject({ code: 2, stderr: expect.stringMatching(/which folder\?/) });
  expect(await run([out, '--key', key], { TIREWEAR_API_KEY: key })).toMatchObject({ code: 2, stderr: expect.stringMatching(/Unknown option '--key'/) });
  expect(await run([out, '--server', 'http://127.0.0.1:1'], { TIREWEAR_API_KEY: key })).toMatchObject({
    code: 1,
    stderr: expect.stringMatching(/Cannot reach/),
  });
  // a mistyped date is a usage mistake, found before any request (the server is not even reachable here)
  const badDate = await run([out, '--server', 'http://127.0.0.1:1', '--from', 'yesterday'], { TIREWEAR_API_KEY: key });
  expect(badDate).toMatchObject({ code: 2, stderr: expect.stringMatching(/--from must be a date YYYY-MM-DD/) });
  expect(await run([out, '--to', '2026-02-30'], { TIREWEAR_API_KEY: key })).toMatchObject({ code: 2, stderr: expect.stringMatching(/--to must be a date/) });
  const ok = await run([out, '--server', server], { TIREWEAR_API_KEY: key });
  expect(ok.code, ok.stderr).toBe(0);
  expect(ok.stdout).toMatch(
    /^3 measured scan\(s\) in .* \(3 photo\(s\) downloaded now\), 0 without a gauge reading left out\.\nMeasure the model on them: npm run eval -- /,
  );
}, 30_000);
