/**
 * `<dataDir>/settings.json`: read (a byte-order mark allowed), and every key checked like the
 * variable it stands for, so a bad value stops the start naming the file and the key.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { checkedLink } from './hub-link.js';
import { ConfigError, quoted, type Config, type FileSettings } from './schema.js';

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
 * The server keys of settings.json, each checked like its variable (type and range); a bad one is a
 * ConfigError naming the file and the key, so the desktop shows its "settings are invalid" dialog.
 * The keys only the renderer and the shell read (`ui`, `keepApiRunningInTray`) are checked too:
 * GET /settings hands them on as they are. Unknown keys are left alone (a newer version's).
 */
export function settingsFromFile(file: FileSettings, where: string): Partial<Config> {
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

/** The models a shop calibration put in settings.json (`modelsDir`, relative to the data folder). */
export function applyFileModelsDir(config: Config, file: FileSettings, dataDir: string): void {
  if (file.modelsDir !== undefined) {
    if (typeof file.modelsDir !== 'string' || !file.modelsDir.trim()) {
      throw new ConfigError(`${path.join(dataDir, 'settings.json')}: modelsDir must be a folder path`);
    }
    config.modelsDir = path.resolve(dataDir, file.modelsDir);
    config.modelsDirSource = 'settings';
  }
}
