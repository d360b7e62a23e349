/**
 * Soak: the server in its own process under steady mixed load for many minutes — the bench's
 * photos (12 MP JPEG, 1 MP PNG, 3 MP WebP) with every tenth upload a hostile one from the fuzz
 * corpus — printing, per interval, throughput, p50/p95, statuses and the server's RSS. Fails
 * (exit 1) on a 5xx, a broken envelope, RSS still climbing after warm-up, latency drifting up,
 * or a data dir whose charges, scans and files do not match.
 *
 *   npx tsx scripts/soak.ts [--minutes 10] [--concurrency 4] [--interval 30] [--analyzer onnx|decode-only]
 */
import { rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { memoryOf, startProServer, stopBenchServer } from '../bench/child.js';
import { benchImages } from '../bench/images.js';
import { multipartBody, percentile, post } from '../bench/load.js';
import { growthMb, rssOf } from '../bench/proc.js';
import { SQLITE_FILE_NAME } from '../src/core/storage/index.js';
import { BOUNDARY, fuzzCases, multipart, seedImages } from '../test/reliability/corpus.js';
import { judge } from '../test/reliability/fuzz-runner.js';
import { readLedger } from '../test/reliability/ledger.js';
import { arg, checkFlags } from '../bench/cli.js';

interface Interval {
  latencies: number[];
  statuses: Map<number, number>;
}

async function main(): Promise<void> {
  checkFlags(
    ['minutes', 'concurrency', 'interval', 'analyzer'],
    'usage: npx tsx scripts/soak.ts [--minutes 10] [--concurrency 4] [--interval 30] [--analyzer onnx|decode-only]',
  );
  const minutes = Number(arg('minutes', '10'));
  const concurrency = Number(arg('concurrency', '4'));
  const intervalS = Number(arg('interval', '30'));
  const analyzer = arg('analyzer', 'onnx') as 'onnx' | 'decode-only';
  const { server, dataDir, apiKey } = await startProServer('soak', analyzer);
  let failed = false;
  try {
    const photos = (await benchImages()).map((i) => multipartBody(i.data, 'tire', i.mime));
    const hostile = fuzzCases(await seedImages(), Number.MAX_SAFE_INTEGER, Date.now() % 100_000);
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const target = new URL('/api/v1/analyze', server.url);
    const bad: string[] = [];
    let ok = 0;
    let current: Interval = { latencies: [], statuses: new Map() };
    const rows: Array<{ at: number; rssMb: number; perSecond: number; p50: number; p95: number; statuses: string }> = [];
    const rss: number[] = [];

    const started = Date.now();
    const deadline = started + minutes * 60_000;
    const sampler = setInterval(() => rss.push(rssOf(server.child.pid!)), 1000);
    const reporter = setInterval(() => {
      const done = current;
      current = { latencies: [], statuses: new Map() };
      const sorted = done.latencies.sort((a, b) => a - b);
      const row = {
        at: Math.round((Date.now() - started) / 1000),
        rssMb: rssOf(server.child.pid!) / 2 ** 20,
        perSecond: sorted.length / intervalS,
        p50: percentile(sorted, 50),
        p95: percentile(sorted, 95),
        statuses: [...done.statuses]
          .sort()
          .map(([s, n]) => `${s}×${n}`)
          .join(' '),
      };
      rows.push(row);
      console.log(
        `${String(row.at).padStart(5)} s  RSS ${row.rssMb.toFixed(0).padStart(4)} MB  ${row.perSecond.toFixed(1).padStart(5)}/s  ` +
          `p50 ${row.p50.toFixed(0).padStart(5)} ms  p95 ${row.p95.toFixed(0).padStart(5)} ms  ${row.statuses}`,
      );
    }, intervalS * 1000);

    let n = 0;
    const worker = async () => {
      while (Date.now() < deadline) {
        const i = n++;
        const isHostile = i % 10 === 9;
        const fuzz = isHostile ? hostile.next().value! : null;
        const body = fuzz ? (fuzz.body ?? multipart(fuzz.image)) : photos[i % photos.length]!.body;
        const contentType = fuzz ? `multipart/form-data; boundary=${BOUNDARY}` : photos[i % photos.length]!.contentType;
        const t0 = performance.now();
        const answer = await post(agent, target, body, { 'content-type': contentType, 'x-api-key': apiKey }).catch((e: Error) => ({
          status: 0,
          text: e.message,
        }));
        current.statuses.set(answer.status, (current.statuses.get(answer.status) ?? 0) + 1);
        const verdict = judge(answer.status, answer.text);
        if (verdict) bad.push(`${fuzz ? fuzz.label : 'photo'}: ${verdict}`);
        else if (!isHostile && answer.status !== 200) bad.push(`photo refused: ${answer.status} ${answer.text.slice(0, 120)}`);
        if (answer.status === 200) ok++;
        if (!isHostile) current.latencies.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    clearInterval(sampler);
    clearInterval(reporter);
    agent.destroy();

    const memory = await memoryOf(server.child);
    await stopBenchServer(server.child);
    const ledger = await readLedger(path.join(dataDir, SQLITE_FILE_NAME), path.join(dataDir, 'images'));
    const growth = growthMb(rss);
    const steady = rows.slice(1);
    const drift = steady.length >= 2 ? steady.at(-1)!.p50 / steady[0]!.p50 : 1;
    const mb = (v: number) => `${(v / 2 ** 20).toFixed(0)} MB`;
    console.log(`\n${n} uploads in ${minutes} min, ${ok} analysed; analyzer ${analyzer}, concurrency ${concurrency}`);
    console.log(
      `server RSS: max ${mb(Math.max(...rss))}, growth after warm-up ${growth.toFixed(1)} MB; at the end V8 heap ${mb(memory.heapUsed)}, Buffers ${mb(memory.arrayBuffers)}`,
    );
    console.log(`p50 last interval / first steady interval: ${drift.toFixed(2)}`);
    console.log(
      `ledger: integrity ${ledger.integrity}, scans ${ledger.scans}, charged ${ledger.charged}, holds ${ledger.reservations}, orphans ${ledger.orphanFiles.length}, temp ${ledger.tempFiles.length}`,
    );

    const problems = [
      ...bad.slice(0, 20),
      ...(ledger.integrity !== 'ok' || ledger.scans !== ok || ledger.charged !== ok ? [`ledger does not match ${ok} analysed uploads`] : []),
      ...(ledger.reservations + ledger.orphanFiles.length + ledger.tempFiles.length + ledger.scansMissingFiles.length > 0 ? ['leftovers in the data dir'] : []),
      ...(growth > 64 ? [`server RSS grew ${growth.toFixed(0)} MB after warm-up`] : []),
      ...(drift > 1.5 ? [`p50 drifted up ${drift.toFixed(2)}×`] : []),
    ];
    for (const p of problems) console.log(`FAIL ${p}`);
    failed = problems.length > 0;
    if (!failed) console.log('OK');
  } finally {
    await stopBenchServer(server.child);
    await rm(dataDir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

await main();
