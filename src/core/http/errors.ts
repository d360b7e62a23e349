/**
 * The one place where a failure becomes the error envelope. AppErrors keep their code,
 * status and headers; Fastify's and the multipart parser's own errors are translated to
 * the codes of docs/API.md §3; anything else is a bug: logged in full, answered as a bare 500.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError, type ErrorCode } from '../errors.js';
import type { ErrorEnvelope } from '../../shared/api.js';
import { routeNotFound } from './not-found.js';

/** What multipart parsing failures mean to a caller (busboy and @fastify/multipart codes). */
const MULTIPART_ERRORS: Record<string, [ErrorCode, string]> = {
  FST_REQ_FILE_TOO_LARGE: ['FILE_TOO_LARGE', 'The image is larger than 10 MiB (10,485,760 bytes)'],
  FST_FILES_LIMIT: ['VALIDATION_ERROR', 'Send exactly one file, the image (the other fields go as plain text fields)'],
  FST_FIELDS_LIMIT: ['VALIDATION_ERROR', 'Too many form fields'],
  FST_PARTS_LIMIT: ['VALIDATION_ERROR', 'Too many form parts'],
  FST_PROTO_VIOLATION: ['VALIDATION_ERROR', 'Invalid form field name'],
  FST_INVALID_MULTIPART_CONTENT_TYPE: ['VALIDATION_ERROR', 'The request must be multipart/form-data'],
  FST_INVALID_JSON_FIELD_ERROR: ['VALIDATION_ERROR', 'A form field declared as JSON is not valid JSON'],
};

/** Errors raised while reading a multipart body. Busboy's own parse errors carry no code. */
export function multipartError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const code = (error as { code?: string }).code;
  const known = code ? MULTIPART_ERRORS[code] : undefined;
  if (known) return new AppError(known[0], known[1], { cause: error });
  return new AppError('VALIDATION_ERROR', 'The multipart body is malformed or incomplete', { cause: error });
}

const CONTEXT_NAMES: Record<string, string> = {
  body: 'body field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

interface SchemaIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** "body field password must NOT have fewer than 8 characters" rather than ajv's JSON pointer. */
export function validationMessage(issues: readonly SchemaIssue[], context = 'body'): string {
  const issue = issues[0];
  if (!issue) return 'The request is invalid';
  const segments = issue.instancePath.split('/').filter(Boolean);
  if (issue.keyword === 'additionalProperties') {
    segments.push(String(issue.params.additionalProperty));
    return `${CONTEXT_NAMES[context] ?? context} ${segments.join('.')} is not accepted here (check its spelling)`;
  }
  if (issue.keyword === 'required') segments.push(String(issue.params.missingProperty));
  const where = segments.length ? `${CONTEXT_NAMES[context] ?? context} ${segments.join('.')}` : `request ${context}`;
  // a union of literals (WearSchema, a variant): ajv reports each literal tried at the same place
  const allowed = issues.filter((i) => i.keyword === 'const' && i.instancePath === issue.instancePath).map((i) => String(i.params.allowedValue));
  const what =
    issue.keyword === 'required'
      ? 'is required'
      : issue.keyword === 'anyOf' || issue.keyword === 'const'
        ? allowed.length > 0
          ? `must be one of ${allowed.join(', ')}`
          : 'has a value that is not allowed'
        : (issue.message ?? 'is invalid');
  return `${where} ${what}`;
}

function fastifyError(error: FastifyError): AppError | null {
  if (error.validation) {
    return new AppError('VALIDATION_ERROR', validationMessage(error.validation, error.validationContext));
  }
  const code = error.code ?? '';
  if (code in MULTIPART_ERRORS) return multipartError(error);
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new AppError('FILE_TOO_LARGE', 'The request body is too large (JSON bodies are limited to 64 KiB)');
  }
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json');
  }
  if (code.startsWith('FST_ERR_CTP_') || (code.startsWith('FST_') && (error.statusCode ?? 500) < 500)) {
    return new AppError('VALIDATION_ERROR', error.message);
  }
  return null;
}

export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: ErrorEnvelope;
}

export function toErrorReply(error: unknown): ErrorReply {
  const known = isAppError(error) ? error : fastifyError(error as FastifyError);
  if (!known || known.code === 'INTERNAL_ERROR') {
    return {
      status: 500,
      headers: {},
      body: { success: false, error: { code: 'INTERNAL_ERROR', message: 'Internal server error' } },
    };
  }
  return {
    status: known.status,
    headers: known.headers,
    body: { success: false, error: { code: known.code, message: known.message } },
  };
}

/**
 * @fastify/static refuses some paths with 403 (`//` in a path, `..`, a spelling that aliases a
 * file): the UI has nothing forbidden to hide, and its wildcard also sees unknown API paths
 * (`/api/v1//health`), so these are the 404 of any unknown path.
 */
function isStaticRefusal(error: FastifyError): boolean {
  // send's own refusal (`..` and the like) is an http-errors ForbiddenError without a code.
  return error.code === 'FST_STATIC_FORBIDDEN_PATH' || (error.name === 'ForbiddenError' && error.statusCode === 403);
}

/** Failures that are the request's, not the server's, once the request is known. */
function requestError(error: FastifyError, request: FastifyRequest): unknown {
  if (isStaticRefusal(error)) return routeNotFound(request.method, request.url.split('?')[0]!);
  // The client went away mid-body (or shutdown closed its stalled connection): not a bug.
  if (error.code === 'ECONNRESET' && request.raw.readableAborted) {
    return new AppError('VALIDATION_ERROR', 'The request ended before its body was complete');
  }
  return error;
}

/** The machine's own words behind a 503 (errno or SQLite code, and the message naming the path) for the log. */
function causeOf(error: unknown): { cause?: { code?: string; message: string } } {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (!(cause instanceof Error)) return {};
  const code = (cause as { code?: unknown }).code;
  return { cause: { ...(typeof code === 'string' ? { code } : {}), message: cause.message } };
}

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const mapped = toErrorReply(requestError(error, request));
  const code = mapped.body.error.code;
  if (code === 'INTERNAL_ERROR') request.log.error({ err: error }, 'request failed');
  else if (mapped.status >= 500) {
    request.log.warn({ code, reason: error.message, ...causeOf(error) }, 'request not served');
    if (code === 'STORAGE_UNAVAILABLE') request.server.storageTrouble.record(mapped.body.error.message);
  } else request.log.info({ code, reason: error.message }, 'request refused');
  void reply.code(mapped.status).headers(mapped.headers).send(mapped.body);
}
