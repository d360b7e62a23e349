/**
 * JSON shapes of /api/v1 as seen on the wire (dates are ISO 8601 strings).
 * Shared by the HTTP layer (responses are built to these types) and the renderer.
 * Every response is an envelope: { success: true, data } or { success: false, error }.
 */

import type { Wear } from './units.js';

export type WireWear = Wear;
export type WirePosition = 'FL' | 'FR' | 'RL' | 'RR' | 'SPARE';

export interface ErrorEnvelope {
  success: false;
  error: { code: string; message: string };
}
export interface SuccessEnvelope<T> {
  success: true;
  data: T;
}
export type Envelope<T> = SuccessEnvelope<T> | ErrorEnvelope;

/** What the models tell from one photo: the core's Analysis, and the heart of every result. */
export interface WireAnalysis {
  wear: WireWear;
  confidence: number;
  estimatedDepthMm: number;
  depthRangeMm: { min: number; max: number };
  treadHealthIndex: number;
  isPreliminary: boolean;
  modelAlignment: number;
  twiConsensusCount: number;
  modelVersion: string;
  /** Additive: the estimate as the nearest whole 32nd of an inch inside its wear band (src/shared/units.ts). */
  depth32nds: number;
  /**
   * Additive: per-main-groove depths (0-based index, left to right in the analysed frame). Not
   * produced since 2026-11-24: the segmenter's per-groove readings carried no information about
   * how the grooves differ (their spread correlated 0.02-0.03 with the true one on held-out
   * renders; models/README.md, "How a result is made", item 9). Kept for scans stored before, and
   * for a model that resolves them.
   */
  grooves?: { index: number; depthMm: number }[];
}

export interface WireResult extends WireAnalysis {
  processingTimeMs: number;
  disclaimer: string;
  /** verbose=1 only */
  overlays?: Record<string, string>;
  /** verbose=1 only */
  points?: { kind: string; x: number; y: number; [extra: string]: unknown }[];
}

/** POST /analyze → data */
export interface AnalyzeData {
  scanId: string;
  result: WireResult;
}

/**
 * GET /scans/:scanId/overlays → data: what verbose=1 adds to an analyze answer, for a stored scan,
 * made again from its stored photo by the models in use (free; nothing stored).
 */
export interface ScanOverlays {
  /** Named PNG data URLs: depthHeatmap, mask. */
  overlays: Record<string, string>;
  /** In the photo's upright pixels. */
  points: NonNullable<WireResult['points']>;
}

/** One correction of a scan (PATCH /scans/:id, PUT /scans/:id/measurement), in WireScan.changes. */
export interface ScanChange {
  at: string;
  field: 'vehicle' | 'position' | 'measurementMm';
  from: string | number | null;
  to: string | number | null;
  /** How it was made: signed in, through an API key, by an anonymous scan's holder, or merged from a shop (hub). */
  via: 'session' | 'key' | 'anonymous' | 'sync';
}

/**
 * The depth the scan stands for: the gauge reading where there is one (it was measured), else the
 * photo's estimate. Colour, advice and 32nds of a report follow this, the estimate is shown beside it.
 */
export interface DepthOfRecord {
  source: 'gauge' | 'estimate';
  /** wearForDepth(depthOfRecordMm) (src/shared/units.ts). */
  wear: WireWear;
  /** whole32nds(depthOfRecordMm). */
  depth32nds: number;
  /** docs/API.md §2's index of depthOfRecordMm. */
  treadHealthIndex: number;
}

/** GET /scans/:scanId → data, and items of GET /scans */
export interface WireScan {
  scanId: string;
  createdAt: string;
  vehicle: string | null;
  /** The plate key (src/shared/vehicle.ts): one vehicle however its plate was typed; null without a vehicle. */
  vehicleKey: string | null;
  position: WirePosition | null;
  /** The analysis of the photo, as made (a gauge reading does not change it). */
  result: WireResult;
  image: { width: number; height: number; mime: string; url: string; thumbnailUrl: string };
  measurementMm: number | null;
  measuredAt: string | null;
  /** measurementMm when there is a gauge reading, else result.estimatedDepthMm. */
  depthOfRecordMm: number;
  /** false once a gauge reading exists; else result.isPreliminary. */
  isPreliminary: boolean;
  ofRecord: DepthOfRecord;
  /** Corrections, oldest first (the newest 50). */
  changes: ScanChange[];
}

/** GET /scans?vehicle=&vehicleKey=&hasVehicle=&wear=&from=&to=&cursor=&limit= → data */
export interface ScanList {
  items: WireScan[];
  nextCursor: string | null;
}

/** PATCH /scans/:scanId body: at least one field; null (or "") clears vehicle and position. */
export interface ScanPatchBody {
  vehicle?: string | null;
  position?: WirePosition | Lowercase<WirePosition> | '' | null;
  measurementMm?: number | null;
}

/** A vehicle of GET /vehicles: its scans grouped by plate key. */
export interface VehicleGroup {
  /** null: the scans without a vehicle (or one with no letter or digit). */
  vehicleKey: string | null;
  /** As typed on its newest scan; null for the no-vehicle group. */
  vehicle: string | null;
  scanCount: number;
  lastScanAt: string;
  firstScanAt: string;
  /** Its newest scans (at most scansPerVehicle), newest first. */
  scans: WireScan[];
}

/** GET /vehicles?vehicle=&wear=&date=&from=&to=&cursor=&limit=&scansPerVehicle= → data */
export interface VehicleList {
  items: VehicleGroup[];
  nextCursor: string | null;
}

/** POST /analyze/check → data: is this frame worth a scan? Nothing stored, nothing charged, no depth. */
export interface CaptureCheck {
  /** The model's scene reader; 'unknown' when the models in use have none (judge by sharpness and light alone). */
  scene: 'tread' | 'tread_not_visible' | 'no_tire' | 'unknown';
  probabilities: { tread: number; treadNotVisible: number; noTire: number } | null;
  /** Variance of the Laplacian of the grey frame (at most 640 px on the long side); ok from `minimum`. */
  sharpness: { value: number; minimum: number; ok: boolean };
  /** Mean luma 0-255 of the frame; ok from `minimum` to `maximum`. */
  brightness: { value: number; minimum: number; maximum: number; ok: boolean };
  /** Tread in view (or unknown), sharp and lit: offer Capture. */
  ok: boolean;
  /** What to fix, most important first; empty when ok. */
  problems: Array<'no_tire' | 'tread_not_visible' | 'blurred' | 'too_dark' | 'too_bright'>;
  /** The photo's upright size. */
  width: number;
  height: number;
}

/**
 * A shop of a chain, as its hub knows it: the hub API key the shop's desktop pushes with,
 * named by the chain's owner. `deleted` once the key was deleted (revoked) on the hub; the
 * name stays the one it had. `name` is null only when the hub no longer has the key at all.
 */
export interface WireShop {
  apiKeyId: string;
  name: string | null;
  deleted: boolean;
}

/** A scan of the chain: `shop` is the key it came through, null for scans made in a signed-in session on the hub. */
export interface HubScan extends WireScan {
  shop: WireShop | null;
}

/** GET /sync/scans?apiKeyId=&cursor=&limit= (hub), GET /sync/hub-scans (desk) → data */
export interface HubScanList {
  items: HubScan[];
  nextCursor: string | null;
}

/** GET /sync/shops (hub), GET /sync/hub-shops (desk) → data: every key of the hub account, by name */
export interface HubShopList {
  items: WireShop[];
}

/** POST /auth/register, POST /auth/login → data; GET /account → data.account */
export interface WireAccount {
  id: string;
  email: string;
  createdAt: string;
}

/** GET /account → data */
export interface AccountData {
  account: WireAccount;
  plan: 'free' | 'pro';
  proExpiresAt: string | null;
  allowance: { limit: number | null; used: number; remaining: number | null; resetAt: string };
  packCredit: number;
  licenses: { codeId: string; kind: 'pack' | 'pro'; scans: number | null; expiresAt: string | null; redeemedAt: string }[];
}

/** GET /keys → data.items; POST /keys → data (with `key` shown once) */
export interface WireApiKey {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}
export interface CreatedApiKey extends WireApiKey {
  key: string;
}

/** POST /licenses { code } → data */
export interface RedeemData {
  license: { codeId: string; kind: 'pack' | 'pro'; scans: number | null; expiresAt: string | null; redeemedAt: string };
  account: AccountData;
}

/** GET /health → data */
export interface HealthData {
  status: 'ok' | 'degraded';
  version: string;
  modelVersion: string | null;
  storage: 'sqlite' | 'postgres';
  uptimeS: number;
  /** When degraded: why (the database does not answer, or a storage failure of the last minute). */
  problem?: string;
}

/**
 * GET /settings, PUT /settings (cookie session from loopback only) → data.
 * port / lanAccess / host take effect at the next start (restartRequired tells).
 */
export interface SettingsData {
  /** Saved (settings.json), else in force: what the form shows. */
  port: number;
  lanAccess: boolean;
  keepApiRunningInTray: boolean;
  units: 'mm' | '32nds';
  legalMinimum: '1.6mm' | '2/32in';
  shopName: string;
  /** A saved server setting differs from the one in force and a restart will apply it (not one overridden). */
  restartRequired: boolean;
  /** The server settings in force now, and where each comes from. */
  server: {
    port: SettingInForce<number>;
    lanAccess: SettingInForce<boolean>;
    host: SettingInForce<string>;
  };
}

/** A server setting as the running server has it. */
export interface SettingInForce<T> {
  /** What the running server uses now (port: the one it listens on). */
  inForce: T;
  /** Where that came from: the built-in default, settings.json, an environment variable, a command-line flag. */
  source: 'default' | 'file' | 'env' | 'flag';
  /** The variable or flag when source is env or flag ("TIREWEAR_PORT", "--port"), else null. */
  setBy: string | null;
  /** The value saved in settings.json; null when none is. */
  saved: T | null;
  /** The saved value differs and cannot apply: the environment or a flag sets this one (a restart will not help). */
  overridden: boolean;
  /** The saved value differs and applies at the next start. */
  restartRequired: boolean;
}

/** GET /connection → data: where a POS can reach this server. */
export interface ConnectionInfo {
  /** The port listened on. */
  port: number;
  /** LAN access in force (not as saved). */
  lanAccess: boolean;
  /** This computer's name; only with LAN access, else null. */
  hostname: string | null;
  /** Loopback first; with LAN access this computer's LAN addresses (IPv4, then IPv6) and its name. */
  addresses: Array<{ address: string; family: 4 | 6 | null; kind: 'loopback' | 'lan' | 'name'; url: string }>;
}

/** Cross-validated figures of a shop calibration (each photo read with a correction fitted without it). */
export interface CalibrationFigures {
  mae: number;
  within1mm: number;
  coverage: number;
  wearAccuracy: number;
}

/** What a calibration fitted and what cross-validation measured. */
export interface CalibrationFit {
  tires: number;
  /**
   * The fit over all tires: gauge ≈ intercept + slope × estimate, the 80 % interval × intervalScale.
   * Written only where depthApplied / intervalApplied say (the rest stays as shipped).
   */
  correction: { intercept: number; slope: number; intervalScale: number };
  depthApplied: boolean;
  intervalApplied: boolean;
  before: CalibrationFigures;
  after: CalibrationFigures;
  reasons: string[];
}

/** GET /calibration → data: the models in use and the Settings screen's calibration job. */
export interface CalibrationStatus {
  /** The model version analyses answer with now. */
  modelVersion: string;
  /** The shop calibration in use, or null for the models as they came with the app. */
  active: {
    version: string;
    base: string;
    created: string;
    tires: number;
    correction: CalibrationFit['correction'];
    crossValidated: { before: CalibrationFigures; after: CalibrationFigures };
  } | null;
  /** This account's scans with a gauge reading, and how many a calibration needs. */
  measuredScans: number;
  /**
   * How each model version read those scans, from the results stored with them (the estimate
   * against the gauge): the models measured on the shop's own photos. Most scans first.
   */
  byModel: Array<{ modelVersion: string; scans: number; mae: number; within1mm: number; wearAccuracy: number }>;
  minimumScans: number;
  /**
   * Why a calibration cannot start here whatever the readings (models set by TIREWEAR_MODELS_DIR,
   * the shipped models missing or a calibration themselves), or null.
   */
  blockedBy: string | null;
  /**
   * The models in use were chosen by settings.json (a calibration, or a folder named by hand, even
   * one that failed to load): DELETE /calibration goes back to the shipped ones.
   */
  canRevert: boolean;
  /** The last calibration started since the server started, or null. */
  job:
    | { state: 'running'; startedAt: string; done: number; total: number }
    | {
        state: 'applied' | 'unchanged' | 'failed';
        startedAt: string;
        finishedAt: string;
        message: string;
        /** Present once the photos were read and a fit made. */
        fit: CalibrationFit | null;
        /** Photos that could not be read (removed, or no tire found), by error code. */
        skipped: Record<string, number>;
      }
    | null;
}

/** GET /sync/status → data (desktop side) */
export interface SyncStatus {
  linked: boolean;
  hubUrl: string | null;
  lastSyncAt: string | null;
  pending: number;
  lastError: string | null;
  /**
   * Changes the hub refused for good (about the scan itself: a photo it cannot read, a scan of
   * another account or shop) since this link was made or last linked again; linking again with
   * the same hub and key sends them again (docs/HUB.md).
   */
  skipped: number;
}
