/** Shell of the renderer: header, navigation, and the page of the current hash route. */
import { useState, type ReactNode } from 'react';
import { AuthForm } from './components/AuthForm';
import { navigate, useRoute } from './hooks/useRoute';
import { useSession } from './hooks/useSession';
import type { ScanView } from './lib/scanView';
import { AccountPage } from './pages/AccountPage';
import { HistoryPage } from './pages/HistoryPage';
import { KeysPage } from './pages/KeysPage';
import { ReportPage } from './pages/ReportPage';
import { ScanDetailPage } from './pages/ScanDetailPage';
import { ScanPage } from './pages/ScanPage';
import { SettingsPage } from './pages/SettingsPage';
import { WelcomePage } from './pages/WelcomePage';

const NAV = [
  { page: 'scan', label: 'Scan' },
  { page: 'history', label: 'History' },
  { page: 'account', label: 'Account' },
  { page: 'keys', label: 'API keys' },
  { page: 'settings', label: 'Settings' },
];

function NeedsAccount({ what }: { what: string }) {
  return (
    <section>
      <h2>Sign in for {what}</h2>
      <p>{what} belong to a shop account. Creating one is free.</p>
      <AuthForm />
    </section>
  );
}

export function App() {
  const { state, account, prefs } = useSession();
  const route = useRoute();
  const [sessionReport, setSessionReport] = useState<ScanView[]>([]);
  const signedIn = state === 'signed-in';

  let content: ReactNode = null;
  if (state === 'loading') content = <p className="loading">Loading…</p>;
  else if (state === 'welcome') content = <WelcomePage />;
  else if (route.page === 'history' && route.param) content = signedIn ? <ScanDetailPage scanId={route.param} /> : <NeedsAccount what="The history" />;
  else if (route.page === 'history') content = signedIn ? <HistoryPage /> : <NeedsAccount what="The history" />;
  else if (route.page === 'report') content = <ReportPage vehicle={signedIn ? route.params.get('vehicle') : null} sessionScans={sessionReport} />;
  else if (route.page === 'account') content = <AccountPage />;
  else if (route.page === 'keys') content = signedIn ? <KeysPage /> : <NeedsAccount what="API keys" />;
  else if (route.page === 'settings') content = signedIn ? <SettingsPage /> : <NeedsAccount what="Settings" />;
  const ready = state === 'anonymous' || signedIn;
  const onScan = !['history', 'report', 'account', 'keys', 'settings'].includes(route.page);

  return (
    <div className="app">
      <header className="app-header no-print">
        <a className="brand" href="#/scan">
          TireWear{prefs.shopName && <span className="muted"> · {prefs.shopName}</span>}
        </a>
        {state !== 'welcome' && state !== 'loading' && (
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
      <main>
        {/* The scan page stays mounted under other pages so a running queue and its results survive navigation. */}
        {ready && (
          <div hidden={!onScan}>
            <ScanPage
              key={account?.account.id ?? 'demo'}
              active={onScan}
              onReport={(scans) => {
                setSessionReport(scans);
                navigate('/report');
              }}
            />
          </div>
        )}
        {(!ready || !onScan) && content}
      </main>
    </div>
  );
}
