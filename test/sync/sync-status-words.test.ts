/** The sync status in a shop's words (src/renderer/src/lib/syncStatus.ts): what each failure means and what to do. */
import { expect, it } from 'vitest';
import { describeSyncError } from '../../src/renderer/src/lib/syncStatus.js';

it.each([
  ['Hub unreachable (DEPTH_ZERO_SELF_SIGNED_CERT)', /certificate is not trusted/],
  ['Hub unreachable (CERT_HAS_EXPIRED)', /certificate is not trusted/],
  ['Hub unreachable (ERR_TLS_CERT_ALTNAME_INVALID)', /issued for another name/],
  // no advice to install an authority in Windows or macOS: TireWear does not read their stores
  ['Hub unreachable (SELF_SIGNED_CERT_IN_CHAIN)', /public authority for its name \(TireWear does not use the certificates installed in Windows or macOS\)/],
  ['Hub unreachable (ENOTFOUND)', /cannot find the hub’s name/],
  ['Hub unreachable (ECONNREFUSED)', /Nothing answers at the hub address/],
  ['Hub unreachable (UND_ERR_SOCKET)', /try https:\/\//],
  ['Hub unreachable (no answer within 30 s)', /could not be reached\. Check the network/],
])('%s is explained with what to do, and that scans wait', (raw, words) => {
  const text = describeSyncError(raw);
  expect(text).toMatch(words);
  expect(text).toMatch(/Scans wait on this computer/);
});

it('a revoked key says to ask for a new one and link again', () => {
  expect(describeSyncError('Hub answered 401 INVALID_API_KEY: The API key is unknown or has been revoked.')).toMatch(/Ask for a new key and link again/);
});

it('scans refused because they belong to another hub account say they stay there, and where new ones go', () => {
  const text = describeSyncError('Scan 0123 was not synced: Hub answered 403 FORBIDDEN: This scan id belongs to another account');
  expect(text).toMatch(/stay with that account/);
  expect(text).toMatch(/Scans made from now on go to this account/);
  expect(describeSyncError('Scan 0123 was not synced: Hub answered 422 IMAGE_UNREADABLE: …')).toMatch(/refused one scan for good/);
});
