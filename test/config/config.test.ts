import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, defaultConfig, loadConfig } from '../../src/core/config.js';

const pem = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe('loadConfig', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tw-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const env = (extra: Record<string, string> = {}) => ({
    TIREWEAR_DATA_DIR: dir,
    TIREWEAR_LICENSE_PUBLIC_KEY: pem,
    ...extra,
  });

  it('defaults to loopback port 8787 with data in the data dir', () => {
    const config = loadConfig(env());
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(8787);
    expect(config.dataDir).toBe(dir);
    expect(config.imagesDir).toBe(path.join(dir, 'images'));
    expect(config.databaseUrl).toBeNull();
    expect(config.lanAccess).toBe(false);
  });

  it('layers defaults, settings file, environment and CLI in that order', () => {
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ port: 9001, analysisQueueLimit: 5, ui: { units: 'mm' } }));
    expect(loadConfig(env()).port).toBe(9001);
    expect(loadConfig(env()).analysisQueueLimit).toBe(5);
    expect(loadConfig(env({ TIREWEAR_PORT: '9002' })).port).toBe(9002);
    expect(loadConfig(env({ TIREWEAR_PORT: '9002' }), ['--port', '9003']).port).toBe(9003);
    expect(loadConfig(env(), ['--port=9004']).port).toBe(9004);
    expect(loadConfig(env())).not.toHaveProperty('ui');
  });

  it('reads the license key from PEM text or from a file', () => {
    const file = path.join(dir, 'key.pem');
    writeFileSync(file, pem);
    expect(loadConfig(env({ TIREWEAR_LICENSE_PUBLIC_KEY: file })).licensePublicKeyPem).toBe(pem);
    expect(() => loadConfig(env({ TIREWEAR_LICENSE_PUBLIC_KEY: path.join(dir, 'missing.pem') }))).toThrow(ConfigError);
  });

  it('refuses malformed values with a message naming the variable', () => {
    expect(() => loadConfig(env({ TIREWEAR_PORT: 'eighty' }))).toThrow(/TIREWEAR_PORT/);
    expect(() => loadConfig(env({ TIREWEAR_PORT: '70000' }))).toThrow(/TIREWEAR_PORT/);
    expect(() => loadConfig(env({ TIREWEAR_LAN_ACCESS: 'maybe' }))).toThrow(/TIREWEAR_LAN_ACCESS/);
    expect(() => loadConfig(env(), ['--port'])).toThrow(ConfigError);
    expect(() => loadConfig(env(), ['stray'])).toThrow(/unknown argument/);
  });

  it('throttles registrations at 10 per address and hour unless told otherwise', () => {
    expect(loadConfig(env()).registrationsPerHour).toBe(10);
    expect(loadConfig(env({ TIREWEAR_REGISTRATIONS_PER_HOUR: '50' })).registrationsPerHour).toBe(50);
    expect(loadConfig(env(), ['--registrations-per-hour', '5']).registrationsPerHour).toBe(5);
    expect(() => loadConfig(env({ TIREWEAR_REGISTRATIONS_PER_HOUR: '0' }))).toThrow(/TIREWEAR_REGISTRATIONS_PER_HOUR/);
  });

  it('loads the models settings.json names (a shop calibration), relative to the data folder; the environment still wins', () => {
    const shipped = defaultConfig().modelsDir;
    expect(loadConfig(env())).toMatchObject({ modelsDir: shipped, shippedModelsDir: shipped, modelsDirSource: 'shipped' });
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ modelsDir: 'models-shop' }));
    expect(loadConfig(env())).toMatchObject({ modelsDir: path.join(dir, 'models-shop'), shippedModelsDir: shipped, modelsDirSource: 'settings' });
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ modelsDir: '/srv/tirewear/models-shop' }));
    expect(loadConfig(env()).modelsDir).toBe('/srv/tirewear/models-shop');
    expect(loadConfig(env({ TIREWEAR_MODELS_DIR: '/opt/models' }))).toMatchObject({ modelsDir: '/opt/models', shippedModelsDir: shipped, modelsDirSource: 'env' });
    for (const bad of ['', '  ', 42, null]) {
      writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ modelsDir: bad }));
      expect(() => loadConfig(env()), JSON.stringify(bad)).toThrow(/settings\.json: modelsDir must be a folder path/);
    }
  });

  it('refuses a broken settings file instead of ignoring it', () => {
    writeFileSync(path.join(dir, 'settings.json'), '{ not json');
    expect(() => loadConfig(env())).toThrow(/settings\.json/);
  });

  it('binds beyond loopback only when LAN access is switched on', () => {
    expect(() => loadConfig(env({ TIREWEAR_HOST: '0.0.0.0' }))).toThrow(/LAN_ACCESS/);
    const lan = loadConfig(env({ TIREWEAR_HOST: '0.0.0.0', TIREWEAR_LAN_ACCESS: 'true' }));
    expect(lan.lanAccess).toBe(true);
  });

  it('selects hub mode and proxy trust only when asked', () => {
    const hub = loadConfig(env({ TIREWEAR_DATABASE_URL: 'postgres://u:p@db/tw', TIREWEAR_TRUST_PROXY: 'true' }));
    expect(hub.databaseUrl).toBe('postgres://u:p@db/tw');
    expect(hub.trustProxy).toBe(true);
    expect(loadConfig(env({ TIREWEAR_TRUST_PROXY: '10.0.0.1' })).trustProxy).toBe('10.0.0.1');
    expect(loadConfig(env()).trustProxy).toBe(false);
  });

  it('links a hub only with both URL and key', () => {
    expect(loadConfig(env({ TIREWEAR_HUB_URL: 'https://hub.example' })).sync).toBeNull();
    expect(loadConfig(env({ TIREWEAR_HUB_URL: 'https://hub.example', TIREWEAR_HUB_API_KEY: 'tw_x' })).sync).toEqual({
      hubUrl: 'https://hub.example',
      hubApiKey: 'tw_x',
    });
  });

  it('has a default that points at the repository folders', () => {
    const base = defaultConfig('/opt/tw');
    expect(base.modelsDir).toBe('/opt/tw/models');
    expect(base.rendererDir).toBe('/opt/tw/out/renderer');
  });
});
