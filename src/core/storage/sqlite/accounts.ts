/** Accounts, cookie sessions and API keys. */
import { AppError } from '../../errors.js';
import type { Account, AccountWithSecret, ApiKeyRecord, Session } from '../../types.js';
import type { AccountStore, ApiKeyStore, SessionStore } from '../store.js';
import { accountFromRow, apiKeyFromRow, sessionFromRow, type AccountRowOf, type ApiKeyRowOf, type SessionRowOf } from '../record-rows.js';
import { type Db, immediate, isUniqueViolation, READ, run, toMs } from './db.js';

type AccountRow = AccountRowOf<number>;

const toAccount = (row: AccountRow): Account => accountFromRow(row, READ);

/** Reads one account inside an open transaction (licenses use it after crediting). */
export function readAccount(db: Db, id: string): Account | null {
  const row = db.prepare('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
  return row ? toAccount(row) : null;
}

/** Emails are stored case-folded so uniqueness and lookup ignore case. */
function foldEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function createAccountStore(db: Db): AccountStore {
  const insert = db.prepare('INSERT INTO accounts (id, email, password_hash, created_at, pro_expires_at, pack_credit) VALUES (?, ?, ?, ?, NULL, 0)');
  const byEmail = db.prepare('SELECT * FROM accounts WHERE email = ?');
  const insertAccount = (input: { id: string; email: string; passwordHash: string; createdAt: Date }) => {
    try {
      insert.run(input.id, foldEmail(input.email), input.passwordHash, toMs(input.createdAt));
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('CONFLICT', 'An account with this email already exists');
      throw error;
    }
    return readAccount(db, input.id)!;
  };
  return {
    create: (input) => immediate(db, () => insertAccount(input)),
    createFirst: (input) => immediate(db, () => (db.prepare('SELECT 1 FROM accounts LIMIT 1').get() === undefined ? insertAccount(input) : null)),
    findByEmail: (email) =>
      run(() => {
        const row = byEmail.get(foldEmail(email)) as AccountRow | undefined;
        return row ? ({ ...toAccount(row), passwordHash: row.password_hash } satisfies AccountWithSecret) : null;
      }),
    findById: (id) => run(() => readAccount(db, id)),
    firstId: () => run(() => (db.prepare('SELECT id FROM accounts ORDER BY created_at, id LIMIT 1').get() as { id: string } | undefined)?.id ?? null),
  };
}

export function createSessionStore(db: Db): SessionStore {
  const insert = db.prepare('INSERT INTO sessions (token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)');
  const find = db.prepare('SELECT * FROM sessions WHERE token_hash = ?');
  const remove = db.prepare('DELETE FROM sessions WHERE token_hash = ?');
  const expire = db.prepare('DELETE FROM sessions WHERE expires_at <= ?');
  return {
    create: (s: Session) =>
      run(() => {
        insert.run(s.tokenHash, s.accountId, toMs(s.createdAt), toMs(s.expiresAt));
      }),
    find: (tokenHash) =>
      run(() => {
        const row = find.get(tokenHash) as SessionRowOf<number> | undefined;
        return row ? sessionFromRow(row, READ) : null;
      }),
    delete: (tokenHash) =>
      run(() => {
        remove.run(tokenHash);
      }),
    deleteExpired: (now) => run(() => expire.run(toMs(now)).changes),
  };
}

type ApiKeyRow = ApiKeyRowOf<number>;

const toApiKey = (row: ApiKeyRow): ApiKeyRecord => apiKeyFromRow(row, READ);

export function createApiKeyStore(db: Db): ApiKeyStore {
  const insert = db.prepare(
    `INSERT INTO api_keys (id, account_id, name, prefix, hash, created_at, last_used_at, revoked_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byHash = db.prepare('SELECT * FROM api_keys WHERE hash = ?');
  const forAccount = db.prepare('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id');
  // One JSON array parameter, not a placeholder per id: any batch size fits SQLite's parameter limit.
  const byIds = db.prepare('SELECT * FROM api_keys WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))');
  const revoke = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND account_id = ? AND revoked_at IS NULL');
  const touch = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  return {
    create: (r) =>
      run(() => {
        insert.run(r.id, r.accountId, r.name, r.prefix, r.hash, toMs(r.createdAt), toMs(r.lastUsedAt), toMs(r.revokedAt));
      }),
    findByHash: (hash) =>
      run(() => {
        const row = byHash.get(hash) as ApiKeyRow | undefined;
        return row ? toApiKey(row) : null;
      }),
    listForAccount: (accountId) => run(() => (forAccount.all(accountId) as ApiKeyRow[]).map(toApiKey)),
    findByIds: (accountId, ids) => run(() => (byIds.all(accountId, JSON.stringify(ids)) as ApiKeyRow[]).map(toApiKey)),
    revoke: (accountId, id, at) => run(() => revoke.run(toMs(at), id, accountId).changes > 0),
    touch: (id, at) =>
      run(() => {
        touch.run(toMs(at), id);
      }),
  };
}
