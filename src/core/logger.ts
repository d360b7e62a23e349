/**
 * The one pino logger of a running core. Secrets that can reach a log line through
 * request headers (API keys, session cookies) are redacted here, once, so no caller
 * has to remember.
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  'headers["x-api-key"]',
  'headers.cookie',
  'headers.authorization',
];

export interface LoggerOptions {
  /** pino level name: fatal, error, warn, info, debug, trace or silent. */
  level: string;
  /** Where lines go; stdout when absent (tests pass a stream to read them). */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  const settings = { level: options.level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
