/**
 * `npm run collect -- DIR [--server URL] [--from DATE] [--to DATE]`: the shop's scans that have a
 * gauge reading, as a folder `npm run eval -- DIR` measures (see collect-measured.ts). The API key
 * comes from TIREWEAR_API_KEY (not a flag: command lines end up in shell history and `ps`).
 * Exit 0 done, 1 the server or the folder failed, 2 a usage mistake (a --server that is not an
 * http(s) URL included); --help prints the usage.
 */
import { parseCli, usageError } from './args.js';
import { CollectError, collectMeasured, serverOrigin } from './collect-measured.js';
import { parseDateParam } from '../http/query-params.js';

const USAGE = 'usage: TIREWEAR_API_KEY=tw_… npm run collect -- DIR [--server http://127.0.0.1:8787] [--from YYYY-MM-DD] [--to YYYY-MM-DD]';

function usage(problem: string): never {
  return usageError('collect', USAGE, problem);
}

async function main(): Promise<void> {
  const { values, positionals } = parseCli('collect', USAGE, {
    server: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
  });
  if (positionals.length !== 1) usage(positionals.length ? `one folder expected, got ${positionals.length}.` : 'which folder?');
  // checked here as the server checks them, so a mistyped date is a usage mistake before any request
  for (const name of ['from', 'to'] as const) {
    try {
      parseDateParam(name, values[name], name === 'to');
    } catch (error) {
      usage(`--${(error as Error).message.replace(/^query parameter /, '')}`);
    }
  }
  const server = values.server ?? 'http://127.0.0.1:8787';
  try {
    serverOrigin(server);
  } catch (error) {
    if (!(error instanceof CollectError)) throw error;
    usage(error.message);
  }
  const apiKey = process.env.TIREWEAR_API_KEY?.trim();
  if (!apiKey) usage('set TIREWEAR_API_KEY to an API key of the shop (Account → API keys).');
  try {
    const report = await collectMeasured({
      server,
      apiKey,
      out: positionals[0]!,
      ...(values.from ? { from: values.from } : {}),
      ...(values.to ? { to: values.to } : {}),
      log: (line) => process.stderr.write(`collect: ${line}\n`),
    });
    process.stdout.write(
      `${report.measured} measured scan(s) in ${positionals[0]} (${report.downloaded} photo(s) downloaded now), ` +
        `${report.unmeasured} without a gauge reading left out${report.missing.length ? `, ${report.missing.length} whose photo is gone` : ''}.\n` +
        (report.measured
          ? `Measure the model on them: npm run eval -- ${positionals[0]}\n`
          : 'No scan has a gauge reading yet: enter one under a result (Gauge reading → Save reading).\n'),
    );
  } catch (error) {
    if (!(error instanceof CollectError)) throw error;
    process.stderr.write(`collect: ${error.message}\n`);
    process.exit(error.exitCode);
  }
}

await main();
