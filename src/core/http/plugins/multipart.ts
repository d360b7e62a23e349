/**
 * Multipart parsing for POST /analyze and the capture check only (registered in each route's
 * scope, so no other route accepts a form), and the reading of their one image file. Limits are
 * enforced by busboy while the body streams.
 */
import type { Readable } from 'node:stream';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { MAX_IMAGE_BYTES } from '../../../shared/contract/limits.js';
import { AppError } from '../../errors.js';

export const MULTIPART_LIMITS = {
  fileSize: MAX_IMAGE_BYTES,
  files: 1,
  fields: 10,
  fieldSize: 1024,
  fieldNameSize: 100,
  parts: 12,
  headerPairs: 20,
};

/** The analyze form's text fields (beside the `image` file). */
export const TEXT_FIELDS: ReadonlySet<string> = new Set(['verbose', 'vehicle', 'position']);

/**
 * The `image` part is a file even when a client leaves out its filename; a text field without a
 * filename is text even when a client labels it application/octet-stream (some HTTP libraries do).
 */
function isPartAFile(fieldName: string | undefined, contentType: string | undefined, fileName: string | undefined) {
  if (fieldName === 'image' || fileName !== undefined) return true;
  return contentType === 'application/octet-stream' && !TEXT_FIELDS.has(fieldName ?? '');
}

export async function registerMultipart(app: FastifyInstance): Promise<void> {
  await app.register(fastifyMultipart, { limits: MULTIPART_LIMITS, throwFileSizeLimit: true, isPartAFile });
}

/** 413 for an image over MAX_IMAGE_BYTES; the connection is closed, as the rest of the body is not read. */
export const imageTooLarge = () =>
  new AppError('FILE_TOO_LARGE', 'The image is larger than 10 MiB (10,485,760 bytes)', {
    headers: { connection: 'close' },
  });

/** Collects an uploaded file, failing (imageTooLarge) as soon as busboy reports the size limit. */
export function readUploadedFile(file: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    file.on('data', (chunk: Buffer) => chunks.push(chunk));
    file.once('limit', () => {
      chunks.length = 0;
      reject(imageTooLarge());
      file.destroy();
    });
    file.once('end', () => resolve(Buffer.concat(chunks)));
    file.once('error', reject);
  });
}
