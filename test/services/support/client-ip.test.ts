import { expect, onTestFinished, test } from 'vitest';
import { meteringAddress } from '../../../src/core/services/support/client-ip.js';
import { testCore, type TestCore } from '../../support/core.js';
import { anon, command, expectAppError } from '../helpers.js';

test('IPv4 and loopback stay as they are; mapped IPv4 is unwrapped; other IPv6 counts by /64', () => {
  expect(meteringAddress('203.0.113.7')).toBe('203.0.113.7');
  expect(meteringAddress('::1')).toBe('::1');
  expect(meteringAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
  expect(meteringAddress('2001:db8:1:2::5')).toBe('2001:db8:1:2::/64');
  expect(meteringAddress('2001:0db8:0001:0002:ffff:0:0:1')).toBe('2001:db8:1:2::/64');
  expect(meteringAddress('[2001:db8::1]')).toBe('2001:db8:0:0::/64');
});

test('rotating through one IPv6 /64 does not buy more anonymous scans', async () => {
  const t: TestCore = await testCore();
  onTestFinished(() => t.cleanup());
  for (const host of ['1', '2', '3']) await t.core.services.scans.analyze(await command(anon(`2001:db8:7:7::${host}`)));
  await expectAppError(t.core.services.scans.analyze(await command(anon('2001:db8:7:7::ab:cd'))), 'RATE_LIMIT_EXCEEDED');
  await expect(t.core.services.scans.analyze(await command(anon('2001:db8:7:8::1')))).resolves.toHaveProperty('status', 200);
});
