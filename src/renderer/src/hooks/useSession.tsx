/**
 * Who is using the app: a signed-in shop account (cookie session), the anonymous demo,
 * nobody yet (first run), or a shop whose sign-in has ended (expired). Also carries the
 * shop's display settings.
 *
 * Two flags in localStorage decide what a window without a valid session shows:
 * - `tirewear.account`: an account has signed in here. Its session ending (the cookie's
 *   30 days, or cleared data) leads to "Sign in again", never to the demo, so the shop's
 *   scans keep going into its history.
 * - `tirewear.demo`: "Continue without an account" was chosen, and no account has signed in
 *   since. A successful sign-in or registration clears it.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import type { AccountData, SettingsData } from '../../../shared/api';
import { api } from '../api/client';
import { isSignedOutError } from '../api/errors';
import { navigate } from './useRoute';

export type SessionState = 'loading' | 'welcome' | 'anonymous' | 'signed-in' | 'expired';

export type Prefs = Pick<SettingsData, 'units' | 'legalMinimum' | 'shopName'>;

const DEFAULT_PREFS: Prefs = { units: 'mm', legalMinimum: '1.6mm', shopName: '' };
export const DEMO_FLAG = 'tirewear.demo';
export const ACCOUNT_FLAG = 'tirewear.account';

/** Without a valid session: back to "Sign in" if an account was used here, else the demo if chosen, else the welcome page. */
function signedOutState(): SessionState {
  if (localStorage.getItem(ACCOUNT_FLAG)) return 'expired';
  return localStorage.getItem(DEMO_FLAG) ? 'anonymous' : 'welcome';
}

interface SessionValue {
  state: SessionState;
  account: AccountData | null;
  prefs: Prefs;
  /** Re-read the account (after a scan, a redeem, a login). */
  refresh: () => Promise<void>;
  /**
   * Before an upload of a signed-in window: is the session still valid? False (and the window
   * asks to sign in again) when it has ended, so the upload is not sent as an anonymous one.
   */
  confirmSession: () => Promise<boolean>;
  /** The server refused the session (INVALID_SESSION): ask to sign in again. */
  sessionEnded: () => void;
  setPrefs: (prefs: Prefs) => void;
  continueAnonymously: () => void;
  signOut: () => Promise<void>;
}

const SessionContext = createContext<SessionValue | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>('loading');
  const [account, setAccount] = useState<AccountData | null>(null);
  const [prefs, setPrefs] = useState<Prefs>(DEFAULT_PREFS);

  const signedIn = useCallback((data: AccountData) => {
    localStorage.setItem(ACCOUNT_FLAG, '1');
    localStorage.removeItem(DEMO_FLAG);
    setAccount(data);
    setState('signed-in');
  }, []);

  const sessionEnded = useCallback(() => {
    setAccount(null);
    setState(signedOutState());
  }, []);

  const refresh = useCallback(async () => {
    try {
      signedIn(await api.account());
      const settings = await api.getSettings().catch(() => null);
      if (settings) setPrefs({ units: settings.units, legalMinimum: settings.legalMinimum, shopName: settings.shopName });
    } catch (error) {
      if (isSignedOutError(error)) return sessionEnded();
      console.warn('account check failed', error);
      // Not an answer about the session (network, busy): a signed-in window stays signed in.
      setState((current) => (current === 'loading' ? signedOutState() : current));
    }
  }, [signedIn, sessionEnded]);

  const confirmSession = useCallback(async () => {
    try {
      signedIn(await api.account());
      return true;
    } catch (error) {
      if (!isSignedOutError(error)) return true; // the upload itself will say what is wrong
      sessionEnded();
      return false;
    }
  }, [signedIn, sessionEnded]);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const value = useMemo<SessionValue>(
    () => ({
      state,
      account,
      prefs,
      refresh,
      confirmSession,
      sessionEnded,
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
        localStorage.removeItem(ACCOUNT_FLAG);
        setAccount(null);
        setPrefs(DEFAULT_PREFS);
        setState('welcome');
        // Signing in again starts at the counter's Scan page, not on Account.
        navigate('/scan');
      },
    }),
    [state, account, prefs, refresh, confirmSession, sessionEnded],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}
