/** Flags of the command-line tools: strict (an unknown or incomplete flag is a usage mistake, exit 2). */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Prints `tool: problem` and the usage line, exits 2. */
export function usageError(tool: string, usage: string, problem: string): never {
  process.stderr.write(`${tool}: ${problem}\n${usage}\n`);
  process.exit(2);
}

/** The flags and positional arguments of this process, or a usage error naming the mistake. */
export function parseCli<O extends Options>(tool: string, usage: string, options: O) {
  try {
    return parseArgs({ options, allowPositionals: true, strict: true });
  } catch (error) {
    return usageError(tool, usage, (error as Error).message);
  }
}
