/** At most N registrations per client address per hour (the clock is the core's, moved by hand). */
import { afterEach, expect, test } from 'vitest';
import { testCore, type TestCore } from '../support/core.js';
import { expectAppError } from './helpers.js';

let t: TestCore;
afterEach(() => t.cleanup());

const PASSWORD = 'correct horse battery';
let n = 0;
const email = () => `signup${++n}@example.com`;

test('the limit per address per hour, then TOO_MANY_ATTEMPTS with Retry-After until the oldest ages out', async () => {
  t = await testCore({ config: { registrationsPerHour: 3 } });
  const auth = t.core.services.auth;
  for (let i = 0; i < 3; i++) {
    await auth.register(email(), PASSWORD, '203.0.113.7');
    t.clock.advance(5 * 60_000);
  }
  const refused = email();
  const error = await expectAppError(auth.register(refused, PASSWORD, '203.0.113.7'), 'TOO_MANY_ATTEMPTS');
  expect(error.status).toBe(429);
  expect(error.headers['Retry-After']).toBe(String(60 * 60 - 15 * 60));
  expect(error.message).toMatch(/try again in 45 minute/);
  expect(await t.core.store.accounts.findByEmail(refused)).toBeNull();
  // Another address is not affected.
  await expect(auth.register(email(), PASSWORD, '198.51.100.1')).resolves.toHaveProperty('id');

  t.clock.advance(45 * 60_000);
  await expect(auth.register(refused, PASSWORD, '203.0.113.7')).resolves.toHaveProperty('email', refused);
  await expectAppError(auth.register(email(), PASSWORD, '203.0.113.7'), 'TOO_MANY_ATTEMPTS');
});

test('a taken email counts (no free probing of who has an account); a malformed request does not', async () => {
  t = await testCore({ config: { registrationsPerHour: 2 } });
  const auth = t.core.services.auth;
  await auth.register('taken@example.com', PASSWORD, '203.0.113.7');
  for (let i = 0; i < 5; i++) await expectAppError(auth.register(email(), 'short', '203.0.113.7'), 'VALIDATION_ERROR');
  await expectAppError(auth.register('taken@example.com', PASSWORD, '203.0.113.7'), 'CONFLICT');
  await expectAppError(auth.register(email(), PASSWORD, '203.0.113.7'), 'TOO_MANY_ATTEMPTS');
});

test('an IPv6 client counts by its /64, so rotating addresses inside it buys nothing', async () => {
  t = await testCore({ config: { registrationsPerHour: 2 } });
  const auth = t.core.services.auth;
  await auth.register(email(), PASSWORD, '2001:db8:1:2::a');
  await auth.register(email(), PASSWORD, '2001:db8:1:2::b');
  await expectAppError(auth.register(email(), PASSWORD, '2001:db8:1:2:ffff::1'), 'TOO_MANY_ATTEMPTS');
  await expect(auth.register(email(), PASSWORD, '2001:db8:1:3::a')).resolves.toHaveProperty('id');
});

test('concurrent registrations from one address get exactly the limit', async () => {
  t = await testCore({ config: { registrationsPerHour: 4 } });
  const auth = t.core.services.auth;
  const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => auth.register(email(), PASSWORD, '203.0.113.9')));
  expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(4);
});
