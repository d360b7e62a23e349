/** Builders shared by the conformance parts. */
import type { ReserveRequest, Store } from '../../../src/core/storage/store.js';
import type { Account } from '../../../src/core/types.js';

export type GetStore = () => Store;

export const NOW = new Date('2026-11-21T12:00:00.000Z');
export const MONTH = 'month:2026-11';

let counter = 0;
/** Unique within a run, so parts never collide on ids. */
export function uid(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

export function createAccount(store: Store, email = `${uid('user')}@example.com`): Promise<Account> {
  return store.accounts.create({ id: uid('acct'), email, passwordHash: 'scrypt$hash', createdAt: NOW });
}

export function reserveRequest(overrides: Partial<ReserveRequest> = {}): ReserveRequest {
  return {
    id: uid('res'),
    subject: 'acct:a',
    window: MONTH,
    limit: 10,
    packAccountId: null,
    unmetered: false,
    now: NOW,
    ...overrides,
  };
}

/** Concurrent calls, so stores with real connection pools see real races. */
export function concurrently<T>(count: number, call: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => call(i)));
}
