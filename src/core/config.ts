/**
 * Configuration is built once, in this order: defaults ← settings file ← environment ← CLI.
 * Nothing else in the core reads process.env. What a Config is: config/schema.ts; settings.json:
 * config/file.ts; the variables: config/env.ts; the flags: config/flags.ts.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyEnvironment, checkCombination, licenseKeyPem } from './config/env.js';
import { applyFileModelsDir, readSettingsFile, settingsFromFile } from './config/file.js';
import { parseFlags } from './config/flags.js';
import { DEFAULT_REGISTRATIONS_PER_HOUR, type Config, type Env, type OriginKey } from './config/schema.js';

export { PRIVATE_PROXIES, readPem } from './config/env.js';
export { readSettingsFile } from './config/file.js';
export { SERVE_FLAGS, serveUsage } from './config/flags.js';
export {
  ConfigError,
  DEFAULT_REGISTRATIONS_PER_HOUR,
  isLoopback,
  SQLITE_FILE_NAME,
  type Config,
  type Env,
  type FileSettings,
  type HubLink,
  type OriginKey,
  type SettingOrigin,
} from './config/schema.js';

// Two folders up from here is the repository (and, bundled, from out/main the app): keep this file where it is.
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
  const fromFile = settingsFromFile(file, path.join(dataDir, 'settings.json'));
  const config: Config = {
    ...base,
    ...fromFile,
    dataDir,
    imagesDir: path.join(dataDir, 'images'),
    shippedModelsDir: base.modelsDir,
    modelsDirSource: 'shipped',
  };
  config.origins = originsOf(vars, flags, fromFile);
  applyFileModelsDir(config, file, dataDir);
  applyEnvironment(config, vars);
  config.licensePublicKeyPem = licenseKeyPem(vars, base.licensePublicKeyPem, DEFAULT_LICENSE_KEY_FILE);
  checkCombination(config, vars);
  return config;
}

/** Where port, host and LAN access came from, for GET /settings: a flag, a variable or settings.json. */
function originsOf(vars: Env, flags: Env, fromFile: Partial<Config>): NonNullable<Config['origins']> {
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
  return origins;
}
