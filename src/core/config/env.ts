/**
 * The TIREWEAR_* variables (and the flags, which arrive here as the same names): each checked, so a
 * malformed value stops the start naming the variable. Nothing else in the core reads process.env.
 */
import path from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { loadLicensePublicKey } from '../licensing/codes.js';
import { checkedLink } from './hub-link.js';
import { ConfigError, isLoopback, quoted, type Config, type Env } from './schema.js';

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

/** Every variable over what the defaults and settings.json gave, in the order they are checked. */
export function applyEnvironment(config: Config, vars: Env): void {
  applyPlaces(config, vars);
  applyLimits(config, vars);
  applyHubLink(config, vars);
}

/** Where the server listens, keeps its data and finds its models, and who may reach it. */
function applyPlaces(config: Config, vars: Env): void {
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
}

/** Logging, the analysis queue and registration. */
function applyLimits(config: Config, vars: Env): void {
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
}

/** TIREWEAR_HUB_URL and TIREWEAR_HUB_API_KEY: both or neither, checked as linking in Settings checks them. */
function applyHubLink(config: Config, vars: Env): void {
  const hubUrl = vars.TIREWEAR_HUB_URL;
  const hubApiKey = vars.TIREWEAR_HUB_API_KEY;
  if (hubUrl || hubApiKey) {
    const [set, unset] = hubUrl ? ['TIREWEAR_HUB_URL', 'TIREWEAR_HUB_API_KEY'] : ['TIREWEAR_HUB_API_KEY', 'TIREWEAR_HUB_URL'];
    if (!hubUrl || !hubApiKey) throw new ConfigError(`${set} is set but ${unset} is not: set both to link this computer to a hub, or neither`);
    config.sync = checkedLink({ hubUrl, hubApiKey }, (field) => (field === 'hubUrl' ? 'TIREWEAR_HUB_URL' : 'TIREWEAR_HUB_API_KEY'));
  }
}

/**
 * The trusted license key: TIREWEAR_LICENSE_PUBLIC_KEY, else the base config's, else `defaultFile`;
 * PEM text or a file, checked here so a wrong key stops the start by name (exit 2).
 */
export function licenseKeyPem(vars: Env, basePem: string, defaultFile: string): string {
  const keySource = vars.TIREWEAR_LICENSE_PUBLIC_KEY ?? (basePem || defaultFile);
  const pem = readPem('TIREWEAR_LICENSE_PUBLIC_KEY', keySource);
  try {
    loadLicensePublicKey(pem); // checked here so a wrong key stops the start by name (exit 2)
  } catch (error) {
    throw new ConfigError(`TIREWEAR_LICENSE_PUBLIC_KEY (${keySource.includes('-----BEGIN') ? 'PEM text' : keySource}): ${(error as Error).message}`);
  }
  return pem;
}

/** Settings that cannot go together, whichever source each came from. */
export function checkCombination(config: Config, vars: Env): void {
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
}
