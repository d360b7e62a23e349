/**
 * Rows of the account tables (accounts, sessions, api_keys, licenses, idempotency) as records,
 * for both stores: each reads its columns through its own ColumnReader (scan-columns.ts), SQLite's
 * epoch ms and JSON text, PostgreSQL's Date and parsed jsonb.
 */
import type { Account, ApiKeyRecord, IdempotencyRecord, RedeemedLicense, Session } from '../types.js';
import type { ColumnReader } from './scan-columns.js';

type Read<Time> = Pick<ColumnReader<Time, unknown>, 'time'>;
const orNull = <Time>(value: Time | null, read: Read<Time>): Date | null => (value === null ? null : read.time(value));

export interface AccountRowOf<Time> {
  id: string;
  email: string;
  password_hash: string;
  created_at: Time;
  pro_expires_at: Time | null;
  pack_credit: number;
}

export function accountFromRow<Time>(row: AccountRowOf<Time>, read: Read<Time>): Account {
  return {
    id: row.id,
    email: row.email,
    createdAt: read.time(row.created_at),
    proExpiresAt: orNull(row.pro_expires_at, read),
    packCredit: row.pack_credit,
  };
}

export interface SessionRowOf<Time> {
  token_hash: string;
  account_id: string;
  created_at: Time;
  expires_at: Time;
}

export function sessionFromRow<Time>(row: SessionRowOf<Time>, read: Read<Time>): Session {
  return { tokenHash: row.token_hash, accountId: row.account_id, createdAt: read.time(row.created_at), expiresAt: read.time(row.expires_at) };
}

export interface ApiKeyRowOf<Time> {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  hash: string;
  created_at: Time;
  last_used_at: Time | null;
  revoked_at: Time | null;
}

export function apiKeyFromRow<Time>(row: ApiKeyRowOf<Time>, read: Read<Time>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    hash: row.hash,
    createdAt: read.time(row.created_at),
    lastUsedAt: orNull(row.last_used_at, read),
    revokedAt: orNull(row.revoked_at, read),
  };
}

export interface LicenseRowOf<Time> {
  code_id: string;
  account_id: string;
  kind: RedeemedLicense['kind'];
  scans: number | null;
  expires_at: Time | null;
  redeemed_at: Time;
}

export function licenseFromRow<Time>(row: LicenseRowOf<Time>, read: Read<Time>): RedeemedLicense {
  return {
    codeId: row.code_id,
    accountId: row.account_id,
    kind: row.kind,
    scans: row.scans,
    expiresAt: orNull(row.expires_at, read),
    redeemedAt: read.time(row.redeemed_at),
  };
}

export interface IdempotencyRowOf<Time, Json> {
  caller_key: string;
  key: string;
  request_hash: string;
  created_at: Time;
  response: Json | null;
}

export function idempotencyFromRow<Time, Json>(row: IdempotencyRowOf<Time, Json>, read: ColumnReader<Time, Json>): IdempotencyRecord {
  return {
    callerKey: row.caller_key,
    key: row.key,
    requestHash: row.request_hash,
    createdAt: read.time(row.created_at),
    response: row.response === null ? null : (read.json(row.response) as IdempotencyRecord['response']),
  };
}
