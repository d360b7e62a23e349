import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { wantsHelp } from '../../src/core/cli/args.js';
import { ConfigError, defaultConfig, loadConfig, readSettingsFile, SERVE_FLAGS, serveUsage } from '../../src/core/config.js';
import { describeStartupFailure } from '../../src/main/startup-error.js';

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

  it('records where port, host and LAN access came from, for Settings (issue 42)', () => {
    expect(loadConfig(env()).origins).toEqual({});
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ port: 9001, lanAccess: true, host: '0.0.0.0' }));
    expect(loadConfig(env()).origins).toEqual({
      port: { source: 'file', setBy: null },
      host: { source: 'file', setBy: null },
      lanAccess: { source: 'file', setBy: null },
    });
    const overridden = loadConfig(env({ TIREWEAR_PORT: '43117', TIREWEAR_LAN_ACCESS: 'false', TIREWEAR_HOST: '127.0.0.1' }), ['--port', '43119']);
    expect(overridden.port).toBe(43119);
    expect(overridden.origins).toEqual({
      port: { source: 'flag', setBy: '--port' },
      host: { source: 'env', setBy: 'TIREWEAR_HOST' },
      lanAccess: { source: 'env', setBy: 'TIREWEAR_LAN_ACCESS' },
    });
    // an empty variable sets nothing, as loadConfig reads it
    expect(loadConfig(env({ TIREWEAR_PORT: '' })).origins?.port).toEqual({ source: 'file', setBy: null });
    expect(loadConfig(env(), ['--lan-access=true']).origins?.lanAccess).toEqual({ source: 'flag', setBy: '--lan-access' });
  });

  it('reads a settings.json saved with a byte-order mark (Windows Notepad, PowerShell 5)', () => {
    writeFileSync(path.join(dir, 'settings.json'), `\uFEFF${JSON.stringify({ port: 9005, keepApiRunningInTray: true }, null, 2).replaceAll('\n', '\r\n')}\r\n`);
    expect(loadConfig(env()).port).toBe(9005);
    expect(readSettingsFile(dir)).toEqual({ port: 9005, keepApiRunningInTray: true });
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
    const privatePem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => loadConfig(env({ TIREWEAR_LICENSE_PUBLIC_KEY: privatePem }))).toThrow(/TIREWEAR_LICENSE_PUBLIC_KEY \(PEM text\): .*PRIVATE key/);
    expect(() => loadConfig(env({ TIREWEAR_LOG_LEVEL: 'bogus' }))).toThrow(
      /TIREWEAR_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "bogus"/,
    );
    expect(loadConfig(env({ TIREWEAR_LOG_LEVEL: ' Debug ' })).logLevel).toBe('debug');
    expect(() => loadConfig(env(), ['--port'])).toThrow(ConfigError);
    expect(() => loadConfig(env(), ['stray'])).toThrow(/unknown argument/);
  });

  it('throttles registrations at 10 per address and hour unless told otherwise', () => {
    expect(loadConfig(env()).registrationsPerHour).toBe(10);
    expect(loadConfig(env({ TIREWEAR_REGISTRATIONS_PER_HOUR: '50' })).registrationsPerHour).toBe(50);
    expect(loadConfig(env(), ['--registrations-per-hour', '5']).registrationsPerHour).toBe(5);
    expect(() => loadConfig(env({ TIREWEAR_REGISTRATIONS_PER_HOUR: '0' }))).toThrow(/TIREWEAR_REGISTRATIONS_PER_HOUR/);
  });

  it('lets anyone register unless told to take only the first account', () => {
    expect(loadConfig(env()).registration).toBe('open');
    expect(loadConfig(env({ TIREWEAR_REGISTRATION: ' First ' })).registration).toBe('first');
    expect(loadConfig(env(), ['--registration', 'first']).registration).toBe('first');
    expect(() => loadConfig(env({ TIREWEAR_REGISTRATION: 'closed' }))).toThrow(/TIREWEAR_REGISTRATION must be open or first, got "closed"/);
  });

  it('loads the models settings.json names (a shop calibration), relative to the data folder; the environment still wins', () => {
    const shipped = defaultConfig().modelsDir;
    expect(loadConfig(env())).toMatchObject({ modelsDir: shipped, shippedModelsDir: shipped, modelsDirSource: 'shipped' });
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ modelsDir: 'models-shop' }));
    expect(loadConfig(env())).toMatchObject({ modelsDir: path.join(dir, 'models-shop'), shippedModelsDir: shipped, modelsDirSource: 'settings' });
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ modelsDir: '/srv/tirewear/models-shop' }));
    expect(loadConfig(env()).modelsDir).toBe('/srv/tirewear/models-shop');
    expect(loadConfig(env({ TIREWEAR_MODELS_DIR: '/opt/models' }))).toMatchObject({
      modelsDir: '/opt/models',
      shippedModelsDir: shipped,
      modelsDirSource: 'env',
    });
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
    expect(hub.trustProxy).toBe('loopback,linklocal,uniquelocal,100.64.0.0/10'); // private proxies, not every hop
    expect(loadConfig(env({ TIREWEAR_TRUST_PROXY: '10.0.0.1' })).trustProxy).toBe('10.0.0.1');
    expect(loadConfig(env({ TIREWEAR_TRUST_PROXY: ' 10.0.0.0/8, loopback , ::1 ' })).trustProxy).toBe('10.0.0.0/8,loopback,::1');
    for (const bad of ['10.0.0.300', '10.0.0.0/33', 'proxy.internal', '2', '10.0.0.1/8/2']) {
      expect(() => loadConfig(env({ TIREWEAR_TRUST_PROXY: bad })), bad).toThrow(/TIREWEAR_TRUST_PROXY must be/);
    }
    expect(loadConfig(env()).trustProxy).toBe(false);
  });

  it('TIREWEAR_TRUST_PROXY=true: the caller is the address the proxy appended, not one the client wrote to its left', async () => {
    const app = Fastify({ trustProxy: loadConfig(env({ TIREWEAR_TRUST_PROXY: 'true' })).trustProxy });
    app.get('/', async (request) => request.ip);
    const ipFor = async (forwardedFor: string) => (await app.inject({ url: '/', headers: { 'x-forwarded-for': forwardedFor } })).body;
    expect(await ipFor('9.9.9.9, 203.0.113.7')).toBe('203.0.113.7'); // the proxy (127.0.0.1) appended 203.0.113.7
    expect(await ipFor('203.0.113.7, 10.0.0.9')).toBe('203.0.113.7'); // a second, private proxy in between
    expect(await ipFor('198.51.100.1')).toBe('198.51.100.1');
    await app.close();
  });

  const hubKey = `tw_${'A1b2'.repeat(8)}`;

  it('links a hub with both URL and key, checked as the link route checks them', () => {
    expect(loadConfig(env()).sync).toBeNull();
    expect(loadConfig(env({ TIREWEAR_HUB_URL: 'https://hub.example/', TIREWEAR_HUB_API_KEY: hubKey })).sync).toEqual({
      hubUrl: 'https://hub.example',
      hubApiKey: hubKey,
    });
    expect(loadConfig(env(), ['--hub-url', 'http://10.0.0.5:8787', '--hub-api-key', hubKey]).sync).toEqual({
      hubUrl: 'http://10.0.0.5:8787',
      hubApiKey: hubKey,
    });
  });

  it('refuses a half or malformed hub link at start, naming the variable (never echoing the key)', () => {
    const refused = (extra: Record<string, string>, reason: RegExp) => {
      expect(() => loadConfig(env(extra)), JSON.stringify(extra)).toThrow(ConfigError);
      expect(() => loadConfig(env(extra))).toThrow(reason);
    };
    refused({ TIREWEAR_HUB_URL: 'https://hub.example' }, /TIREWEAR_HUB_URL is set but TIREWEAR_HUB_API_KEY is not/);
    refused({ TIREWEAR_HUB_API_KEY: hubKey }, /TIREWEAR_HUB_API_KEY is set but TIREWEAR_HUB_URL is not/);
    refused(
      { TIREWEAR_HUB_URL: '127.0.0.1:8911', TIREWEAR_HUB_API_KEY: hubKey },
      /^TIREWEAR_HUB_URL must be a full URL such as https:\/\/hub\.example\.com, got "127\.0\.0\.1:8911"/,
    );
    refused({ TIREWEAR_HUB_URL: 'localhost:8911', TIREWEAR_HUB_API_KEY: hubKey }, /^TIREWEAR_HUB_URL must start with http:\/\/ or https:\/\//);
    refused({ TIREWEAR_HUB_URL: 'https://u:p@hub.example', TIREWEAR_HUB_API_KEY: hubKey }, /^TIREWEAR_HUB_URL must not contain a user name/);
    refused(
      { TIREWEAR_HUB_URL: 'https://hub.example', TIREWEAR_HUB_API_KEY: 'tw_x' },
      /^TIREWEAR_HUB_API_KEY must be an API key of the hub: tw_ followed by 32 letters or digits$/,
    );
    // refused, and the refusal never echoes the secret
    expect(() => loadConfig(env({ TIREWEAR_HUB_URL: 'https://hub.example', TIREWEAR_HUB_API_KEY: 'secret-value-123' }))).toThrow(
      /TIREWEAR_HUB_API_KEY must be an API key of the hub/,
    );
    try {
      loadConfig(env({ TIREWEAR_HUB_URL: 'https://hub.example', TIREWEAR_HUB_API_KEY: 'secret-value-123' }));
    } catch (error) {
      expect((error as Error).message).not.toContain('secret-value-123');
    }
  });

  it('refuses a malformed hub link in settings.json, naming the file and the key', () => {
    const settings = path.join(dir, 'settings.json');
    writeFileSync(settings, JSON.stringify({ sync: { hubUrl: 'https://hub.example', hubApiKey: hubKey } }));
    expect(loadConfig(env()).sync).toEqual({ hubUrl: 'https://hub.example', hubApiKey: hubKey });
    for (const [sync, reason] of [
      [{ hubUrl: 'hub.example', hubApiKey: hubKey }, /settings\.json: sync\.hubUrl must be a full URL/],
      [{ hubUrl: 'https://hub.example', hubApiKey: 'nope' }, /settings\.json: sync\.hubApiKey must be an API key of the hub/],
      [{ hubUrl: 'https://hub.example' }, /settings\.json: sync must hold hubUrl and hubApiKey/],
      ['https://hub.example', /settings\.json: sync must hold hubUrl and hubApiKey/],
    ] as const) {
      writeFileSync(settings, JSON.stringify({ sync }));
      expect(() => loadConfig(env()), JSON.stringify(sync)).toThrow(ConfigError);
      expect(() => loadConfig(env()), JSON.stringify(sync)).toThrow(reason);
    }
  });

  it('type- and range-checks settings.json like the variables, naming the file and the key', () => {
    const settings = path.join(dir, 'settings.json');
    for (const [content, reason] of [
      [{ port: 'abc' }, /settings\.json: port must be a whole number from 0 to 65535, got "abc"/],
      [{ port: 70000 }, /settings\.json: port must be a whole number from 0 to 65535, got 70000/],
      [{ port: 80.5 }, /settings\.json: port must be a whole number/],
      [{ analysisConcurrency: 0 }, /settings\.json: analysisConcurrency must be a whole number from 1 to 64, got 0/],
      [{ analysisConcurrency: 65 }, /settings\.json: analysisConcurrency must be a whole number from 1 to 64/],
      [{ analysisQueueLimit: -1 }, /settings\.json: analysisQueueLimit must be a whole number from 0 to 10000/],
      [{ lanAccess: 'yes' }, /settings\.json: lanAccess must be true or false, got "yes"/],
      [{ host: '' }, /settings\.json: host must be an address/],
      [{ host: 42 }, /settings\.json: host must be an address/],
      [{ allowedHosts: 'shop-pc' }, /settings\.json: allowedHosts must be a list of host names/],
      [{ allowedHosts: ['shop-pc', 7] }, /settings\.json: allowedHosts must be a list of host names/],
      [{ keepApiRunningInTray: 'true' }, /settings\.json: keepApiRunningInTray must be true or false/],
      [{ ui: 'mm' }, /settings\.json: ui must be an object/],
      [{ ui: { units: 'inch' } }, /settings\.json: ui\.units must be "mm" or "32nds", got "inch"/],
      [{ ui: { legalMinimum: 3 } }, /settings\.json: ui\.legalMinimum must be "1\.6mm" or "2\/32in"/],
      [{ ui: { shopName: 12 } }, /settings\.json: ui\.shopName must be text/],
      [null, /settings\.json must hold a JSON object/],
      [[1, 2], /settings\.json must hold a JSON object/],
    ] as const) {
      writeFileSync(settings, JSON.stringify(content));
      let thrown: unknown;
      try {
        loadConfig(env());
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(content)).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message, JSON.stringify(content)).toMatch(reason);
      expect((thrown as Error).message).toContain(settings);
      // The desktop shows its "settings are invalid" dialog naming the file, not "cannot start".
      expect(describeStartupFailure(thrown, { host: '127.0.0.1', port: 8787, dataDir: dir }).title).toBe('TireWear settings are invalid');
    }
  });

  it('accepts what the Settings screen and the link route write', () => {
    writeFileSync(
      path.join(dir, 'settings.json'),
      JSON.stringify({
        port: 8788,
        host: '0.0.0.0',
        lanAccess: true,
        allowedHosts: ['Shop-PC', ' till-2 '],
        analysisConcurrency: 4,
        analysisQueueLimit: 0,
        keepApiRunningInTray: true,
        ui: { units: '32nds', legalMinimum: '2/32in', shopName: 'Main Street' },
        sync: { hubUrl: 'https://hub.example', hubApiKey: hubKey },
        somethingNewer: { kept: true },
      }),
    );
    expect(loadConfig(env())).toMatchObject({
      port: 8788,
      host: '0.0.0.0',
      lanAccess: true,
      allowedHosts: ['shop-pc', 'till-2'],
      analysisConcurrency: 4,
      analysisQueueLimit: 0,
      sync: { hubUrl: 'https://hub.example', hubApiKey: hubKey },
    });
  });

  it('refuses a misspelt flag with the list of accepted ones instead of ignoring it', () => {
    expect(() => loadConfig(env(), ['--port', '9000', '--prot', '9001'])).toThrow(ConfigError);
    expect(() => loadConfig(env(), ['--prot', '9001'])).toThrow(
      /^unknown flag --prot; accepted: --data-dir, --port, --host, .*--hub-url, --hub-api-key.*\(npm run serve -- --help\)/,
    );
    expect(() => loadConfig(env(), ['--registrations', '5'])).toThrow(/unknown flag --registrations/);
    for (const flag of [
      '--data-dir',
      '--port',
      '--host',
      '--lan-access',
      '--allowed-hosts',
      '--license-public-key',
      '--models-dir',
      '--renderer-dir',
      '--database-url',
      '--images-dir',
      '--trust-proxy',
      '--registrations-per-hour',
      '--analysis-concurrency',
      '--analysis-queue-limit',
      '--hub-url',
      '--hub-api-key',
      '--log-level',
    ]) {
      expect(SERVE_FLAGS.map((f) => f.flag)).toContain(flag);
    }
  });

  it("--help is the entry point's to answer (usage listing every flag), never read as a setting", () => {
    expect(wantsHelp(['--port', '9000', '--help'])).toBe(true);
    expect(wantsHelp(['-h'])).toBe(true);
    expect(wantsHelp(['--port', '9000'])).toBe(false);
    expect(serveUsage()).toMatch(/usage: npm run serve -- \[--FLAG VALUE/);
    for (const { flag } of SERVE_FLAGS) expect(serveUsage()).toContain(flag);
    expect(() => loadConfig(env(), ['--help'])).toThrow(ConfigError);
  });

  it('has a default that points at the repository folders', () => {
    const base = defaultConfig('/opt/tw');
    expect(base.modelsDir).toBe('/opt/tw/models');
    expect(base.rendererDir).toBe('/opt/tw/out/renderer');
  });
});
