import { afterEach, expect, test } from 'vitest';
import { issueTestCode, makeTestLicenseKeys } from '../support/licenses.js';
import { testCore, type TestCore } from '../support/core.js';
import { accountCaller, expectAppError } from './helpers.js';

let t: TestCore;
afterEach(() => t.cleanup());

test('a pack adds 100 scans of credit and is listed on the account', async () => {
  t = await testCore();
  const { account } = await accountCaller(t.core.services);
  const { license, account: after } = await t.core.services.licenses.redeem(account.id, t.issueCode({ kind: 'pack', id: 'pk-1' }));
  expect(license).toMatchObject({ codeId: 'pk-1', kind: 'pack', scans: 100, expiresAt: null, redeemedAt: t.clock.now() });
  expect(after.packCredit).toBe(100);
  await t.core.services.licenses.redeem(account.id, t.issueCode({ kind: 'pack' }));
  expect((await t.core.services.accounts.summary(account.id)).packCredit).toBe(200);
});

test('pack scans still being analysed count as spent on the account page, as in the rate-limit headers', async () => {
  t = await testCore();
  const { account } = await accountCaller(t.core.services);
  await t.core.services.licenses.redeem(account.id, t.issueCode({ kind: 'pack' }));
  // a hold on the pack (the free allowance taken as used up: limit 0), as an analysis in flight has
  const hold = { subject: `acct:${account.id}`, window: 'month:2026-11', limit: 0, packAccountId: account.id, unmetered: false, now: t.clock.now() };
  expect(await t.core.store.usage.reserve({ id: 'r-1', ...hold })).toMatchObject({ source: 'pack' });
  expect((await t.core.services.accounts.summary(account.id)).packCredit).toBe(99);
  await t.core.store.usage.release('r-1');
  expect((await t.core.services.accounts.summary(account.id)).packCredit).toBe(100);
});

test('a code is redeemable once, by anyone', async () => {
  t = await testCore();
  const first = await accountCaller(t.core.services);
  const second = await accountCaller(t.core.services);
  const code = t.issueCode({ kind: 'pack' });
  await t.core.services.licenses.redeem(first.account.id, code);
  await expectAppError(t.core.services.licenses.redeem(first.account.id, code), 'LICENSE_ALREADY_REDEEMED');
  await expectAppError(t.core.services.licenses.redeem(second.account.id, code), 'LICENSE_ALREADY_REDEEMED');
  expect((await t.core.services.accounts.summary(second.account.id)).packCredit).toBe(0);
});

test('pro runs until its expiry; a later pro license extends it, an earlier one is refused unused', async () => {
  t = await testCore();
  const { account } = await accountCaller(t.core.services);
  await t.core.services.licenses.redeem(account.id, t.issueCode({ kind: 'pro', expiresAt: '2027-06-30T00:00:00Z' }));
  const earlier = t.issueCode({ kind: 'pro', expiresAt: '2027-01-31T00:00:00Z' });
  const refused = await expectAppError(t.core.services.licenses.redeem(account.id, earlier), 'CONFLICT');
  expect(refused.message).toBe(
    "Your pro plan already runs until 2027-06-30, past this license's end (2027-01-31): it would add nothing, so it was not used. Keep it for another account.",
  );
  expect((await t.core.services.accounts.summary(account.id)).licenses).toHaveLength(1);
  const other = await accountCaller(t.core.services);
  await t.core.services.licenses.redeem(other.account.id, earlier); // not burnt: another account can use it
  // sent again by the account that used it: already redeemed, not "adds nothing"
  await expectAppError(t.core.services.licenses.redeem(other.account.id, earlier), 'LICENSE_ALREADY_REDEEMED');
  await t.core.services.licenses.redeem(account.id, t.issueCode({ kind: 'pro', expiresAt: '2027-12-31T00:00:00Z' }));
  const summary = await t.core.services.accounts.summary(account.id);
  expect(summary).toMatchObject({
    plan: 'pro',
    proExpiresAt: new Date('2027-12-31T00:00:00Z'),
    allowance: { limit: null, remaining: null },
  });
});

test('an expired pro code is LICENSE_EXPIRED and changes nothing', async () => {
  t = await testCore();
  const { account } = await accountCaller(t.core.services);
  const code = t.issueCode({ kind: 'pro', expiresAt: t.clock.now() });
  await expectAppError(t.core.services.licenses.redeem(account.id, code), 'LICENSE_EXPIRED');
  expect(await t.core.services.accounts.summary(account.id)).toMatchObject({ plan: 'free', licenses: [] });
});

test('forged, wrong-key and tampered codes are LICENSE_INVALID', async () => {
  t = await testCore();
  const { account } = await accountCaller(t.core.services);
  const vendorless = issueTestCode(makeTestLicenseKeys(), { kind: 'pack', scans: 100_000 });
  await expectAppError(t.core.services.licenses.redeem(account.id, vendorless), 'LICENSE_INVALID');
  const [prefix, payload, signature] = t.issueCode({ kind: 'pack', id: 'x1' }).split('.');
  const richer = Buffer.from(Buffer.from(payload!, 'base64url').toString().replace('"scans":100', '"scans":9999')).toString('base64url');
  await expectAppError(t.core.services.licenses.redeem(account.id, `${prefix}.${richer}.${signature}`), 'LICENSE_INVALID');
  await expectAppError(t.core.services.licenses.redeem(account.id, 'TWL1.not.valid'), 'LICENSE_INVALID');
  expect((await t.core.services.accounts.summary(account.id)).packCredit).toBe(0);
});
