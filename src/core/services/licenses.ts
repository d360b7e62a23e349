/** Redeeming signed license codes (SPEC §4) against the one trusted public key. */
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
      if (expiresAt) {
        // a code that would end before the pro the account already has adds nothing: refuse it
        // unused (redeeming would burn it), so it can still go to another account
        const current = (await store.accounts.findById(accountId))?.proExpiresAt ?? null;
        if (current && current.getTime() >= expiresAt.getTime()) {
          throw new AppError(
            'CONFLICT',
            `Your pro plan already runs until ${current.toISOString().slice(0, 10)}, past this license's end ` +
              `(${expiresAt.toISOString().slice(0, 10)}): it would add nothing, so it was not used. Keep it for another account.`,
          );
        }
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
