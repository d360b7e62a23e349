/**
 * Configuration is built once, in this order: defaults ← settings file ← environment ← CLI.
 * Nothing else in the core reads process.env.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_REGISTRATIONS_PER_HOUR } from './services/registration-throttle.js';

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
  /** Trust X-Forwarded-For (hub behind a proxy): false, true, or a Fastify trustProxy value. */
  trustProxy: boolean | string;
  logLevel: string;
  /** Inference running at once, and waiting beyond that before SERVER_BUSY. */
  analysisConcurrency: number;
  analysisQueueLimit: number;
  /** Accounts one client address may register per hour before 429 TOO_MANY_ATTEMPTS. */
  registrationsPerHour: number;
  /** Hub link for sync; null when the desktop is not linked. */
  sync: { hubUrl: string; hubApiKey: string } | null;
}

export type Env = Record<string, string | undefined>;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const DEFAULT_LICENSE_KEY_FILE = path.join(ROOT, 'resources', 'license-public.pem');

export function defaultConfig(root = ROOT): Config {
  const dataDir = path.join(root, 'data');
  return {
    host: '127.0.0.1',
    port: 8787,
    dataDir,
    imagesDir: path.join(dataDir, 'images'),
    databaseUrl: null,
    licensePublicKeyPem: '',
    modelsDir: path.join(root, 'models'),
    shippedModelsDir: path.join(root, 'models'),
    modelsDirSource: 'shipped',
    rendererDir: path.join(root, 'out', 'renderer'),
    lanAccess: false,
    allowedHosts: [],
    trustProxy: false,
    logLevel: 'info',
    analysisConcurrency: 2,
    analysisQueueLimit: 32,
    registrationsPerHour: DEFAULT_REGISTRATIONS_PER_HOUR,
    sync: null,
  };
}

const SERVER_SETTING_KEYS = [
  'port',
  'host',
  'lanAccess',
  'allowedHosts',
  'sync',
  'analysisConcurrency',
  'analysisQueueLimit',
] as const;

/**
 * Settings the desktop UI may change; persisted as `<dataDir>/settings.json`.
 * Server keys feed Config; `ui` and `keepApiRunningInTray` are kept for the renderer and the shell.
 */
export type FileSettings = Partial<Pick<Config, (typeof SERVER_SETTING_KEYS)[number]>> & {
  /**
   * The models to load instead of the shipped ones (a folder `npm run calibrate` wrote); relative
   * to the data folder. TIREWEAR_MODELS_DIR still wins. The desktop's way to a shop calibration.
   */
  modelsDir?: string;
  keepApiRunningInTray?: boolean;
  ui?: { units?: 'mm' | '32nds'; legalMinimum?: '1.6mm' | '2/32in'; shopName?: string };
};

function serverSettings(file: FileSettings): Partial<Config> {
  const picked: Partial<Config> = {};
  for (const key of SERVER_SETTING_KEYS) {
    if (file[key] !== undefined) Object.assign(picked, { [key]: file[key] });
  }
  return picked;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function int(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function bool(name: string, raw: string): boolean {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** PEM text, or a path to a file holding it. */
export function readPem(name: string, value: string): string {
  if (value.includes('-----BEGIN')) return value;
  if (!existsSync(value)) throw new ConfigError(`${name}: no PEM text and no file at ${value}`);
  return readFileSync(value, 'utf8');
}

export function readSettingsFile(dataDir: string): FileSettings {
  const file = path.join(dataDir, 'settings.json');
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as FileSettings;
  } catch (error) {
    throw new ConfigError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

function parseArgs(argv: readonly string[]): Env {
  const out: Env = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new ConfigError(`unknown argument "${arg}"`);
    const name = `TIREWEAR_${match[1]!.replace(/-/g, '_').toUpperCase()}`;
    const value = match[2] ?? argv[++i];
    if (value === undefined) throw new ConfigError(`${arg} needs a value`);
    out[name] = value;
  }
  return out;
}

/**
 * Build the config. `env` is process.env at the entry point; `argv` the CLI flags
 * (`--port 9000`, `--data-dir=/x`, named like the TIREWEAR_* variables).
 */
export function loadConfig(env: Env, argv: readonly string[] = [], base: Config = defaultConfig()): Config {
  const vars = { ...env, ...parseArgs(argv) };
  const dataDir = path.resolve(vars.TIREWEAR_DATA_DIR ?? base.dataDir);
  const file = readSettingsFile(dataDir);
  const config: Config = {
    ...base,
    ...serverSettings(file),
    dataDir,
    imagesDir: path.join(dataDir, 'images'),
    shippedModelsDir: base.modelsDir,
    modelsDirSource: 'shipped',
  };
  if (file.modelsDir !== undefined) {
    if (typeof file.modelsDir !== 'string' || !file.modelsDir.trim()) {
      throw new ConfigError(`${path.join(dataDir, 'settings.json')}: modelsDir must be a folder path`);
    }
    config.modelsDir = path.resolve(dataDir, file.modelsDir);
    config.modelsDirSource = 'settings';
  }

  if (vars.TIREWEAR_HOST) config.host = vars.TIREWEAR_HOST;
  if (vars.TIREWEAR_PORT) config.port = int('TIREWEAR_PORT', vars.TIREWEAR_PORT, 0, 65535);
  if (vars.TIREWEAR_IMAGES_DIR) config.imagesDir = path.resolve(vars.TIREWEAR_IMAGES_DIR);
  if (vars.TIREWEAR_DATABASE_URL) config.databaseUrl = vars.TIREWEAR_DATABASE_URL;
  if (vars.TIREWEAR_MODELS_DIR) {
    config.modelsDir = path.resolve(vars.TIREWEAR_MODELS_DIR);
    config.modelsDirSource = 'env';
  }
  if (vars.TIREWEAR_RENDERER_DIR !== undefined) {
    config.rendererDir = vars.TIREWEAR_RENDERER_DIR ? path.resolve(vars.TIREWEAR_RENDERER_DIR) : null;
  }
  if (vars.TIREWEAR_LAN_ACCESS) config.lanAccess = bool('TIREWEAR_LAN_ACCESS', vars.TIREWEAR_LAN_ACCESS);
  if (vars.TIREWEAR_ALLOWED_HOSTS) {
    config.allowedHosts = vars.TIREWEAR_ALLOWED_HOSTS.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  }
  if (vars.TIREWEAR_TRUST_PROXY) {
    const raw = vars.TIREWEAR_TRUST_PROXY;
    config.trustProxy = /^(1|true|yes|on)$/i.test(raw) ? true : /^(0|false|no|off)$/i.test(raw) ? false : raw;
  }
  if (vars.TIREWEAR_LOG_LEVEL) config.logLevel = vars.TIREWEAR_LOG_LEVEL;
  if (vars.TIREWEAR_ANALYSIS_CONCURRENCY) {
    config.analysisConcurrency = int('TIREWEAR_ANALYSIS_CONCURRENCY', vars.TIREWEAR_ANALYSIS_CONCURRENCY, 1, 64);
  }
  if (vars.TIREWEAR_ANALYSIS_QUEUE_LIMIT) {
    config.analysisQueueLimit = int('TIREWEAR_ANALYSIS_QUEUE_LIMIT', vars.TIREWEAR_ANALYSIS_QUEUE_LIMIT, 0, 10000);
  }
  if (vars.TIREWEAR_REGISTRATIONS_PER_HOUR) {
    config.registrationsPerHour = int('TIREWEAR_REGISTRATIONS_PER_HOUR', vars.TIREWEAR_REGISTRATIONS_PER_HOUR, 1, 1_000_000);
  }
  if (vars.TIREWEAR_HUB_URL && vars.TIREWEAR_HUB_API_KEY) {
    config.sync = { hubUrl: vars.TIREWEAR_HUB_URL, hubApiKey: vars.TIREWEAR_HUB_API_KEY };
  }

  const keySource = vars.TIREWEAR_LICENSE_PUBLIC_KEY ?? (base.licensePublicKeyPem || DEFAULT_LICENSE_KEY_FILE);
  config.licensePublicKeyPem = readPem('TIREWEAR_LICENSE_PUBLIC_KEY', keySource);

  if (!isLoopback(config.host) && !config.lanAccess && config.databaseUrl === null) {
    throw new ConfigError(
      `TIREWEAR_HOST=${config.host} is not a loopback address; set TIREWEAR_LAN_ACCESS=true to serve the LAN (API keys are then required), or run as a hub with TIREWEAR_DATABASE_URL`,
    );
  }
  return config;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}
