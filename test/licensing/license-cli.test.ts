/**
 * `npm run license -- issue`: a flag it does not know, or one that does not apply to the kind, is
 * refused (exit 2 with the usage) rather than silently issuing another product; a bad value names
 * the flag and the form it takes; a key file that is not an Ed25519 private key says so.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadLicensePublicKey, verifyLicenseCode, type LicensePayload } from '../../src/core/licensing/codes.js';
import { runCli, type CliRun } from '../support/cli.js';
import { makeTestLicenseKeys } from '../support/licenses.js';

const keys = makeTestLicenseKeys();
const trusted = loadLicensePublicKey(keys.publicKeyPem);
let dir: string;
let privateFile: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tw-license-cli-'));
  privateFile = path.join(dir, 'license-private.pem');
  await writeFile(privateFile, keys.privateKeyPem, { mode: 0o600 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const license = (...args: string[]) => runCli('license', args, { timeoutMs: 20_000 });
const issue = (...args: string[]) => license('issue', '--key', privateFile, ...args);

function issued(run: CliRun): LicensePayload {
  expect(run.code, run.stderr).toBe(0);
  return verifyLicenseCode(run.stdout, trusted);
}

describe('license issue', () => {
  test('issues packs and pro codes; the id to record is said on stderr', async () => {
    const pack = await issue('--kind', 'pack', '--scans', '500', '--id', 'shop-17-pack-1');
    expect(issued(pack)).toEqual({ v: 1, id: 'shop-17-pack-1', kind: 'pack', scans: 500 });
    expect(pack.stderr).toMatch(/shop-17-pack-1/);
    expect(issued(await issue('--kind=pack'))).toMatchObject({ kind: 'pack', scans: 100 });
    expect(issued(await issue('--kind', 'pro', '--expires', '2099-06-30T12:00:00+02:00'))).toMatchObject({
      kind: 'pro',
      expiresAt: '2099-06-30T12:00:00+02:00',
    });
  });

  test('a plain date is the end of that UTC day', async () => {
    expect(issued(await issue('--kind', 'pro', '--expires', '2099-12-31'))).toMatchObject({ kind: 'pro', expiresAt: '2099-12-31T23:59:59Z' });
  });

  test('an unknown or misspelt flag is refused with the usage, exit 2 (not a pack of the default size)', async () => {
    for (const args of [
      ['--kind', 'pack', '--scan', '500'],
      ['--kind', 'pack', '--scans', '500', '--bonus', '1'],
      ['--kind', 'pack', 'extra'],
    ]) {
      const r = await issue(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/usage:/);
    }
    expect((await issue('--kind', 'pack', '--scan', '500')).stderr).toMatch(/'--scan'/);
  });

  test('a flag given twice is refused, not read as its last value (--kind pack --kind pro issuing pro)', async () => {
    for (const [args, flag] of [
      [['--kind', 'pack', '--kind', 'pro', '--expires', '2027-01-01'], '--kind'],
      [['--kind', 'pack', '--scans', '5', '--scans=500'], '--scans'],
    ] as const) {
      const r = await issue(...args);
      expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain(`${flag} is given twice; give it once`);
    }
  });

  test('a flag that does not apply to the kind is refused', async () => {
    const pack = await issue('--kind', 'pack', '--scans', '100', '--expires', '2099-12-31T00:00:00Z');
    expect(pack).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/--expires does not apply to a pack/) });
    const pro = await issue('--kind', 'pro', '--expires', '2099-12-31T00:00:00Z', '--scans', '100');
    expect(pro).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/--scans does not apply to pro/) });
  });

  test('a bad value names the flag and the form it takes, exit 2', async () => {
    for (const [args, reason] of [
      [['--kind', 'gold'], /--kind must be pack or pro, got "gold"/],
      [['--scans', '100'], /--kind is required/],
      [['--kind', 'pack', '--scans', 'abc'], /--scans must be a whole number from 1 to 100000, got "abc"/],
      [['--kind', 'pack', '--scans', '0'], /--scans must be a whole number from 1 to 100000/],
      [['--kind', 'pack', '--scans', '1.5'], /--scans must be a whole number/],
      [['--kind', 'pack', '--scans', '100001'], /--scans must be a whole number from 1 to 100000/],
      [['--kind', 'pro'], /--expires is required for pro/],
      [['--kind', 'pro', '--expires', 'next year'], /--expires must be an ISO 8601 date-time such as 2027-12-31T00:00:00Z .*or a date such as 2027-12-31/],
      [['--kind', 'pro', '--expires', '2027-12-31 00:00'], /--expires must be an ISO 8601 date-time/],
      [['--kind', 'pro', '--expires', '2099-02-30'], /--expires must be/],
      [['--kind', 'pro', '--expires', '2099-02-30T00:00:00Z'], /--expires must be/],
      [['--kind', 'pro', '--expires', '2001-01-01T00:00:00Z'], /--expires .* is in the past/],
      [['--kind', 'pack', '--id', 'shop 17'], /--id must be 1 to 64 visible ASCII characters/],
      [['--kind', 'pack', '--id', 'x'.repeat(65)], /--id must be 1 to 64/],
    ] as const) {
      const r = await issue(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr, args.join(' ')).toMatch(reason);
    }
  });

  test('a key file that is not an Ed25519 private key gets a clear message, exit 2', async () => {
    const publicFile = path.join(dir, 'license-public.pem');
    await writeFile(publicFile, keys.publicKeyPem);
    const rsaFile = path.join(dir, 'rsa.pem');
    await writeFile(rsaFile, generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const junk = path.join(dir, 'junk.txt');
    await writeFile(junk, 'hello');
    for (const [file, reason] of [
      [publicFile, /is a public key; sign with the private key/],
      [rsaFile, /holds a key of type rsa; license codes are signed with an Ed25519 private key/],
      [junk, /is not a PEM private key/],
      [path.join(dir, 'missing.pem'), /cannot read --key .*missing\.pem/],
    ] as const) {
      const r = await license('issue', '--key', file, '--kind', 'pack');
      expect(r.code, file).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(reason);
      expect(r.stderr).not.toMatch(/DECODER routines/);
    }
  });
});

describe('license keygen and commands', () => {
  test('keygen takes only --out; an unknown command is a usage mistake', async () => {
    expect(await license('keygen', '--out', path.join(dir, 'k'), '--force')).toMatchObject({ code: 2, stderr: expect.stringMatching(/'--force'/) });
    expect(await license('keygen')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--out DIR is required/) });
    expect(await license('sign')).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown command "sign"/) });
    expect(await license()).toMatchObject({ code: 2, stderr: expect.stringMatching(/usage:/) });
  });

  test('keygen never overwrites a key: neither the signing key nor a public key apps may trust', async () => {
    const out = path.join(dir, 'keys-public-only');
    await mkdir(out, { recursive: true });
    await writeFile(path.join(out, 'license-public.pem'), 'the key the app trusts');
    const r = await license('keygen', '--out', out);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/license-public\.pem exists; refusing to overwrite the public key/);
    expect(await readFile(path.join(out, 'license-public.pem'), 'utf8')).toBe('the key the app trusts');
    expect(existsSync(path.join(out, 'license-private.pem'))).toBe(false);
  });
});
