/**
 * What the configuration is: the Config the core is built from, what `<dataDir>/settings.json`
 * may hold, where a server setting came from, and the error a bad value becomes. Reading the file,
 * the environment and the flags is in file.ts, env.ts and flags.ts; config.ts puts them together.
 */

export interface Config {
  host: string;
  port: number;
  /** Root of everything the app writes: database, images, settings. */
  dataDir: string;
  /** Where scan images go; shared by hub instances. Defaults to `<dataDir>/images`. */
  imagesDir: string;
  /** postgres://… selects hub mode on PostgreSQL; absent means embedded SQLite in dataDir. */
  databaseUrl: string | null;
  /** PEM of the trusted Ed25519 license public key. */
  licensePublicKeyPem: string;
  /** The models the analyzer loads. */
  modelsDir: string;
  /**
   * The models that came with the app (the packaged resources in the desktop), whatever
   * settings.json or TIREWEAR_MODELS_DIR say: a shop calibration is made from these.
   */
  shippedModelsDir: string;
  /** Who chose modelsDir: the app's default, the data folder's settings.json, or TIREWEAR_MODELS_DIR / --models-dir. */
  modelsDirSource: 'shipped' | 'settings' | 'env';
  /** Built renderer served at `/` when present. */
  rendererDir: string | null;
  /** Allow callers from the LAN; they then need an API key. */
  lanAccess: boolean;
  /** Extra Host header names accepted besides localhost / 127.0.0.1 / [::1] (DNS-rebinding allow-list). */
  allowedHosts: string[];
  /**
   * Trust X-Forwarded-For (hub behind a proxy), as Fastify's trustProxy: false, or the proxies'
   * addresses / CIDR ranges (the variable's `true` is PRIVATE_PROXIES: the caller is then the
   * rightmost address that is not a private proxy, never one a client wrote further left).
   */
  trustProxy: boolean | string;
  logLevel: string;
  /** Inference running at once, and waiting beyond that before SERVER_BUSY. */
  analysisConcurrency: number;
  analysisQueueLimit: number;
  /** Accounts one client address may register per hour before 429 TOO_MANY_ATTEMPTS. */
  registrationsPerHour: number;
  /**
   * Who may register: `open` (anyone, the default: a shop's desk, a hosted service) or `first`
   * (only the first account; then registration is closed, as a chain's hub on the internet wants).
   */
  registration: 'open' | 'first';
  /** Hub link for sync; null when the desktop is not linked. */
  sync: HubLink | null;
  /**
   * Where the server settings Settings shows came from, when not the default (loadConfig fills it):
   * settings.json, a TIREWEAR_* variable or a flag of npm run serve. GET /settings tells the owner
   * which value is in force and why a saved one does not apply.
   */
  origins?: Partial<Record<OriginKey, SettingOrigin>>;
}

/** A desktop's link to its hub: the hub's address and a hub API key. */
export interface HubLink {
  hubUrl: string;
  hubApiKey: string;
}

export type OriginKey = 'port' | 'host' | 'lanAccess';
export interface SettingOrigin {
  source: 'file' | 'env' | 'flag';
  /** The variable or the flag (TIREWEAR_PORT, --port); null for settings.json. */
  setBy: string | null;
}

/** The embedded database's file in the data dir. */
export const SQLITE_FILE_NAME = 'tirewear.db';

/** Accounts one client address may register per hour unless TIREWEAR_REGISTRATIONS_PER_HOUR says otherwise. */
export const DEFAULT_REGISTRATIONS_PER_HOUR = 10;

export type Env = Record<string, string | undefined>;

type ServerSettingKey = 'port' | 'host' | 'lanAccess' | 'allowedHosts' | 'sync' | 'analysisConcurrency' | 'analysisQueueLimit';

/**
 * Settings the desktop UI may change; persisted as `<dataDir>/settings.json`.
 * Server keys feed Config; `ui` and `keepApiRunningInTray` are kept for the renderer and the shell.
 */
export type FileSettings = Partial<Pick<Config, ServerSettingKey>> & {
  /**
   * The models to load instead of the shipped ones (a folder `npm run calibrate` wrote); relative
   * to the data folder. TIREWEAR_MODELS_DIR still wins. The desktop's way to a shop calibration.
   */
  modelsDir?: string;
  keepApiRunningInTray?: boolean;
  ui?: { units?: 'mm' | '32nds'; legalMinimum?: '1.6mm' | '2/32in'; shopName?: string };
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A value as a message quotes it back. */
export function quoted(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}
