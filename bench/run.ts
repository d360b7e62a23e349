/**
 * `npm run bench`: end-to-end latency and throughput of POST /api/v1/analyze for a 12 MP
 * JPEG, a 1 MP PNG and a 3 MP WebP at concurrency 1, 4 and 16, the server's peak RSS and
 * CPU, and the same images through the scan service in-process, so the HTTP overhead is a
 * ratio measured in one run. Prints a table, writes bench/results.json.
 *
 *   npm run bench -- [--analyzer auto|onnx|decode-only] [--scale 1] [--out bench/results.json]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { defaultConfig } from '../src/core/config.js';
import { createCore } from '../src/core/core.js';
import { inspectImage } from '../src/core/images/inspect.js';
import { generateLicenseKeyPair, issueLicenseCode } from '../src/core/licensing/codes.js';
import { createLogger } from '../src/core/logger.js';
import { setUpAccount } from './account.js';
import { startBenchServer, stopBenchServer } from './child.js';
import { loadBenchAnalyzer, type AnalyzerMode, type BenchAnalyzer } from './analyzer.js';
import { benchImages, type BenchImage } from './images.js';
import { closedLoop, multipartBody, percentile, post, summarise, type CellStats } from './load.js';
import { machine } from './machine.js';
import { watchProcess, type Usage } from './proc.js';
import { printReport, type Cell, type Report } from './report.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CONCURRENCY = [1, 4, 16];

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const requestsFor = (concurrency: number, scale: number) => Math.round(Math.max(24, concurrency * 6) * scale);

function proCode(privateKeyPem: string): string {
  return issueLicenseCode(
    { v: 1, id: `bench-${Date.now()}`, kind: 'pro', expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    privateKeyPem,
  );
}

/** Every image at every concurrency against the server process. */
async function overHttp(images: BenchImage[], bench: BenchAnalyzer, keys: { publicKeyPem: string; privateKeyPem: string }, scale: number) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-bench-http-'));
  const { child, url } = await startBenchServer({
    dataDir,
    modelsDir: path.join(ROOT, 'models'),
    licensePublicKeyPem: keys.publicKeyPem,
    analyzer: bench.mode,
    logFile: path.join(dataDir, 'server.log'),
  });
  const cells = new Map<string, { stats: CellStats; usage: Usage }>();
  let idleRssMb = NaN;
  try {
    const apiKey = await setUpAccount(url, proCode(keys.privateKeyPem));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const target = new URL('/api/v1/analyze', url);
    idleRssMb = watchProcess(child.pid!).stop().peakRssMb;
    for (const image of images) {
      const { body, contentType } = multipartBody(image.data, `tire.${image.mime.split('/')[1]}`, image.mime);
      const send = async () => {
        const res = await post(agent, target, body, { 'content-type': contentType, 'x-api-key': apiKey });
        if (res.status !== 200 && res.status !== 503) throw new Error(`${image.name}: ${res.status} ${res.text}`);
        return res.status;
      };
      await closedLoop(2, 4, send);
      for (const concurrency of CONCURRENCY) {
        const watch = watchProcess(child.pid!);
        const run = await closedLoop(concurrency, requestsFor(concurrency, scale), send);
        cells.set(`${image.name}@${concurrency}`, { stats: summarise(run.samples, run.wallMs), usage: watch.stop() });
        process.stderr.write(`  http ${image.name} c=${concurrency}: p50 ${percentile(run.samples.map((s) => s.ms).sort((a, b) => a - b), 50).toFixed(1)} ms\n`);
      }
    }
    agent.destroy();
  } finally {
    await stopBenchServer(child);
    await rm(dataDir, { recursive: true, force: true });
  }
  return { cells, idleRssMb };
}

/** The same work without HTTP: the scan service (validate, meter, analyze, store), plus its two big parts alone. */
async function inProcess(images: BenchImage[], bench: BenchAnalyzer, keys: { publicKeyPem: string; privateKeyPem: string }, scale: number) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-bench-core-'));
  const config = { ...defaultConfig(), dataDir, imagesDir: path.join(dataDir, 'images'), rendererDir: null, licensePublicKeyPem: keys.publicKeyPem };
  const core = await createCore(config, { analyzer: bench.analyzer, logger: createLogger({ level: 'silent' }) });
  const cells = new Map<string, CellStats>();
  const parts = new Map<string, { inspectMs: number; analyzerMs: number }>();
  try {
    const { services } = core;
    const account = await services.auth.register(`bench-${Date.now()}@example.com`, 'bench password 1');
    await services.licenses.redeem(account.id, proCode(keys.privateKeyPem));
    const { token } = await services.auth.login(account.email, 'bench password 1', '127.0.0.1');
    const caller = await services.auth.authenticateSession(token, '127.0.0.1');
    for (const image of images) {
      const analyze = async () => {
        const res = await services.scans.analyze({
          caller, image: image.data, verbose: false, vehicle: null, position: null, idempotencyKey: null, receivedAt: Date.now(),
        });
        return res.status;
      };
      await closedLoop(2, 4, analyze);
      for (const concurrency of CONCURRENCY) {
        const run = await closedLoop(concurrency, requestsFor(concurrency, scale), analyze);
        cells.set(`${image.name}@${concurrency}`, summarise(run.samples, run.wallMs));
      }
      const timed = async (fn: () => Promise<unknown>) => {
        const run = await closedLoop(1, Math.round(12 * scale), async () => (await fn(), 200));
        return summarise(run.samples, run.wallMs).p50;
      };
      parts.set(image.name, {
        inspectMs: await timed(() => inspectImage(image.data)),
        analyzerMs: await timed(() => core.analyzer.analyze({ image: image.data, verbose: false })),
      });
    }
  } finally {
    await core.close(); // closes the analyzer too
    await rm(dataDir, { recursive: true, force: true });
  }
  return { cells, parts };
}

async function main(): Promise<void> {
  const mode = arg('analyzer', 'auto') as AnalyzerMode;
  const scale = Number(arg('scale', '1'));
  const out = path.resolve(arg('out', path.join(ROOT, 'bench', 'results.json')));

  process.stderr.write('generating images…\n');
  const images = await benchImages();
  const keys = generateLicenseKeyPair();
  const bench = await loadBenchAnalyzer(mode, path.join(ROOT, 'models'));
  if (bench.fallbackReason) process.stderr.write(`!! no loadable models (${bench.fallbackReason}): measuring decode-only\n`);

  process.stderr.write('in-process…\n');
  const local = await inProcess(images, bench, keys, scale);
  process.stderr.write('over HTTP (server in a child process)…\n');
  const remote = await overHttp(images, bench, keys, scale);

  const cells: Cell[] = images.flatMap((image) =>
    CONCURRENCY.map((concurrency) => {
      const key = `${image.name}@${concurrency}`;
      return { image: image.name, concurrency, http: remote.cells.get(key)!.stats, server: remote.cells.get(key)!.usage, inProcess: local.cells.get(key)! };
    }),
  );
  const report: Report = {
    date: new Date().toISOString(),
    machine: machine(),
    analyzer: bench.mode,
    modelVersion: bench.analyzer.modelVersion,
    ...(bench.fallbackReason ? { fallbackReason: bench.fallbackReason } : {}),
    images: images.map((i) => ({ name: i.name, width: i.width, height: i.height, bytes: i.data.length, ...local.parts.get(i.name)! })),
    idleRssMb: remote.idleRssMb,
    cells,
  };
  printReport(report);
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  process.stderr.write(`wrote ${path.relative(process.cwd(), out)}\n`);
}

await main();
