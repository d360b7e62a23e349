/**
 * Error responses per operation in the OpenAPI document (issue 42): each operation lists the
 * statuses it can answer with and, for each, the error codes (an `enum` on `error.code`, and the
 * description naming them), so a generated client knows what to handle where. What every route can
 * answer (the Host check, a bad body, storage trouble) is derived from the operation itself (its
 * security, parameters and body); what only some routes answer is named in the contract's
 * ROUTE_ERRORS (src/shared/contract/operations.ts, with the operationIds; the codes' meanings are
 * ERROR_MEANINGS in contract/errors.ts). The broad 4XX / 5XX responses stay beside them for anything
 * else (an oversized header, a timed-out upload).
 */
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { ERROR_MEANINGS, OPERATION_IDS, ROUTE_ERRORS } from './schemas.js';

interface OperationShape {
  security?: Array<Record<string, unknown>>;
  parameters?: Array<{ in?: string }>;
  requestBody?: unknown;
}

/** What every operation of this shape can answer: the security hooks, the body parser, the store. */
export function commonErrors(method: string, path: string, op: OperationShape): ErrorCode[] {
  const codes: ErrorCode[] = ['VALIDATION_ERROR', 'FORBIDDEN', 'INTERNAL_ERROR', 'SERVER_BUSY'];
  const open = path === '/api/v1/health' || path === '/api/v1/openapi.json';
  if (!open) codes.push('STORAGE_UNAVAILABLE');
  if ((op.security ?? []).length > 0) codes.push('INVALID_API_KEY', 'INVALID_SESSION');
  // any body is parsed (a DELETE with an empty JSON body too): too large, or of a type not taken
  if (method !== 'GET' && method !== 'HEAD') codes.push('FILE_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if ((op.parameters ?? []).some((p) => p.in === 'path')) codes.push('NOT_FOUND');
  return codes;
}

type Json = Record<string, unknown>;
interface Response {
  description?: string;
  headers?: Json;
  content?: Json;
}

function envelopeFor(codes: readonly ErrorCode[]): Json {
  return {
    type: 'object',
    required: ['success', 'error'],
    properties: {
      success: { type: 'boolean', enum: [false] },
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', enum: [...codes], description: 'What went wrong, for a program to act on' },
          message: { type: 'string', description: 'What went wrong and what to do, for a person to read' },
        },
      },
    },
  };
}

/**
 * Adds to every operation of `paths` one response per error status it can answer, with its codes;
 * headers (Retry-After, X-RateLimit-*) are taken from the operation's 4XX / 5XX response.
 */
export function documentErrors(paths: Record<string, Record<string, Json>>): void {
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const responses = op.responses as Record<string, Response> | undefined;
      if (!responses) continue;
      const name = `${method.toUpperCase()} ${path}`;
      const codes = new Set<ErrorCode>([...commonErrors(method.toUpperCase(), path, op), ...(ROUTE_ERRORS[name] ?? [])]);
      const byStatus = new Map<number, ErrorCode[]>();
      for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
      for (const [status, list] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
        if (responses[String(status)]) continue;
        const range = responses[`${String(status)[0]}XX`] ?? responses[`${String(status)[0]}xx`];
        responses[String(status)] = {
          description: list.map((code) => `${code}: ${ERROR_MEANINGS[code]}`).join('; '),
          ...(range?.headers ? { headers: range.headers } : {}),
          content: { 'application/json': { schema: envelopeFor(list) } },
        };
      }
    }
  }
}

/**
 * An operation's operationId: its OPERATION_IDS name, else one made from the method and the path
 * ("getScansByScanIdImage"), so a route added later has one too.
 */
export function operationIdOf(method: string, path: string): string {
  const named = OPERATION_IDS[`${method.toUpperCase()} ${path}`];
  if (named) return named;
  const words = path
    .replace(/^\/api\/v1\//, '')
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      const text = param ? `by-${param[1]}` : segment;
      return text
        .split(/[^A-Za-z0-9]+/)
        .filter(Boolean)
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('');
    });
  return `${method.toLowerCase()}${words.join('')}`;
}
