/** The renderer's client (src/renderer/src/api/client.ts): an error envelope becomes an ApiError with a code the app knows. */
import { afterEach, expect, it, vi } from 'vitest';
import { api, ApiError } from '../../src/renderer/src/api/client';
import { describeError } from '../../src/renderer/src/api/errors';

afterEach(() => {
  vi.unstubAllGlobals();
});

function answer(status: number, body: unknown): void {
  vi.stubGlobal('fetch', () => Promise.resolve(new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })));
}

async function failure(): Promise<ApiError> {
  const error: unknown = await api.health().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

it("a code of the contract passes through with the server's message and status", async () => {
  answer(503, { success: false, error: { code: 'SERVER_BUSY', message: 'Busy; try again in 2 s' } });
  const error = await failure();
  expect([error.code, error.message, error.status]).toEqual(['SERVER_BUSY', 'Busy; try again in 2 s', 503]);
});

it("a code this build does not know becomes BAD_RESPONSE, keeping the server's message and status", async () => {
  answer(402, { success: false, error: { code: 'PAYMENT_REQUIRED', message: 'Renew the plan under Account' } });
  const error = await failure();
  expect([error.code, error.message, error.status]).toEqual(['BAD_RESPONSE', 'Renew the plan under Account', 402]);
  expect(describeError(error)).toEqual({ title: 'The service gave an unexpected answer.', detail: 'Renew the plan under Account', code: 'BAD_RESPONSE' });
});

it('a name from the prototype is no code of the contract', async () => {
  answer(500, { success: false, error: { code: 'toString', message: 'odd' } });
  expect((await failure()).code).toBe('BAD_RESPONSE');
});
