/** Shell of the renderer: header, navigation, and the page of the current hash route. */
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { AuthForm } from './components/AuthForm';
import { navigate, useRoute } from './hooks/useRoute';
import { useSession } from './hooks/useSession';
import { forgetHistory, keepsHistory } from './lib/historyMemory';
import type { ScanView } from './lib/scanView';
import { AccountPage } from './pages/AccountPage';
import { HistoryPage } from './pages/HistoryPage';
import { KeysPage } from './pages/KeysPage';
import { ReportPage } from './pages/ReportPage';
import { ScanDetailPage } from './pages/ScanDetailPage';
import { ScanPage } from './pages/ScanPage';
import { SettingsPage } from './pages/SettingsPage';
import { WelcomePage } from './pages/WelcomePage';

const NEEDS = {
  history: { title: 'Sign in to see the history', text: 'The scan history is kept for a shop account.' },
  keys: { title: 'Sign in to manage API keys', text: 'API keys belong to a shop account.' },
  settings: { title: 'Sign in to change settings', text: 'Settings belong to a shop account.' },
};

const NAV = [
  { page: 'scan', label: 'Scan' },
  { page: 'history', label: 'History' },
  { page: 'account', label: 'Account' },
  { page: 'keys', label: 'API keys' },
  { page: 'settings', label: 'Settings' },
];

const TITLES: Record<string, string> = {
  scan: 'Scan tires',
  history: 'History',
  report: 'Report',
  account: 'Account',
  keys: 'API keys',
  settings: 'Settings',
};

/** The window's title for what is shown: read first by a screen reader, and on the taskbar. */
export function viewTitle(state: string, page: string, param: string | null): string {
  if (state === 'welcome') return 'Welcome – TireWear';
  if (state === 'expired') return 'Sign in again – TireWear';
  const title = page === 'history' && param ? 'Scan details' : (TITLES[page] ?? TITLES.scan);
  return `${title} – TireWear`;
}

/** Focuses the shown view's heading (the first visible h2), or the content itself when it has none yet. */
function focusViewHeading(root: HTMLElement | null): void {
  if (!root) return;
  const target = [...root.querySelectorAll<HTMLElement>('h2')].find((h) => h.offsetParent !== null) ?? root;
  if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
  target.focus();
}

/**
 * A new view takes the focus to its heading (a screen reader says where it is; the next Tab starts
 * there): after a link, a sign-in or a deletion, focus otherwise stays on the link or drops to the
 * page body. Not on the first view, where the page just opened. A view may move it on itself (the
 * history back to the scan opened), later.
 */
function useFocusOnViewChange(key: string, main: React.RefObject<HTMLElement | null>) {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const frame = requestAnimationFrame(() => {
      const root = main.current;
      if (!root) return;
      // the view placed it already (the history back on the scan opened)
      const active = document.activeElement;
      if (active instanceof HTMLElement && active !== root && root.contains(active) && active.offsetParent !== null) return;
      focusViewHeading(root);
    });
    return () => cancelAnimationFrame(frame);
  }, [key, main]);
}

function NeedsAccount({ title, text }: { title: string; text: string }) {
  return (
    <section>
      <h2>{title}</h2>
      <p>{text} Creating a shop account is free.</p>
      <AuthForm />
    </section>
  );
}

/** The shop's session ended (after 30 days, or cleared data): sign in again; the scan queue waits meanwhile. */
function SignInAgainPage() {
  return (
    <section className="welcome" aria-labelledby="expired-title">
      <h2 id="expired-title">Please sign in again</h2>
      <p className="lead">
        Your sign-in has ended. Sign in again so that scans keep going into your shop's history. Any photos waiting on the Scan page are kept and analyzed once
        you are signed in.
      </p>
      <AuthForm initialMode="login" />
    </section>
  );
}

export function App() {
  const { state, account, prefs } = useSession();
  const route = useRoute();
  const [sessionReport, setSessionReport] = useState<ScanView[]>([]);
  const signedIn = state === 'signed-in';
  useEffect(() => {
    if (!keepsHistory(route.page)) forgetHistory();
  }, [route.page]);
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    document.title = viewTitle(state, route.page, route.param);
  }, [state, route.page, route.param]);
  useFocusOnViewChange(
    state === 'loading' ? 'loading' : `${state === 'signed-in' || state === 'anonymous' ? 'in' : state}:${route.page}:${route.param ?? ''}`,
    main,
  );

  let content: ReactNode = null;
  if (state === 'loading') content = <p className="loading">Loading…</p>;
  else if (state === 'welcome') content = <WelcomePage />;
  else if (state === 'expired') content = <SignInAgainPage />;
  else if (route.page === 'history' && !signedIn) content = <NeedsAccount {...NEEDS.history} />;
  else if (route.page === 'history') content = route.param ? <ScanDetailPage scanId={route.param} /> : <HistoryPage />;
  else if (route.page === 'report') content = <ReportPage vehicle={signedIn ? route.params.get('vehicle') : null} sessionScans={sessionReport} />;
  else if (route.page === 'account') content = <AccountPage />;
  else if (route.page === 'keys') content = signedIn ? <KeysPage /> : <NeedsAccount {...NEEDS.keys} />;
  else if (route.page === 'settings') content = signedIn ? <SettingsPage /> : <NeedsAccount {...NEEDS.settings} />;
  // The scan page (its queue, results and plate) lives on through a sign-in, a registration or
  // an expired session; only signing out or the first-run page ends it.
  const scanMounted = state === 'anonymous' || signedIn || state === 'expired';
  const onScan = (state === 'anonymous' || signedIn) && !['history', 'report', 'account', 'keys', 'settings'].includes(route.page);

  return (
    <div className="app">
      <a
        className="skip-link no-print"
        href="#/scan"
        onClick={(event) => {
          event.preventDefault(); // a hash route: jump to the content without navigating
          focusViewHeading(main.current);
        }}
      >
        Skip to content
      </a>
      <header className="app-header no-print">
        <h1 className="brand-heading">
          <a className="brand" href="#/scan">
            TireWear{prefs.shopName && <span className="muted"> · {prefs.shopName}</span>}
          </a>
        </h1>
        {(state === 'anonymous' || signedIn) && (
          <nav aria-label="Main">
            {NAV.map((item) => (
              <a key={item.page} href={`#/${item.page}`} aria-current={route.page === item.page ? 'page' : undefined}>
                {item.label}
              </a>
            ))}
          </nav>
        )}
        <div className="who">{signedIn ? account?.account.email : state === 'anonymous' ? 'Demo (no account)' : ''}</div>
      </header>
      <main ref={main} tabIndex={-1}>
        {/* The scan page stays mounted under other pages so a running queue and its results survive navigation. */}
        {scanMounted && (
          <div hidden={!onScan}>
            <ScanPage
              active={onScan}
              onReport={(scans) => {
                setSessionReport(scans);
                navigate('/report');
              }}
            />
          </div>
        )}
        {!onScan && content}
      </main>
    </div>
  );
}
