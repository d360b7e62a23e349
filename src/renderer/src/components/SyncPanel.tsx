/** Hub sync status; hidden where the server has no sync endpoint (404) or it fails to answer. */
import { useEffect, useState } from 'react';
import type { SyncStatus } from '../../../shared/api';
import { api } from '../api/client';
import { formatDate } from '../lib/format';

export function SyncPanel() {
  const [status, setStatus] = useState<SyncStatus | null>(null);
  useEffect(() => {
    api.syncStatus().then(setStatus, () => setStatus(null));
  }, []);
  if (!status) return null;
  return (
    <div className="panel" aria-labelledby="sync-title" role="region">
      <h3 id="sync-title">Sync with the chain's hub</h3>
      {status.linked ? (
        <dl>
          <dt>Hub</dt>
          <dd>{status.hubUrl}</dd>
          <dt>Last sync</dt>
          <dd>{status.lastSyncAt ? formatDate(status.lastSyncAt) : 'not yet'}</dd>
          <dt>Waiting to upload</dt>
          <dd>{status.pending} scans</dd>
        </dl>
      ) : (
        <p>Not linked to a hub. Scans stay on this computer.</p>
      )}
      {status.lastError && (
        <p className="message message-error" role="alert">
          Last sync failed: {status.lastError}
        </p>
      )}
    </div>
  );
}
