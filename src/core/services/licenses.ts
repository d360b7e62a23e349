/** Redeeming signed license codes (docs/API.md §4) against the one trusted public key. */
import type { KeyObject } from 'node:crypto';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { verifyLicenseCode } from '../licensing/codes.js';
import type { Store } from '../storage/store.js';
import type { LicenseService } from './ports.js';

export function createLicenseService(deps: { store: Store; clock: Clock; publicKey: KeyObject }): LicenseService {
  const { store, clock, publicKey } = deps;
  return {
    async redeem(accountId, code) {
      const payload = verifyLicenseCode(code, publicKey);
      const now = clock.now();
      const expiresAt = payload.kind === 'pro' ? new Date(payload.expiresAt) : null;
      if (expiresAt && expiresAt.getTime() <= now.getTime()) {
        throw new AppError('LICENSE_EXPIRED', `This pro license expired on ${expiresAt.toISOString().slice(0, 10)}.`);
      }
      const license = {
        codeId: payload.id,
        accountId,
        kind: payload.kind,
        scans: payload.kind === 'pack' ? payload.scans : null,
        expiresAt,
        redeemedAt: now,
      };
      const account = await store.licenses.redeem(license);
      return { license, account };
    },
  };
}
