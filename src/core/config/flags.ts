/**
 * The command-line flags of `npm run serve`: one per TIREWEAR_* variable, named like it, turned into
 * the variables they stand for (a flag wins over the environment: config.ts).
 */
import { ConfigError, type Env } from './schema.js';

/** True when the arguments ask for help (`--help` or `-h` before any `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
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
export function parseFlags(argv: readonly string[]): Env {
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
