/**
 * The counter's "Try again" after a 409 (src/renderer/src/hooks/useScanQueue.ts): a replay of a
 * scan deleted since is refused for good under the same Idempotency-Key, so the retry takes a new
 * one; a request still running (409 with Retry-After) keeps its key, so it is charged once.
 */
import { expect, it } from 'vitest';
import { answeredForDeletedScan } from '../../src/renderer/src/lib/retry.js';
import { expectError, httpTest, imageForm } from './helpers.js';
import { makeJpeg } from '../fixtures/images/make.js';

it('tells the deleted-scan 409 from the still-running one by Retry-After, on real server answers', async () => {
  const t = await httpTest();
  try {
    const jpeg = await makeJpeg({ width: 320, height: 256 });
    const send = () => {
      const upload = imageForm(jpeg);
      return t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, 'idempotency-key': 'ui-1' } });
    };
    const { scanId } = (await send()).json().data;
    await t.app.inject({ method: 'DELETE', url: `/api/v1/scans/${scanId}` });
    const refused = await send();
    const message = expectError(refused, 409, 'CONFLICT');
    expect(message).toMatch(/deleted since/);
    const answer = (code: string, status: number, headers: Record<string, string> | null) => ({ code, status, headers: headers && new Headers(headers) });
    const asClientSees = answer('CONFLICT', 409, refused.headers as Record<string, string>);
    expect(answeredForDeletedScan(asClientSees)).toBe(true);
    const running = answer('CONFLICT', 409, { 'retry-after': '1' });
    expect(answeredForDeletedScan(running)).toBe(false);
    expect(answeredForDeletedScan(answer('NO_TIRE_DETECTED', 422, null))).toBe(false);
    expect(answeredForDeletedScan(null)).toBe(false);
  } finally {
    await t.cleanup();
  }
});
