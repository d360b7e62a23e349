/** Accounts, sessions (the `auth-token` cookie) and API-key authentication (docs/API.md §4, §5). */
import type { Clock } from '../clock.js';
import { AppError, isAppError } from '../errors.js';
import type { Store } from '../storage/store.js';
import { API_KEY_SHAPE, type Caller } from '../types.js';
import { meteringAddress } from './support/client-ip.js';
import { randomId, randomToken, sha256Hex } from './support/ids.js';
import { LoginThrottle } from './login-throttle.js';
import { burnPasswordCheck, hashPassword, verifyPassword } from './support/passwords.js';
import type { AuthService } from './ports.js';
import { RegistrationThrottle } from './registration-throttle.js';

export const SESSION_DAYS = 30;
export const MIN_PASSWORD = 8;
/** Bounds the scrypt input so a megabyte "password" cannot be used to burn CPU. */
export const MAX_PASSWORD = 1024;
/** A key's "last used" is written at most this often (GET /keys shows it to the minute). */
export const KEY_TOUCH_INTERVAL_MS = 60_000;

const EMAIL_SHAPE = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;

export function normalizeEmail(email: unknown): string {
  if (typeof email !== 'string') throw new AppError('VALIDATION_ERROR', 'email is required.');
  const folded = email.trim().toLowerCase();
  if (folded.length > 254 || !EMAIL_SHAPE.test(folded) || /\p{Cc}/u.test(folded)) {
    throw new AppError('VALIDATION_ERROR', 'email is not a valid email address.');
  }
  return folded;
}

function checkPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) {
    throw new AppError('VALIDATION_ERROR', `password must be ${MIN_PASSWORD} to ${MAX_PASSWORD} characters.`);
  }
  return password;
}

function invalidCredentials(): AppError {
  return new AppError('INVALID_CREDENTIALS', 'Email or password is incorrect.');
}

export function createAuthService(deps: {
  store: Store;
  clock: Clock;
  throttle?: LoginThrottle;
  registrationThrottle?: RegistrationThrottle;
  /** Config.registration: `first` closes registration once an account exists. */
  registration?: 'open' | 'first';
}): AuthService {
  const { store, clock } = deps;
  const throttle = deps.throttle ?? new LoginThrottle();
  const registrationThrottle = deps.registrationThrottle ?? new RegistrationThrottle();

  async function accountCaller(accountId: string, ip: string, via: 'session' | 'key', apiKeyId: string | null) {
    const account = await store.accounts.findById(accountId);
    return account ? ({ kind: 'account', account, via, apiKeyId, ip } satisfies Caller) : null;
  }

  return {
    async register(email, password, ip) {
      const folded = normalizeEmail(email);
      const checked = checkPassword(password);
      // After the shape checks (a typo costs nothing), before the hash and the lookup.
      registrationThrottle.take(ip, clock.now().getTime());
      const closed = () =>
        new AppError(
          'FORBIDDEN',
          "Registration is closed on this server: its owner's account exists. Ask the owner for an account, or for an API key for your shop.",
        );
      const passwordHash = await hashPassword(checked);
      const input = { id: randomId(), email: folded, passwordHash, createdAt: clock.now() };
      if (deps.registration !== 'first') return store.accounts.create(input);
      const account = await store.accounts.createFirst(input);
      if (!account) throw closed();
      return account;
    },

    async login(email, password, ip) {
      if (typeof password !== 'string' || password.length > MAX_PASSWORD) throw invalidCredentials();
      const folded = typeof email === 'string' ? email.trim().toLowerCase() : '';
      const throttleKey = `${folded}\n${meteringAddress(ip)}`;
      // counted before anything is awaited: guesses sent together cannot all pass the check first
      throttle.attempt(throttleKey, clock.now().getTime());
      // an address no account can have (a NUL, a control character) is looked up nowhere
      const lookup = folded && !/\p{Cc}/u.test(folded) ? folded : '';
      const account = lookup ? await store.accounts.findByEmail(lookup) : null;
      const ok = account ? await verifyPassword(password, account.passwordHash) : (await burnPasswordCheck(password), false);
      if (!account || !ok) throw invalidCredentials();
      throttle.succeed(throttleKey);
      const token = randomToken();
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + SESSION_DAYS * 86_400_000);
      await store.sessions.create({ tokenHash: sha256Hex(token), accountId: account.id, createdAt: now, expiresAt });
      const { passwordHash: _secret, ...publicAccount } = account;
      return { token, account: publicAccount, expiresAt };
    },

    async logout(token) {
      if (typeof token === 'string' && token) await store.sessions.delete(sha256Hex(token));
    },

    async authenticateSession(token, ip) {
      const invalid = new AppError('INVALID_SESSION', 'Your session has expired or is unknown; please sign in again.');
      if (typeof token !== 'string' || token.length === 0 || token.length > 256) throw invalid;
      const session = await store.sessions.find(sha256Hex(token));
      if (!session || session.expiresAt.getTime() <= clock.now().getTime()) throw invalid;
      const caller = await accountCaller(session.accountId, ip, 'session', null);
      if (!caller) throw invalid;
      return caller;
    },

    async authenticateKey(key, ip) {
      if (typeof key !== 'string' || !API_KEY_SHAPE.test(key)) {
        throw new AppError('INVALID_API_KEY', 'The API key is malformed: expected tw_ followed by 32 letters or digits.');
      }
      const unknown = new AppError('INVALID_API_KEY', 'The API key is unknown or has been revoked.');
      const record = await store.apiKeys.findByHash(sha256Hex(key));
      if (!record || record.revokedAt) throw unknown;
      const caller = await accountCaller(record.accountId, ip, 'key', record.id);
      if (!caller) throw unknown;
      // When a key was last used is a convenience on the Keys screen: a write at most once a
      // minute, and a database that cannot take it (disk full) does not refuse the request.
      const now = clock.now();
      const since = record.lastUsedAt === null ? Infinity : now.getTime() - record.lastUsedAt.getTime();
      // (a clock set back since the last write writes again, not freezing "last used" until it catches up)
      if (since >= KEY_TOUCH_INTERVAL_MS || since < 0) {
        await store.apiKeys.touch(record.id, now).catch((error: unknown) => {
          if (!isAppError(error) || error.code !== 'STORAGE_UNAVAILABLE') throw error;
        });
      }
      return caller;
    },
  };
}
