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

/** The `image` part is a file even when a client leaves out its filename. */
function isPartAFile(fieldName: string | undefined, contentType: string | undefined, fileName: string | undefined) {
  return fieldName === 'image' || fileName !== undefined || contentType === 'application/octet-stream';
}

export async function registerMultipart(app: FastifyInstance): Promise<void> {
  await app.register(fastifyMultipart, { limits: MULTIPART_LIMITS, throwFileSizeLimit: true, isPartAFile });
}
