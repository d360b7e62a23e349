/** Shorthands for service tests. */
import { expect } from 'vitest';
import { AppError, type ErrorCode } from '../../src/core/errors.js';
import type { AnalyzeCommand, Services } from '../../src/core/services/ports.js';
import type { Caller } from '../../src/core/types.js';
import { makeJpeg } from '../fixtures/images/make.js';

export const anon = (ip = '203.0.113.7'): Caller => ({ kind: 'anonymous', ip });

let shade = 60;
/** A distinct small JPEG per call (different brightness → different sha256 and depth). */
export function freshJpeg(): Promise<Buffer> {
  shade = shade >= 220 ? 60 : shade + 7;
  return makeJpeg({ width: 320, height: 256, shade });
}

export async function command(caller: Caller, overrides: Partial<AnalyzeCommand> = {}): Promise<AnalyzeCommand> {
  return {
    caller,
    image: overrides.image ?? (await freshJpeg()),
    verbose: false,
    vehicle: null,
    position: null,
    idempotencyKey: null,
    receivedAt: Date.now(),
    ...overrides,
  };
}

let registrations = 0;

/**
 * Register and return a session caller for a new account. Each registration comes from its own
 * address so suites that make many accounts stay under the registration throttle.
 */
export async function accountCaller(services: Services, email = `shop${Math.random().toString(36).slice(2)}@example.com`) {
  registrations++;
  await services.auth.register(email, 'correct horse battery', `10.0.${(registrations >> 8) & 255}.${registrations & 255}`);
  const { token } = await services.auth.login(email, 'correct horse battery', '127.0.0.1');
  return services.auth.authenticateSession(token, '127.0.0.1');
}

export async function expectAppError(promise: Promise<unknown>, code: ErrorCode): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
  return error as AppError;
}
