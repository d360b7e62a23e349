/**
 * Many power cuts in a row: the bench's server process (the shipped models unless
 * --analyzer decode-only) is loaded with the bench's photos by a pro, a free-with-pack and an
 * anonymous caller, killed with SIGKILL at a random moment, audited, restarted on the same
 * data dir. Exit 1 when integrity_check fails, a charge and a scan disagree, a scan lacks its
 * files, or an acknowledged scan is gone after the restart. Leftovers a crash may leave
 * (holds that housekeeping expires, image files written before the commit) are reported.
 *
 *   npx tsx scripts/crash.ts [--rounds 30] [--workers 8] [--analyzer onnx|decode-only]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startBenchServer } from '../bench/child.js';
import { benchImages } from '../bench/images.js';
import { generateLicenseKeyPair, issueLicenseCode } from '../src/core/licensing/codes.js';
import { accountKey, auditDataDir, kill, loadAndKill, missingScans } from '../test/reliability/crash-cycle.js';
import { arg, checkFlags } from '../bench/cli.js';

const ROOT = path.resolve(import.meta.dirname, '..');

async function main(): Promise<void> {
  checkFlags(['rounds', 'workers', 'analyzer'], 'usage: npx tsx scripts/crash.ts [--rounds 30] [--workers 8] [--analyzer onnx|decode-only]');
  const rounds = Number(arg('rounds', '30'));
  const workers = Number(arg('workers', '8'));
  const analyzer = arg('analyzer', 'onnx') as 'onnx' | 'decode-only';
  const keys = generateLicenseKeyPair();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-crash-'));
  const start = () =>
    startBenchServer({
      dataDir,
      modelsDir: path.join(ROOT, 'models'),
      licensePublicKeyPem: keys.publicKeyPem,
      analyzer,
      logFile: path.join(dataDir, 'server.log'),
    });
  const license = (payload: { kind: 'pro'; expiresAt: string } | { kind: 'pack'; scans: number }) =>
    issueLicenseCode({ v: 1, id: `crash-${Math.random().toString(36).slice(2)}`, ...payload }, keys.privateKeyPem);
  const images = (await benchImages()).map((i) => i.data);
  const received = new Set<string>();
  const problems: string[] = [];
  let apiKeys: string[] = [];
  try {
    for (let round = 1; round <= rounds && problems.length === 0; round++) {
      const server = await start();
      if (round === 1) {
        apiKeys = [
          await accountKey(server.url, license({ kind: 'pro', expiresAt: '2099-01-01T00:00:00Z' })),
          await accountKey(server.url, license({ kind: 'pack', scans: 1000 })),
        ];
      }
      const lost = await missingScans(server.url, received, apiKeys);
      if (lost.length) problems.push(`round ${round}: ${lost.length} acknowledged scans gone after the restart`);
      await loadAndKill({
        server,
        callers: [{ 'x-api-key': apiKeys[0]! }, { 'x-api-key': apiKeys[1]! }, {}],
        images,
        workers,
        successes: 1 + Math.floor(Math.random() * 12),
        received,
      });
      const l = await auditDataDir(dataDir);
      console.log(
        `round ${String(round).padStart(3)}: ${l.scans} scans, ${l.charged} charged, integrity ${l.integrity}; ` +
          `left by crashes: ${l.reservations} holds, ${l.orphanFiles.length} unreferenced files, ${l.tempFiles.length} temp files`,
      );
      if (l.integrity !== 'ok') problems.push(`round ${round}: integrity_check ${l.integrity}`);
      if (l.charged !== l.scans) problems.push(`round ${round}: ${l.charged} charged but ${l.scans} scans`);
      if (l.scansMissingFiles.length) problems.push(`round ${round}: ${l.scansMissingFiles.length} scans without their files`);
    }
    const last = await start();
    const lost = await missingScans(last.url, received, apiKeys);
    if (lost.length) problems.push(`after the last restart: ${lost.length} acknowledged scans gone`);
    await kill(last.child);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  for (const p of problems) console.log(`FAIL ${p}`);
  console.log(problems.length ? 'FAILED' : `OK: ${received.size} acknowledged scans all survived ${rounds} kills`);
  process.exit(problems.length ? 1 : 0);
}

await main();
