/**
 * `npm run bench`: end-to-end latency and throughput of POST /api/v1/analyze for a 12 MP
 * JPEG, a 1 MP PNG and a 3 MP WebP at concurrency 1, 4 and 16, the server's peak RSS and
 * CPU, and the same images through the scan service in-process, so the HTTP overhead is a
 * ratio measured in one run. Prints a table, writes bench/results.json.
 *
 *   npm run bench -- [--analyzer auto|onnx|decode-only] [--scale 1] [--out bench/results.json]
 *                    [--server-env UV_THREADPOOL_SIZE=8,MALLOC_ARENA_MAX=]   (added to the server's environment;
 *                     an empty value removes a variable)
 *                    [--models DIR]   (another model folder, for comparing two versions)
 * The server starts with the glibc tunables `npm run serve` sets on Linux (scripts/malloc-env.mjs).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { defaultConfig } from '../src/core/config.js';
import { createCore } from '../src/core/core.js';
import { inspectImage } from '../src/core/images/inspect.js';
import { generateLicenseKeyPair } from '../src/core/licensing/codes.js';
import { createLogger } from '../src/core/logger.js';
import { setUpAccount } from './account.js';
import { startBenchServer, stopBenchServer } from './child.js';
import { loadBenchAnalyzer, type AnalyzerMode, type BenchAnalyzer } from './analyzer.js';
import { benchImages, type BenchImage } from './images.js';
import { closedLoop, multipartBody, post, summarise, type CellStats, type Sample } from './load.js';
import { machine } from './machine.js';
import { watchProcess, type Usage } from './proc.js';
import { printReport, type Cell, type Report } from './report.js';
import { SERVER_MALLOC_ENV } from '../scripts/malloc-env.mjs';
import { arg, checkFlags, proCode } from './cli.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CONCURRENCY = [1, 4, 16];

const requestsFor = (concurrency: number, scale: number) => Math.round(Math.max(24, concurrency * 6) * scale);

interface Keys {
  publicKeyPem: string;
  privateKeyPem: string;
}

/** One cell's figures from one side. */
interface Measured {
  stats: CellStats;
  /** CPU milliseconds per successful scan, of the server process (HTTP) or of this process (in-process). */
  cpuMsPerScan: number;
}

function measured(run: { samples: Sample[]; wallMs: number }, cpuMs: number): Measured {
  const stats = summarise(run.samples, run.wallMs);
  return { stats, cpuMsPerScan: cpuMs / Math.max(1, stats.ok) };
}

/** The server in a child process, a pro API key on it, and a keep-alive client. */
async function httpSide(bench: BenchAnalyzer, keys: Keys, env: Record<string, string>, modelsDir: string) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-bench-http-'));
  const { child, url } = await startBenchServer(
    {
      dataDir,
      modelsDir,
      licensePublicKeyPem: keys.publicKeyPem,
      analyzer: bench.mode,
      logFile: path.join(dataDir, 'server.log'),
    },
    env,
  );
  const apiKey = await setUpAccount(url, proCode(keys.privateKeyPem, 'bench'));
  const idleRssMb = watchProcess(child.pid!).stop().peakRssMb;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const target = new URL('/api/v1/analyze', url);
  const bodies = new Map<string, { body: Buffer; contentType: string }>();
  return {
    idleRssMb,
    async cell(image: BenchImage, concurrency: number, requests: number): Promise<Measured & { usage: Usage }> {
      if (!bodies.has(image.name)) bodies.set(image.name, multipartBody(image.data, `tire.${image.mime.split('/')[1]}`, image.mime));
      const { body, contentType } = bodies.get(image.name)!;
      const send = async () => {
        const res = await post(agent, target, body, { 'content-type': contentType, 'x-api-key': apiKey });
        if (res.status !== 200 && res.status !== 503) throw new Error(`${image.name}: ${res.status} ${res.text}`);
        return res.status;
      };
      const watch = watchProcess(child.pid!);
      const run = await closedLoop(concurrency, requests, send);
      const usage = watch.stop();
      return { ...measured(run, (usage.cpuPercent / 100) * run.wallMs), usage };
    },
    async close() {
      agent.destroy();
      await stopBenchServer(child);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The same work without HTTP: the scan service (validate, meter, analyze, store) in this process. */
async function inProcessSide(bench: BenchAnalyzer, keys: Keys) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-bench-core-'));
  const config = { ...defaultConfig(), dataDir, imagesDir: path.join(dataDir, 'images'), rendererDir: null, licensePublicKeyPem: keys.publicKeyPem };
  const core = await createCore(config, { analyzer: bench.analyzer, logger: createLogger({ level: 'silent' }) });
  const { services } = core;
  const account = await services.auth.register(`bench-${Date.now()}@example.com`, 'bench password 1', '127.0.0.1');
  await services.licenses.redeem(account.id, proCode(keys.privateKeyPem, 'bench'));
  const { token } = await services.auth.login(account.email, 'bench password 1', '127.0.0.1');
  const caller = await services.auth.authenticateSession(token, '127.0.0.1');
  const analyze = (image: BenchImage) => async () =>
    (await services.scans.analyze({ caller, image: image.data, verbose: false, vehicle: null, position: null, idempotencyKey: null, receivedAt: Date.now() }))
      .status;
  const p50 = async (fn: () => Promise<unknown>, runs: number) => {
    const run = await closedLoop(1, runs, async () => (await fn(), 200));
    return summarise(run.samples, run.wallMs).p50;
  };
  return {
    async cell(image: BenchImage, concurrency: number, requests: number): Promise<{ samples: Sample[]; wallMs: number; cpuMs: number }> {
      const cpu = process.cpuUsage();
      const run = await closedLoop(concurrency, requests, analyze(image));
      const used = process.cpuUsage(cpu);
      return { ...run, cpuMs: (used.user + used.system) / 1000 };
    },
    /** The two big parts alone: validation with its thumbnail, and the analyzer. */
    async parts(image: BenchImage, runs: number) {
      return {
        inspectMs: await p50(() => inspectImage(image.data), runs),
        analyzerMs: await p50(() => core.analyzer.analyze({ image: image.data, verbose: false }), runs),
      };
    },
    async close() {
      await core.close(); // closes the analyzer too
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  checkFlags(
    ['analyzer', 'scale', 'out', 'server-env', 'models'],
    'usage: npm run bench -- [--analyzer auto|onnx|decode-only] [--scale 1] [--out bench/results.json] [--server-env NAME=value,NAME=] [--models DIR]',
  );
  const mode = arg('analyzer', 'auto') as AnalyzerMode;
  if (!['auto', 'onnx', 'decode-only'].includes(mode)) throw new Error(`--analyzer must be auto, onnx or decode-only, not "${mode}"`);
  const scale = Number(arg('scale', '1'));
  if (!(scale > 0)) throw new Error(`--scale must be a number above 0, not "${arg('scale', '1')}"`);
  const out = path.resolve(arg('out', path.join(ROOT, 'bench', 'results.json')));

  process.stderr.write('generating images…\n');
  const images = await benchImages();
  const keys = generateLicenseKeyPair();
  const host = machine();
  const modelsDir = path.resolve(arg('models', path.join(ROOT, 'models')));
  const bench = await loadBenchAnalyzer(mode, modelsDir);
  if (bench.fallbackReason) process.stderr.write(`!! no loadable models (${bench.fallbackReason}): measuring decode-only\n`);

  const local = await inProcessSide(bench, keys);
  // what `npm run serve` starts the server with (a value in this process's environment is kept,
  // as the launcher keeps it), then --server-env (an empty value removes one)
  const serverEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(SERVER_MALLOC_ENV)) serverEnv[name] = process.env[name] ?? value;
  for (const pair of arg('server-env', '').split(',').filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new Error(`--server-env takes NAME=value pairs, not "${pair}"`);
    serverEnv[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const remote = await httpSide(bench, keys, serverEnv, modelsDir);
  const cells: Cell[] = [];
  const parts = new Map<string, { inspectMs: number; analyzerMs: number }>();
  try {
    for (const image of images) {
      await local.cell(image, 2, 4);
      await remote.cell(image, 2, 4);
      for (const concurrency of CONCURRENCY) {
        // In-process, HTTP, in-process: both sides see the same background load, drift cancels.
        const n = requestsFor(concurrency, scale);
        const before = await local.cell(image, concurrency, Math.ceil(n / 2));
        const overHttp = await remote.cell(image, concurrency, n);
        const after = await local.cell(image, concurrency, Math.ceil(n / 2));
        const inProcess = measured({ samples: [...before.samples, ...after.samples], wallMs: before.wallMs + after.wallMs }, before.cpuMs + after.cpuMs);
        cells.push({
          image: image.name,
          concurrency,
          http: overHttp.stats,
          server: overHttp.usage,
          inProcess: inProcess.stats,
          cpuMsPerScan: { http: overHttp.cpuMsPerScan, inProcess: inProcess.cpuMsPerScan },
        });
        process.stderr.write(
          `  ${image.name} c=${concurrency}: HTTP p50 ${overHttp.stats.p50.toFixed(1)} ms, in-process ${inProcess.stats.p50.toFixed(1)} ms\n`,
        );
      }
      parts.set(image.name, await local.parts(image, Math.round(12 * scale)));
    }
  } finally {
    await remote.close();
    await local.close();
  }
  const report: Report = {
    date: new Date().toISOString(),
    machine: host,
    analyzer: bench.mode,
    modelVersion: bench.analyzer.modelVersion,
    ...(bench.fallbackReason ? { fallbackReason: bench.fallbackReason } : {}),
    serverEnv,
    images: images.map((i) => ({ name: i.name, width: i.width, height: i.height, bytes: i.data.length, ...parts.get(i.name)! })),
    idleRssMb: remote.idleRssMb,
    cells,
  };
  printReport(report);
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  process.stderr.write(`wrote ${path.relative(process.cwd(), out)}\n`);
}

await main();
