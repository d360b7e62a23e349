/**
 * A real full disk and a real read-only disk (Linux, root: mounts a small tmpfs as the data
 * folder). Uploads until the disk is full, then checks every answer was 200 or 503
 * STORAGE_UNAVAILABLE, that the database is sound with charges matching scans and no file
 * half-written; restarts on the folder remounted read-only (a clear refusal, not a hang), then
 * grows the disk and checks that scanning resumes. Exit 1 on any failure.
 *
 *   sudo npx tsx scripts/disk-full.ts [--size-mb 6] [--analyzer decode-only|onnx]
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setUpAccount } from '../bench/account.js';
import { startBenchServer, stopBenchServer } from '../bench/child.js';
import { benchImages } from '../bench/images.js';
import { multipartBody, post } from '../bench/load.js';
import { generateLicenseKeyPair } from '../src/core/licensing/codes.js';
import { SQLITE_FILE_NAME } from '../src/core/storage/index.js';
import { readLedger } from '../test/reliability/ledger.js';
import { arg, checkFlags, proCode } from '../bench/cli.js';

const ROOT = path.resolve(import.meta.dirname, '..');

const mount = (...args: string[]) => execFileSync('mount', args, { stdio: 'inherit' });

async function main(): Promise<void> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    console.log('skipped: needs Linux and root to mount a tmpfs');
    return;
  }
  checkFlags(['size-mb', 'analyzer'], 'usage: sudo npx tsx scripts/disk-full.ts [--size-mb 6] [--analyzer decode-only|onnx]');
  const sizeMb = Number(arg('size-mb', '6'));
  const analyzer = arg('analyzer', 'decode-only') as 'onnx' | 'decode-only';
  const mountPoint = await mkdtemp(path.join(os.tmpdir(), 'tirewear-disk-'));
  mount('-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', mountPoint);
  const dataDir = path.join(mountPoint, 'data');
  const keys = generateLicenseKeyPair();
  const problems: string[] = [];
  const serverOptions = {
    dataDir,
    modelsDir: path.join(ROOT, 'models'),
    licensePublicKeyPem: keys.publicKeyPem,
    analyzer,
    logFile: path.join(os.tmpdir(), `tirewear-disk-full-${process.pid}.log`),
  };
  let server = await startBenchServer(serverOptions);
  try {
    const code = proCode(keys.privateKeyPem, 'disk');
    const apiKey = await setUpAccount(server.url, code);
    const agent = new http.Agent({ keepAlive: true });
    let target = new URL('/api/v1/analyze', server.url);
    const [, png] = await benchImages();
    const { body, contentType } = multipartBody(png!.data, 'tire.png', png!.mime);
    const upload = () => post(agent, target, body, { 'content-type': contentType, 'x-api-key': apiKey });
    const check = (phase: string, answer: { status: number; text: string }, allowed: number[]) => {
      const parsed = JSON.parse(answer.text) as { error?: { code: string } };
      const fine = allowed.includes(answer.status) && (answer.status === 200 || parsed.error?.code === 'STORAGE_UNAVAILABLE');
      if (!fine) problems.push(`${phase}: ${answer.status} ${answer.text.slice(0, 160)}`);
      return answer.status;
    };

    let ok = 0;
    let full = 0;
    for (let i = 0; i < 40 && full < 5; i++) {
      const status = check('filling', await upload(), [200, 503]);
      if (status === 200) ok++;
      else full++;
    }
    console.log(`filling a ${sizeMb} MB disk: ${ok} scans stored, then ${full}× 503 STORAGE_UNAVAILABLE`);
    if (full === 0) problems.push('the disk never filled up');

    // Linux refuses to remount a file system read-only while files on it are open for writing,
    // so the read-only case is a start on a read-only data folder: it must fail with a reason, not hang.
    await stopBenchServer(server.child);
    mount('-o', 'remount,ro', mountPoint);
    const readOnly = await startBenchServer(serverOptions).then(
      async (s) => {
        await stopBenchServer(s.child);
        return 'started';
      },
      (error: Error) => `refused: ${error.message}`,
    );
    console.log(`start on a read-only data folder: ${readOnly}`);

    mount('-o', `remount,rw,size=${sizeMb * 4}m`, mountPoint);
    server = await startBenchServer(serverOptions);
    target = new URL('/api/v1/analyze', server.url);
    const resumed = check('after freeing space', await upload(), [200]);
    if (resumed === 200) ok++;
    console.log(`disk grown, server restarted: upload answered ${resumed}`);
    agent.destroy();

    await stopBenchServer(server.child);
    const ledger = await readLedger(path.join(dataDir, SQLITE_FILE_NAME), path.join(dataDir, 'images'));
    console.log(
      `ledger: integrity ${ledger.integrity}, scans ${ledger.scans}, charged ${ledger.charged}, holds ${ledger.reservations}, ` +
        `missing files ${ledger.scansMissingFiles.length}, orphans ${ledger.orphanFiles.length}, temp ${ledger.tempFiles.length}`,
    );
    if (ledger.integrity !== 'ok' || ledger.scans !== ok || ledger.charged !== ok) problems.push(`ledger does not match ${ok} stored scans`);
    if (ledger.scansMissingFiles.length + ledger.tempFiles.length + ledger.orphanFiles.length > 0) problems.push('files half-written or left behind');
    // Holds whose release also failed on the full or read-only disk expire with housekeeping.
    if (ledger.reservations > full + 1) problems.push(`${ledger.reservations} holds left`);
  } finally {
    await stopBenchServer(server.child);
    execFileSync('umount', [mountPoint]);
    await rm(mountPoint, { recursive: true, force: true });
  }
  for (const p of problems) console.log(`FAIL ${p}`);
  console.log(problems.length ? 'FAILED' : 'OK');
  process.exit(problems.length ? 1 : 0);
}

await main();
