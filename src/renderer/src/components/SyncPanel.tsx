/**
 * Settings → sync with the chain's hub: the live status line, link / unlink, "sync now".
 * Hidden where the server has no sync routes (404). The hub key goes to this computer's
 * server once and is never shown back: the status does not carry it.
 */
import { useId, useState, type SubmitEvent } from 'react';
import type { SyncStatus } from '../../../shared/api';
import { api } from '../api/client';
import { UserError } from '../api/errors';
import { useSyncStatus } from '../hooks/useSyncStatus';
import { formatDate } from '../lib/format';
import { describeSyncError, formatPending, linkFormProblem } from '../lib/syncStatus';
import { ErrorMessage } from './ErrorMessage';
import { BusyButton } from './BusyButton';

type Busy = 'link' | 'unlink' | 'sync' | 'resend' | null;
interface Notice {
  kind: 'ok' | 'warn';
  text: string;
}

export function SyncPanel() {
  const { status, unavailable, error, apply } = useSyncStatus(true);
  /** null until typed in: the field then shows the linked hub's address. */
  const [hubUrl, setHubUrl] = useState<string | null>(null);
  const [hubApiKey, setHubApiKey] = useState('');
  const [busy, setBusy] = useState<Busy>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const ids = { url: useId(), key: useId(), error: useId() };
  /** The field a link problem is about: it says so (aria-invalid, the message as its description) and has the focus. */
  const [invalid, setInvalid] = useState<'url' | 'key' | null>(null);

  if (unavailable) return null;
  const shownUrl = hubUrl ?? status?.hubUrl ?? '';

  async function act(kind: Exclude<Busy, null>, action: () => Promise<SyncStatus>, after: (s: SyncStatus) => Notice | null) {
    setBusy(kind);
    setActionError(null);
    setNotice(null);
    try {
      setNotice(after(await apply(action)));
    } catch (err) {
      setActionError(err);
    } finally {
      setBusy(null);
    }
  }

  function link(event: SubmitEvent) {
    event.preventDefault();
    const problem = linkFormProblem(shownUrl, hubApiKey, status?.linked === true);
    if (problem) {
      setNotice(null);
      setActionError(new UserError(problem.message));
      setInvalid(problem.field);
      document.getElementById(ids[problem.field])?.focus();
      return;
    }
    setInvalid(null);
    void act(
      'link',
      () => api.linkHub(shownUrl.trim(), hubApiKey.trim()),
      (s) => {
        setHubApiKey('');
        setHubUrl(null);
        return s.lastError
          ? { kind: 'warn', text: 'The link is saved, but the hub did not confirm it: see the reason above. Sync retries on its own.' }
          : { kind: 'ok', text: `Linked to ${s.hubUrl}. Scans upload in the background.` };
      },
    );
  }

  return (
    <div className="panel sync-panel" role="region" aria-labelledby="sync-title">
      <h3 id="sync-title">Sync with the chain's hub</h3>
      {!status && (error ? <ErrorMessage error={error} /> : <p>Loading…</p>)}
      {status && (
        <div className="sync-grid">
          <div>
            <StatusLine
              status={status}
              resend={{
                busy: busy === 'resend',
                disabled: busy !== null,
                run: () =>
                  void act('resend', api.resendSkipped, (s) => (s.lastError ? null : { kind: 'ok', text: 'The refused changes are being sent again.' })),
              }}
            />
            <ErrorMessage error={error} />
            {status.linked && (
              <div className="row">
                <BusyButton type="button" busy={busy !== null} onClick={() => void act('sync', api.syncNow, () => null)}>
                  {busy === 'sync' ? 'Syncing…' : 'Sync now'}
                </BusyButton>
                <BusyButton
                  type="button"
                  className="secondary"
                  busy={busy !== null}
                  onClick={() => void act('unlink', api.unlinkHub, () => ({ kind: 'ok', text: 'Unlinked. The scans stay on this computer.' }))}
                >
                  {busy === 'unlink' ? 'Unlinking…' : 'Unlink'}
                </BusyButton>
              </div>
            )}
          </div>
          <form onSubmit={link} noValidate aria-label="Link to a hub">
            <p className="muted small">
              {status.linked
                ? 'To change the hub or its key, enter both the address and the key, then click Link. The saved key is not shown.'
                : "The chain's office gives each shop the hub address and an API key of the hub."}
            </p>
            <div className="field">
              <label htmlFor={ids.url}>Hub address</label>
              <input
                id={ids.url}
                aria-invalid={invalid === 'url' || undefined}
                aria-describedby={invalid === 'url' ? ids.error : undefined}
                type="url"
                value={shownUrl}
                placeholder="https://hub.example.com"
                autoComplete="off"
                spellCheck={false}
                onChange={(e) => setHubUrl(e.target.value)}
              />
            </div>
            <div className="field">
              <label htmlFor={ids.key}>Hub API key</label>
              <input
                id={ids.key}
                aria-invalid={invalid === 'key' || undefined}
                aria-describedby={invalid === 'key' ? ids.error : undefined}
                type="password"
                value={hubApiKey}
                placeholder={status.linked ? 'Enter the key again to change the link' : 'tw_…'}
                autoComplete="new-password"
                spellCheck={false}
                onChange={(e) => setHubApiKey(e.target.value)}
              />
            </div>
            <BusyButton type="submit" busy={busy !== null}>
              {busy === 'link' ? 'Linking…' : 'Link'}
            </BusyButton>
          </form>
        </div>
      )}
      {notice && (
        <p className={`message message-${notice.kind}`} role="status">
          {notice.text}
        </p>
      )}
      <ErrorMessage error={actionError} id={ids.error} />
    </div>
  );
}

function StatusLine({ status, resend }: { status: SyncStatus; resend: { busy: boolean; disabled: boolean; run: () => void } }) {
  if (!status.linked) return <p data-testid="sync-state">Not linked to a hub. Scans stay on this computer only.</p>;
  return (
    <>
      <dl data-testid="sync-state">
        <dt>Linked to</dt>
        <dd data-testid="sync-hub">{status.hubUrl}</dd>
        <dt>Last sync</dt>
        <dd data-testid="sync-last">{status.lastSyncAt ? formatDate(status.lastSyncAt) : 'not yet'}</dd>
        <dt>Waiting to upload</dt>
        <dd data-testid="sync-pending">{formatPending(status.pending)}</dd>
        {status.skipped > 0 && (
          <>
            <dt>Refused by the hub</dt>
            <dd data-testid="sync-skipped">
              {status.skipped === 1 ? '1 change' : `${status.skipped.toLocaleString()} changes`}. Once the cause is fixed (see below),{' '}
              <button type="button" className="link" disabled={resend.disabled} onClick={resend.run}>
                {resend.busy ? 'Sending again…' : 'send them again'}
              </button>
              .
            </dd>
          </>
        )}
      </dl>
      {status.lastError && (
        <div className="message message-error" role="alert" data-testid="sync-error">
          <strong>{describeSyncError(status.lastError)}</strong>
          <p>{status.lastError}</p>
        </div>
      )}
    </>
  );
}
