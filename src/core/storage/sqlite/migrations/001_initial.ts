import type { Migration } from './index.js';

/**
 * Dates are epoch milliseconds (INTEGER): they round-trip exactly to Date and
 * compare numerically. JSON blobs (scan result, image info, stored responses) are TEXT.
 */
export const initial: Migration = {
  version: 1,
  name: 'initial',
  sql: `
CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  pro_expires_at INTEGER,
  pack_credit INTEGER NOT NULL DEFAULT 0 CHECK (pack_credit >= 0)
);

CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX sessions_expires_at ON sessions(expires_at);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX api_keys_account ON api_keys(account_id, created_at);

CREATE TABLE usage_counters (
  subject TEXT NOT NULL,
  window TEXT NOT NULL,
  used INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (subject, window)
);

CREATE TABLE reservations (
  id TEXT PRIMARY KEY,
  source TEXT NOT NULL CHECK (source IN ('allowance', 'pack', 'unmetered')),
  subject TEXT NOT NULL,
  window TEXT NOT NULL,
  pack_account_id TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX reservations_window ON reservations(subject, window);
CREATE INDEX reservations_pack ON reservations(pack_account_id) WHERE source = 'pack';
CREATE INDEX reservations_created_at ON reservations(created_at);

-- No foreign key on account_id: a hub stores scans pushed by desktops (upsertSynced).
CREATE TABLE scans (
  id TEXT PRIMARY KEY,
  account_id TEXT,
  api_key_id TEXT,
  source TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  vehicle TEXT,
  vehicle_folded TEXT,
  position TEXT,
  wear TEXT NOT NULL,
  result TEXT NOT NULL,
  image TEXT NOT NULL,
  measurement_mm REAL,
  measured_at INTEGER,
  deleted_at INTEGER,
  change_seq INTEGER NOT NULL UNIQUE
);
CREATE INDEX scans_account_created ON scans(account_id, created_at, id);

CREATE TABLE licenses (
  code_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('pack', 'pro')),
  scans INTEGER,
  expires_at INTEGER,
  redeemed_at INTEGER NOT NULL
);
CREATE INDEX licenses_account ON licenses(account_id, redeemed_at);

CREATE TABLE idempotency (
  caller_key TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  response TEXT,
  PRIMARY KEY (caller_key, key)
);
CREATE INDEX idempotency_created_at ON idempotency(created_at);

CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`,
};
