/**
 * `npm run analyze -- photo.jpg [--verbose] [--models DIR]`: one analysis in-process,
 * no server and no metering. Prints what POST /api/v1/analyze puts in data.result;
 * a bad image exits 1 with the error envelope on stderr, bad usage exits 2.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOnnxAnalyzer, DISCLAIMER } from '../analysis/index.js';
import { AppError, isAppError } from '../errors.js';
import { inspectImage } from '../images/inspect.js';
import { parseCli } from './args.js';

const USAGE = 'usage: analyze PHOTO [--verbose] [--models DIR]';
const DEFAULT_MODELS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../models');

function fail(error: unknown): never {
  const known = isAppError(error) ? error : new AppError('INTERNAL_ERROR', 'Internal error');
  if (!isAppError(error)) process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.stderr.write(`${JSON.stringify({ success: false, error: { code: known.code, message: known.message } })}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const { values, positionals: files } = parseCli('analyze', USAGE, { models: { type: 'string' }, verbose: { type: 'boolean' } });
  const verbose = values.verbose ?? false;
  const modelsDir = values.models ?? DEFAULT_MODELS;
  if (files.length !== 1) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  let data: Buffer;
  try {
    data = await readFile(files[0]!);
  } catch {
    fail(new AppError('VALIDATION_ERROR', `Cannot read ${files[0]}.`));
  }
  const analyzer = await createOnnxAnalyzer({ modelsDir, threads: 2 }).catch(fail);
  try {
    const receivedAt = Date.now();
    const { frame } = await inspectImage(data);
    const outcome = await analyzer.analyze({ image: data, verbose, frame });
    const result = {
      ...outcome.analysis,
      processingTimeMs: Math.round(Date.now() - receivedAt),
      disclaimer: DISCLAIMER,
      ...(verbose && outcome.verbose ? outcome.verbose : {}),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } catch (error) {
    fail(error);
  } finally {
    await analyzer.close();
  }
}

await main();
