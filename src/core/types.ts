/** Domain records shared by storage, services and HTTP. */
import type { Analysis } from './analysis/analyzer.js';
import { TIRE_POSITIONS, SCAN_CHANGES_KEPT, SCAN_CHANGE_FIELDS, SCAN_CHANGE_VIAS } from '../shared/contract/common.js';
import type { ScanChangeField, ScanChangeVia, TirePosition } from '../shared/contract/common.js';

/** The positions, correction fields and ways are the contract's (src/shared/contract/common.ts). */
export { TIRE_POSITIONS, SCAN_CHANGES_KEPT, SCAN_CHANGE_FIELDS, SCAN_CHANGE_VIAS, type ScanChangeField, type ScanChangeVia, type TirePosition };

/** An API key: `tw_` and 32 base62 characters (docs/API.md §4.1). */
export const API_KEY_SHAPE = /^tw_[A-Za-z0-9]{32}$/;

export type Plan = 'free' | 'pro';

export interface Account {
  id: string;
  email: string;
  createdAt: Date;
  /** Pro while this is in the future; null when no pro license was ever redeemed. */
  proExpiresAt: Date | null;
  /** Unspent scans from redeemed packs. */
  packCredit: number;
}

export interface AccountWithSecret extends Account {
  passwordHash: string;
}

export interface Session {
  /** sha256 of the cookie token; the token itself is never stored. */
  tokenHash: string;
  accountId: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  /** First characters of the key (e.g. `tw_AbC1`), safe to show in lists. */
  prefix: string;
  /** sha256 of the full key. */
  hash: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** Who is calling: decided once per request by the auth layer. */
export type Caller = { kind: 'anonymous'; ip: string } | { kind: 'account'; account: Account; via: 'session' | 'key'; apiKeyId: string | null; ip: string };

export type ScanSource = 'anonymous' | 'session' | 'key' | 'sync';

export interface ScanRecord {
  /** 128 random bits, base64url or hex; unguessable. */
  id: string;
  accountId: string | null;
  apiKeyId: string | null;
  source: ScanSource;
  createdAt: Date;
  vehicle: string | null;
  position: TirePosition | null;
  /** The result as returned in data.result (compact, without overlays). */
  result: ScanResult;
  image: StoredImageInfo;
  measurementMm: number | null;
  measuredAt: Date | null;
  deletedAt: Date | null;
  /**
   * When vehicle or position was last corrected (PATCH /scans/:id); null if never. Sync merges
   * them last-writer-wins by this time, as the measurement by measuredAt.
   */
  editedAt: Date | null;
  /** The corrections made to the scan, oldest first (at most SCAN_CHANGES_KEPT, the newest). */
  changes: ScanChange[];
}

/** One correction of a scan: a field, its value before and after. */
export interface ScanChange {
  at: Date;
  field: ScanChangeField;
  from: string | number | null;
  to: string | number | null;
  via: ScanChangeVia;
}

/** data.result of POST /api/v1/analyze: the analysis plus what the service adds. */
export interface ScanResult extends Analysis {
  processingTimeMs: number;
  disclaimer: string;
}

export interface StoredImageInfo {
  /** Keys understood by the ImageStore (relative names, never absolute paths). */
  originalKey: string;
  thumbnailKey: string;
  mime: 'image/jpeg' | 'image/png' | 'image/webp';
  width: number;
  height: number;
  bytes: number;
  /** sha256 of the uploaded bytes (idempotency checks, dedupe). */
  sha256: string;
}

export interface RedeemedLicense {
  codeId: string;
  accountId: string;
  kind: 'pack' | 'pro';
  scans: number | null;
  expiresAt: Date | null;
  redeemedAt: Date;
}

/** A stored analyze response for Idempotency-Key replays. */
export interface IdempotencyRecord {
  /** `acct:<id>` or `ip:<ip>` plus the key, as chosen by the service. */
  callerKey: string;
  key: string;
  requestHash: string;
  createdAt: Date;
  /** null while the first request is still in flight. */
  response: { status: number; body: unknown; headers: Record<string, string> } | null;
}
