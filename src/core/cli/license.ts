/**
 * Vendor tool for license codes (never shipped with a private key).
 *
 *   npm run license -- keygen --out DIR
 *   npm run license -- issue --key PRIVATE.pem --kind pack [--scans 100] [--id ID]
 *   npm run license -- issue --key PRIVATE.pem --kind pro --expires 2027-12-31T00:00:00Z [--id ID]
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateLicenseKeyPair, issueLicenseCode, type LicensePayload } from '../licensing/codes.js';

const USAGE = `usage:
  license keygen --out DIR
  license issue --key PRIVATE.pem --kind pack [--scans 100] [--id ID]
  license issue --key PRIVATE.pem --kind pro --expires ISO-8601 [--id ID]`;

class UsageError extends Error {}

function flags(args: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const match = /^--([a-z]+)(?:=(.*))?$/.exec(args[i] ?? '');
    if (!match) throw new UsageError(`unexpected argument "${args[i]}"`);
    const value = match[2] ?? args[++i];
    if (value === undefined) throw new UsageError(`--${match[1]} needs a value`);
    out.set(match[1]!, value);
  }
  return out;
}

function required(options: Map<string, string>, name: string): string {
  const value = options.get(name);
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

function keygen(options: Map<string, string>): void {
  const dir = path.resolve(required(options, 'out'));
  const privateFile = path.join(dir, 'license-private.pem');
  if (existsSync(privateFile)) throw new UsageError(`${privateFile} exists; refusing to overwrite a signing key`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { publicKeyPem, privateKeyPem } = generateLicenseKeyPair();
  writeFileSync(privateFile, privateKeyPem, { mode: 0o600 });
  writeFileSync(path.join(dir, 'license-public.pem'), publicKeyPem);
  process.stdout.write(`wrote ${privateFile} (keep it secret) and ${path.join(dir, 'license-public.pem')}\n`);
}

function issue(options: Map<string, string>): void {
  const privateKeyPem = readFileSync(required(options, 'key'), 'utf8');
  const id = options.get('id') ?? randomUUID();
  const kind = required(options, 'kind');
  let payload: LicensePayload;
  if (kind === 'pack') {
    const scans = Number(options.get('scans') ?? '100');
    payload = { v: 1, id, kind: 'pack', scans };
  } else if (kind === 'pro') {
    const expires = required(options, 'expires');
    if (Number.isNaN(Date.parse(expires))) throw new UsageError(`--expires "${expires}" is not an ISO 8601 time`);
    payload = { v: 1, id, kind: 'pro', expiresAt: expires };
  } else {
    throw new UsageError('--kind must be pack or pro');
  }
  process.stdout.write(`${issueLicenseCode(payload, privateKeyPem)}\n`);
}

function main(argv: readonly string[]): void {
  const [command, ...rest] = argv;
  const options = flags(rest);
  if (command === 'keygen') keygen(options);
  else if (command === 'issue') issue(options);
  else throw new UsageError(command ? `unknown command "${command}"` : 'no command');
}

try {
  main(process.argv.slice(2));
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`license: ${message}\n${error instanceof UsageError ? USAGE + '\n' : ''}`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
