/** The account page: plan, this month's allowance, pack credit, redeemed licenses. */
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { Store } from '../storage/store.js';
import { FREE_MONTHLY_LIMIT, isPro, monthWindow } from './metering.js';
import type { AccountService } from './ports.js';

export function createAccountService(deps: { store: Store; clock: Clock }): AccountService {
  const { store, clock } = deps;
  return {
    async summary(accountId) {
      const account = await store.accounts.findById(accountId);
      if (!account) throw new AppError('NOT_FOUND', 'No such account.');
      const now = clock.now();
      const window = monthWindow(now);
      const pro = isPro(account, now);
      const [{ used, held }, pack] = await Promise.all([store.usage.usage(`acct:${account.id}`, window.name), store.usage.packBalance(account.id)]);
      const licenses = await store.licenses.listForAccount(account.id);
      return {
        account,
        plan: pro ? 'pro' : 'free',
        proExpiresAt: account.proExpiresAt,
        allowance: {
          limit: pro ? null : FREE_MONTHLY_LIMIT,
          // Pack scans are charged to packCredit, not to `used`, so this counts free-allowance scans (all scans for pro).
          used,
          remaining: pro ? null : Math.max(0, FREE_MONTHLY_LIMIT - used - held),
          resetAt: window.endsAt,
        },
        // pack scans still being analysed count as spent, as in the X-RateLimit-Remaining of /analyze
        packCredit: Math.max(0, pack.credit - pack.held),
        licenses,
      };
    },
  };
}
