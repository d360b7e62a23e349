/**
 * `npm run analyze -- photo.jpg [--verbose] [--models DIR]`: one analysis in-process,
 * no server and no metering. Prints what POST /api/v1/analyze puts in data.result;
 * a bad image exits 1 with the error envelope on stderr, bad usage exits 2.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_IMAGE_BYTES } from '../../shared/contract/limits.js';
import { createOnnxAnalyzer, DISCLAIMER } from '../analysis/index.js';
import { AppError, isAppError } from '../errors.js';
import { inspectImage } from '../images/inspect.js';
import { parseCli, usageError } from './args.js';

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
  if (files.length !== 1) usageError('analyze', USAGE, files.length ? `one photo at a time, got ${files.length}` : 'which photo?');
  const file = files[0]!;
  // a regular file, checked before reading it: a folder, a device (/dev/zero) or 30 MB are not read whole
  const info = await stat(file).catch((error: NodeJS.ErrnoException) =>
    fail(new AppError('VALIDATION_ERROR', `Cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : (error.code ?? error.message)}.`)),
  );
  if (!info.isFile()) fail(new AppError('VALIDATION_ERROR', `Cannot read ${file}: ${info.isDirectory() ? 'it is a folder' : 'it is not a regular file'}.`));
  if (info.size > MAX_IMAGE_BYTES) fail(new AppError('FILE_TOO_LARGE', `The image is larger than 10 MiB (${file}: ${info.size} bytes).`));
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch (error) {
    fail(new AppError('VALIDATION_ERROR', `Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`));
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
