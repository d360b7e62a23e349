/**
 * The long fuzz run: many thousands of hostile uploads over real HTTP against the server
 * in a child process (the shipped models unless --analyzer decode-only), its RSS sampled
 * from /proc along the way. Fails (exit 1) on any answer outside the envelope or docs/API.md §3, on a
 * request not answered within its bound (--answer-within seconds), on a charge or stored scan that
 * does not match a 200, on leftovers, or on memory that keeps growing after warm-up. Prints what
 * was tried, what held (answered in time, as documented) and what broke.
 *
 *   npx tsx scripts/fuzz.ts [--cases 20000] [--parallel 8] [--seed 1] [--analyzer onnx|decode-only] [--answer-within 30]
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { memoryOf, startProServer, stopBenchServer } from '../bench/child.js';
import { growthMb, rssOf } from '../bench/proc.js';
import { SQLITE_FILE_NAME } from '../src/core/storage/index.js';
import { fuzzCases, seedImages } from '../test/reliability/corpus.js';
import { ANSWER_WITHIN_MS, runFuzz } from '../test/reliability/fuzz-runner.js';
import { readLedger } from '../test/reliability/ledger.js';
import { arg, checkFlags } from '../bench/cli.js';

async function main(): Promise<void> {
  checkFlags(
    ['cases', 'parallel', 'seed', 'analyzer', 'answer-within'],
    'usage: npx tsx scripts/fuzz.ts [--cases 20000] [--parallel 8] [--seed 1] [--analyzer onnx|decode-only] [--answer-within 30]',
  );
  const answerWithinMs = Number(arg('answer-within', String(ANSWER_WITHIN_MS / 1000))) * 1000;
  const cases = Number(arg('cases', '20000'));
  const parallel = Number(arg('parallel', '8'));
  const seed = Number(arg('seed', '1'));
  const analyzer = arg('analyzer', 'onnx') as 'onnx' | 'decode-only';
  const { server, dataDir, apiKey } = await startProServer('fuzz', analyzer);
  let failed = false;
  try {
    const started = Date.now();
    const outcome = await runFuzz({
      baseUrl: server.url,
      apiKey,
      cases: fuzzCases(await seedImages(), cases, seed),
      parallel,
      sampleRss: () => rssOf(server.child.pid!),
      sampleEvery: Math.max(50, Math.floor(cases / 200)),
      answerWithinMs,
      onProgress: (done) => {
        if (done % 1000 === 0) process.stderr.write(`  ${done}/${cases}, server RSS ${(rssOf(server.child.pid!) / 2 ** 20).toFixed(0)} MB\n`);
      },
    });
    const seconds = (Date.now() - started) / 1000;
    const ok = outcome.statuses.get(200) ?? 0;
    const memory = await memoryOf(server.child);
    await stopBenchServer(server.child);
    const ledger = await readLedger(path.join(dataDir, SQLITE_FILE_NAME), path.join(dataDir, 'images'));
    const growth = growthMb(outcome.rss);
    const mb = outcome.rss.map((r) => Math.round(r / 2 ** 20));

    console.log(`${cases} cases in ${seconds.toFixed(0)} s (${(cases / seconds).toFixed(0)}/s), analyzer ${analyzer}, seed ${seed}`);
    console.log(
      `statuses: ${[...outcome.statuses]
        .sort()
        .map(([s, n]) => `${s}×${n}`)
        .join(' ')}`,
    );
    const broke = outcome.bad.length;
    console.log(
      `tried ${cases}, held ${cases - broke}, broke ${broke} (unanswered within ${answerWithinMs / 1000} s: ${outcome.unanswered}); ` +
        `slowest answer ${(outcome.slowestMs / 1000).toFixed(2)} s`,
    );
    console.log(
      `server RSS MB: first ${mb[0]}, min ${Math.min(...mb)}, max ${Math.max(...mb)}, last ${mb.at(-1)}; growth after warm-up ${growth.toFixed(1)} MB`,
    );
    const m = (v: number) => `${(v / 2 ** 20).toFixed(0)} MB`;
    console.log(
      `server at the end: V8 heap ${m(memory.heapUsed)} of ${m(memory.heapTotal)}, Buffers ${m(memory.arrayBuffers)}, external ${m(memory.external)}, RSS ${m(memory.rss)}`,
    );
    console.log(
      `ledger: integrity ${ledger.integrity}, scans ${ledger.scans}, charged ${ledger.charged}, holds ${ledger.reservations}, ` +
        `missing files ${ledger.scansMissingFiles.length}, orphans ${ledger.orphanFiles.length}, temp files ${ledger.tempFiles.length}`,
    );

    const problems = [
      ...outcome.bad.slice(0, 20),
      ...(ledger.integrity !== 'ok' ? [`integrity_check: ${ledger.integrity}`] : []),
      ...(ledger.scans !== ok || ledger.charged !== ok ? [`${ok} answers 200 but ${ledger.scans} scans stored and ${ledger.charged} charged`] : []),
      ...(ledger.reservations + ledger.scansMissingFiles.length + ledger.orphanFiles.length + ledger.tempFiles.length > 0 ? ['leftovers in the data dir'] : []),
      ...(growth > 64 ? [`server RSS grew ${growth.toFixed(0)} MB after warm-up`] : []),
    ];
    if (outcome.bad.length > 20) problems.push(`… and ${outcome.bad.length - 20} more bad answers`);
    for (const p of problems) console.log(`FAIL ${p}`);
    failed = problems.length > 0;
    if (!failed) console.log('OK');
  } finally {
    if (server.child.exitCode === null) await stopBenchServer(server.child);
    await rm(dataDir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

await main();
