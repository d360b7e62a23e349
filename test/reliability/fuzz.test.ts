/**
 * Two thousand hostile uploads through POST /analyze over a real socket (the engine's real
 * decode without the networks): every answer is an envelope with a documented status, within its
 * bound (none left unanswered), nothing is charged or stored for a failure, nothing is left
 * half-written, and memory stays flat.
 * scripts/fuzz.ts is the long variant over real HTTP with the real models.
 */
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildServer } from '../../src/core/http/app.js';
import { SQLITE_FILE_NAME } from '../../src/core/storage/index.js';
import { DecodeOnlyAnalyzer } from '../../bench/stand-in-analyzer.js';
import { testCore, type TestCore } from '../support/core.js';
import { fuzzCases, seedImages } from './corpus.js';
import { runFuzz } from './fuzz-runner.js';
import { readLedger } from './ledger.js';
import { proApiKey } from './accounts.js';

const CASES = 2000;

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

let t: TestCore<never, DecodeOnlyAnalyzer>;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  t = await testCore<never, DecodeOnlyAnalyzer>({ analyzer: new DecodeOnlyAnalyzer() });
  app = await buildServer(t.core, { logger: false });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app.close();
  await t.cleanup();
});

test(`${CASES} mutated, truncated, spliced and random uploads: envelopes only, failures free, memory flat`, async () => {
  const retained: number[] = [];
  const key = await proApiKey(app, t.issueCode({ kind: 'pro', expiresAt: '2027-12-31T00:00:00Z' }));
  const cases = [...fuzzCases(await seedImages(), CASES, 20261121)];
  const { statuses, bad, unanswered, rss } = await runFuzz({
    baseUrl,
    apiKey: key,
    cases,
    parallel: 8,
    sampleRss: () => {
      collectGarbage();
      const { rss, heapUsed, arrayBuffers } = process.memoryUsage();
      retained.push(heapUsed + arrayBuffers);
      return rss;
    },
    sampleEvery: 200,
  });

  expect(bad).toEqual([]);
  // every request answered within its bound, the form parts busboy never finished on included
  expect(unanswered).toBe(0);
  expect(cases.filter((c) => c.label.includes('a part with')).length).toBeGreaterThan(100);
  const ok = statuses.get(200) ?? 0;
  // The corpus must exercise both outcomes, or it proves nothing.
  expect(ok).toBeGreaterThan(50);
  expect(CASES - ok).toBeGreaterThan(CASES / 2);

  const ledger = await readLedger(path.join(t.dataDir, SQLITE_FILE_NAME), t.config.imagesDir);
  expect(ledger).toMatchObject({ integrity: 'ok', scans: ok, charged: ok, reservations: 0, scansMissingFiles: [], orphanFiles: [], tempFiles: [] });

  // No leak: what JavaScript still holds after a full GC (heap and Buffers) is flat once warm.
  const mb = (v: number) => v / 2 ** 20;
  expect(mb(Math.max(...retained.slice(2)) - retained[1]!)).toBeLessThan(16);
  // Resident memory also counts libvips' cache and malloc arenas, which plateau; bound it coarsely
  // (scripts/fuzz.ts checks the plateau over many more cases).
  expect(mb(Math.max(...rss) - rss[0]!)).toBeLessThan(160);
}, 120_000);
