import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { createLogger } from '../../src/core/logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination };
}

it('redacts API keys, cookies and authorization headers, wherever a request is logged', () => {
  const { lines, destination } = capture();
  const logger = createLogger({ level: 'info', destination });
  const headers = { 'x-api-key': 'tw_secretsecretsecretsecretsecret12', cookie: 'auth-token=abc', authorization: 'Bearer x', host: 'localhost' };
  logger.info({ req: { headers } }, 'incoming');
  logger.info({ headers }, 'outgoing');
  logger.info({ res: { headers: { 'set-cookie': 'auth-token=abc' } } }, 'answered');
  const text = lines.join('');
  expect(text).not.toMatch(/tw_secret|auth-token=abc|Bearer x/);
  expect(text).toContain('localhost');
  expect(text.match(/\[redacted\]/g)).toHaveLength(7);
});

it('honours the configured level', () => {
  const { lines, destination } = capture();
  const logger = createLogger({ level: 'warn', destination });
  logger.info('quiet');
  logger.warn('loud');
  expect(lines.join('')).not.toContain('quiet');
  expect(lines.join('')).toContain('loud');
});
