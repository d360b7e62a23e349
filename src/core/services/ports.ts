/**
 * What the HTTP layer asks of the domain. Implementations live beside this file (the pieces
 * they share, such as ids, passwords, CSV and the analysis queue, in support/) and are wired by
 * createCore (src/core/core.ts); tests may pass fakes.
 */
import type { Account, ApiKeyRecord, Caller, RedeemedLicense, ScanRecord, ScanResult, TirePosition } from '../types.js';
import type { VerboseExtras } from '../analysis/analyzer.js';
import type { AppError } from '../errors.js';
import type { IdempotencyKey } from './idempotency.js';
import type { CsvFormat } from './support/csv.js';
import type { ScanFilter, VehiclePage } from '../storage/store.js';

/**
 * Values for the X-RateLimit-* headers; limit/remaining null means unlimited (pro).
 * Rendered by rateLimitHeaders() in metering.ts (pro: the token `unlimited`; Reset: epoch seconds).
 */
export interface RateLimitState {
  limit: number | null;
  remaining: number | null;
  /** When the current window ends (next UTC midnight / first of next month). */
  resetAt: Date;
}

export interface AuthService {
  /**
   * AppError VALIDATION_ERROR (bad email, password < 8), CONFLICT (email taken), TOO_MANY_ATTEMPTS
   * (too many registrations from `ip`, with Retry-After). Every caller names the client address,
   * so no path registers unthrottled.
   */
  register(email: string, password: string, ip: string): Promise<Account>;
  /** AppError INVALID_CREDENTIALS, TOO_MANY_ATTEMPTS (throttled, with Retry-After). */
  login(email: string, password: string, ip: string): Promise<{ token: string; account: Account; expiresAt: Date }>;
  logout(token: string): Promise<void>;
  /** AppError INVALID_SESSION when unknown or expired. */
  authenticateSession(token: string, ip: string): Promise<Caller & { kind: 'account' }>;
  /** AppError INVALID_API_KEY when malformed, unknown or revoked; records last use. */
  authenticateKey(key: string, ip: string): Promise<Caller & { kind: 'account' }>;
}

export interface ApiKeyService {
  /** The only time the secret is returned. */
  create(accountId: string, name: string): Promise<{ key: string; record: ApiKeyRecord }>;
  list(accountId: string): Promise<ApiKeyRecord[]>;
  /** AppError NOT_FOUND when not the account's or already revoked. */
  revoke(accountId: string, id: string): Promise<void>;
}

export interface AccountSummary {
  account: Account;
  plan: 'free' | 'pro';
  proExpiresAt: Date | null;
  allowance: { limit: number | null; used: number; remaining: number | null; resetAt: Date };
  packCredit: number;
  licenses: RedeemedLicense[];
}

export interface AccountService {
  summary(accountId: string): Promise<AccountSummary>;
}

export interface LicenseService {
  /** AppError LICENSE_INVALID (malformed, forged, wrong key), LICENSE_EXPIRED, LICENSE_ALREADY_REDEEMED. */
  redeem(accountId: string, code: string): Promise<{ license: RedeemedLicense; account: Account }>;
}

export interface AnalyzeCommand {
  caller: Caller;
  image: Buffer;
  verbose: boolean;
  vehicle: string | null;
  position: TirePosition | null;
  /** Parsed by the caller (the route: IdempotencyKey.parse), so the service holds only keys that passed the rule. */
  idempotencyKey: IdempotencyKey | null;
  /**
   * When the upload was received, as Date.now() milliseconds (wall clock, not the injected
   * Clock: processingTimeMs is a measured duration and counts from here).
   */
  receivedAt: number;
}

export interface AnalyzeResponse {
  status: number;
  body: { success: true; data: { scanId: string; result: ScanResult & Partial<VerboseExtras> } };
  /** X-RateLimit-* (and Idempotent-Replayed on replays). */
  headers: Record<string, string>;
}

/** A list query as the caller sends it: the store's filter fields, checked by the service first. */
export type ScanQuery = Partial<Pick<ScanFilter, 'vehicle' | 'hasVehicle' | 'wear' | 'from' | 'to' | 'cursor' | 'limit'>> & {
  /** Exactly this vehicle: normalised here (vehicleKey), so any spelling of the plate works. */
  vehicleKey?: string;
};

/** GET /vehicles. */
export interface VehicleQuery extends Omit<ScanQuery, 'vehicleKey' | 'hasVehicle'> {
  scansPerVehicle?: number;
}

/** PATCH /scans/:id: the fields to correct, as sent (checked by the service, as on creation). */
export interface ScanPatch {
  vehicle?: unknown;
  position?: unknown;
  measurementMm?: unknown;
}

export interface ScanService {
  /**
   * Validate the image (415/422 codes), meter (429 with headers), analyze, store
   * image + thumbnail + result and charge in one commit; release the hold on any failure.
   * Replays a stored response for a repeated Idempotency-Key.
   */
  analyze(command: AnalyzeCommand): Promise<AnalyzeResponse>;
  /** Current X-RateLimit-* state of a caller without charging. */
  rateLimit(caller: Caller): Promise<RateLimitState>;
  /**
   * The 429 analyze() would certainly give this caller (RATE_LIMIT_EXCEEDED, with its headers),
   * known before the photo is sent: nothing is left even if every analysis in flight fails. null
   * otherwise (analyze() then decides, with the hold it takes).
   */
  refusalBeforeUpload(caller: Caller): Promise<AppError | null>;
  /** NOT_FOUND / FORBIDDEN by docs/API.md §5 visibility rules. */
  get(caller: Caller, scanId: string): Promise<ScanRecord>;
  list(caller: Caller & { kind: 'account' }, query: ScanQuery): Promise<{ items: ScanRecord[]; nextCursor: string | null }>;
  image(caller: Caller, scanId: string, variant: 'original' | 'thumbnail'): Promise<{ mime: string; data: Buffer }>;
  delete(caller: Caller, scanId: string): Promise<void>;
  setMeasurement(caller: Caller, scanId: string, measurementMm: number | null): Promise<ScanRecord>;
  /**
   * Corrects vehicle, position and gauge reading (the rules of analyze and PUT /measurement),
   * recorded in the scan's changes; who may is as for delete. Charges nothing.
   */
  update(caller: Caller, scanId: string, patch: ScanPatch): Promise<ScanRecord>;
  /**
   * A stored scan's verbose=1 extras (overlays and points, as analyze gives them), made again from
   * its stored photo by the models in use. Who may is as for get. Nothing is stored or charged;
   * OVERLAYS_PER_MINUTE a caller (TOO_MANY_ATTEMPTS beyond). NOT_FOUND when the scan or its photo is
   * gone; the analyzer's own 422 (NO_TIRE_DETECTED, TREAD_NOT_VISIBLE) when the models in use cannot
   * read the photo; IMAGE_UNREADABLE when the stored file cannot be decoded.
   */
  overlays(caller: Caller, scanId: string): Promise<VerboseExtras>;
  /** The account's scans grouped by vehicle, newest visit first. */
  vehicles(caller: Caller & { kind: 'account' }, query: VehicleQuery): Promise<VehiclePage>;
  /** The scans as CSV (support/csv.ts): plain RFC 4180 by default, or for Excel (`excel`, `excel-semicolon`). */
  exportCsv(caller: Caller & { kind: 'account' }, query: Omit<ScanQuery, 'cursor' | 'limit'>, format?: CsvFormat): Promise<string>;
}

export type { CaptureCheckService } from './capture-check.js';

export interface Services {
  auth: AuthService;
  apiKeys: ApiKeyService;
  accounts: AccountService;
  licenses: LicenseService;
  scans: ScanService;
  /** POST /analyze/check: the free live capture check. */
  captureCheck: import('./capture-check.js').CaptureCheckService;
}
