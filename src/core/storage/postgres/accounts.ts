/** Accounts, sessions, API keys and license redemptions on PostgreSQL. */
import { AppError } from '../../errors.js';
import type { Account, AccountWithSecret, ApiKeyRecord, RedeemedLicense, Session } from '../../types.js';
import type { AccountStore, ApiKeyStore, LicenseStore, SessionStore } from '../store.js';
import {
  accountFromRow,
  apiKeyFromRow,
  licenseFromRow,
  sessionFromRow,
  type AccountRowOf,
  type ApiKeyRowOf,
  type LicenseRowOf,
  type SessionRowOf,
} from '../record-rows.js';
import { READ, type Db, type Queryable } from './db.js';
import { proAddsNothing } from '../../licensing/codes.js';

const UNIQUE_VIOLATION = '23505';

/** Emails are stored case-folded so uniqueness and lookup ignore case. */
function foldEmail(email: string): string {
  return email.trim().toLowerCase();
}

type AccountRow = AccountRowOf<Date>;

const toAccount = (row: AccountRow): Account => accountFromRow(row, READ);

/** Registration `first`'s lock (any 64-bit constant of ours; the migration lock is another). */
const FIRST_ACCOUNT_LOCK = 7_146_908_218;

async function insertAccount(
  db: Queryable,
  { id, email, passwordHash, createdAt }: { id: string; email: string; passwordHash: string; createdAt: Date },
): Promise<Account> {
  try {
    const [row] = await db.query<AccountRow>('INSERT INTO accounts (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4) RETURNING *', [
      id,
      foldEmail(email),
      passwordHash,
      createdAt,
    ]);
    return toAccount(row!);
  } catch (error) {
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) {
      throw new AppError('CONFLICT', 'An account with this email already exists');
    }
    throw error;
  }
}

export function accountStore(db: Db): AccountStore {
  return {
    create: (input) => insertAccount(db, input),
    createFirst(input) {
      return db.transaction(async (tx) => {
        // one registration at a time decides whether it is the first, on every instance
        await tx.query('SELECT pg_advisory_xact_lock($1)', [FIRST_ACCOUNT_LOCK]);
        if ((await tx.query('SELECT 1 FROM accounts LIMIT 1')).length > 0) return null;
        return insertAccount(tx, input);
      });
    },
    async findByEmail(email): Promise<AccountWithSecret | null> {
      const [row] = await db.query<AccountRow>('SELECT * FROM accounts WHERE email = $1', [foldEmail(email)]);
      return row ? { ...toAccount(row), passwordHash: row.password_hash } : null;
    },
    async findById(id) {
      const [row] = await db.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
      return row ? toAccount(row) : null;
    },
    async firstId() {
      const [row] = await db.query<{ id: string }>('SELECT id FROM accounts ORDER BY created_at, id COLLATE "C" LIMIT 1');
      return row?.id ?? null;
    },
  };
}

export function sessionStore(db: Db): SessionStore {
  return {
    async create(session: Session) {
      await db.query('INSERT INTO sessions (token_hash, account_id, created_at, expires_at) VALUES ($1, $2, $3, $4)', [
        session.tokenHash,
        session.accountId,
        session.createdAt,
        session.expiresAt,
      ]);
    },
    async find(tokenHash) {
      const [row] = await db.query<SessionRowOf<Date>>('SELECT * FROM sessions WHERE token_hash = $1', [tokenHash]);
      return row ? sessionFromRow(row, READ) : null;
    },
    async delete(tokenHash) {
      await db.query('DELETE FROM sessions WHERE token_hash = $1', [tokenHash]);
    },
    async deleteExpired(now) {
      const rows = await db.query('DELETE FROM sessions WHERE expires_at <= $1 RETURNING token_hash', [now]);
      return rows.length;
    },
  };
}

type ApiKeyRow = ApiKeyRowOf<Date>;

const toApiKey = (row: ApiKeyRow): ApiKeyRecord => apiKeyFromRow(row, READ);

export function apiKeyStore(db: Db): ApiKeyStore {
  return {
    async create(record) {
      await db.query(
        `INSERT INTO api_keys (id, account_id, name, prefix, hash, created_at, last_used_at, revoked_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [record.id, record.accountId, record.name, record.prefix, record.hash, record.createdAt, record.lastUsedAt, record.revokedAt],
      );
    },
    async findByHash(hash) {
      const [row] = await db.query<ApiKeyRow>('SELECT * FROM api_keys WHERE hash = $1', [hash]);
      return row ? toApiKey(row) : null;
    },
    async listForAccount(accountId) {
      const rows = await db.query<ApiKeyRow>(
        'SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id COLLATE "C"', // ties by byte order, as SQLite
        [accountId],
      );
      return rows.map(toApiKey);
    },
    async findByIds(accountId, ids) {
      const rows = await db.query<ApiKeyRow>('SELECT * FROM api_keys WHERE account_id = $1 AND id = ANY($2::text[])', [accountId, ids]);
      return rows.map(toApiKey);
    },
    async revoke(accountId, id, at) {
      const rows = await db.query('UPDATE api_keys SET revoked_at = $3 WHERE account_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING id', [
        accountId,
        id,
        at,
      ]);
      return rows.length === 1;
    },
    async touch(id, at) {
      await db.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, at]);
    },
  };
}

type LicenseRow = LicenseRowOf<Date>;

const toLicense = (row: LicenseRow): RedeemedLicense => licenseFromRow(row, READ);

export function licenseStore(db: Db): LicenseStore {
  return {
    redeem(license) {
      return db.transaction(async (tx) => {
        const owner = await tx.query<{ pro_expires_at: Date | null }>('SELECT id, pro_expires_at FROM accounts WHERE id = $1 FOR UPDATE', [license.accountId]);
        if (owner.length === 0) throw new AppError('NOT_FOUND', 'Account not found');
        const inserted = await tx.query(
          `INSERT INTO licenses (code_id, account_id, kind, scans, expires_at, redeemed_at)
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (code_id) DO NOTHING RETURNING code_id`,
          [license.codeId, license.accountId, license.kind, license.scans, license.expiresAt, license.redeemedAt],
        );
        if (inserted.length === 0) {
          throw new AppError('LICENSE_ALREADY_REDEEMED', 'This license code has already been redeemed');
        }
        if (license.kind === 'pack') {
          await tx.query('UPDATE accounts SET pack_credit = pack_credit + $2 WHERE id = $1', [license.accountId, license.scans ?? 0]);
        } else if (license.expiresAt !== null) {
          // after the already-redeemed check, inside the transaction: the insert is rolled back
          const current = owner[0]!.pro_expires_at;
          if (current && current.getTime() >= license.expiresAt.getTime()) throw proAddsNothing(current, license.expiresAt);
          await tx.query('UPDATE accounts SET pro_expires_at = GREATEST(pro_expires_at, $2) WHERE id = $1', [license.accountId, license.expiresAt]);
        }
        const [row] = await tx.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [license.accountId]);
        return toAccount(row!);
      });
    },
    async listForAccount(accountId) {
      const rows = await db.query<LicenseRow>(
        'SELECT * FROM licenses WHERE account_id = $1 ORDER BY redeemed_at, code_id COLLATE "C"', // ties by byte order, as SQLite
        [accountId],
      );
      return rows.map(toLicense);
    },
  };
}
