import { execFile } from 'node:child_process';
import { createPrivateKey, sign } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { loadLicensePublicKey, verifyLicenseCode } from '../../src/core/licensing/codes.js';
import { issueTestCode, makeTestLicenseKeys, type TestLicenseKeys } from '../support/licenses.js';

const keys = makeTestLicenseKeys();
const publicKey = loadLicensePublicKey(keys.publicKeyPem);

/** Sign arbitrary bytes, bypassing the issuer's own checks: what a key holder could still get wrong. */
function signRaw(payload: string, k: TestLicenseKeys = keys): string {
  const bytes = Buffer.from(payload);
  const signature = sign(null, bytes, createPrivateKey(k.privateKeyPem));
  return `TWL1.${bytes.toString('base64url')}.${signature.toString('base64url')}`;
}

function rejection(code: string): AppError {
  try {
    verifyLicenseCode(code, publicKey);
  } catch (error) {
    return error as AppError;
  }
  throw new Error(`accepted ${code}`);
}

describe('verifyLicenseCode', () => {
  test('accepts pack and pro codes signed by the trusted key', () => {
    expect(verifyLicenseCode(issueTestCode(keys, { kind: 'pack', id: 'p1' }), publicKey)).toEqual({
      v: 1,
      id: 'p1',
      kind: 'pack',
      scans: 100,
    });
    const pro = issueTestCode(keys, { kind: 'pro', id: 'x', expiresAt: '2027-12-31T00:00:00Z' });
    expect(verifyLicenseCode(`  ${pro}\n`, publicKey)).toMatchObject({ kind: 'pro', expiresAt: '2027-12-31T00:00:00Z' });
  });

  test('every kind of wrong code gets the same LICENSE_INVALID message', () => {
    const good = issueTestCode(keys, { kind: 'pack', id: 'tamper-me' });
    const [, payload, signature] = good.split('.') as [string, string, string];
    const tampered = Buffer.from(payload, 'base64url').toString().replace('100', '900');
    const wrongKey = issueTestCode(makeTestLicenseKeys(), { kind: 'pack' });
    const cases = [
      '',
      'hello',
      'TWL1.',
      'TWL1..',
      `TWL2.${payload}.${signature}`,
      `TWL1.${payload}`,
      `TWL1.${payload}.${signature}.extra`,
      `TWL1.${Buffer.from(tampered).toString('base64url')}.${signature}`,
      `TWL1.${payload}.${signature.slice(0, -2)}`,
      `TWL1.${payload}=.${signature}`,
      `TWL1.${payload}.${'A'.repeat(2000)}`,
      wrongKey,
      signRaw('{"v":2,"id":"a","kind":"pack","scans":100}'),
      signRaw('{"v":1,"id":"","kind":"pack","scans":100}'),
      signRaw(`{"v":1,"id":"${'a'.repeat(65)}","kind":"pack","scans":100}`),
      signRaw('{"v":1,"id":"a","kind":"pack","scans":0}'),
      signRaw('{"v":1,"id":"a","kind":"pack","scans":1.5}'),
      signRaw('{"v":1,"id":"a","kind":"pack","scans":100001}'),
      signRaw('{"v":1,"id":"a","kind":"pack","scans":"100"}'),
      signRaw('{"v":1,"id":"a","kind":"pack","scans":100,"bonus":1}'),
      signRaw('{"v":1,"id":"a","kind":"pro","expiresAt":"next year"}'),
      signRaw('{"v":1,"id":"a","kind":"pro","expiresAt":"2027-13-45T00:00:00Z"}'),
      signRaw('{"v":1,"id":"a","kind":"gold","scans":100}'),
      signRaw('[1,2,3]'),
      signRaw('not json'),
    ];
    const messages = new Set<string>();
    for (const code of cases) {
      const error = rejection(code);
      expect(error, code).toBeInstanceOf(AppError);
      expect(error.code, code).toBe('LICENSE_INVALID');
      messages.add(error.message);
    }
    expect(messages.size).toBe(1);
  });

  test('the trusted key must be Ed25519', () => {
    expect(() => loadLicensePublicKey('not a pem')).toThrow();
  });

  test('the signing (private) key is refused as the trusted key, though its public half could be derived from it', () => {
    expect(() => loadLicensePublicKey(keys.privateKeyPem)).toThrow(/holds a PRIVATE key/);
  });
});

describe('vendor tool', () => {
  const run = promisify(execFile);
  const tsx = path.resolve('node_modules/.bin/tsx');

  test('keygen writes a private key only its owner can read, and issue prints verifiable codes', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-vendor-'));
    try {
      await run(tsx, ['src/core/cli/license.ts', 'keygen', '--out', dir]);
      const privateFile = path.join(dir, 'license-private.pem');
      expect((await stat(privateFile)).mode & 0o777).toBe(0o600);
      const trusted = loadLicensePublicKey(await readFile(path.join(dir, 'license-public.pem'), 'utf8'));

      const pack = await run(tsx, ['src/core/cli/license.ts', 'issue', '--key', privateFile, '--kind', 'pack', '--scans', '250']);
      expect(verifyLicenseCode(pack.stdout, trusted)).toMatchObject({ kind: 'pack', scans: 250 });
      const pro = await run(tsx, [
        'src/core/cli/license.ts',
        'issue',
        '--key',
        privateFile,
        '--kind',
        'pro',
        '--expires',
        '2027-12-31T00:00:00Z',
        '--id',
        'shop-42-pro',
      ]);
      expect(verifyLicenseCode(pro.stdout, trusted)).toEqual({
        v: 1,
        id: 'shop-42-pro',
        kind: 'pro',
        expiresAt: '2027-12-31T00:00:00Z',
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
