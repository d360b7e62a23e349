/** Plan, this month's usage and its reset, pack credit, redeemed licenses, redeem a code. */
import { useId, useState, type SubmitEvent } from 'react';
import { api } from '../api/client';
import { AuthForm } from '../components/AuthForm';
import { ErrorMessage } from '../components/ErrorMessage';
import { LicenseHelp } from '../components/LicenseHelp';
import { navigate } from '../hooks/useRoute';
import { useSession } from '../hooks/useSession';
import { formatDate, formatDay } from '../lib/format';
import { BusyButton } from '../components/BusyButton';

export function AccountPage() {
  const { state, account, refresh, signOut } = useSession();
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState<string | null>(null);
  const codeId = useId();

  if (state !== 'signed-in' || !account) {
    return (
      <section aria-labelledby="account-title">
        <h2 id="account-title">Account</h2>
        <p>You are using the demo: 3 scans a day without an account. A free shop account gives 10 scans a month, a history and API keys.</p>
        <AuthForm onSignedIn={() => navigate('/scan')} />
      </section>
    );
  }

  async function redeem(event: SubmitEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setNote(null);
    try {
      const { license } = await api.redeemLicense(code.trim());
      await refresh();
      setNote(license.kind === 'pack' ? `Scan pack added: ${license.scans ?? 0} scans.` : `Pro plan active until ${formatDay(license.expiresAt ?? '')}.`);
      setCode('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const { allowance } = account;
  const usedPct = allowance.limit ? Math.min(100, Math.round((allowance.used / allowance.limit) * 100)) : 0;
  return (
    <section aria-labelledby="account-title">
      <h2 id="account-title">Account</h2>
      <div className="panel-grid">
        <div className="panel">
          <h3>Plan</h3>
          <p className="big" data-testid="plan">
            {account.plan === 'pro' ? 'Pro' : 'Free'}
          </p>
          {account.proExpiresAt && <p>Pro until {formatDay(account.proExpiresAt)}</p>}
          <p className="muted">{account.account.email}</p>
          <button type="button" className="secondary" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
        <div className="panel">
          <h3>This month</h3>
          {allowance.limit === null ? (
            <p className="big">Unlimited</p>
          ) : (
            <>
              <p className="big" data-testid="usage">
                {allowance.used} of {allowance.limit} scans used
              </p>
              <progress max={100} value={usedPct} aria-label={`${usedPct}% of the monthly scans used`} />
              <p>
                {allowance.remaining ?? 0} left · renews {formatDate(allowance.resetAt)}
              </p>
            </>
          )}
        </div>
        <div className="panel">
          <h3>Scan packs</h3>
          <p className="big" data-testid="pack-credit">
            {account.packCredit} scans
          </p>
          <p className="muted">Pack scans never expire and are used only after the month's free scans.</p>
        </div>
      </div>
      {allowance.remaining === 0 && (
        <p className="message message-limit" role="status">
          {account.packCredit > 0
            ? `This month's free scans are used; scans now come from your pack credit (${account.packCredit} left).`
            : `This month's free scans are used. Redeem a scan pack or Pro license code below, or wait until ${formatDate(allowance.resetAt)}.`}
        </p>
      )}
      <form className="panel redeem" onSubmit={redeem}>
        <h3>Redeem a license code</h3>
        <label htmlFor={codeId}>License code (starts with TWL1.)</label>
        <div className="row">
          <input id={codeId} value={code} onChange={(e) => setCode(e.target.value)} placeholder="TWL1.…" spellCheck={false} autoComplete="off" />
          <BusyButton type="submit" busy={busy || !code.trim()}>
            {busy ? 'Redeeming…' : 'Redeem'}
          </BusyButton>
        </div>
        {note && (
          <p className="message message-ok" role="status">
            {note}
          </p>
        )}
        <ErrorMessage error={error} />
      </form>
      <LicenseHelp />
      {account.licenses.length > 0 && (
        <div className="panel">
          <h3>Redeemed licenses</h3>
          <table>
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Details</th>
                <th scope="col">Redeemed</th>
              </tr>
            </thead>
            <tbody>
              {account.licenses.map((l) => (
                <tr key={l.codeId}>
                  <td>{l.kind === 'pack' ? 'Scan pack' : 'Pro'}</td>
                  <td>{l.kind === 'pack' ? `${l.scans ?? 0} scans` : `until ${formatDay(l.expiresAt ?? '')}`}</td>
                  <td>{formatDate(l.redeemedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
