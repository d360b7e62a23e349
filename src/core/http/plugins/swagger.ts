/**
 * The OpenAPI document is generated from the TypeBox schemas that validate requests,
 * so it cannot drift from what the server accepts. Served by routes/openapi.ts.
 */
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { documentErrors, operationIdOf } from '../openapi-errors.js';
import { ALWAYS_SENT } from '../schemas.js';

type HeaderObject = { schema?: Record<string, unknown>; required?: boolean };
type OpenApiDocument = { paths?: Record<string, Record<string, { responses?: Record<string, { headers?: Record<string, HeaderObject> }> }>> };

/**
 * Every operation gets an operationId (generated clients name their methods by it) and its error
 * responses by status with their codes (openapi-errors.ts).
 */
function completeOperations<T extends OpenApiDocument>(document: T): T {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Record<string, unknown>>>;
  const seen = new Set<string>();
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      let id = (operation.operationId as string | undefined) ?? operationIdOf(method, path);
      while (seen.has(id)) id = `${id}_`;
      seen.add(id);
      operation.operationId = id;
    }
  }
  documentErrors(paths);
  return document;
}

/** A header whose schema carries ALWAYS_SENT becomes `required: true`, the marker dropped from the schema. */
function markAlwaysSent<T extends OpenApiDocument>(document: T): T {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation?.responses ?? {})) {
        for (const header of Object.values(response?.headers ?? {})) {
          if (header.schema?.[ALWAYS_SENT] !== true) continue;
          delete header.schema[ALWAYS_SENT];
          header.required = true;
        }
      }
    }
  }
  return document;
}

export async function registerSwagger(app: FastifyInstance, version: string): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'TireWear API',
        version,
        description:
          'Tread depth from a tire photo. Every response is an envelope: {"success": true, "data"} or ' +
          '{"success": false, "error": {"code", "message"}}. When both X-API-Key and the auth-token cookie ' +
          'are sent, the key decides who is calling. Each operation lists the error codes it can answer with, by status.',
      },
      // The paths include /api/v1: relative to where this document was read from, or a desk by address and port.
      servers: [
        { url: '/', description: 'The TireWear server this document was read from' },
        {
          url: 'http://{host}:{port}',
          description: 'A TireWear desk: this computer (127.0.0.1), or its LAN address with LAN access on (API keys page)',
          variables: { host: { default: '127.0.0.1' }, port: { default: '8787' } },
        },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          session: { type: 'apiKey', in: 'cookie', name: 'auth-token' },
        },
      },
    },
    transformObject: (document) =>
      'openapiObject' in document
        ? (completeOperations(markAlwaysSent(document.openapiObject as OpenApiDocument)) as typeof document.openapiObject)
        : document.swaggerObject,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
}
