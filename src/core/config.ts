/**
 * Configuration is built once, in this order: defaults ← settings file ← environment ← CLI.
 * Nothing else in the core reads process.env.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { wantsHelp } from './cli/args.js';
import { loadLicensePublicKey } from './licensing/codes.js';
import { DEFAULT_REGISTRATIONS_PER_HOUR } from './services/registration-throttle.js';
// The check PUT /sync/link makes, so a link from the environment or settings.json is held to the
// same rules (sync/service.ts pulls in the sync client, never the HTTP server).
import { validateLink } from './sync/service.js';

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
  sync: { hubUrl: string; hubApiKey: string } | null;
  /**
   * Where the server settings Settings shows came from, when not the default (loadConfig fills it):
   * settings.json, a TIREWEAR_* variable or a flag of npm run serve. GET /settings tells the owner
   * which value is in force and why a saved one does not apply.
   */
  origins?: Partial<Record<OriginKey, SettingOrigin>>;
}

export type OriginKey = 'port' | 'host' | 'lanAccess';
export interface SettingOrigin {
  source: 'file' | 'env' | 'flag';
  /** The variable or the flag (TIREWEAR_PORT, --port); null for settings.json. */
  setBy: string | null;
}

/** The embedded database's file in the data dir. */
export const SQLITE_FILE_NAME = 'tirewear.db';

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
    registration: 'open',
    sync: null,
  };
}

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

function quoted(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}

/**
 * The server keys of settings.json, each checked like its variable (type and range); a bad one is a
 * ConfigError naming the file and the key, so the desktop shows its "settings are invalid" dialog.
 * The keys only the renderer and the shell read (`ui`, `keepApiRunningInTray`) are checked too:
 * GET /settings hands them on as they are. Unknown keys are left alone (a newer version's).
 */
function serverSettings(file: FileSettings, where: string): Partial<Config> {
  const raw = file as Record<string, unknown>;
  const bad = (key: string, rule: string): never => {
    throw new ConfigError(`${where}: ${key} must be ${rule}, got ${quoted(raw[key])}`);
  };
  const wholeNumber = (key: string, min: number, max: number): number => {
    const value = raw[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      return bad(key, `a whole number from ${min} to ${max}`);
    }
    return value;
  };
  const flag = (key: string): boolean => (typeof raw[key] === 'boolean' ? raw[key] : bad(key, 'true or false'));

  const picked: Partial<Config> = {};
  if (raw.port !== undefined) picked.port = wholeNumber('port', 0, 65535);
  if (raw.host !== undefined) {
    if (typeof raw.host !== 'string' || !raw.host.trim()) bad('host', 'an address such as 127.0.0.1 or 0.0.0.0');
    picked.host = (raw.host as string).trim();
  }
  if (raw.lanAccess !== undefined) picked.lanAccess = flag('lanAccess');
  if (raw.allowedHosts !== undefined) {
    const hosts = raw.allowedHosts;
    if (!Array.isArray(hosts) || !hosts.every((h) => typeof h === 'string')) bad('allowedHosts', 'a list of host names, such as ["shop-pc"]');
    picked.allowedHosts = (hosts as string[]).map((h) => h.trim().toLowerCase()).filter(Boolean);
  }
  if (raw.analysisConcurrency !== undefined) picked.analysisConcurrency = wholeNumber('analysisConcurrency', 1, 64);
  if (raw.analysisQueueLimit !== undefined) picked.analysisQueueLimit = wholeNumber('analysisQueueLimit', 0, 10000);
  if (raw.sync !== undefined && raw.sync !== null) {
    const sync = raw.sync as Record<string, unknown>;
    if (typeof sync !== 'object' || Array.isArray(sync) || typeof sync.hubUrl !== 'string' || typeof sync.hubApiKey !== 'string') {
      throw new ConfigError(`${where}: sync must hold hubUrl and hubApiKey, as linking in Settings writes it (or be removed)`);
    }
    picked.sync = checkedLink({ hubUrl: sync.hubUrl, hubApiKey: sync.hubApiKey }, (field) => `${where}: sync.${field}`);
  }

  if (raw.keepApiRunningInTray !== undefined) flag('keepApiRunningInTray');
  if (raw.ui !== undefined) {
    const ui = raw.ui as Record<string, unknown>;
    if (typeof ui !== 'object' || ui === null || Array.isArray(ui)) bad('ui', 'an object');
    const oneOf = (key: string, allowed: readonly string[]) => {
      if (ui[key] !== undefined && !allowed.includes(ui[key] as string)) {
        throw new ConfigError(`${where}: ui.${key} must be ${allowed.map((a) => `"${a}"`).join(' or ')}, got ${quoted(ui[key])}`);
      }
    };
    oneOf('units', ['mm', '32nds']);
    oneOf('legalMinimum', ['1.6mm', '2/32in']);
    if (ui.shopName !== undefined && typeof ui.shopName !== 'string') {
      throw new ConfigError(`${where}: ui.shopName must be text, got ${quoted(ui.shopName)}`);
    }
  }
  return picked;
}

/**
 * validateLink's check, failing as a ConfigError that names where the bad value came from
 * (`name(field)`); the URL is quoted back unless it may carry a password, the key never is.
 */
function checkedLink(link: { hubUrl: string; hubApiKey: string }, name: (field: 'hubUrl' | 'hubApiKey') => string) {
  return validateLink(link, (field, rule) => {
    const got = field === 'hubUrl' && !link.hubUrl.includes('@') ? `, got "${link.hubUrl}"` : '';
    return new ConfigError(`${name(field)} ${rule}${got}`);
  });
}

const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);
/**
 * What `true` trusts: proxies on this machine or a private network (10/8, 172.16/12, 192.168/16,
 * fc00::/7, link-local, and the carrier-grade NAT range 100.64/10 that Tailscale and some
 * clusters use). A proxy at a public address must be named.
 */
export const PRIVATE_PROXIES = 'loopback,linklocal,uniquelocal,100.64.0.0/10';

/**
 * TIREWEAR_TRUST_PROXY: `true` (or yes/on/1) trusts proxies at loopback and private addresses —
 * not every hop, which would take the leftmost X-Forwarded-For entry, one the client writes
 * itself when the proxy appends; otherwise the proxies' addresses or CIDR ranges (or loopback,
 * linklocal, uniquelocal), checked here so that a typo stops the start with its name. (A hop
 * count is not offered: Fastify trusts nothing for one.)
 */
function trustProxyOf(raw: string): boolean | string {
  const value = raw.trim();
  if (/^(1|true|yes|on)$/i.test(value)) return PRIVATE_PROXIES;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  const entries = value.split(',').map((e) => e.trim());
  const valid = (entry: string) => {
    if (PROXY_RANGES.has(entry)) return true;
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    if (!family || extra !== undefined) return false;
    return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
  };
  const bad = entries.find((entry) => !valid(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      `TIREWEAR_TRUST_PROXY must be true (proxies at loopback or private addresses), false, or the proxies' addresses / CIDR ranges separated by commas; ${quoted(bad)} is none of these`,
    );
  }
  return entries.join(',');
}

/** pino's levels: anything else would stop the logger, after the config had been accepted. */
const LOG_LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

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
  let parsed: unknown;
  try {
    // a byte-order mark is what Windows Notepad (older versions, or "UTF-8 with BOM") and
    // PowerShell 5's Set-Content write in front: not part of the JSON, and not worth a refused start
    parsed = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ConfigError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${file} must hold a JSON object ({ "port": 8787, … }), got ${quoted(parsed)}`);
  }
  return parsed;
}

/**
 * The flags of `npm run serve`: one per TIREWEAR_* variable, named like it (`--port` sets
 * TIREWEAR_PORT). The order is the one `--help` and the unknown-flag message list them in.
 */
export const SERVE_FLAGS: readonly { flag: string; value: string; help: string }[] = [
  { flag: '--data-dir', value: 'DIR', help: 'database, images and settings.json (default ./data)' },
  { flag: '--port', value: 'N', help: 'listening port, 0 to 65535; 0 picks a free one (default 8787)' },
  { flag: '--host', value: 'ADDRESS', help: 'bind address (default 127.0.0.1); beyond loopback needs --lan-access true or hub mode' },
  { flag: '--lan-access', value: 'true|false', help: 'serve POS software on other PCs of the shop LAN (they then need an API key)' },
  { flag: '--allowed-hosts', value: 'NAMES', help: 'extra Host names accepted, comma separated' },
  { flag: '--license-public-key', value: 'PEM|FILE', help: 'Ed25519 public key license codes must verify against' },
  { flag: '--models-dir', value: 'DIR', help: 'ONNX models and their manifest (default ./models)' },
  { flag: '--renderer-dir', value: 'DIR', help: 'built UI served at / (--renderer-dir= for none)' },
  { flag: '--database-url', value: 'postgres://…', help: 'hub mode on PostgreSQL' },
  { flag: '--images-dir', value: 'DIR', help: 'scan images (default <data dir>/images)' },
  { flag: '--trust-proxy', value: 'true|false|ADDRESS', help: "trust X-Forwarded-For from the hub's proxy" },
  { flag: '--registrations-per-hour', value: 'N', help: 'registrations per client address and hour, 1 to 1000000 (default 10)' },
  { flag: '--registration', value: 'open|first', help: 'who may register: anyone (default), or only the first account (a hub)' },
  { flag: '--analysis-concurrency', value: 'N', help: 'analyses running at once, 1 to 64 (default 2)' },
  { flag: '--analysis-queue-limit', value: 'N', help: 'analyses waiting beyond that before 503 SERVER_BUSY, 0 to 10000 (default 32)' },
  { flag: '--hub-url', value: 'URL', help: 'link this computer to a hub: its address (with --hub-api-key, or neither)' },
  { flag: '--hub-api-key', value: 'KEY', help: 'the hub API key, tw_ and 32 letters or digits (the variable keeps it out of ps)' },
  { flag: '--log-level', value: 'LEVEL', help: 'pino level (default info)' },
];

export function serveUsage(): string {
  const width = Math.max(...SERVE_FLAGS.map((f) => f.flag.length + f.value.length + 1));
  return [
    'usage: npm run serve -- [--FLAG VALUE | --FLAG=VALUE]...',
    'Each flag sets the TIREWEAR_* variable of its name (--port 9000 is TIREWEAR_PORT=9000) and wins over',
    'the environment, which wins over <data dir>/settings.json (docs/CONFIGURATION.md).',
    ...SERVE_FLAGS.map((f) => `  ${`${f.flag} ${f.value}`.padEnd(width)}  ${f.help}`),
    '  --help'.padEnd(width + 2) + '  this text',
    '',
  ].join('\n');
}

const ACCEPTED = new Set(SERVE_FLAGS.map((f) => f.flag));

/**
 * The flags as TIREWEAR_* variables. An unknown flag is a ConfigError listing the accepted ones
 * (serve exits 2); so is `--help`, which the entry point answers before loading (cli/args.ts wantsHelp).
 */
function parseFlags(argv: readonly string[]): Env {
  if (wantsHelp(argv)) throw new ConfigError('--help is answered by npm run serve, not read as a setting');
  const out: Env = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new ConfigError(`unknown argument "${arg}"; flags are --name value or --name=value (npm run serve -- --help)`);
    if (!ACCEPTED.has(`--${match[1]}`)) {
      throw new ConfigError(`unknown flag --${match[1]}; accepted: ${[...ACCEPTED].join(', ')} (npm run serve -- --help)`);
    }
    const name = `TIREWEAR_${match[1]!.replace(/-/g, '_').toUpperCase()}`;
    const value = match[2] ?? argv[++i];
    if (value === undefined) throw new ConfigError(`${arg} needs a value`);
    out[name] = value;
  }
  return out;
}

/**
 * Build the config. `env` is process.env at the entry point; `argv` the CLI flags
 * (`--port 9000`, `--data-dir=/x`, named like the TIREWEAR_* variables: SERVE_FLAGS).
 * Every value, from settings.json, the environment or a flag, is checked here: a bad one is a
 * ConfigError naming where it came from (serve exits 2, the desktop shows its settings dialog).
 */
export function loadConfig(env: Env, argv: readonly string[] = [], base: Config = defaultConfig()): Config {
  const flags = parseFlags(argv);
  const vars = { ...env, ...flags };
  const dataDir = path.resolve(vars.TIREWEAR_DATA_DIR ?? base.dataDir);
  const file = readSettingsFile(dataDir);
  const fromFile = serverSettings(file, path.join(dataDir, 'settings.json'));
  const config: Config = {
    ...base,
    ...fromFile,
    dataDir,
    imagesDir: path.join(dataDir, 'images'),
    shippedModelsDir: base.modelsDir,
    modelsDirSource: 'shipped',
  };
  const origins: NonNullable<Config['origins']> = {};
  const variables: Record<OriginKey, string> = { port: 'TIREWEAR_PORT', host: 'TIREWEAR_HOST', lanAccess: 'TIREWEAR_LAN_ACCESS' };
  for (const key of ['port', 'host', 'lanAccess'] as const) {
    const name = variables[key];
    if (vars[name]) {
      origins[key] = flags[name]
        ? { source: 'flag', setBy: `--${name.slice('TIREWEAR_'.length).toLowerCase().replace(/_/g, '-')}` }
        : { source: 'env', setBy: name };
    } else if (fromFile[key] !== undefined) {
      origins[key] = { source: 'file', setBy: null };
    }
  }
  config.origins = origins;
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
    config.allowedHosts = vars.TIREWEAR_ALLOWED_HOSTS.split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
  }
  if (vars.TIREWEAR_TRUST_PROXY) {
    config.trustProxy = trustProxyOf(vars.TIREWEAR_TRUST_PROXY);
  }
  if (vars.TIREWEAR_LOG_LEVEL) {
    const level = vars.TIREWEAR_LOG_LEVEL.trim().toLowerCase();
    if (!LOG_LEVELS.includes(level)) {
      throw new ConfigError(`TIREWEAR_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${quoted(vars.TIREWEAR_LOG_LEVEL)}`);
    }
    config.logLevel = level;
  }
  if (vars.TIREWEAR_ANALYSIS_CONCURRENCY) {
    config.analysisConcurrency = int('TIREWEAR_ANALYSIS_CONCURRENCY', vars.TIREWEAR_ANALYSIS_CONCURRENCY, 1, 64);
  }
  if (vars.TIREWEAR_ANALYSIS_QUEUE_LIMIT) {
    config.analysisQueueLimit = int('TIREWEAR_ANALYSIS_QUEUE_LIMIT', vars.TIREWEAR_ANALYSIS_QUEUE_LIMIT, 0, 10000);
  }
  if (vars.TIREWEAR_REGISTRATIONS_PER_HOUR) {
    config.registrationsPerHour = int('TIREWEAR_REGISTRATIONS_PER_HOUR', vars.TIREWEAR_REGISTRATIONS_PER_HOUR, 1, 1_000_000);
  }
  if (vars.TIREWEAR_REGISTRATION) {
    const value = vars.TIREWEAR_REGISTRATION.trim().toLowerCase();
    if (value !== 'open' && value !== 'first') {
      throw new ConfigError(`TIREWEAR_REGISTRATION must be open or first, got ${quoted(vars.TIREWEAR_REGISTRATION)}`);
    }
    config.registration = value;
  }
  const hubUrl = vars.TIREWEAR_HUB_URL;
  const hubApiKey = vars.TIREWEAR_HUB_API_KEY;
  if (hubUrl || hubApiKey) {
    const [set, unset] = hubUrl ? ['TIREWEAR_HUB_URL', 'TIREWEAR_HUB_API_KEY'] : ['TIREWEAR_HUB_API_KEY', 'TIREWEAR_HUB_URL'];
    if (!hubUrl || !hubApiKey) throw new ConfigError(`${set} is set but ${unset} is not: set both to link this computer to a hub, or neither`);
    config.sync = checkedLink({ hubUrl, hubApiKey }, (field) => (field === 'hubUrl' ? 'TIREWEAR_HUB_URL' : 'TIREWEAR_HUB_API_KEY'));
  }

  const keySource = vars.TIREWEAR_LICENSE_PUBLIC_KEY ?? (base.licensePublicKeyPem || DEFAULT_LICENSE_KEY_FILE);
  config.licensePublicKeyPem = readPem('TIREWEAR_LICENSE_PUBLIC_KEY', keySource);
  try {
    loadLicensePublicKey(config.licensePublicKeyPem); // checked here so a wrong key stops the start by name (exit 2)
  } catch (error) {
    throw new ConfigError(`TIREWEAR_LICENSE_PUBLIC_KEY (${keySource.includes('-----BEGIN') ? 'PEM text' : keySource}): ${(error as Error).message}`);
  }

  if (config.databaseUrl !== null && config.sync !== null) {
    throw new ConfigError(
      `${vars.TIREWEAR_HUB_URL ? 'TIREWEAR_HUB_URL' : 'settings.json sync'} links this server to a hub, but TIREWEAR_DATABASE_URL makes it one: a hub does not link to another hub (remove the link)`,
    );
  }

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
