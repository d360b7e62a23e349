/**
 * Vendor tool for license codes (never shipped with a private key).
 *
 *   npm run license -- keygen --out DIR
 *   npm run license -- issue --key PRIVATE.pem --kind pack [--scans 100] [--id ID]
 *   npm run license -- issue --key PRIVATE.pem --kind pro --expires 2027-12-31T00:00:00Z [--id ID]
 *
 * Flags are strict (args.ts): an unknown flag, or one that does not apply to the kind (`--expires`
 * on a pack, `--scans` on pro), is refused rather than ignored, so a typo never issues another
 * product. The code goes to stdout, what was issued (with the id to record) to stderr.
 * Exit 0 issued, 1 an unexpected failure, 2 a usage mistake, a bad value or an unusable key file.
 */
import { createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateLicenseKeyPair, ISO_DATE_TIME, isValidCodeId, issueLicenseCode, MAX_PACK_SCANS, type LicensePayload } from '../licensing/codes.js';
import { answerHelp, parseCli, usageError } from './args.js';

const USAGE = `usage:
  license keygen --out DIR
  license issue --key PRIVATE.pem --kind pack [--scans N] [--id ID]
  license issue --key PRIVATE.pem --kind pro --expires WHEN [--id ID]
(npm run license -- …)
  --scans N       scans in the pack: a whole number from 1 to ${MAX_PACK_SCANS} (default 100)
  --expires WHEN  end of a pro license: an ISO 8601 date-time with a zone such as
                  2027-12-31T00:00:00Z or 2027-12-31T00:00:00+01:00, or a date such as
                  2027-12-31, which runs to the end of that UTC day (2027-12-31T23:59:59Z)
  --id ID         the code's id: 1 to 64 visible ASCII characters, no spaces (default: a random
                  UUID). Record it with the shop it goes to: a code is redeemable once per
                  installation, not once in the world (docs/LICENSES.md)`;

function usage(problem: string): never {
  return usageError('license', USAGE, problem);
}

/** A value the tool cannot use that is not a usage mistake as such (the key file): exit 2, no usage. */
function refuse(problem: string): never {
  process.stderr.write(`license: ${problem}\n`);
  process.exit(2);
}

function keygen(args: readonly string[]): void {
  const { values, positionals } = parseCli('license', USAGE, { out: { type: 'string' } }, args);
  if (positionals.length) usage(`unexpected argument "${positionals[0]}"`);
  if (!values.out) usage('--out DIR is required (where license-private.pem and license-public.pem are written)');
  const dir = path.resolve(values.out);
  const privateFile = path.join(dir, 'license-private.pem');
  if (existsSync(privateFile)) refuse(`${privateFile} exists; refusing to overwrite a signing key`);
  const publicFile = path.join(dir, 'license-public.pem');
  // the public key may be the one the app trusts (resources/): a new pair would orphan every code issued
  if (existsSync(publicFile)) refuse(`${publicFile} exists; refusing to overwrite the public key apps may trust (choose an empty --out folder)`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { publicKeyPem, privateKeyPem } = generateLicenseKeyPair();
  writeFileSync(privateFile, privateKeyPem, { mode: 0o600 });
  writeFileSync(publicFile, publicKeyPem);
  process.stdout.write(`wrote ${privateFile} (keep it secret) and ${publicFile}\n`);
}

function parseScans(raw: string | undefined): number {
  if (raw === undefined) return 100;
  const scans = Number(raw);
  if (!/^\d+$/.test(raw) || scans < 1 || scans > MAX_PACK_SCANS) {
    usage(`--scans must be a whole number from 1 to ${MAX_PACK_SCANS}, got "${raw}"`);
  }
  return scans;
}

/**
 * The expiresAt to sign: an ISO 8601 date-time as given, or a plain date as the last second of that
 * UTC day. Null for anything else, including a day or time that does not exist (2027-02-30 would
 * otherwise be read as 2 March).
 */
function parseExpires(raw: string): string | null {
  const candidate = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T23:59:59Z` : raw;
  if (!ISO_DATE_TIME.test(candidate) || Number.isNaN(Date.parse(candidate))) return null;
  const [y, m, d] = candidate.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(0);
  day.setUTCFullYear(y, m - 1, d);
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return null;
  const time = /T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(candidate)!;
  if (Number(time[1]) > 23 || Number(time[2]) > 59 || Number(time[3] ?? 0) > 59) return null;
  return candidate;
}

/** The signing key's PEM, or exit 2 saying what the file is instead. */
function signingKey(file: string): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    return refuse(`cannot read --key ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    if (pem.includes('-----BEGIN ENCRYPTED PRIVATE KEY-----')) {
      return refuse(`--key ${file} is encrypted; give the unencrypted license-private.pem that keygen wrote`);
    }
    let isPublic = false;
    try {
      createPublicKey(pem);
      isPublic = true;
    } catch {
      isPublic = false;
    }
    return refuse(
      isPublic
        ? `--key ${file} is a public key; sign with the private key (license-private.pem, which keygen wrote next to license-public.pem)`
        : `--key ${file} is not a PEM private key; give the license-private.pem that keygen wrote`,
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    refuse(
      `--key ${file} holds a key of type ${key.asymmetricKeyType ?? 'unknown'}; license codes are signed with an Ed25519 private key (npm run license -- keygen)`,
    );
  }
  return pem;
}

function issue(args: readonly string[]): void {
  const { values, positionals } = parseCli(
    'license',
    USAGE,
    {
      key: { type: 'string' },
      kind: { type: 'string' },
      scans: { type: 'string' },
      expires: { type: 'string' },
      id: { type: 'string' },
    },
    args,
  );
  if (positionals.length) usage(`unexpected argument "${positionals[0]}"`);
  if (values.kind === undefined) usage('--kind is required: pack or pro');
  if (values.kind !== 'pack' && values.kind !== 'pro') usage(`--kind must be pack or pro, got "${values.kind}"`);
  if (!values.key) usage('--key PRIVATE.pem is required (the license-private.pem that keygen wrote)');
  const id = values.id ?? randomUUID();
  if (!isValidCodeId(id)) usage(`--id must be 1 to 64 visible ASCII characters (letters, digits, punctuation; no spaces), got "${id}"`);

  let payload: LicensePayload;
  let what: string;
  if (values.kind === 'pack') {
    if (values.expires !== undefined) usage('--expires does not apply to a pack (packs never expire); leave it out, or issue --kind pro');
    const scans = parseScans(values.scans);
    payload = { v: 1, id, kind: 'pack', scans };
    what = `pack of ${scans} scans`;
  } else {
    if (values.scans !== undefined) usage('--scans does not apply to pro (pro is unlimited until --expires); leave it out, or issue --kind pack');
    if (values.expires === undefined) usage('--expires is required for pro, e.g. --expires 2027-12-31T00:00:00Z');
    const raw = values.expires;
    const expiresAt = parseExpires(raw);
    if (expiresAt === null) {
      usage(
        `--expires must be an ISO 8601 date-time such as 2027-12-31T00:00:00Z (with a zone: Z or +01:00) ` +
          `or a date such as 2027-12-31 (to the end of that UTC day), got "${raw}"`,
      );
    }
    if (Date.parse(expiresAt) <= Date.now()) usage(`--expires ${raw} is in the past; the app would refuse the code as expired`);
    payload = { v: 1, id, kind: 'pro', expiresAt };
    what = `pro until ${expiresAt}`;
  }
  const code = issueLicenseCode(payload, signingKey(values.key));
  process.stdout.write(`${code}\n`);
  process.stderr.write(`license: issued ${what}, id ${id}: record the id with the shop it is for (one code per shop)\n`);
}

function main(argv: readonly string[]): void {
  answerHelp(USAGE, argv);
  const [command, ...rest] = argv;
  if (command === 'keygen') keygen(rest);
  else if (command === 'issue') issue(rest);
  else usage(command ? `unknown command "${command}"` : 'no command: keygen or issue');
}

try {
  main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`license: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
