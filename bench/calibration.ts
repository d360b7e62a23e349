/**
 * What a shop calibration from the Settings screen costs the running server: the job's time per
 * photo, the process's resident memory before, at its peak and after (the served models, the
 * reader the job loads, and the calibrated models swapped in), and how long the event loop (every
 * HTTP request of the server) had to wait meanwhile.
 *
 *   npx tsx bench/calibration.ts [--photos 200] [--long-side 4000]
 *
 * A real core on the shipped models in a temp data folder; `--photos` held-out renders
 * (test/fixtures) scanned through the service on a pro account, each photo first scaled to
 * `--long-side` px as a JPEG q90 (0: as rendered, ~500 px), with a gauge reading of
 * 1.3 × the truth + 0.4 mm so the calibration is kept and swapped in. Prints figures; asserts nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { testConfig } from '../test/support/config.js';
import { createCore } from '../src/core/core.js';
import { createLogger } from '../src/core/logger.js';
import { parseCli } from '../src/core/cli/args.js';
import { heldoutLabels } from '../test/analysis/helpers.js';
import { issueTestCode, makeTestLicenseKeys } from '../test/support/licenses.js';
import { watched } from './watch.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const USAGE = 'usage: npx tsx bench/calibration.ts [--photos N] [--long-side PX]';
const { values } = parseCli('bench/calibration', USAGE, { photos: { type: 'string' }, 'long-side': { type: 'string' } });
const photos = Number(values.photos ?? 200);
const longSide = Number(values['long-side'] ?? 4000);
const mb = (bytes: number) => `${Math.round(bytes / 1048576)} MB`;

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-bench-cal-'));
const keys = makeTestLicenseKeys();
const config = testConfig(dataDir, keys.publicKeyPem, {}, ROOT);
const core = await createCore(config, { logger: createLogger({ level: 'silent' }) });
try {
  const registered = await core.services.auth.register('bench@example.com', 'correct horse battery', '127.0.0.1');
  const { account } = await core.services.licenses.redeem(registered.id, issueTestCode(keys, { kind: 'pro', expiresAt: '2099-01-01T00:00:00Z' }));
  const caller = { kind: 'account' as const, account, via: 'session' as const, apiKeyId: null, ip: '127.0.0.1' };
  const tires = heldoutLabels()
    .filter((l) => l.depthMm !== null)
    .slice(0, photos);
  process.stderr.write(`scanning ${tires.length} photos (${longSide ? `${longSide} px JPEG` : 'as rendered'}) with ${core.analyzer.modelVersion}…\n`);
  for (const tire of tires) {
    const source = readFileSync(tire.file);
    const image = longSide ? await sharp(source).resize({ width: longSide, height: longSide, fit: 'inside' }).jpeg({ quality: 90 }).toBuffer() : source;
    const { body } = await core.services.scans.analyze({
      caller,
      image,
      verbose: false,
      vehicle: null,
      position: null,
      idempotencyKey: null,
      receivedAt: Date.now(),
    });
    await core.services.scans.setMeasurement(caller, body.data.scanId, Math.round((1.3 * tire.depthMm! + 0.4) * 10) / 10);
  }

  const {
    ms,
    rssBefore: before,
    rssPeak: peak,
    loop,
  } = await watched(async () => {
    await core.calibration.start(account.id);
    await core.calibration.idle();
  }, 10);
  await new Promise((resolve) => setTimeout(resolve, 200));
  global.gc?.();
  const after = process.memoryUsage().rss;
  const { job, modelVersion } = await core.calibration.status(account.id);
  if (job?.state === 'running' || !job) throw new Error('the job did not finish');

  const lines = [
    `shop calibration, ${tires.length} photos (${longSide ? `${longSide} px JPEG q90` : 'as rendered'}), ${os.cpus().length} cores, node ${process.version}`,
    `  outcome            ${job.state}: ${job.message}`,
    `  now serving        ${modelVersion}`,
    `  job                ${(ms / 1000).toFixed(1)} s, ${(ms / tires.length).toFixed(1)} ms per photo`,
    `  RSS                before ${mb(before)}, peak ${mb(peak)} (+${mb(peak - before)}), after ${mb(after)}`,
    `  event-loop delay   p50 ${(loop.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms (each includes the 10 ms sampling interval)`,
  ];
  if (job.fit)
    lines.push(
      `  cross-validated    MAE ${job.fit.before.mae.toFixed(2)} → ${job.fit.after.mae.toFixed(2)} mm, 80 % interval ${(100 * job.fit.before.coverage).toFixed(1)} → ${(100 * job.fit.after.coverage).toFixed(1)} %`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await core.close();
  await rm(dataDir, { recursive: true, force: true });
}
