/** Shared by the bench and the long-run scripts: flags, and a pro license for their test account. */
import { issueLicenseCode } from '../src/core/licensing/codes.js';

/**
 * What is wrong with a command line for a script that knows `known` flags (each `--name value`):
 * 'help' for `--help` / `-h`, a message for an unknown flag or a known one without its value,
 * null when it is fine.
 */
export function flagProblem(known: readonly string[], argv: readonly string[]): 'help' | string | null {
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--help' || token === '-h') return 'help';
    if (!token.startsWith('--') || !known.includes(token.slice(2))) return `unknown argument "${token}" (flags are --name value)`;
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) return `${token} needs a value`;
    i++;
  }
  return null;
}

/**
 * Refuses what the script does not know before any work starts: `--help` prints the usage and
 * exits 0; an unknown flag, or a known one without its value, prints the usage and exits 2.
 * (Without this a mistyped or `--help` run went ahead with the defaults and, for the bench,
 * overwrote bench/results.json.)
 */
export function checkFlags(known: readonly string[], usage: string, argv: readonly string[] = process.argv.slice(2)): void {
  const problem = flagProblem(known, argv);
  if (problem !== null) exitWithUsage(usage, problem);
}

/** 'help': the usage on stdout, exit 0; a problem: it and the usage on stderr, exit 2. */
export function exitWithUsage(usage: string, problem: 'help' | string): never {
  if (problem === 'help') {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  process.stderr.write(`${problem}\n${usage}\n`);
  process.exit(2);
}

/** `--name value` from the command line, or the fallback. */
export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** A pro code, unique per run, that the server started with the matching public key accepts. */
export function proCode(privateKeyPem: string, label: string): string {
  return issueLicenseCode({ v: 1, id: `${label}-${Date.now()}`, kind: 'pro', expiresAt: '2099-01-01T00:00:00Z' }, privateKeyPem);
}
