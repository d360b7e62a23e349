/** Redeemed license codes: one row per code id, so a code credits an account once. */
import { AppError } from '../../errors.js';
import type { RedeemedLicense } from '../../types.js';
import type { LicenseStore } from '../store.js';
import { readAccount } from './accounts.js';
import { proAddsNothing } from '../../licensing/codes.js';
import { licenseFromRow, type LicenseRowOf } from '../record-rows.js';
import { type Db, immediate, isUniqueViolation, READ, run, toMs } from './db.js';

const toLicense = (row: LicenseRowOf<number>): RedeemedLicense => licenseFromRow(row, READ);

export function createLicenseStore(db: Db): LicenseStore {
  const insert = db.prepare('INSERT INTO licenses (code_id, account_id, kind, scans, expires_at, redeemed_at) VALUES (?, ?, ?, ?, ?, ?)');
  const addPack = db.prepare('UPDATE accounts SET pack_credit = pack_credit + ? WHERE id = ?');
  const extendPro = db.prepare('UPDATE accounts SET pro_expires_at = MAX(COALESCE(pro_expires_at, 0), ?) WHERE id = ?');
  const forAccount = db.prepare('SELECT * FROM licenses WHERE account_id = ? ORDER BY redeemed_at, code_id');

  return {
    redeem: (license) =>
      immediate(db, () => {
        if (readAccount(db, license.accountId) === null) throw new AppError('NOT_FOUND', 'Account not found');
        try {
          insert.run(license.codeId, license.accountId, license.kind, license.scans, toMs(license.expiresAt), toMs(license.redeemedAt));
        } catch (error) {
          if (isUniqueViolation(error)) {
            throw new AppError('LICENSE_ALREADY_REDEEMED', 'This license code has already been redeemed');
          }
          throw error;
        }
        if (license.kind === 'pack') {
          addPack.run(license.scans ?? 0, license.accountId);
        } else if (license.expiresAt !== null) {
          const current = readAccount(db, license.accountId)!.proExpiresAt;
          // thrown inside the transaction: the redemption just inserted is rolled back
          if (current && current.getTime() >= license.expiresAt.getTime()) throw proAddsNothing(current, license.expiresAt);
          extendPro.run(toMs(license.expiresAt), license.accountId);
        }
        return readAccount(db, license.accountId)!;
      }),
    listForAccount: (accountId) => run(() => (forAccount.all(accountId) as LicenseRowOf<number>[]).map(toLicense)),
  };
}
