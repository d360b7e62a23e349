/**
 * Multipart parsing for POST /analyze only (registered in that route's scope, so no
 * other route accepts a form). Limits are enforced by busboy while the body streams.
 */
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';

export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

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
