/**
 * Who is using the app: a signed-in shop account (cookie session), the anonymous demo,
 * or nobody yet (first run). Also carries the shop's display settings.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import type { AccountData, SettingsData } from '../../../shared/api';
import { api } from '../api/client';
import { isSignedOutError } from '../api/errors';

export type SessionState = 'loading' | 'welcome' | 'anonymous' | 'signed-in';

export type Prefs = Pick<SettingsData, 'units' | 'legalMinimum' | 'shopName'>;

const DEFAULT_PREFS: Prefs = { units: 'mm', legalMinimum: '1.6mm', shopName: '' };
const DEMO_FLAG = 'tirewear.demo';

interface SessionValue {
  state: SessionState;
  account: AccountData | null;
  prefs: Prefs;
  /** Re-read the account (after a scan, a redeem, a login). */
  refresh: () => Promise<void>;
  setPrefs: (prefs: Prefs) => void;
  continueAnonymously: () => void;
  signOut: () => Promise<void>;
}

const SessionContext = createContext<SessionValue | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>('loading');
  const [account, setAccount] = useState<AccountData | null>(null);
  const [prefs, setPrefs] = useState<Prefs>(DEFAULT_PREFS);

  const refresh = useCallback(async () => {
    try {
      const data = await api.account();
      setAccount(data);
      setState('signed-in');
      const settings = await api.getSettings().catch(() => null);
      if (settings) setPrefs({ units: settings.units, legalMinimum: settings.legalMinimum, shopName: settings.shopName });
    } catch (error) {
      if (!isSignedOutError(error)) console.warn('account check failed', error);
      setAccount(null);
      setState(localStorage.getItem(DEMO_FLAG) ? 'anonymous' : 'welcome');
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const value = useMemo<SessionValue>(
    () => ({
      state,
      account,
      prefs,
      refresh,
      setPrefs,
      continueAnonymously: () => {
        localStorage.setItem(DEMO_FLAG, '1');
        setState('anonymous');
        // A stale auth-token cookie would make every demo scan fail with INVALID_SESSION.
        void api.logout().catch(() => undefined);
      },
      signOut: async () => {
        await api.logout().catch(() => undefined);
        localStorage.removeItem(DEMO_FLAG);
        setAccount(null);
        setPrefs(DEFAULT_PREFS);
        setState('welcome');
      },
    }),
    [state, account, prefs, refresh],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}
