/** API keys (docs/API.md §4): `tw_` + 32 base62 chars, stored as sha256, shown once, named, revocable. */
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { KEY_NAME_MAX } from '../../shared/contract/limits.js';
import type { Store } from '../storage/store.js';
import type { ApiKeyRecord } from '../types.js';
import { randomBase62, randomId, sha256Hex } from './support/ids.js';
import type { ApiKeyService } from './ports.js';

/** `tw_` plus this many characters are kept in the clear so a shop can tell keys apart. */
const PREFIX_CHARS = 4;

export function newApiKey(): string {
  return `tw_${randomBase62(32)}`;
}

function checkName(name: unknown): string {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (trimmed.length < 1 || trimmed.length > KEY_NAME_MAX || /[\p{Cc}]/u.test(trimmed)) {
    throw new AppError('VALIDATION_ERROR', `name must be 1 to ${KEY_NAME_MAX} printable characters.`);
  }
  return trimmed;
}

export function createApiKeyService(deps: { store: Store; clock: Clock }): ApiKeyService {
  const { store, clock } = deps;
  return {
    async create(accountId, name) {
      const key = newApiKey();
      const record: ApiKeyRecord = {
        id: randomId(),
        accountId,
        name: checkName(name),
        prefix: key.slice(0, 3 + PREFIX_CHARS),
        hash: sha256Hex(key),
        createdAt: clock.now(),
        lastUsedAt: null,
        revokedAt: null,
      };
      await store.apiKeys.create(record);
      return { key, record };
    },

    list(accountId) {
      return store.apiKeys.listForAccount(accountId);
    },

    async revoke(accountId, id) {
      if (typeof id !== 'string' || !(await store.apiKeys.revoke(accountId, id, clock.now()))) {
        throw new AppError('NOT_FOUND', 'No such API key on this account.');
      }
    },
  };
}
