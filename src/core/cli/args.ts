/**
 * Flags of the command-line tools: strict (an unknown or incomplete flag is a usage mistake, exit 2).
 * `--help` / `-h` anywhere before a `--` prints the usage on stdout and exits 0, whatever else is on
 * the line (an incomplete command line is when one asks for help).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { wantsHelp } from '../config/flags.js';

export { wantsHelp };

type Options = NonNullable<ParseArgsConfig['options']>;

/** Prints `tool: problem` and the usage line, exits 2. */
export function usageError(tool: string, usage: string, problem: string): never {
  process.stderr.write(`${tool}: ${problem}\n${usage}\n`);
  process.exit(2);
}

/** Prints the usage on stdout and exits 0 when the arguments ask for help. */
export function answerHelp(usage: string, args: readonly string[]): void {
  if (!wantsHelp(args)) return;
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}

/**
 * The flags and positional arguments (of this process unless `args` is given), or a usage error
 * naming the mistake; `--help` answers with the usage and exit 0.
 */
export function parseCli<O extends Options>(tool: string, usage: string, options: O, args: readonly string[] = process.argv.slice(2)) {
  answerHelp(usage, args);
  try {
    const parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true, tokens: true });
    // a flag given twice would silently take its last value (--kind pack --kind pro issuing pro)
    const seen = new Set<string>();
    for (const token of parsed.tokens) {
      if (token.kind !== 'option' || options[token.name]?.multiple) continue;
      if (seen.has(token.name)) return usageError(tool, usage, `--${token.name} is given twice; give it once`);
      seen.add(token.name);
    }
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (error) {
    // Node adds how to pass a positional that starts with '-': noise next to a misspelt flag.
    return usageError(tool, usage, (error as Error).message.replace(/\. To specify a positional argument[\s\S]*$/, ''));
  }
}
