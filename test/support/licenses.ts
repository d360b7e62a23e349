/** License key pairs and codes for tests: never the vendor's key. */
import { generateLicenseKeyPair, issueLicenseCode, type LicensePayload } from '../../src/core/licensing/codes.js';
import { randomBytes } from 'node:crypto';

export interface TestLicenseKeys {
  publicKeyPem: string;
  privateKeyPem: string;
}

export function makeTestLicenseKeys(): TestLicenseKeys {
  return generateLicenseKeyPair();
}

export type TestLicense = { kind: 'pack'; scans?: number; id?: string } | { kind: 'pro'; expiresAt: string | Date; id?: string };

/** A signed code; the id is random unless given, so each call is a new redeemable license. */
export function issueTestCode(keys: TestLicenseKeys, license: TestLicense = { kind: 'pack' }): string {
  const id = license.id ?? `test-${randomBytes(8).toString('hex')}`;
  const payload: LicensePayload =
    license.kind === 'pack'
      ? { v: 1, id, kind: 'pack', scans: license.scans ?? 100 }
      : {
          v: 1,
          id,
          kind: 'pro',
          expiresAt: license.expiresAt instanceof Date ? license.expiresAt.toISOString() : license.expiresAt,
        };
  return issueLicenseCode(payload, keys.privateKeyPem);
}
